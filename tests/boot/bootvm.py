#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot a real Debian 12 initramfs and a LUKS2 disk in QEMU (issue 19).

Python 3 standard library only; root for everything but boot() (a private
mount namespace, overlayfs, chroot).  What it does, in order:

  fetch_kernel(cache)   Debian 12's cloud kernel (the package that
                        linux-image-cloud-amd64 depends on), fetched with
                        `apt-get download`, unpacked with `dpkg-deb -x`,
                        depmod run on it.  Cached in CACHE/<version>/; one
                        version is kept (others are removed), so the cache is
                        bounded (~110 MB).  Returns a Kernel.
  make_rootfs(dir, ...) the booted root: static busybox, /run /dev /proc
                        /sys, and /sbin/init (a shell script) that prints
                        ROOT-OK, shows the files asked for, runs the
                        after-boot command, prints its output between
                        markers, then `poweroff -f`.
  make_luks_image(...)  an ext4 image of that directory (mke2fs -d), made
                        LUKS2 offline (cryptsetup reencrypt --encrypt
                        --reduce-device-size 32M: no device-mapper needed),
                        key slots 0, 1, ... for the passphrases given, all
                        cheap (pbkdf2, 1000 iterations).  Fixed LUKS UUID
                        (LUKS_UUID) so the initramfs does not depend on it.
  test_passphrase(img, p) / kill_slot(img, slot)
                        `cryptsetup open --test-passphrase` (no
                        device-mapper) and `luksKillSlot`.
  build_initramfs(...)  the REAL mkinitramfs with the real cryptsetup hooks,
                        in a private mount namespace, chrooted into a
                        tmpfs-backed overlay of / (the machine's /etc, /boot
                        and initramfs are untouched), with the kernel's
                        modules bound in, /etc/crypttab holding
                        "NAME UUID=LUKS_UUID none luks,initramfs[,OPTS]",
                        CRYPTSETUP=y in cryptsetup-initramfs's conf-hook,
                        MODULES=list of VM_MODULES (the VM's drivers).
  boot(...)             qemu-system-x86_64 with TCG, the serial console read
                        continuously (a thread); each passphrase is typed at
                        its own prompt (after the prompt text is seen:
                        keystrokes sent earlier are discarded), lines end
                        with \\r; every wait bounded, QEMU killed at the end.
                        Returns a BootResult (transcript, marker seen, ...).
  missing()             why this cannot run here (None when it can): the
                        caller SKIPs with that reason.
  append_files(initrd, out, files)
                        OUT: INITRD with FILES appended as one more
                        (uncompressed newc) cpio archive, which the kernel
                        unpacks after the others: each file replaces the
                        one at its path.  A variant of a built initramfs
                        in a blink, without building it again.

Every bound here (the builders' TIMEOUT, boot()'s TIMEOUT, PROMPT_TIMEOUT and
END_TIMEOUT) is multiplied by DURESS_TIMEOUT_FACTOR (bound(); a whole number,
1 when unset; tools/run-checks.sh sets it from the machine's load).  They are
bounds against a hang: no test here judges how long anything took.

dracut with systemd in the initramfs (Fedora's way; test boot-dracut-duress):

  build_dracut_initramfs(kernel, out, work, files=, chroot_commands=,
                        dracut_args=)  the REAL dracut (dracut-core 059),
                        built as build_initramfs builds (same overlay script,
                        _OVERLAY): dracut --force --no-hostonly
                        --no-hostonly-cmdline --kver VERSION --add "crypt
                        systemd" --compress zstd --drivers "VM_MODULES"
                        [DRACUT_ARGS].  No crypttab:
                        boot with append=DRACUT_APPEND (rd.luks.name=
                        LUKS_UUID=NAME rd.shell=0 rd.emergency=poweroff) and
                        prompt=DRACUT_PROMPT (systemd-ask-password-console's
                        "Please enter passphrase for disk NAME: ", then
                        "(press TAB for no echo) ").  The root needs an
                        os-release for systemd's switch-root:
                        make_rootfs(dir, files={**DRACUT_ROOT_FILES, ...}).
                        A file of files= reaches the image by dracut_args=
                        ["--include", SRC, DEST] (a hook in
                        /usr/lib/dracut/hooks/pre-pivot/, say).
                        systemd-cryptsetup asks 3 times, then its unit fails
                        and dracut's emergency powers off.  Keys typed before
                        the prompt are discarded; right after it they are read.
  dracut_initramfs_list(initrd)  its paths and header (version, modules), by
                        lsinitrd.
  missing_dracut()      why dracut's image cannot be built here, or None.

Entry points for the integration (the keyscript, the verifier, the hook):

  * Files in the initramfs BUILD overlay (a hook, binaries, /etc/duress-boot.d,
    a keyscript): build_initramfs(..., files={"/etc/initramfs-tools/hooks/x":
    File(src="/path/on/host", mode=0o755), "/etc/duress-boot.d/a":
    File(data=b"...", mode=0o700)}).  They are copied into the overlay (as
    root:root) before mkinitramfs runs; directories are created.  A whole
    tree: files=tree_files("/some/dir", prefix="/").  Commands run in the
    chroot before mkinitramfs: build_initramfs(..., chroot_commands=["dpkg
    -i /tmp/x.deb"]) (the files land first).
  * A crypttab option: build_initramfs(..., crypttab_options=["keyscript=
    /usr/libexec/pam_duress/unlock-keyscript"]) (appended after
    "luks,initramfs").  The crypttab name is NAME (default "cryptroot").
  * Files and an after-boot command in the ROOT image: make_rootfs(dir,
    files={...same File mapping...}, after_boot="/usr/libexec/... --after",
    show=["/run/unlock-helper/record", "/run/unlock-helper"]).  A dynamically
    linked program also needs its libraries: files.update(with_libraries(
    "/path/to/prog", dest="/usr/libexec/pam_duress/prog")).  The after-boot
    command runs as root from /sbin/init (sh -c), after proc/sys/dev/run are
    there; its output (stdout+stderr) is BootResult.cmd_output, its status
    BootResult.cmd_status.  show= paths are listed (ls -la) and, for files,
    printed (BootResult.shown[path], None when absent).
  * Booting without snapshot=on (the disk is really written, for a
    destructive scenario: key slots destroyed): boot(..., snapshot=False) on
    a copy of the image (copy_image(src, dst)).

Example (as the meson test boot-vm does):

    import bootvm
    why = bootvm.missing()                      # skip if not None
    k = bootvm.fetch_kernel(cache)
    bootvm.make_rootfs(root)
    bootvm.make_luks_image(root, img, ["real", "second"])
    bootvm.build_initramfs(k, initrd, work)
    r = bootvm.boot(k, initrd, img, ["wrong", "real"])
    r.unlocked, r.prompts, r.transcript, r.seconds

CLI: bootvm.py check | kernel CACHE | demo CACHE WORK [PASSPHRASE...]
"""

import dataclasses
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

LUKS_UUID = "0b00b00b-d00d-4e55-8ace-000000000019"
NAME = "cryptroot"
PROMPT = b"Please unlock disk "
MARK_OK = "ROOT-OK"
MARK_END = "ROOT-END"
# The kernel modules the VM needs (its disk, device-mapper, the LUKS2
# cipher; the rest is built in): both builders take only these instead of
# every storage driver (MODULES=most, dracut --no-hostonly), the hooks under
# test run as they do on a real machine, and a build takes a quarter of the
# time (mkinitramfs: 14 s against 54 s here).
VM_MODULES = ("virtio_pci", "virtio_blk", "dm_mod", "dm_crypt", "xts", "aesni_intel")
# dracut with systemd in the initramfs (Fedora's way), build_dracut_initramfs:
# its modules crypt and systemd forced in (their names in dracut 059's
# modules.d), zstd like the mkinitramfs image, VM_MODULES its only drivers.
DRACUT_DEFAULT_ARGS = ("--add", "crypt systemd", "--compress", "zstd", "--drivers", " ".join(VM_MODULES))
# The volume named on the kernel command line (no crypttab in the image):
# systemd-cryptsetup-generator makes systemd-cryptsetup@NAME.service of it.
# rd.shell=0 rd.emergency=poweroff: a failure (dracut's emergency service)
# powers off instead of waiting at a maintenance shell.
DRACUT_APPEND = f"rd.luks.name={LUKS_UUID}={NAME} rd.shell=0 rd.emergency=poweroff"
# systemd-ask-password-console's prompt on the serial console.
DRACUT_PROMPT = f"Please enter passphrase for disk {NAME}: ".encode()
QEMU = "qemu-system-x86_64"
BUSYBOX = "/bin/busybox"
# Reserved at the end of the ext4 image for the LUKS2 header (the data moves).
LUKS_RESERVE_MB = 32
# Under TCG every try costs its key derivation: keep them cheap.
CHEAP_SLOT = ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]
TOOLS = [QEMU, "mkinitramfs", "cryptsetup", "mke2fs", "dpkg-deb", "apt-get",
         "apt-cache", "unshare", "chroot", "depmod", "mount", "zstd", "cpio"]


class Skip(Exception):
    """Something this harness needs is not there: the test SKIPs with str(e)."""


def bound(seconds):
    """A bound against a hang: SECONDS times DURESS_TIMEOUT_FACTOR (a whole
    number from 1 to 100; 1 when unset or not one)."""
    v = os.environ.get("DURESS_TIMEOUT_FACTOR", "")
    factor = int(v) if v.isdigit() and 1 <= int(v) <= 100 else 1
    return seconds * factor


@dataclasses.dataclass
class Kernel:
    version: str
    vmlinuz: str
    root: str  # the unpacked package: ROOT/lib/modules/VERSION, ROOT/boot/

    @property
    def modules(self):
        return os.path.join(self.root, "lib", "modules", self.version)

    @property
    def config(self):
        return os.path.join(self.root, "boot", "config-" + self.version)


@dataclasses.dataclass
class File:
    """A file to install: from src (a host path) or data (bytes), with mode."""
    src: str = None
    data: bytes = None
    mode: int = 0o644


# systemd's switch-root refuses a root without an os-release ("does not seem
# to be an OS tree"): make_rootfs(dir, files={**DRACUT_ROOT_FILES, ...}).
DRACUT_ROOT_FILES = {"/etc/os-release": File(data=b'ID=bootvm\nNAME="bootvm busybox root"\n')}


@dataclasses.dataclass
class BootResult:
    transcript: str  # the whole serial console, decoded
    unlocked: bool  # the root's init ran (ROOT-OK seen)
    finished: bool  # the init reached its end (ROOT-END seen)
    prompts: int  # passphrase prompts seen
    typed: int  # passphrases typed
    timed_out: bool
    returncode: int  # QEMU's (None if it had to be killed)
    seconds: float  # from QEMU's start to its end
    prompt_seconds: list  # when each prompt appeared, from QEMU's start
    typed_seconds: list  # when each passphrase was typed, from QEMU's start
    unlocked_seconds: float  # when the root's ROOT-OK appeared (None: it did not)
    cmd_output: str  # the after-boot command's output (None if not run)
    cmd_status: int  # its exit status (None if not run)
    shown: dict  # show= path -> its listing and content, None when absent

    def tail(self, n=30):
        return "\n".join(self.transcript.splitlines()[-n:])


def _run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.STDOUT)
    kw.setdefault("check", False)
    p = subprocess.run(cmd, **kw)
    if p.returncode != 0:
        out = p.stdout.decode(errors="replace") if isinstance(p.stdout, bytes) else (p.stdout or "")
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{out[-3000:]}")
    return p


def missing():
    """Why the harness cannot run here, or None."""
    if os.geteuid() != 0:
        return "not root: mkinitramfs runs in a private mount namespace over an overlay of /"
    absent = [t for t in TOOLS if shutil.which(t) is None]
    if absent:
        return "missing tools: " + " ".join(absent) + " (tools/deps.sh boot)"
    if not os.path.exists("/usr/share/initramfs-tools/hooks/cryptroot"):
        return "cryptsetup-initramfs is not installed (tools/deps.sh boot)"
    if not os.access(BUSYBOX, os.X_OK):
        return f"no {BUSYBOX} (busybox-static; tools/deps.sh boot)"
    ldd = subprocess.run(["ldd", BUSYBOX], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if b"not a dynamic executable" not in ldd.stdout:
        return f"{BUSYBOX} is not static (install busybox-static)"
    with tempfile.TemporaryDirectory() as d:
        probe = ("mount -t tmpfs bootvm-probe \"$1\" && mkdir \"$1/u\" \"$1/w\" \"$1/r\" && "
                 "mount -t overlay -o \"lowerdir=/,upperdir=$1/u,workdir=$1/w\" bootvm-probe \"$1/r\"")
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", probe, "sh", d],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return ("cannot mount a tmpfs-backed overlay of / in a private mount namespace: "
                    + p.stdout.decode(errors="replace").strip())
    return None


# --- the kernel ----------------------------------------------------------------------------

def kernel_package():
    """The versioned cloud kernel package linux-image-cloud-amd64 depends on."""
    p = subprocess.run(["apt-cache", "depends", "linux-image-cloud-amd64"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    m = re.search(r"Depends: (linux-image-\S+-cloud-amd64)\b", p.stdout)
    return m.group(1) if m else None


def _cached(cache):
    for v in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        k = _kernel_in(cache, v)
        if k:
            return k
    return None


def _kernel_in(cache, version):
    root = os.path.join(cache, version)
    vmlinuz = os.path.join(root, "boot", "vmlinuz-" + version)
    if os.path.exists(os.path.join(root, ".complete")) and os.path.exists(vmlinuz):
        return Kernel(version, vmlinuz, root)
    return None


def fetch_kernel(cache):
    """The cloud kernel, unpacked in CACHE/VERSION (fetched once, reused).

    Only one version is kept: fetching a new one removes the others.  A
    lock (CACHE/.lock) serializes concurrent callers.  Raises Skip when no
    kernel can be had (no package known to apt, download failed, nothing
    cached)."""
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        pkg = kernel_package()
        if pkg is None:
            k = _cached(cache)
            if k:
                return k
            raise Skip("apt knows no linux-image-cloud-amd64 (Debian 12's cloud kernel)")
        version = pkg[len("linux-image-"):]
        k = _kernel_in(cache, version)
        if k:
            return k
        tmp = tempfile.mkdtemp(prefix="fetch.", dir=cache)
        try:
            p = subprocess.run(["apt-get", "download", "-q", pkg], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
            if p.returncode != 0 or not debs:
                k = _cached(cache)
                if k:
                    return k
                raise Skip(f"apt-get download {pkg} failed: {p.stdout.strip()[-300:]}")
            root = os.path.join(tmp, "root")
            _run(["dpkg-deb", "-x", os.path.join(tmp, debs[0]), root])
            shutil.rmtree(os.path.join(root, "usr", "share"), ignore_errors=True)
            if not os.path.isdir(os.path.join(root, "lib", "modules", version)):
                # A merged-/usr package: modules under usr/lib.
                os.makedirs(os.path.join(root, "lib"), exist_ok=True)
                os.rename(os.path.join(root, "usr", "lib", "modules"), os.path.join(root, "lib", "modules"))
            _run(["depmod", "-b", root, version])
            open(os.path.join(root, ".complete"), "w").close()
            for old in os.listdir(cache):
                if not old.startswith(".") and os.path.join(cache, old) != tmp:
                    shutil.rmtree(os.path.join(cache, old), ignore_errors=True)
            os.rename(root, os.path.join(cache, version))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return _kernel_in(cache, version)


# --- files -----------------------------------------------------------------------------------

def install_files(top, files):
    """Each File of FILES ({absolute path: File}) under the directory TOP."""
    for dest, f in files.items():
        path = os.path.join(top, dest.lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        if f.src is not None:
            shutil.copyfile(f.src, path)
        else:
            with open(path, "wb") as out:
                out.write(f.data)
        os.chmod(path, f.mode)


def tree_files(src, prefix="/"):
    """A directory's regular files as a FILES mapping, under PREFIX, modes kept."""
    out = {}
    for d, _, names in os.walk(src):
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                rel = os.path.relpath(p, src)
                out[os.path.join(prefix, rel)] = File(src=p, mode=os.stat(p).st_mode & 0o7777)
    return out


def with_libraries(prog, dest=None):
    """PROG (at DEST, default its own path) and the libraries ldd lists, with
    the dynamic loader, at their own paths: for a dynamically linked program
    in the busybox root."""
    out = {dest or prog: File(src=prog, mode=os.stat(prog).st_mode & 0o7777)}
    p = subprocess.run(["ldd", prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout.splitlines():
        m = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if m:
            lib = m.group(1)
            out[lib] = File(src=os.path.realpath(lib), mode=0o755)
            # The loader is also reached through /lib64 and /lib: both are
            # real directories in the busybox root.
    return out


# --- the root filesystem ---------------------------------------------------------------------------

INIT = r"""#!/bin/sh
# /sbin/init of the test root (tests/boot/bootvm.py): say what is seen, run
# the after-boot command, power off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
# The initramfs moved its /proc, /sys, /dev and /run here (its /run with
# what it left there): mount only what is missing (busybox-static has no
# mountpoint applet).
[ -r /proc/mounts ] || mount -t proc proc /proc
mounted() { awk -v d="$1" '$2 == d { f = 1 } END { exit !f }' /proc/mounts; }
mounted /sys || mount -t sysfs sys /sys
mounted /dev || mount -t devtmpfs dev /dev
mounted /run || mount -t tmpfs -o mode=0755 run /run
# A plymouth daemon that the initramfs started (a splash boot) holds the
# console (TIOCCONS) and redraws what is written there: end it, as
# plymouth-quit.service would, so that the lines below reach the console as
# they are written.
if [ -f /run/plymouth/pid ]; then
	pid=$(cat /run/plymouth/pid)
	kill "$pid" 2>/dev/null
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
fi
echo "ROOT-OK root=$(awk '$2 == "/" { d = $1 } END { print d }' /proc/mounts) run=$(awk '$2 == "/run" { t = $3 } END { print t }' /proc/mounts)"
for p in $(cat /bootvm/show 2>/dev/null); do
	if [ -e "$p" ]; then
		echo "ROOT-SHOW-BEGIN $p"
		ls -lan "$p"
		[ ! -f "$p" ] || cat "$p"
		echo "ROOT-SHOW-END $p"
	else
		echo "ROOT-SHOW-ABSENT $p"
	fi
done
if [ -f /bootvm/after-boot ]; then
	echo "ROOT-CMD-BEGIN"
	sh /bootvm/after-boot </dev/null 2>&1
	echo "ROOT-CMD-END status=$?"
fi
echo "ROOT-END"
sync
poweroff -f
sleep 30
"""


def make_rootfs(top, files=None, after_boot=None, show=()):
    """The booted root in the (new or empty) directory TOP: static busybox
    with every applet linked, /run /dev /proc /sys /tmp /etc, /sbin/init.

    FILES: {absolute path: File} added to it.  AFTER_BOOT: a shell command
    line /sbin/init runs (sh -c) once everything is mounted; its output goes
    between ROOT-CMD-BEGIN and ROOT-CMD-END.  SHOW: paths listed (and, for
    files, printed) before it runs, e.g. /run/unlock-helper/record."""
    os.makedirs(top, exist_ok=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "lib", "lib64", "etc", "run", "dev", "proc",
              "sys", "tmp", "root", "var", "bootvm"):
        os.makedirs(os.path.join(top, d), exist_ok=True)
    os.chmod(os.path.join(top, "tmp"), 0o1777)
    os.chmod(os.path.join(top, "root"), 0o700)
    shutil.copyfile(BUSYBOX, os.path.join(top, "bin", "busybox"))
    os.chmod(os.path.join(top, "bin", "busybox"), 0o755)
    applets = subprocess.run([BUSYBOX, "--list-full"], stdout=subprocess.PIPE, text=True, check=True)
    for a in applets.stdout.split():
        link = os.path.join(top, a)
        if a == "bin/busybox" or os.path.lexists(link):
            continue
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink("/bin/busybox", link)
    install_files(top, {
        "/sbin/init": File(data=INIT.encode(), mode=0o755),
        "/etc/passwd": File(data=b"root:x:0:0:root:/root:/bin/sh\n"),
        "/etc/group": File(data=b"root:x:0:\n"),
        "/etc/fstab": File(data=b""),
        "/bootvm/show": File(data="".join(p + "\n" for p in show).encode()),
    })
    if after_boot is not None:
        install_files(top, {"/bootvm/after-boot": File(data=(after_boot + "\n").encode(), mode=0o755)})
    install_files(top, files or {})


# --- the LUKS2 image ------------------------------------------------------------------------------

def _keyfile(d, passphrase):
    fd, path = tempfile.mkstemp(dir=d)
    with os.fdopen(fd, "wb") as f:
        f.write(passphrase.encode() if isinstance(passphrase, str) else passphrase)
    return path


def make_luks_image(top, image, passphrases, size_mb=None):
    """IMAGE: the directory TOP as ext4, made LUKS2 in place with a key slot
    for each of PASSPHRASES (slot 0 the first), all cheap.  Offline: no
    device-mapper.  SIZE_MB defaults to what TOP needs plus room."""
    if not passphrases:
        raise ValueError("at least one passphrase")
    if size_mb is None:
        used = sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(top) for f in fs)
        size_mb = max(32, used // (1 << 20) + 24)
    total = size_mb + LUKS_RESERVE_MB
    if os.path.exists(image):
        os.unlink(image)
    with open(image, "wb") as f:
        f.truncate(total << 20)
    _run(["mke2fs", "-q", "-t", "ext4", "-L", "bootvm-root", "-d", top, "-F", image, f"{size_mb}M"])
    with tempfile.TemporaryDirectory() as d:
        first = _keyfile(d, passphrases[0])
        # The VM tests run at once and share LUKS_UUID.  reencrypt writes its
        # temporary header, LUKS2-temp-UUID.new, in the working directory
        # (they share the build directory: one saw another's, "already
        # exists"), and takes a lock named after the UUID in /run/cryptsetup
        # (10 of 15 made at once failed: "Reencryption process is already
        # running").  Each image is its test's alone: no lock is needed.
        _run(["cryptsetup", "reencrypt", "--batch-mode", "--encrypt", "--type", "luks2",
              "--reduce-device-size", f"{LUKS_RESERVE_MB}M", "--uuid", LUKS_UUID, *CHEAP_SLOT,
              "--disable-locks", "--key-file", first, os.path.abspath(image)], cwd=d)
        for p in passphrases[1:]:
            _run(["cryptsetup", "luksAddKey", "--batch-mode", *CHEAP_SLOT,
                  "--key-file", first, image, _keyfile(d, p)])


def test_passphrase(image, passphrase):
    """Whether PASSPHRASE opens a key slot of IMAGE (no device-mapper needed)."""
    p = subprocess.run(["cryptsetup", "open", "--test-passphrase", "--key-file", "-", image],
                       input=passphrase.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def kill_slot(image, slot):
    """Destroys key slot SLOT of IMAGE (luksKillSlot, no passphrase asked)."""
    _run(["cryptsetup", "luksKillSlot", "--batch-mode", image, str(slot)], stdin=subprocess.DEVNULL)


def copy_image(src, dst):
    """A copy of an image, for a boot without snapshot=on (sparse)."""
    _run(["cp", "--sparse=always", src, dst])


# --- the initramfs ------------------------------------------------------------------------------------

# The overlay of / in a private mount namespace, the kernel's modules bound
# in, the staged files and commands applied: what INSIDE (mkinitramfs) and
# DRACUT_INSIDE (dracut) share.  Arguments: WORK KVER KROOT STAGE OUT.
_OVERLAY = r"""
set -eu
W=$1 KVER=$2 KROOT=$3 STAGE=$4 OUT=$5
OV=$W/ov
R=$OV/root
mkdir -p "$OV"
mount -t tmpfs -o mode=0700,size=2G bootvm-ov "$OV"
mkdir "$OV/u" "$OV/w" "$R"
mount -t overlay -o "lowerdir=/,upperdir=$OV/u,workdir=$OV/w" bootvm-root "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=1777 tmp "$R/tmp"
mount -t tmpfs -o mode=0755 run "$R/run"
mkdir -p "$R/lib/modules/$KVER" "$R/boot"
mount --bind -o ro "$KROOT/lib/modules/$KVER" "$R/lib/modules/$KVER"
cp "$KROOT/boot/config-$KVER" "$KROOT/boot/System.map-$KVER" "$R/boot/"
cp -a "$STAGE/." "$R/"
if [ -f "$STAGE/.bootvm-commands" ]; then
	chroot "$R" /bin/sh -e /.bootvm-commands
fi
"""

# Runs as: unshare -m --propagation private -- sh -c INSIDE sh WORK KVER KROOT STAGE OUT
INSIDE = _OVERLAY + r"""
chroot "$R" mkinitramfs -o /tmp/initrd.img "$KVER"
cp "$R/tmp/initrd.img" "$OUT"
"""

# Runs as: unshare -m ... -- sh -c DRACUT_INSIDE sh WORK KVER KROOT STAGE OUT [DRACUT ARGS...]
# (--no-hostonly: the build host's / is not encrypted, dracut would leave the
# crypt module out; its --kver and the output name are given here.)
DRACUT_INSIDE = _OVERLAY + r"""
shift 5
chroot "$R" dracut --force --no-hostonly --no-hostonly-cmdline --kver "$KVER" "$@" /tmp/initrd.img
cp "$R/tmp/initrd.img" "$OUT"
"""


def build_initramfs(kernel, out, work, name=NAME, crypttab_options=(), files=None,
                    chroot_commands=(), conf=None, timeout=300):
    """OUT: an initramfs for KERNEL by the real mkinitramfs with the real
    cryptsetup hooks, built in a private mount namespace chrooted into a
    tmpfs-backed overlay of / (WORK: a scratch directory, emptied).

    The crypttab line: "NAME UUID=LUKS_UUID none luks,initramfs" plus
    CRYPTTAB_OPTIONS.  FILES ({absolute path: File}) go into the overlay
    first, then CHROOT_COMMANDS run there (sh -e), then mkinitramfs.  CONF:
    extra initramfs.conf lines (default: COMPRESS=zstd, RESUME=none,
    MODULES=list, the list being VM_MODULES).  Returns mkinitramfs's output
    (warnings)."""
    opts = ",".join(["luks", "initramfs", *crypttab_options])
    base = {
        "/etc/crypttab": File(data=f"{name} UUID={LUKS_UUID} none {opts}\n".encode()),
        "/etc/cryptsetup-initramfs/conf-hook": File(data=b"CRYPTSETUP=y\n"),
        "/etc/initramfs-tools/conf.d/zz-bootvm": File(
            data=(conf or "MODULES=list\nCOMPRESS=zstd\nRESUME=none\n").encode()),
        "/etc/initramfs-tools/modules": File(data="".join(m + "\n" for m in VM_MODULES).encode()),
        "/etc/initramfs-tools/conf.d/resume": File(data=b"RESUME=none\n"),
    }
    return _build_in_overlay(INSIDE, "mkinitramfs", kernel, out, work, base, files, chroot_commands,
                             (), timeout)


def _build_in_overlay(script, what, kernel, out, work, base, files, chroot_commands, args, timeout):
    """SCRIPT (INSIDE, DRACUT_INSIDE) in a private mount namespace over an
    overlay of /, BASE then FILES then CHROOT_COMMANDS staged in it, ARGS
    after its own; OUT copied out.  WORK is emptied and removed.  Returns
    the output; RuntimeError (naming WHAT) when it failed."""
    if os.path.exists(work):
        shutil.rmtree(work)
    stage = os.path.join(work, "stage")
    os.makedirs(stage)
    install_files(stage, base)
    install_files(stage, files or {})
    if chroot_commands:
        install_files(stage, {"/.bootvm-commands": File(data="\n".join(chroot_commands).encode() + b"\n")})
    for d, dirs, fs in os.walk(stage):
        for x in dirs + fs:
            os.lchown(os.path.join(d, x), 0, 0)
    if os.path.exists(out):
        os.unlink(out)
    # Its own process group: on timeout, the builder and its hooks end too.
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "--", "sh", "-c", script, "sh",
                          work, kernel.version, kernel.root, stage, out, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = p.communicate(timeout=bound(timeout))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        output, _ = p.communicate()
        output += f"\n(killed after {bound(timeout)} s)"
    shutil.rmtree(work, ignore_errors=True)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"{what} in the overlay failed (exit {p.returncode}):\n{output[-3000:]}")
    return output


def missing_dracut():
    """Why a dracut initramfs (systemd in it, systemd-cryptsetup) cannot be
    built here, or None.  Check missing() too."""
    for path, why in (("/usr/bin/dracut", "no dracut (dracut-core; tools/deps.sh boot)"),
                      ("/usr/lib/dracut/modules.d/90crypt", "dracut has no crypt module (dracut-core)"),
                      ("/usr/lib/dracut/modules.d/00systemd", "dracut has no systemd module (dracut-core)"),
                      ("/lib/systemd/systemd", "no systemd (/lib/systemd/systemd) to put in the initramfs"),
                      ("/lib/systemd/systemd-cryptsetup", "no /lib/systemd/systemd-cryptsetup (systemd-cryptsetup, "
                       "or systemd before 256)"),
                      ("/usr/bin/lsinitrd", "no lsinitrd (dracut-core)")):
        if not os.path.exists(path):
            return why
    return None


def build_dracut_initramfs(kernel, out, work, files=None, chroot_commands=(), dracut_args=(), timeout=300):
    """OUT: an initramfs for KERNEL by the real dracut with systemd in it
    (modules crypt and systemd added, --no-hostonly), built as
    build_initramfs builds (a private mount namespace, chrooted into a
    tmpfs-backed overlay of /, the kernel's modules bound in; WORK a scratch
    directory, emptied).  FILES ({absolute path: File}) go into the overlay
    first, then CHROOT_COMMANDS run there (sh -e), then dracut with
    DRACUT_DEFAULT_ARGS and DRACUT_ARGS.  No crypttab: the volume is named
    on the kernel command line (DRACUT_APPEND).  Returns dracut's output."""
    return _build_in_overlay(DRACUT_INSIDE, "dracut", kernel, out, work, {}, files, chroot_commands,
                             (*DRACUT_DEFAULT_ARGS, *dracut_args), timeout)


def append_files(initrd, out, files):
    """OUT: INITRD followed by a newc cpio archive of FILES ({absolute path:
    File}, root:root, their directories 0755), padded to 4 bytes as the
    kernel wants between archives.  The kernel unpacks the archives in turn:
    a file of FILES replaces the one at its path in INITRD."""
    with tempfile.TemporaryDirectory() as d:
        install_files(d, files)
        names = []
        for top, dirs, fs in os.walk(d):
            for x in dirs + fs:
                path = os.path.join(top, x)
                os.lchown(path, 0, 0)
                if x in dirs:
                    os.chmod(path, 0o755)
                names.append(os.path.relpath(path, d))
        archive = _run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=d, stderr=subprocess.PIPE,
                       input="\n".join(sorted(names)).encode() + b"\n").stdout
    with open(initrd, "rb") as f:
        head = f.read()
    with open(out, "wb") as f:
        f.write(head + b"\0" * (-len(head) % 4) + archive)


def initramfs_list(initrd):
    """The paths in an initramfs (unmkinitramfs is not needed: lsinitramfs)."""
    p = _run(["lsinitramfs", initrd], text=True)
    return p.stdout.split()


_LS_LINE = re.compile(r"^[-dlcbps][rwxsStT-]{9}\S*\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*)?\d+\s+"
                      r"\w{3}\s+\d+\s+[\d:]+\s+(.*)$")


def dracut_initramfs_list(initrd):
    """The paths in a dracut initramfs, by dracut's own lister (lsinitrd:
    the ls -l lines of its listing, a symlink's target left off), and its
    header (the dracut version and modules) as a second value."""
    p = _run(["lsinitrd", initrd], text=True)
    paths, header = [], []
    for line in p.stdout.splitlines():
        m = _LS_LINE.match(line)
        if m:
            paths.append(m.group(1).split(" -> ")[0])
        else:
            header.append(line)
    return paths, "\n".join(header)


# --- QEMU ------------------------------------------------------------------------------------------------

class _Console:
    """QEMU's serial console, read by a thread into a buffer."""

    def __init__(self, proc):
        self.proc = proc
        self.buf = bytearray()
        self.cond = threading.Condition()
        self.eof = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        fd = self.proc.stdout.fileno()
        while True:
            try:
                b = os.read(fd, 4096)
            except OSError:
                b = b""
            with self.cond:
                if not b:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.buf += b
                self.cond.notify_all()

    def wait(self, pred, deadline):
        """Until PRED(buffer) is true (returns True) or the console ends or
        DEADLINE (time.monotonic) passes (returns False)."""
        with self.cond:
            while not pred(self.buf):
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return pred(self.buf)
                self.cond.wait(min(left, 0.5))
            return True

    def text(self):
        with self.cond:
            return self.buf.decode(errors="replace")


def qemu_command(kernel, initrd, image, name=NAME, snapshot=True, memory=512, append=""):
    drive = f"file={image},if=virtio,format=raw" + (",snapshot=on" if snapshot else "")
    cmdline = f"console=ttyS0 root=/dev/mapper/{name} ro panic=-1" + (" " + append if append else "")
    return [QEMU, "-accel", "tcg", "-cpu", "max", "-m", str(memory), "-serial", "stdio",
            "-monitor", "none", "-display", "none", "-nodefaults", "-no-reboot",
            "-kernel", kernel.vmlinuz, "-initrd", initrd, "-append", cmdline, "-drive", drive]


def _between(text, begin, end):
    i = text.find(begin)
    if i < 0:
        return None
    i = text.find("\n", i)
    j = text.find(end, i + 1)
    return text[i + 1:j if j >= 0 else len(text)].replace("\r", "")


def boot(kernel, initrd, image, passphrases, name=NAME, snapshot=True, timeout=180,
         prompt_timeout=120, end_timeout=40, append="", prompt=PROMPT):
    """Boots IMAGE with KERNEL and INITRD under TCG and types PASSPHRASES,
    each at its own prompt (the next one after the next prompt appears).

    Ends when the root's init is done (ROOT-END) and QEMU has exited, when a
    prompt appears with no passphrase left to type (refused), when QEMU
    exits, or at TIMEOUT seconds (the whole boot; QEMU is killed).
    PROMPT_TIMEOUT bounds the wait for each prompt, END_TIMEOUT the wait
    after the last passphrase for the root's init to end (all three times
    bound()'s factor).  SNAPSHOT=False
    writes to IMAGE.  PROMPT: the bytes that mark a prompt on the console
    (default Debian's askpass text, which a keyscript using askpass shows
    too); APPEND: more kernel command line."""
    if shutil.which(QEMU) is None:
        raise Skip(f"no {QEMU} (qemu-system-x86)")
    cmd = qemu_command(kernel, initrd, image, name=name, snapshot=snapshot, append=append)
    timeout, prompt_timeout, end_timeout = bound(timeout), bound(prompt_timeout), bound(end_timeout)
    start = time.monotonic()
    hard = start + timeout
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    con = _Console(proc)
    prompt_seconds = []
    typed_seconds = []
    unlocked_seconds = None
    typed = 0
    timed_out = False

    def prompts(b):
        return b.count(prompt)

    def seen_end(b):
        return MARK_END.encode() + b"\r" in b or MARK_END.encode() + b"\n" in b

    try:
        for p in passphrases:
            want = typed + 1
            if not con.wait(lambda b: prompts(b) >= want or seen_end(b),
                            min(hard, time.monotonic() + prompt_timeout)):
                timed_out = not con.eof
                break
            if prompts(con.buf) < want:
                break  # the root came up without asking (or QEMU ended)
            prompt_seconds.append(round(time.monotonic() - start, 1))
            # The prompt text is out; askpass reads once it is written.
            time.sleep(0.3)
            proc.stdin.write((p.encode() if isinstance(p, str) else p) + b"\r")
            proc.stdin.flush()
            typed_seconds.append(round(time.monotonic() - start, 2))
            typed += 1
        else:
            # All typed: the root's init up (timed, for bench/boot), then its
            # end, or a prompt with nothing left to type.
            if con.wait(lambda b: MARK_OK.encode() in b or prompts(b) > typed,
                        min(hard, time.monotonic() + prompt_timeout + end_timeout)) \
                    and MARK_OK.encode() in con.buf:
                unlocked_seconds = round(time.monotonic() - start, 2)
            ok = con.wait(lambda b: seen_end(b) or prompts(b) > typed,
                          min(hard, time.monotonic() + prompt_timeout + end_timeout))
            if not ok and not con.eof:
                timed_out = True
            if prompts(con.buf) > typed:
                prompt_seconds.append(round(time.monotonic() - start, 1))
        if seen_end(con.buf):
            try:
                proc.wait(timeout=max(0.1, min(10, hard - time.monotonic())))
            except subprocess.TimeoutExpired:
                pass
    finally:
        if proc.poll() is None:
            proc.kill()
        try:
            proc.stdin.close()
        except OSError:
            pass
        rc = proc.wait()
        con.thread.join(5)
    text = con.text()
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    unlocked = any(ln.startswith(MARK_OK) for ln in lines)
    finished = MARK_END in lines
    cmd_output = _between(text, "ROOT-CMD-BEGIN", "ROOT-CMD-END")
    m = re.search(r"ROOT-CMD-END status=(\d+)", text)
    shown = {}
    for ln in lines:
        if ln.startswith("ROOT-SHOW-ABSENT "):
            shown[ln.split(" ", 1)[1]] = None
        elif ln.startswith("ROOT-SHOW-BEGIN "):
            path = ln.split(" ", 1)[1]
            shown[path] = _between(text, "ROOT-SHOW-BEGIN " + path, "ROOT-SHOW-END " + path)
    return BootResult(transcript=text, unlocked=unlocked, finished=finished,
                      prompts=con.buf.count(prompt), typed=typed, timed_out=timed_out,
                      returncode=rc if rc is not None and rc >= 0 else None,
                      seconds=round(time.monotonic() - start, 1), prompt_seconds=prompt_seconds,
                      typed_seconds=typed_seconds, unlocked_seconds=unlocked_seconds,
                      cmd_output=cmd_output, cmd_status=int(m.group(1)) if m else None, shown=shown)


def booter(kernel, initrd, dracut=False, append=""):
    """boot() of INITRD with KERNEL as a function of (image, passphrases,
    **kw), APPEND on the kernel command line; DRACUT: with DRACUT_APPEND
    and DRACUT_PROMPT."""
    extra = {"append": " ".join(x for x in (DRACUT_APPEND if dracut else "", append) if x)}
    if dracut:
        extra["prompt"] = DRACUT_PROMPT
    return lambda image, passphrases, **kw: boot(kernel, initrd, image, passphrases, **extra, **kw)


# --- CLI -----------------------------------------------------------------------------------------------------

def _demo(cache, work, passphrases):
    os.makedirs(work, exist_ok=True)
    t = time.monotonic()
    k = fetch_kernel(cache)
    print(f"kernel {k.version}: {time.monotonic() - t:.1f} s")
    t = time.monotonic()
    root = os.path.join(work, "root")
    shutil.rmtree(root, ignore_errors=True)
    make_rootfs(root, after_boot="echo hello from after-boot; ls /run", show=["/run"])
    img = os.path.join(work, "disk.img")
    make_luks_image(root, img, passphrases or ["real"])
    print(f"image: {time.monotonic() - t:.1f} s")
    t = time.monotonic()
    initrd = os.path.join(work, "initrd.img")
    build_initramfs(k, initrd, os.path.join(work, "mk"))
    print(f"initramfs: {time.monotonic() - t:.1f} s")
    r = boot(k, initrd, img, passphrases or ["real"])
    print(r.transcript)
    print(f"boot: {r.seconds} s, unlocked={r.unlocked} prompts={r.prompts} at {r.prompt_seconds}")
    return 0 if r.unlocked else 1


def main(argv):
    try:
        if argv[:1] == ["check"]:
            why = missing()
            print(why or "ok")
            return 77 if why else 0
        if argv[:1] == ["kernel"] and len(argv) == 2:
            k = fetch_kernel(argv[1])
            print(k.version, k.vmlinuz, k.modules)
            return 0
        if argv[:1] == ["demo"] and len(argv) >= 3:
            why = missing()
            if why:
                print("SKIP:", why)
                return 77
            return _demo(argv[1], argv[2], argv[3:])
    except Skip as e:
        print("SKIP:", e)
        return 77
    print(__doc__.split("\n\n")[-1].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
