#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The VM harness (bootvm.py) with dracut and systemd in the initramfs.

How Fedora unlocks its root: an initramfs made by the real dracut (Debian
12's dracut-core, 059) with its systemd and crypt modules, the volume named
on the kernel command line (rd.luks.name=UUID=cryptroot), unlocked by
systemd 252's systemd-cryptsetup@cryptroot.service (made by
systemd-cryptsetup-generator), the passphrase asked on the serial console by
systemd-ask-password-console.  Root only.  One LUKS2 image and one
initramfs, reused by both boots:

  - the initramfs is dracut's (its lister, lsinitrd, sees its version and
    modules; /init is systemd) with systemd-cryptsetup, its generator and
    the console password agent in it;
  - a wrong passphrase is refused (the prompt again), then the real one
    unlocks, systemd switches to the busybox root whose /sbin/init runs;
    the unit the generator made is still in /run there;
  - three wrong ones (systemd-cryptsetup's tries=3): no fourth prompt, the
    unit fails, dracut's emergency powers the machine off (rd.emergency=
    poweroff in bootvm.DRACUT_APPEND), QEMU ends by itself.

A passphrase of key slot 1 at systemd's prompt is boot-dracut-duress's
duress passphrase (its image's slot 1), which unlocks there.

Timings go out as TAP comments.  SKIP (1..0 # SKIP reason) as boot-vm does,
and when dracut or systemd-cryptsetup is not there (bootvm.missing_dracut).

Usage: test_boot_dracut.py CACHE_DIR   (the kernel's cache, kept across runs)
"""
import os
import shutil
import sys
import tempfile
import time

# The harness sits next to this file; no __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bootvm  # noqa: E402
from tap import bail, comment, diag_boot, ok, skip_all, timed  # noqa: E402
import tap  # noqa: E402

REAL = "correct horse 19"
WRONG = "not the passphrase"

# The unit systemd-cryptsetup-generator writes for rd.luks.name= is in
# /run/systemd/generator while the initramfs runs; systemd removes its
# generators' output before switch-root.  A dracut pre-pivot hook (a file put
# into the build overlay with files=, taken into the image by dracut_args=
# --include: the entry points the integration will use) keeps a copy in /run,
# which the booted root sees.
UNIT = f"/run/systemd/generator/systemd-cryptsetup@{bootvm.NAME}.service"
KEPT = "/run/bootvm-dracut/" + os.path.basename(UNIT)
HOOK_SRC = "/usr/local/share/bootvm-test/pre-pivot.sh"
HOOK = "/usr/lib/dracut/hooks/pre-pivot/50-bootvm-test.sh"
HOOK_TEXT = f"""# sourced by dracut-pre-pivot.service (tests/boot/test_boot_dracut.py)
mkdir -p /run/bootvm-dracut
cp {UNIT} {KEPT} 2>/dev/null || echo "no {UNIT}" > /run/bootvm-dracut/absent
ls /run/systemd/generator > /run/bootvm-dracut/generator.list 2>&1
""".encode()
# What dracut's crypt and systemd modules must have put in the image.
WANTED = [
    "init",  # -> usr/lib/systemd/systemd
    "usr/lib/systemd/systemd",
    "usr/lib/systemd/systemd-cryptsetup",
    "usr/lib/systemd/system-generators/systemd-cryptsetup-generator",
    "usr/bin/systemd-ask-password",
    "usr/bin/systemd-tty-ask-password-agent",
    "usr/lib/systemd/system/systemd-ask-password-console.path",
    "usr/lib/systemd/system/systemd-ask-password-console.service",
    "usr/lib/systemd/system/cryptsetup.target",
    "usr/lib/dracut-crypt-lib.sh",
    HOOK.lstrip("/"),  # files= and dracut_args= (--include) reach the image
]


def main():
    if len(sys.argv) != 2:
        print("usage: test_boot_dracut.py CACHE_DIR", file=sys.stderr)
        return 2
    cache = os.path.abspath(sys.argv[1])
    why = bootvm.missing() or bootvm.missing_dracut()
    if why:
        skip_all(why)
    t0 = time.monotonic()
    try:
        t = time.monotonic()
        kernel = bootvm.fetch_kernel(cache)
        comment(f"kernel {kernel.version}: {time.monotonic() - t:.1f} s (cache {cache})")
    except bootvm.Skip as e:
        skip_all(str(e))

    tmp = tempfile.mkdtemp(prefix="boot-dracut.")
    try:
        root = os.path.join(tmp, "root")
        img = os.path.join(tmp, "disk.img")
        initrd = os.path.join(tmp, "initrd.img")
        try:
            t = time.monotonic()
            bootvm.make_rootfs(root, files=dict(bootvm.DRACUT_ROOT_FILES),
                               after_boot="cat /proc/cmdline", show=[KEPT, UNIT])
            bootvm.make_luks_image(root, img, [REAL])
            comment(f"root and LUKS2 image: {time.monotonic() - t:.1f} s")
        except RuntimeError as e:
            bail("the root filesystem and its LUKS2 image", e)
        try:
            t = time.monotonic()
            out = bootvm.build_dracut_initramfs(
                kernel, initrd, os.path.join(tmp, "mk"),
                files={HOOK_SRC: bootvm.File(data=HOOK_TEXT, mode=0o644)},
                dracut_args=["--include", HOOK_SRC, HOOK])
            for line in out.splitlines():
                if "rror" in line or "arn" in line:
                    comment("dracut: " + line)
            comment(f"initramfs (dracut in the overlay): {time.monotonic() - t:.1f} s, "
                    f"{os.path.getsize(initrd) >> 20} MiB")
        except (RuntimeError, OSError) as e:
            bail("dracut in a private namespace over an overlay of /", e)

        # --- the image is dracut's, with systemd-cryptsetup ----------------------------------------
        paths, header = bootvm.dracut_initramfs_list(initrd)
        listing = set(paths)
        absent = [p for p in WANTED if p not in listing]
        ok(not absent, "the initramfs holds systemd, systemd-cryptsetup, its generator, the console "
           "password agent and dracut's crypt library", f"absent: {absent}")
        modules = header.split("dracut modules:", 1)[-1].split()
        ok("Version: dracut-" in header and {"crypt", "systemd", "systemd-initrd", "dracut-systemd"} <= set(modules)
           and any(p.startswith("usr/lib/dracut/dracut-") for p in paths),
           "it is dracut's (lsinitrd: its version, modules crypt, systemd, systemd-initrd, dracut-systemd)",
           header[:1500])
        ok("scripts/local-top/cryptroot" not in listing and "conf/initramfs.conf" not in listing,
           "and not initramfs-tools' (no scripts/local-top/cryptroot, no conf/initramfs.conf)")
        comment("cryptsetup (the CLI) in the image: "
                + (", ".join(p for p in paths if p.endswith("/cryptsetup")) or "no"))

        dracut = bootvm.booter(kernel, initrd, dracut=True)

        # --- a wrong one, then the real one ----------------------------------------------------------------
        r = timed(dracut, img, [WRONG, REAL], "wrong then real")
        p = bootvm.DRACUT_PROMPT.decode()
        second = r.transcript.find(p, r.transcript.find(p) + 1)
        ok(r.prompts == 2 and 0 < second < r.transcript.find(bootvm.MARK_OK),
           "a wrong passphrase is refused: the prompt comes again, and the root has not run", diag_boot(r))
        ok(r.unlocked and r.finished and r.returncode == 0,
           "then the real passphrase unlocks at systemd's prompt; the root's init runs and powers off",
           diag_boot(r))
        ok(f"{bootvm.MARK_OK} root=/dev/mapper/{bootvm.NAME} run=tmpfs" in r.transcript
           and bootvm.DRACUT_APPEND in (r.cmd_output or ""),
           "the root is the unlocked mapping, /run systemd's tmpfs, the command line DRACUT_APPEND's",
           diag_boot(r))
        unit = r.shown.get(KEPT) or ""
        ok(f"systemd-cryptsetup attach '{bootvm.NAME}'" in unit.replace('"', "'")
           or f"systemd-cryptsetup attach {bootvm.NAME}" in unit,
           f"systemd-cryptsetup-generator made {UNIT} of rd.luks.name= (kept by a pre-pivot hook)",
           f"shown={r.shown}\n{diag_boot(r)}")
        comment(f"{UNIT} in the booted root: " + ("absent" if r.shown.get(UNIT) is None else "present"))
        for line in unit.splitlines():
            if line.startswith(("ExecStart=", "BindsTo=", "Before=")):
                comment("generated unit: " + line)

        # --- three wrong: systemd-cryptsetup gives up, the boot ends ----------------------------------------
        r = timed(dracut, img, [WRONG, WRONG, WRONG], "three wrong")
        ok(r.prompts == 3 and not r.unlocked,
           "three wrong passphrases: three prompts (systemd-cryptsetup's tries=3), no fourth, no root",
           diag_boot(r))
        ok("Failed to start" in r.transcript and f"systemd-cryptsetup@{bootvm.NAME}.service" in r.transcript,
           f"then systemd-cryptsetup@{bootvm.NAME}.service fails", diag_boot(r))
        ok(not r.timed_out and r.returncode == 0 and "reboot: Power down" in r.transcript,
           "and dracut's emergency powers the machine off (rd.emergency=poweroff): QEMU ends by itself",
           diag_boot(r))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    comment(f"boot-dracut: {time.monotonic() - t0:.1f} s in all")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
