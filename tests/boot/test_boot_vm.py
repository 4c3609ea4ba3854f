#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The VM harness (bootvm.py) proven with Debian's stock passphrase prompt.

Root only.  One LUKS2 image (two key slots) and one initramfs built by the
real mkinitramfs with the real cryptsetup hooks (no keyscript), reused by
both boots; Debian 12's cloud kernel under QEMU/TCG; the serial console
driven:

  - a wrong passphrase is refused (a second prompt), then the real one
    unlocks, the root's init runs (and its after-boot command); the
    machine's /etc and /boot are untouched, a snapshot=on boot leaves the
    image as it was;
  - after luksKillSlot 0 on a copy the real passphrase no longer opens it
    (cryptsetup open --test-passphrase), the other still does, and at the
    prompt of the copy, booted without snapshot=on, it is refused while
    the passphrase of key slot 1 unlocks.

The entry points the integration uses (a keyscript put into the initramfs
build with files= and crypttab_options=, a dynamically linked program in the
root with with_libraries, show= of what the initramfs left in /run) are
boot-duress's: it builds and boots the real integration with them.

Timings go out as TAP comments.  SKIP (1..0 # SKIP reason) when not root,
when a tool is missing (tools/deps.sh boot), when no overlay of / can be
mounted, or when the kernel cannot be had.

Usage: test_boot_vm.py CACHE_DIR   (the kernel's cache, kept across runs)
"""
import hashlib
import os
import shutil
import sys
import tempfile
import time

# The harness sits next to this file; no __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bootvm  # noqa: E402
from tap import bail, comment, diag_boot, ok, skip_all  # noqa: E402
import tap  # noqa: E402

REAL = "correct horse 19"
SECOND = "second slot pass"
WRONG = "not the passphrase"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot(paths):
    """Type, mode and content hash of everything under PATHS."""
    out = []
    for top in paths:
        if not os.path.lexists(top):
            out.append(f"absent {top}")
            continue
        for d, dirs, files in os.walk(top):
            dirs.sort()
            for x in [d] + [os.path.join(d, f) for f in sorted(files)]:
                st = os.lstat(x)
                h = sha256(x) if os.path.isfile(x) and not os.path.islink(x) else ""
                out.append(f"{x} {st.st_mode:o} {h}")
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: test_boot_vm.py CACHE_DIR", file=sys.stderr)
        return 2
    cache = os.path.abspath(sys.argv[1])
    why = bootvm.missing()
    if why:
        skip_all(why)
    t0 = time.monotonic()
    try:
        t = time.monotonic()
        kernel = bootvm.fetch_kernel(cache)
        comment(f"kernel {kernel.version}: {time.monotonic() - t:.1f} s (cache {cache})")
    except bootvm.Skip as e:
        skip_all(str(e))

    real_state = ["/etc/crypttab", "/etc/cryptsetup-initramfs", "/etc/initramfs-tools", "/boot",
                  "/lib/modules"]
    before = snapshot(real_state)
    tmp = tempfile.mkdtemp(prefix="boot-vm.")
    try:
        root = os.path.join(tmp, "root")
        img = os.path.join(tmp, "disk.img")
        initrd = os.path.join(tmp, "initrd.img")
        try:
            t = time.monotonic()
            bootvm.make_rootfs(root, after_boot="echo after-boot ran as $(id -u); cat /proc/cmdline",
                               show=["/run/initramfs", "/run/bootvm-absent"])
            bootvm.make_luks_image(root, img, [REAL, SECOND])
            comment(f"root and LUKS2 image (2 key slots): {time.monotonic() - t:.1f} s")
        except RuntimeError as e:
            bail("the root filesystem and its LUKS2 image", e)
        ok(bootvm.test_passphrase(img, REAL) and bootvm.test_passphrase(img, SECOND)
           and not bootvm.test_passphrase(img, WRONG),
           "the image opens with both passphrases (--test-passphrase), not with a wrong one")
        try:
            t = time.monotonic()
            warnings = bootvm.build_initramfs(kernel, initrd, os.path.join(tmp, "mk"))
            # Expected: the build host's root is not encrypted and has no
            # device-mapper (cannot resolve the root, the cipher modules).
            for line in warnings.strip().splitlines():
                comment("mkinitramfs: " + line)
            comment(f"initramfs (mkinitramfs in the overlay): {time.monotonic() - t:.1f} s, "
                    f"{os.path.getsize(initrd) >> 20} MiB")
        except (RuntimeError, OSError) as e:
            bail("mkinitramfs in a private namespace over an overlay of /", e)
        listing = set(bootvm.initramfs_list(initrd))
        ok({"cryptroot/crypttab", "usr/sbin/cryptsetup", "scripts/local-top/cryptroot"} <= listing,
           "the initramfs holds the real cryptsetup hooks' work: crypttab, cryptsetup, local-top/cryptroot")
        after = snapshot(real_state)
        ok(before == after, "the machine's /etc/crypttab, /etc/cryptsetup-initramfs, "
           "/etc/initramfs-tools, /boot and /lib/modules are unchanged",
           "\n".join(sorted(set(before) ^ set(after))[:20]))
        img_sum = sha256(img)

        # --- a wrong one, then the real one ---------------------------------------------------------
        r = bootvm.boot(kernel, initrd, img, [WRONG, REAL])
        comment(f"boot, wrong then real: {r.seconds} s (prompts at {r.prompt_seconds})")
        second = r.transcript.find(bootvm.PROMPT.decode(), r.transcript.find(bootvm.PROMPT.decode()) + 1)
        ok(r.prompts == 2 and 0 < second < r.transcript.find(bootvm.MARK_OK),
           "a wrong passphrase is refused at the stock prompt: the prompt comes again, and the root "
           "has not run", diag_boot(r))
        ok(r.unlocked and r.finished and r.returncode == 0,
           "then the real passphrase unlocks; the root's init runs and powers off", diag_boot(r))
        ok(f"{bootvm.MARK_OK} root=/dev/mapper/{bootvm.NAME} run=tmpfs" in r.transcript,
           "the root is the unlocked mapping, /run the initramfs's tmpfs", diag_boot(r))
        ok(r.cmd_status == 0 and r.cmd_output is not None and "after-boot ran as 0" in r.cmd_output,
           "the after-boot command ran as root, its output between the markers", diag_boot(r))
        ok(r.shown.get("/run/initramfs", None) is not None and "/run/bootvm-absent" in r.shown
           and r.shown["/run/bootvm-absent"] is None,
           "show=: what the initramfs left in /run is seen in the root, an absent path is reported",
           f"shown={r.shown}")
        ok(sha256(img) == img_sum, "snapshot=on: the boot left the image byte-identical")

        # --- slot 0 destroyed on a copy, booted without snapshot=on ----------------------------------
        copy = os.path.join(tmp, "copy.img")
        bootvm.copy_image(img, copy)
        bootvm.kill_slot(copy, 0)
        ok(not bootvm.test_passphrase(copy, REAL),
           "after luksKillSlot 0 on the copy, the real passphrase no longer opens it")
        ok(bootvm.test_passphrase(copy, SECOND) and bootvm.test_passphrase(img, REAL),
           "slot 1 still opens the copy, and the original image still opens with the real passphrase")
        r = bootvm.boot(kernel, initrd, copy, [REAL, SECOND], snapshot=False)
        comment(f"boot, killed slot then slot 1: {r.seconds} s (prompts at {r.prompt_seconds})")
        ok(r.prompts == 2 and r.unlocked and r.finished,
           "at the prompt of the copy (booted without snapshot=on) the destroyed slot's passphrase "
           "is refused, the passphrase of key slot 1 unlocks", diag_boot(r))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    comment(f"boot-vm: {time.monotonic() - t0:.1f} s in all")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
