#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Duress at systemd-cryptsetup's prompt in a dracut initramfs, by booting a
VM (issue 19, Fedora's way; boot-duress is Debian's keyscript).

Root only.  This build's dracut module (91pam-duress), unlock-relay,
unlock-helper and action runner go into the build overlay where the REAL
dracut (Debian 12's dracut-core, 059), with its systemd and crypt modules,
makes the initramfs (bootvm.py), asked for the module by
/etc/dracut.conf.d/pam-duress.conf as docs/boot.md says.  The volume is
named on the kernel command line (rd.luks.name=UUID=cryptroot) and unlocked
by systemd 252's systemd-cryptsetup@cryptroot.service (made by
systemd-cryptsetup-generator), the passphrase asked on the serial console by
systemd-ask-password-console.  The boot directory is boot-duress's
(test_boot_duress.make_boot_dir): after-mark (after boot, signed with
DURESS, key slot 1) and the shipped luks-wipe as initramfs-luks-wipe (before
unlock, armed, signed with NUKE, no key slot).  The booted busybox root runs
unlock-finish.service's command.  The serial console driven, systemd's own
prompt each time:

  - the image is dracut's (its lister, lsinitrd, sees its version and
    modules; /init is systemd), not initramfs-tools', with systemd-cryptsetup,
    its generator and the console password agent in it;
  - it holds the module's pieces (the relay, its unit and the
    systemd-cryptsetup@.service drop-in, the helper, the runner, the signed
    actions, luks-wipe's config, cryptsetup for luks-wipe), and `duress
    check` says so, reading it with lsinitrd (then: stale, once luks-wipe's
    config is edited);
  - a wrong passphrase is refused (the prompt again), then the real one
    unlocks, systemd switches to the busybox root; no record, nothing runs;
    the unit the generator made was there (a pre-pivot hook keeps a copy in
    /run); the relay's directory is gone after switch-root; the console
    never names the project;
  - the duress passphrase (key slot 1) unlocks at the first prompt; the
    record names after-mark; the unit's command runs it once, as root;
  - the nuke passphrase (a copy of the disk, without snapshot=on): the prompt
    comes back, the real one is refused too, no passphrase opens the copy;
  - three wrong ones, through the relay: systemd-cryptsetup's tries=3 still
    hold (no fourth prompt), the unit fails, dracut's emergency powers the
    machine off (rd.emergency=poweroff in bootvm.DRACUT_APPEND);
  - a relay that cannot start (the same initramfs with one more archive
    appended, bootvm.append_files, whose relay exits at once): the real
    passphrase still unlocks, at systemd's own prompt.

One initramfs (and a variant of it, one file appended), five boots.  Timings
go out as TAP comments.  SKIP (1..0 # SKIP reason) as boot-vm does, and when
dracut or systemd-cryptsetup is not there (bootvm.missing_dracut).

Usage: test_boot_dracut_duress.py CACHE DURESS RELAY HELPER RUNNER MODULE_BUILD MODULE_SRC UNIT EXAMPLES
(MODULE_BUILD: the configured module-setup.sh and unlock-relay.service;
MODULE_SRC: the source dracut/ with relay.conf).
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
from tap import bail, comment, diag_boot, ok, skip_all, timed  # noqa: E402
import tap  # noqa: E402
import test_boot_duress as debian  # noqa: E402

REAL, DURESS = debian.REAL, debian.DURESS
BOOT_DIR, RECORD_DIR, RECORD, WIPE = debian.BOOT_DIR, debian.RECORD_DIR, debian.RECORD, debian.WIPE
MODULE_DIR = "/usr/lib/dracut/modules.d/91pam-duress"
RELAY_DIR = "/run/unlock-relay"
CONF = b'add_dracutmodules+=" pam-duress "\n'
DROP_IN = "usr/lib/systemd/system/systemd-cryptsetup@.service.d/50-relay.conf"

# The unit systemd-cryptsetup-generator writes for rd.luks.name= is in
# /run/systemd/generator while the initramfs runs; systemd removes its
# generators' output before switch-root.  A dracut pre-pivot hook (a file put
# into the build overlay, taken into the image by --include) keeps a copy in
# /run, which the booted root sees.
UNIT = f"/run/systemd/generator/systemd-cryptsetup@{bootvm.NAME}.service"
KEPT = "/run/bootvm-dracut/" + os.path.basename(UNIT)
HOOK_SRC = "/usr/local/share/bootvm-test/pre-pivot.sh"
HOOK = "/usr/lib/dracut/hooks/pre-pivot/50-bootvm-test.sh"
HOOK_TEXT = f"""# sourced by dracut-pre-pivot.service (tests/boot/test_boot_dracut_duress.py)
mkdir -p /run/bootvm-dracut
cp {UNIT} {KEPT} 2>/dev/null || echo "no {UNIT}" > /run/bootvm-dracut/absent
""".encode()
# What dracut's crypt and systemd modules must have put in the image.
DRACUT_WANTED = {
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
    HOOK.lstrip("/"),  # files= and --include reach the image
}


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
    debian.judge_check(image, programs, "fix: sudo dracut -f")


def initramfs_console(r):
    """What the console showed before the booted root's init (whose lines are the test's)."""
    return r.transcript.split(bootvm.MARK_OK)[0]


def naming_us(r):
    """The initramfs's console lines that name the project (its programs'
    and units' names are neutral: unlock-relay.service does show, without
    quiet, as docs/tells.md says)."""
    return [x for x in initramfs_console(r).splitlines() if re.search(r"duress", x, re.I)]


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
        bootvm.make_rootfs(root, files={**bootvm.DRACUT_ROOT_FILES, **programs, **actions},
                           after_boot=debian.after_boot(after_cmd),
                           show=[RECORD_DIR, RECORD, RELAY_DIR, KEPT, "/proc/cmdline"])
        bootvm.make_luks_image(root, img, [REAL, DURESS])

        module = {
            MODULE_DIR + "/module-setup.sh": bootvm.File(src=setup, mode=0o755),
            MODULE_DIR + "/unlock-relay.service": bootvm.File(
                src=os.path.join(mod_build, "unlock-relay.service"), mode=0o644),
            MODULE_DIR + "/relay.conf": bootvm.File(src=os.path.join(mod_src, "relay.conf"), mode=0o644),
            "/etc/dracut.conf.d/pam-duress.conf": bootvm.File(data=CONF, mode=0o644),
            HOOK_SRC: bootvm.File(data=HOOK_TEXT, mode=0o644),
        }
        build = {**actions, **module,
                 helper_at: bootvm.File(src=helper, mode=0o755),
                 runner_at: bootvm.File(src=runner, mode=0o755),
                 relay_at: bootvm.File(src=relay, mode=0o755)}
        initrd = os.path.join(tmp, "initrd.img")
        try:
            t = time.monotonic()
            out = bootvm.build_dracut_initramfs(kernel, initrd, os.path.join(tmp, "mk"), files=build,
                                               dracut_args=["--include", HOOK_SRC, HOOK])
            comment(f"dracut initramfs with the module: {time.monotonic() - t:.1f} s")
        except (RuntimeError, OSError) as e:
            bail("dracut with this build's module", e)
        ok("pam-duress" in out and "pam-duress: " not in out,
           "dracut included the module (asked by /etc/dracut.conf.d), without an error from it",
           "\n".join(x for x in out.splitlines() if "duress" in x or "Including" in x))
        paths, header = bootvm.dracut_initramfs_list(initrd)
        listing = set(paths)
        # --- the image is dracut's, with systemd-cryptsetup ------------------------------------------
        ok(DRACUT_WANTED <= listing, "the initramfs holds systemd, systemd-cryptsetup, its generator, the "
           "console password agent and dracut's crypt library",
           "missing: " + " ".join(sorted(DRACUT_WANTED - listing)))
        modules = header.split("dracut modules:", 1)[-1].split()
        ok("Version: dracut-" in header and {"crypt", "systemd", "systemd-initrd", "dracut-systemd"} <= set(modules)
           and any(p.startswith("usr/lib/dracut/dracut-") for p in paths),
           "it is dracut's (lsinitrd: its version, modules crypt, systemd, systemd-initrd, dracut-systemd)",
           header[:1500])
        ok("scripts/local-top/cryptroot" not in listing and "conf/initramfs.conf" not in listing,
           "and not initramfs-tools' (no scripts/local-top/cryptroot, no conf/initramfs.conf)")
        # --- with the module's pieces -----------------------------------------------------------------
        want = {p.lstrip("/") for p in (relay_at, helper_at, runner_at, BOOT_DIR + "/after-mark",
                                          BOOT_DIR + "/after-mark.sig", f"{BOOT_DIR}/{WIPE}",
                                          f"{BOOT_DIR}/{WIPE}.sig", f"{BOOT_DIR}/{WIPE}.conf")}
        want |= {"usr/lib/systemd/system/unlock-relay.service", DROP_IN}
        ok(want <= listing, "the initramfs holds the relay, its unit and drop-in, the helper, the runner, "
           "the signed boot actions and luks-wipe's config", "missing: " + " ".join(sorted(want - listing)))
        ok(any(re.fullmatch(r"usr/s?bin/cryptsetup", p) for p in listing),
           "... and cryptsetup, for luks-wipe (a systemd initramfs has none otherwise)")
        check_image(duress, boot_d, initrd, tmp, {helper_at, runner_at, relay_at})

        dracut = bootvm.booter(kernel, initrd, dracut=True)
        real = debian.each_passphrase(dracut, img, tmp)
        ok(f"{bootvm.MARK_OK} root=/dev/mapper/{bootvm.NAME} run=tmpfs" in real.transcript
           and bootvm.DRACUT_APPEND in (real.shown.get("/proc/cmdline") or ""),
           "the root is the unlocked mapping, /run systemd's tmpfs, the command line DRACUT_APPEND's",
           diag_boot(real))
        unit_text = (real.shown.get(KEPT) or "").replace('"', "'")
        ok(f"systemd-cryptsetup attach '{bootvm.NAME}'" in unit_text
           or f"systemd-cryptsetup attach {bootvm.NAME}" in unit_text,
           f"systemd-cryptsetup-generator made {UNIT} of rd.luks.name= (kept by a pre-pivot hook)",
           f"shown={real.shown}\n{diag_boot(real)}")
        ok(real.shown.get(RELAY_DIR, "") is None,
           "the relay's directory is gone after switch-root", real.shown.get(RELAY_DIR))
        ok(not naming_us(real), "the console never names the project",
           "\n".join(naming_us(real)))
        comment("what the relay shows on the console (no quiet): " + repr(
            [x.strip() for x in initramfs_console(real).splitlines() if "Relay" in x]))

        # --- three wrong, through the relay: systemd-cryptsetup gives up, the boot ends ----------------
        r = timed(dracut, img, [debian.WRONG] * 3, "three wrong")
        ok(r.prompts == 3 and not r.unlocked,
           "three wrong passphrases: three prompts (systemd-cryptsetup's tries=3, the relay between), "
           "no fourth, no root", diag_boot(r))
        ok("Failed to start" in r.transcript and f"systemd-cryptsetup@{bootvm.NAME}.service" in r.transcript,
           f"then systemd-cryptsetup@{bootvm.NAME}.service fails", diag_boot(r))
        ok(not r.timed_out and r.returncode == 0 and "reboot: Power down" in r.transcript,
           "and dracut's emergency powers the machine off (rd.emergency=poweroff): QEMU ends by itself",
           diag_boot(r))

        # --- a relay that cannot start: the disk still unlocks -------------------------------------
        # The kernel unpacks the appended archive last: its relay replaces the built one.
        initrd2 = os.path.join(tmp, "initrd-broken.img")
        try:
            bootvm.append_files(initrd, initrd2, {relay_at: bootvm.File(data=b"#!/bin/sh\nexit 1\n",
                                                                       mode=0o755)})
        except (RuntimeError, OSError) as e:
            bail("the initramfs with a relay that exits at once appended", e)
        r = timed(bootvm.booter(kernel, initrd2, dracut=True), img, [REAL], "real, the relay failing")
        failed = [x for x in initramfs_console(r).splitlines()
                  if "Failed to start" in x and "Relay Password Requests" in x]
        ok(failed, "the appended relay is the one that ran: systemd says it failed to start",
           diag_boot(r, 60))
        ok(r.unlocked and r.finished and r.prompts == 1,
           "a relay that cannot start: systemd's prompt still comes, and the real passphrase unlocks",
           diag_boot(r))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    comment(f"boot-dracut-duress: {time.monotonic() - t0:.1f} s in all")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
