#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Duress at systemd-cryptsetup's prompt in a dracut initramfs, by booting a
VM (issue 19, Fedora's way; boot-duress is Debian's keyscript).

Root only.  This build's dracut module (91pam-duress), unlock-relay,
unlock-helper and action runner go into the build overlay where the REAL
dracut, with systemd and crypt, makes the initramfs (bootvm.py), asked for
the module by /etc/dracut.conf.d/pam-duress.conf as docs/boot.md says.  The
boot directory is boot-duress's (test_boot_duress.make_boot_dir): after-mark
(after boot, signed with DURESS, key slot 1) and the shipped luks-wipe as
initramfs-luks-wipe (before unlock, armed, signed with NUKE, no key slot).
The booted busybox root runs unlock-finish.service's command.  The serial
console driven, systemd's own prompt each time:

  - the image holds the module's pieces (the relay, its unit and the
    systemd-cryptsetup@.service drop-in, the helper, the runner, the signed
    actions, luks-wipe's config, cryptsetup for luks-wipe), and `duress
    check` says so, reading it with lsinitrd (then: stale, once luks-wipe's
    config is edited);
  - the real passphrase unlocks; no record, nothing runs; the relay's
    directory is gone after switch-root; the console never names the project;
  - a wrong one is refused (the prompt again), then the real one unlocks;
    nothing runs;
  - the duress passphrase unlocks at the first prompt; the record names
    after-mark; the unit's command runs it once, as root;
  - the nuke passphrase (a copy of the disk, without snapshot=on): the prompt
    comes back, the real one is refused too, no passphrase opens the copy;
  - a relay that cannot start (an initramfs whose relay exits at once): the
    real passphrase still unlocks, at systemd's own prompt.

Usage: test_boot_dracut_duress.py CACHE DURESS RELAY HELPER RUNNER MODULE_BUILD MODULE_SRC UNIT EXAMPLES
(MODULE_BUILD: the configured module-setup.sh and unlock-relay.service;
MODULE_SRC: the source dracut/ with relay.conf).  SKIP like boot-dracut.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bootvm  # noqa: E402
from tap import bail, comment, diag_boot, ok, skip_all  # noqa: E402
import tap  # noqa: E402
import test_boot_duress as debian  # noqa: E402

REAL, DURESS, NUKE, WRONG = debian.REAL, debian.DURESS, debian.NUKE, debian.WRONG
BOOT_DIR, RECORD_DIR, RECORD, WIPE = debian.BOOT_DIR, debian.RECORD_DIR, debian.RECORD, debian.WIPE
MODULE_DIR = "/usr/lib/dracut/modules.d/91pam-duress"
RELAY_DIR = "/run/unlock-relay"
CONF = b'add_dracutmodules+=" pam-duress "\n'
DROP_IN = "usr/lib/systemd/system/systemd-cryptsetup@.service.d/50-relay.conf"


# duress check against the real dracut image (lsinitrd), the boot directory
# put back at /etc/duress-boot.d (an overlay, as boot-duress does), the
# dracut config in a directory of its own: OK, then stale once luks-wipe's
# config is edited.
CHECK_INITRAMFS = debian.ETC_OVERLAY + r"""
cp -a "$BOOT_D/." /etc/duress-boot.d/
mkdir "$W/dracut.conf.d"
printf '%s\n' 'add_dracutmodules+=" pam-duress "' >"$W/dracut.conf.d/pam-duress.conf"
check() {
	"$DURESS" check --pam-dir "$W" --user-dir "" --global-dir "" --crypttab /dev/null \
		--dracut-conf "$W/dracut.conf.d" --initramfs "$INITRD" 2>&1 |
		grep -e '^OK: the initramfs' -e '^ERROR: the initramfs' -e '^WARN: cannot tell' -e '^dracut ' || true
}
check
echo '# edited after dracut -f' >>/etc/duress-boot.d/initramfs-luks-wipe.conf
check
"""


def check_image(duress, boot_d, initrd, tmp, programs):
    """duress check's dracut lines against the real image: OK, then stale."""
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", CHECK_INITRAMFS],
                       env=dict(os.environ, W=os.path.join(tmp, "etc-ov"), BOOT_D=boot_d, DURESS=duress,
                                INITRD=initrd),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    lines = p.stdout.decode(errors="replace").splitlines()
    for line in lines:
        comment("duress check: " + line)
    dracut = [x for x in lines if x.startswith("dracut ")]
    image = [x for x in lines if not x.startswith("dracut ")]
    ok(len(dracut) == 2 and all(": OK: line 1 adds the pam-duress module" in x for x in dracut),
       "duress check: the dracut config adds the module (in place of a crypttab keyscript)", "\n".join(lines))
    # The programs installed on this machine, if any, are not this build's.
    first = re.match(r"^(OK|ERROR): the initramfs \S+ (?:holds|is older than \S+ \((.*)\);)",
                     image[0] if image else "")
    ok(first and (first.group(1) == "OK" or
                  all(x.rsplit(" ", 1)[0] in programs for x in first.group(2).split(", "))),
       "duress check: the dracut image (read with lsinitrd) holds the current boot actions and luks-wipe's "
       "config", "\n".join(lines))
    ok(len(image) == 2 and image[1].startswith("ERROR: the initramfs") and f"{WIPE}.conf changed" in image[1]
       and "fix: sudo dracut -f" in image[1],
       "duress check: luks-wipe's config edited since: the image is stale, fix: sudo dracut -f",
       "\n".join(lines))


def boot(kernel, initrd, img, passphrases, what, **kw):
    r = bootvm.boot(kernel, initrd, img, passphrases, append=bootvm.DRACUT_APPEND,
                    prompt=bootvm.DRACUT_PROMPT, **kw)
    comment(f"boot, {what}: {r.seconds} s (prompts at {r.prompt_seconds}, typed at {r.typed_seconds}, "
            f"root's init at {r.unlocked_seconds})")
    return r


def initramfs_console(r):
    """What the console showed before the booted root's init (whose lines are the test's)."""
    return r.transcript.split(bootvm.MARK_OK)[0]


def naming_us(r):
    """The initramfs's console lines that name the project, its programs or directories."""
    return [x for x in initramfs_console(r).splitlines()
            if re.search(r"duress|unlock-helper|session-helper|unlock-relay", x, re.I)]


def main():
    if len(sys.argv) != 10:
        print("usage: test_boot_dracut_duress.py CACHE DURESS RELAY HELPER RUNNER MODULE_BUILD "
              "MODULE_SRC UNIT EXAMPLES", file=sys.stderr)
        return 2
    cache, duress, relay, helper, runner, mod_build, mod_src, unit, examples = (
        os.path.abspath(a) for a in sys.argv[1:])
    why = bootvm.missing() or bootvm.missing_dracut()
    if why:
        skip_all(why)
    t0 = time.monotonic()
    try:
        kernel = bootvm.fetch_kernel(cache)
    except bootvm.Skip as e:
        skip_all(str(e))
    setup = os.path.join(mod_build, "module-setup.sh")
    helper_at = debian.configured(setup, "HELPER")
    runner_at = debian.configured(setup, "RUNNER")
    relay_at = debian.configured(setup, "RELAY")
    after_cmd = debian.exec_start(unit)
    ok(after_cmd == f"{helper_at} --after-boot",
       "the after-boot unit's ExecStart is the helper the module copies, --after-boot", after_cmd)

    tmp = tempfile.mkdtemp(prefix="boot-dracut-duress.")
    try:
        boot_d = debian.make_boot_dir(duress, examples, tmp)
        actions = bootvm.tree_files(boot_d, prefix=BOOT_DIR)
        programs = {}
        programs.update(bootvm.with_libraries(helper, dest=helper_at))
        programs.update(bootvm.with_libraries(runner, dest=runner_at))
        root = os.path.join(tmp, "root")
        img = os.path.join(tmp, "disk.img")
        wait = (f"had=no; [ -e {RECORD} ] && had=yes; {after_cmd}; "
                "i=0; while [ $had = yes ] && [ ! -s /run/after-mark ] && [ $i -lt 10 ]; do "
                "sleep 1; i=$((i+1)); done; [ $had = no ] || sleep 1; "
                "echo marks:; cat /run/after-mark 2>/dev/null; "
                f"[ -e {RECORD_DIR} ] && echo record-dir: still there || echo record-dir: gone")
        bootvm.make_rootfs(root, files={**bootvm.DRACUT_ROOT_FILES, **programs, **actions},
                           after_boot=wait, show=[RECORD_DIR, RECORD, RELAY_DIR])
        bootvm.make_luks_image(root, img, [REAL, DURESS])

        module = {
            MODULE_DIR + "/module-setup.sh": bootvm.File(src=setup, mode=0o755),
            MODULE_DIR + "/unlock-relay.service": bootvm.File(
                src=os.path.join(mod_build, "unlock-relay.service"), mode=0o644),
            MODULE_DIR + "/relay.conf": bootvm.File(src=os.path.join(mod_src, "relay.conf"), mode=0o644),
            "/etc/dracut.conf.d/pam-duress.conf": bootvm.File(data=CONF, mode=0o644),
        }
        build = {**actions, **module,
                 helper_at: bootvm.File(src=helper, mode=0o755),
                 runner_at: bootvm.File(src=runner, mode=0o755),
                 relay_at: bootvm.File(src=relay, mode=0o755)}
        initrd = os.path.join(tmp, "initrd.img")
        try:
            t = time.monotonic()
            out = bootvm.build_dracut_initramfs(kernel, initrd, os.path.join(tmp, "mk"), files=build)
            comment(f"dracut initramfs with the module: {time.monotonic() - t:.1f} s")
        except (RuntimeError, OSError) as e:
            bail("dracut with this build's module", e)
        ok("pam-duress" in out and "pam-duress: " not in out,
           "dracut included the module (asked by /etc/dracut.conf.d), without an error from it",
           "\n".join(x for x in out.splitlines() if "duress" in x or "Including" in x))
        paths, _ = bootvm.dracut_initramfs_list(initrd)
        listing = set(paths)
        want = {p.lstrip("/") for p in (relay_at, helper_at, runner_at, BOOT_DIR + "/after-mark",
                                          BOOT_DIR + "/after-mark.sig", f"{BOOT_DIR}/{WIPE}",
                                          f"{BOOT_DIR}/{WIPE}.sig", f"{BOOT_DIR}/{WIPE}.conf")}
        want |= {"usr/lib/systemd/system/unlock-relay.service", DROP_IN}
        ok(want <= listing, "the initramfs holds the relay, its unit and drop-in, the helper, the runner, "
           "the signed boot actions and luks-wipe's config", "missing: " + " ".join(sorted(want - listing)))
        ok(any(re.fullmatch(r"usr/s?bin/cryptsetup", p) for p in listing),
           "... and cryptsetup, for luks-wipe (a systemd initramfs has none otherwise)")
        check_image(duress, boot_d, initrd, tmp, {helper_at, runner_at, relay_at})

        # --- the real passphrase -------------------------------------------------------------------
        r = boot(kernel, initrd, img, [REAL], "real")
        ok(r.unlocked and r.finished and r.prompts == 1,
           "real passphrase: systemd's prompt, through the relay, unlocks the disk", diag_boot(r))
        ok(r.shown.get(RECORD_DIR, "") is None and "marks:\nrecord-dir: gone" in (r.cmd_output or ""),
           "real passphrase: no record, and the unit's command runs nothing", diag_boot(r))
        ok(r.shown.get(RELAY_DIR, "") is None,
           "the relay's directory is gone after switch-root", r.shown.get(RELAY_DIR))
        ok(not naming_us(r), "the console never names the project, its programs or directories",
           "\n".join(naming_us(r)))
        comment("what the relay shows on the console (no quiet): " + repr(
            [x.strip() for x in initramfs_console(r).splitlines() if "Relay" in x]))

        # --- a wrong one, then the real one --------------------------------------------------------
        r = boot(kernel, initrd, img, [WRONG, REAL], "wrong then real")
        ok(r.prompts == 2 and r.unlocked and r.finished,
           "wrong passphrase: refused (systemd's prompt again), then the real one unlocks", diag_boot(r))
        ok(r.shown.get(RECORD_DIR, "") is None and "marks:\nrecord-dir: gone" in (r.cmd_output or ""),
           "wrong passphrase: no record, nothing ran", diag_boot(r))

        # --- the duress passphrase -----------------------------------------------------------------
        r = boot(kernel, initrd, img, [DURESS], "duress")
        ok(r.unlocked and r.finished and r.prompts == 1,
           "duress passphrase: unlocks like the real one, at the first prompt", diag_boot(r))
        rec_dir, rec = r.shown.get(RECORD_DIR) or "", r.shown.get(RECORD) or ""
        ok(re.search(r"^drwx------ .* 0 +0 ", rec_dir, re.M) and re.search(r"[0-9a-f]{64} after-mark", rec)
           and WIPE not in rec and DURESS not in rec,
           "duress passphrase: the record (0700, root's) names after-mark with its hash, not the passphrase",
           rec_dir + repr(rec))
        out = r.cmd_output or ""
        ok(out.count("after-mark ran as 0 service=unlock") == 1 and "record-dir: gone" in out,
           "duress passphrase: the unit's command ran after-mark once, as root, and removed the record",
           diag_boot(r))

        # --- the nuke passphrase: key slots destroyed before the unlock ------------------------
        copy = os.path.join(tmp, "copy.img")
        bootvm.copy_image(img, copy)
        r = boot(kernel, initrd, copy, [NUKE, REAL], "nuke then real", snapshot=False)
        ok(not r.unlocked and r.prompts >= 2,
           "nuke passphrase (the shipped luks-wipe, armed): refused, and then the real one is refused too",
           diag_boot(r))
        ok(not bootvm.test_passphrase(copy, REAL) and not bootvm.test_passphrase(copy, DURESS),
           "nuke passphrase: afterwards no passphrase opens the disk (no usable key slot)")

        # --- a relay that cannot start: the disk still unlocks -------------------------------------
        broken = dict(build)
        broken[relay_at] = bootvm.File(data=b"#!/bin/sh\nexit 1\n", mode=0o755)
        initrd2 = os.path.join(tmp, "initrd-broken.img")
        try:
            bootvm.build_dracut_initramfs(kernel, initrd2, os.path.join(tmp, "mk2"), files=broken)
        except (RuntimeError, OSError) as e:
            bail("dracut with a relay that exits at once", e)
        r = boot(kernel, initrd2, img, [REAL], "real, the relay failing")
        ok(r.unlocked and r.finished and r.prompts == 1,
           "a relay that cannot start: systemd's prompt still comes, and the real passphrase unlocks",
           diag_boot(r))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    comment(f"boot-dracut-duress: {time.monotonic() - t0:.1f} s in all")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
