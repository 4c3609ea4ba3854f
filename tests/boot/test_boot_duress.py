#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Duress at the disk-unlock prompt, proven by booting a VM (issue 19).

Root only.  This build's unlock-keyscript, unlock-helper, action runner and
initramfs-tools hook go into a tmpfs overlay of / where the REAL mkinitramfs
builds the initramfs (bootvm.py: the machine's /etc, /boot and initramfs are
untouched), with /etc/duress-boot.d holding two actions, one salt and cost
for both (one derivation per try):

  after-mark           an after-boot action: appends a line to /run/after-mark;
                       signed by this build's `duress sign` with DURESS, which
                       is also LUKS key slot 1
  initramfs-luks-wipe  the SHIPPED examples/luks-wipe, installed by this
                       build's `duress add luks-wipe --boot --before-unlock
                       --set DEVICE=/dev/vda --set ACTION=erase --set
                       ARMED=yes`, its config initramfs-luks-wipe.conf beside
                       it and bound to it; signed with NUKE, no key slot

Both are made where they live, /etc/duress-boot.d, inside a private mount
namespace with a tmpfs-backed overlay on /etc (the signature binds the
config's absolute path), and copied out; the hook must then put the config
into the initramfs itself (unlock-helper --list-files), and luks-wipe must
run under the initramfs's busybox sh.  `duress check` then compares that
initramfs with the boot directory (OK), and again once luks-wipe's config is
edited (the config changed).

The booted root (busybox) holds the same directory, the helper and the
runner, and runs the unit's ExecStart, read from this build's
unlock-finish.service, as its after-boot command.  Debian 12's cloud kernel
under QEMU/TCG, the serial console driven:

  - a wrong passphrase is refused (a second prompt) and runs nothing: the
    real one then unlocks, the disk whole; no record, nothing runs;
  - the duress passphrase unlocks; the record (root's, 0600 in a 0700
    directory) names after-mark and not the passphrase; the unit's command
    runs after-mark once, as root, and removes the record;
  - the nuke passphrase, on a copy of the disk booted without snapshot=on:
    the prompt comes back, the real passphrase is then refused too, and
    afterwards no passphrase opens the copy (cryptsetup --test-passphrase);
  - under plymouth (`splash` on the kernel command line): its prompt refuses
    a wrong passphrase, then the duress one unlocks and its after-boot
    action runs.

One initramfs serves all four boots: plymouth is installed into the build
overlay (apt-get; without a package mirror the initramfs is built without
it, and the plymouth boot SKIPs).  The first three boot with `nosplash`:
the initramfs's plymouth never starts, and askpass, finding no plymouth
daemon, asks on the console exactly as it does where plymouth is not
installed.

Usage: test_boot_duress.py CACHE_DIR DURESS UNLOCK_HELPER RUNNER KEYSCRIPT HOOK UNIT EXAMPLES
(the built files; the paths they are installed at are read from the
configured hook and unit).  SKIP (1..0 # SKIP reason) when not root or when
bootvm.missing() says why.
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
from tap import bail, comment, diag_boot, ok, skip, skip_all, timed  # noqa: E402
import tap  # noqa: E402

REAL = "real unlock pass"
DURESS = "duress unlock pass"
NUKE = "nuke unlock pass"
WRONG = "not a passphrase"
BOOT_DIR = "/etc/duress-boot.d"
RECORD_DIR = "/run/unlock-helper"
RECORD = RECORD_DIR + "/record"
# Cheap for TCG: every try at the prompt pays one derivation at this cost.
COST = ["--memlimit", "8M", "--opslimit", "1", "--allow-weak-cost"]

AFTER_MARK = b"""#!/bin/sh
echo "after-mark ran as $(id -u) service=$PAM_SERVICE" >>/run/after-mark
"""
WIPE = "initramfs-luks-wipe"

# The start of both scripts below, run in a private mount namespace: /etc
# overlaid (its upper layer on a tmpfs at $W), an empty /etc/duress-boot.d.
ETC_OVERLAY = r"""
set -e
mount -t tmpfs -o mode=0700 boot-duress-etc "$W"
mkdir "$W/u" "$W/w"
mount -t overlay -o "lowerdir=/etc,upperdir=$W/u,workdir=$W/w" boot-duress-etc /etc
rm -rf /etc/duress-boot.d
mkdir -m 700 /etc/duress-boot.d
"""

# Inside a private mount namespace: /etc overlaid (upper on a tmpfs), a fresh
# /etc/duress-boot.d there; after-mark signed, luks-wipe added, all copied to $OUT.
MAKE_BOOT_DIR = ETC_OVERLAY + r"""
cp "$AFTER" /etc/duress-boot.d/after-mark
chmod 700 /etc/duress-boot.d/after-mark
printf '%s\n' "$DURESS_PW" | "$DURESS" sign --stdin $COST /etc/duress-boot.d/after-mark
printf '%s\n' "$NUKE_PW" | "$DURESS" add luks-wipe --boot --before-unlock --stdin $COST \
	--examples-dir "$EXAMPLES" --pam-dir "$W" --crypttab /dev/null \
	--set DEVICE=/dev/vda --set ACTION=erase --set ARMED=yes
cp -a /etc/duress-boot.d/. "$OUT/"
"""


def configured(path, key):
    """KEY=VALUE from a configured file (the hook's paths)."""
    with open(path, encoding="utf-8") as f:
        m = re.search(rf"^{key}=(\S+)$", f.read(), re.M)
    if not m:
        bail(f"{key}= in {path}", "not found")
    return m.group(1)


def exec_start(unit):
    with open(unit, encoding="utf-8") as f:
        m = re.search(r"^ExecStart=(.+)$", f.read(), re.M)
    if not m:
        bail(f"ExecStart= in {unit}", "not found")
    return m.group(1)

# duress check's initramfs comparison, against the initramfs the real
# mkinitramfs made: the boot directory put back at /etc/duress-boot.d (an
# overlay, as above), checked, then luks-wipe's config edited, checked again.
CHECK_INITRAMFS = ETC_OVERLAY + r"""
cp -a "$BOOT_D/." /etc/duress-boot.d/
printf 'root UUID=0 none luks,keyscript=%s\n' "$KS" >"$W/crypttab"
check() {
	"$DURESS" check --pam-dir "$W" --user-dir "" --global-dir "" --crypttab "$W/crypttab" \
		--initramfs "$INITRD" 2>&1 | grep -e '^OK: the initramfs' -e '^ERROR: the initramfs' \
		-e '^WARN: cannot tell' || true
}
check
echo '# edited after update-initramfs' >>/etc/duress-boot.d/initramfs-luks-wipe.conf
check
"""


def salt_of(sig):
    """The salt field of a signature line ($duress$v=1$m=..$[also=..$]salt$hash$tag)."""
    fields = sig.strip().split("$")
    return fields[5] if fields[4].startswith("also=") else fields[4]


def make_boot_dir(duress, examples, tmp):
    """after-mark signed by duress sign, the shipped luks-wipe by duress add --boot
    --before-unlock, both made at /etc/duress-boot.d in a private mount namespace."""
    d = os.path.join(tmp, "boot.d")
    os.mkdir(d, 0o700)
    after = os.path.join(tmp, "after-mark")
    with open(after, "wb") as f:
        f.write(AFTER_MARK)
    w = os.path.join(tmp, "etc-ov")
    os.mkdir(w, 0o700)
    env = dict(os.environ, W=w, OUT=d, AFTER=after, DURESS=duress, EXAMPLES=examples,
               DURESS_PW=DURESS, NUKE_PW=NUKE, COST=" ".join(COST))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", MAKE_BOOT_DIR],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        bail("after-mark signed and luks-wipe added at /etc/duress-boot.d", out)
    comment("duress add: " + " | ".join(line for line in out.splitlines() if WIPE in line or "next:" in line))
    ok(f"/etc/duress-boot.d/{WIPE}: before unlock: ARMED" in out.splitlines(),
       "setup: duress add luks-wipe --boot --before-unlock: ARMED, as initramfs-luks-wipe", out)
    names = sorted(os.listdir(d))
    ok(names == ["after-mark", "after-mark.sig", WIPE, WIPE + ".conf", WIPE + ".sig"],
       "setup: the boot directory holds the two actions, their signatures and luks-wipe's config",
       names)
    with open(os.path.join(d, WIPE + ".conf"), encoding="utf-8") as f:
        conf = f.read()
    with open(os.path.join(d, WIPE), encoding="utf-8") as f:
        script = f.read()
    with open(os.path.join(examples, "luks-wipe"), encoding="utf-8") as f:
        shipped = f.read()
    ok(script == shipped.replace("CONFIG=/etc/duress.d/luks-wipe.conf",
                                 f"CONFIG={BOOT_DIR}/{WIPE}.conf"),
       "setup: the action is the shipped luks-wipe, its CONFIG= line pointing at its config")
    ok(all(re.search(rf"^{kv}$", conf, re.M) for kv in ("DEVICE=/dev/vda", "ACTION=erase", "ARMED=yes")),
       "setup: its config armed: DEVICE=/dev/vda, ACTION=erase, ARMED=yes", conf)
    salts = {salt_of(open(os.path.join(d, s), encoding="ascii").read())
             for s in ("after-mark.sig", WIPE + ".sig")}
    ok(len(salts) == 1, "setup: both boot actions signed with one salt (one derivation per try)",
       f"salts={salts}")
    return d


# Under plymouth (installed into the build overlay, `splash` on the kernel
# command line) askpass asks through plymouth: its details plugin draws the
# prompt on the serial console and redraws it at each key ("ESC[2K\r" and the
# prompt with a star more), so a new prompt is the text after a newline.
PLYMOUTH_PROMPT = b"\nPlease unlock disk "
# Run in the build overlay before mkinitramfs: plymouth, or (no package
# mirror) a line saying why not, in the build's output, for the plymouth boot
# to SKIP with.
NO_PLYMOUTH = "plymouth could not be installed in the build overlay: "
PLYMOUTH_INSTALL = ("DEBIAN_FRONTEND=noninteractive apt-get install -y -q plymouth >/tmp/apt.log 2>&1"
                    f" || echo \"{NO_PLYMOUTH}$(tail -n 1 /tmp/apt.log)\"")


def under_plymouth(kernel, initrd, img, listing, build_output):
    """A wrong passphrase, then the duress one, at plymouth's prompt."""
    if not any(p.endswith("bin/plymouthd") for p in listing):
        # No package mirror (apt-get install in the overlay): nothing to test here.
        why = [x for x in build_output.splitlines() if x.startswith(NO_PLYMOUTH)]
        skip("plymouth: a wrong passphrase, then the duress one, at plymouth's prompt",
             why[0] if why else "plymouth is not in the initramfs")
        return
    r = bootvm.boot(kernel, initrd, img, [WRONG, DURESS], append="splash", prompt=PLYMOUTH_PROMPT)
    comment(f"boot, plymouth, wrong then duress: {r.seconds} s (prompts at {r.prompt_seconds})")
    ok(r.unlocked and r.finished and r.prompts == 2 and r.shown.get("/run/plymouth") is not None,
       "plymouth: the prompt is plymouth's (it ran), a wrong passphrase is refused, the duress "
       "one unlocks", diag_boot(r))
    ok("after-mark ran as 0 service=unlock" in (r.cmd_output or ""),
       "plymouth: the duress passphrase's after-boot action ran", diag_boot(r))


def after_boot(after_cmd):
    """The booted root's command: the unit's AFTER_CMD, then (bounded) what
    it started, which runs detached, when there was a record."""
    return (f"had=no; [ -e {RECORD} ] && had=yes; {after_cmd}; "
            f"i=0; while [ $had = yes ] && [ ! -s /run/after-mark ] && [ $i -lt {bootvm.bound(10)} ]; do "
            "sleep 1; i=$((i+1)); done; [ $had = no ] || sleep 1; "
            "echo marks:; cat /run/after-mark 2>/dev/null; "
            f"[ -e {RECORD_DIR} ] && echo record-dir: still there || echo record-dir: gone")


def judge_check(lines, programs, fix):
    """duress check's two initramfs lines, before and after luks-wipe's
    config is edited: current (or differing only in PROGRAMS), then stale,
    with FIX (update-initramfs -u, dracut -f)."""
    # The helper and runner installed on this machine, if any, are not this build's.
    first = re.match(r"^(OK|ERROR): the initramfs \S+ (?:holds|is older than \S+ \((.*)\);)",
                     lines[0] if lines else "")
    ok(first and (first.group(1) == "OK" or
                  all(x.rsplit(" ", 1)[0] in programs for x in first.group(2).split(", "))),
       "duress check: the initramfs holds the current boot actions and luks-wipe's config",
       "\n".join(lines))
    ok(len(lines) == 2 and lines[1].startswith("ERROR: the initramfs")
       and f"{WIPE}.conf changed" in lines[1] and fix in lines[1],
       f"duress check: luks-wipe's config edited since: the initramfs is stale, the config changed; {fix}",
       "\n".join(lines))


def each_passphrase(boot, img, tmp):
    """A wrong then the real, the duress and the nuke passphrase at the
    prompt of the initramfs that BOOT(image, passphrases, **kw) boots (the
    keyscript's, the relay's): what each must do.  Returns the real
    passphrase's BootResult."""
    # --- a wrong one, then the real one: nothing runs ---------------------------------------------
    r = real = timed(boot, img, [WRONG, REAL], "wrong then real")
    ok(r.prompts == 2 and r.unlocked and r.finished,
       "wrong passphrase: refused (a second prompt), then the real one unlocks the disk", diag_boot(r))
    ok(r.shown.get(RECORD_DIR, "") is None and "marks:\nrecord-dir: gone" in (r.cmd_output or ""),
       "wrong and real passphrases: no record, and the unit's command runs nothing", diag_boot(r))

    # --- the duress passphrase: unlocks, the action runs once after boot ---------------------
    r = timed(boot, img, [DURESS], "duress")
    ok(r.unlocked and r.finished and r.prompts == 1,
       "duress passphrase: unlocks like the real one, at the first prompt", diag_boot(r))
    rec_dir, rec = r.shown.get(RECORD_DIR) or "", r.shown.get(RECORD) or ""
    ok(re.search(r"^drwx------ .* 0 +0 ", rec_dir, re.M) and
       re.search(r"^-rw------- .* 0 +0 .*record", rec_dir, re.M),
       "duress passphrase: the record is root's, 0600 in a 0700 directory under /run", rec_dir)
    ok(re.search(r"[0-9a-f]{64} after-mark", rec) and WIPE not in rec
       and DURESS not in rec,
       "duress passphrase: the record names after-mark with its hash, not the passphrase", repr(rec))
    out = r.cmd_output or ""
    ok(out.count("after-mark ran as 0 service=unlock") == 1 and "record-dir: gone" in out,
       "duress passphrase: the unit's command ran after-mark once, as root, and removed the record",
       diag_boot(r))

    # --- the nuke passphrase: key slots destroyed before the unlock ------------------------
    copy = os.path.join(tmp, "copy.img")
    bootvm.copy_image(img, copy)
    r = timed(boot, copy, [NUKE, REAL], "nuke then real", snapshot=False)
    ok(not r.unlocked and r.prompts >= 2,
       "nuke passphrase (the shipped luks-wipe, armed): refused, and then the real one is refused too",
       diag_boot(r))
    ok(not bootvm.test_passphrase(copy, REAL) and not bootvm.test_passphrase(copy, DURESS),
       "nuke passphrase: afterwards no passphrase opens the disk (no usable key slot)")
    ok(bootvm.test_passphrase(img, REAL),
       "the original image, booted with snapshot=on, still opens with the real passphrase")
    return real


def main():
    if len(sys.argv) != 9:
        print("usage: test_boot_duress.py CACHE DURESS HELPER RUNNER KEYSCRIPT HOOK UNIT EXAMPLES",
              file=sys.stderr)
        return 2
    cache, duress, helper, runner, keyscript, hook, unit, examples = (
        os.path.abspath(a) for a in sys.argv[1:])
    why = bootvm.missing()
    if why:
        skip_all(why)
    t0 = time.monotonic()
    try:
        kernel = bootvm.fetch_kernel(cache)
    except bootvm.Skip as e:
        skip_all(str(e))
    helper_at = configured(hook, "HELPER")
    runner_at = configured(hook, "RUNNER")
    keyscript_at = configured(hook, "KEYSCRIPT")
    after_cmd = exec_start(unit)
    ok(after_cmd == f"{helper_at} --after-boot",
       "the unit's ExecStart is the helper the hook copies, --after-boot", after_cmd)

    tmp = tempfile.mkdtemp(prefix="boot-duress.")
    try:
        boot_d = make_boot_dir(duress, examples, tmp)
        programs = {}
        programs.update(bootvm.with_libraries(helper, dest=helper_at))
        programs.update(bootvm.with_libraries(runner, dest=runner_at))
        actions = bootvm.tree_files(boot_d, prefix=BOOT_DIR)

        # The booted system: its copy of the boot directory, the helper, the
        # runner; after boot, the unit's command, then (bounded) what it started.
        root = os.path.join(tmp, "root")
        img = os.path.join(tmp, "disk.img")
        bootvm.make_rootfs(root, files={**programs, **actions}, after_boot=after_boot(after_cmd),
                           show=[RECORD_DIR, RECORD, "/run/plymouth"])
        bootvm.make_luks_image(root, img, [REAL, DURESS])
        ok(bootvm.test_passphrase(img, REAL) and bootvm.test_passphrase(img, DURESS)
           and not bootvm.test_passphrase(img, NUKE),
           "setup: the real and the duress passphrase are key slots, the nuke one is not")

        # The initramfs: this build's hook, keyscript, helper and runner where
        # a package puts them, the boot directory, the crypttab keyscript=.
        initrd = os.path.join(tmp, "initrd.img")
        # The build is an overlay of this machine's /: its libraries are there.
        build = {**actions,
                 helper_at: bootvm.File(src=helper, mode=0o755),
                 runner_at: bootvm.File(src=runner, mode=0o755),
                 keyscript_at: bootvm.File(src=keyscript, mode=0o755),
                 "/usr/share/initramfs-tools/hooks/pam_duress": bootvm.File(src=hook, mode=0o755)}
        try:
            t = time.monotonic()
            warnings = bootvm.build_initramfs(kernel, initrd, os.path.join(tmp, "mk"),
                                              crypttab_options=[f"keyscript={keyscript_at}"],
                                              files=build, chroot_commands=[PLYMOUTH_INSTALL],
                                              timeout=400)
            comment(f"initramfs with the hook and plymouth: {time.monotonic() - t:.1f} s")
        except (RuntimeError, OSError) as e:
            bail("mkinitramfs with this build's hook", e)
        ok("pam_duress" not in warnings or "E: pam_duress" not in warnings,
           "the hook ran without an error", warnings)
        listing = set(bootvm.initramfs_list(initrd))
        want = {p.lstrip("/") for p in (helper_at, runner_at, keyscript_at, BOOT_DIR + "/after-mark",
                                          BOOT_DIR + "/after-mark.sig", f"{BOOT_DIR}/{WIPE}",
                                          f"{BOOT_DIR}/{WIPE}.sig")}
        ok(want <= listing, "the initramfs holds the keyscript, the helper, the runner and the "
           "signed boot actions", "missing: " + " ".join(sorted(want - listing)))
        ok(f"{BOOT_DIR}/{WIPE}.conf".lstrip("/") in listing,
           "the hook put luks-wipe's config, its signature's companion, into the initramfs",
           "listing: " + " ".join(sorted(x for x in listing if "duress" in x)))

        p = subprocess.run(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", CHECK_INITRAMFS],
                           env=dict(os.environ, W=os.path.join(tmp, "etc-ov"), BOOT_D=boot_d, KS=keyscript_at,
                                    DURESS=duress, INITRD=initrd),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        lines = p.stdout.decode(errors="replace").splitlines()
        if len(lines) == 2 and all(x.startswith("WARN: cannot tell") for x in lines):
            comment("duress check cannot unpack the initramfs here: " + lines[0])
        else:
            for line in lines:
                comment("duress check: " + line)
            judge_check(lines, {helper_at, runner_at}, "fix: sudo update-initramfs -u")

        real = each_passphrase(bootvm.booter(kernel, initrd, append="nosplash"), img, tmp)
        ok(real.shown.get("/run/plymouth", "") is None,
           "nosplash: plymouth never started (no /run/plymouth): the prompts were askpass's own",
           f"shown={real.shown}")
        under_plymouth(kernel, initrd, img, listing, warnings)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    comment(f"boot-duress: {time.monotonic() - t0:.1f} s in all")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
