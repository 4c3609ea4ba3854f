#!/bin/bash
# duress check's disk-unlock prompt section (docs/boot.md): the boot
# actions, ARMED or why not, with their kinds; one salt and cost; the
# crypttab line naming the keyscript; whether the initramfs holds the
# current boot actions (initramfs archives made here with cpio and gzip,
# unpacked by the real unmkinitramfs).  And duress sign's reminder to run
# update-initramfs.  The same on a dracut machine: the dracut config that
# adds the module instead of the crypttab line, initramfs archives
# unpacked by the real lsinitrd, sudo dracut -f in every fix.  TAP output
# for meson.
# Usage: test_check_boot.sh PATH/TO/duress
set -u
DURESS=$1
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# The boot directory is root's, judged as the global one.
[ "$(id -u)" -eq 0 ] || skip_all "needs root: the boot directory must be root's"

# An initramfs-tools machine, whatever this one is: update-initramfs in
# PATH (dracut machine: PATH without it, with dracut), no dracut config
# adding the module unless --dracut-conf names one.
mkdir "$T/itools" "$T/dbin"
printf '#!/bin/sh\nexit 1\n' >"$T/itools/update-initramfs"
cp "$T/itools/update-initramfs" "$T/dbin/dracut"
chmod 755 "$T/itools/update-initramfs" "$T/dbin/dracut"
# The dracut machine's PATH is $T/dbin alone: the valgrind step's wrapper must be found there too
# (a script that runs it by its full path: Debian's valgrind is one that runs $0.bin).
[ -z "$WRAP" ] || { printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "${WRAP%% *}")" >"$T/dbin/${WRAP%% *}" &&
	chmod 755 "$T/dbin/${WRAP%% *}"; }
export PATH=$T/itools:$PATH

PW=Boot-pw-1
sign() { duress sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost --boot-dir "$B" "$@" >/dev/null 2>&1 <<<"$PW"; }
new_action() { printf '#!/bin/sh\necho %s\n' "$1" >"$B/$1"; chmod 700 "$B/$1"; }
# has LINE: $out has exactly this whole line.
has() { grep -qxF -- "$1" <<<"$out"; }
# expect DESC LINE: an assertion that $out has LINE, with $out shown when not.
expect() {
	if has "$2"; then
		ok "$1"
	else
		not_ok "$1"
		{
			echo "expected: $2"
			echo "got:"
			echo "$out"
		} | diag
	fi
}
# boot_check ARGS...: duress check of the boot section only; $out and $rc.
# unpack_dirs: duress check's unpacked trees now in /tmp (root's runs unpack there).
unpack_dirs() { find /tmp -maxdepth 1 -name 'unpack.*' 2>/dev/null | sort; }
boot_check() {
	out=$(duress check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$B" \
		--dracut-conf "$T/dracut.none" "$@" 2>&1)
	rc=$?
}
# initramfs TREE OUT [EARLY]: a gzip'ed newc cpio of TREE, after an
# uncompressed early cpio of EARLY (as with microcode) when given.
initramfs() {
	: >"$2"
	if [ -n "${3:-}" ]; then
		(cd "$3" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >>"$2"
	fi
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -n) >>"$2"
}
# snapshot TREE: what the initramfs-tools hook copies now: the files this
# build's unlock-helper --list-files names (the boot directory's under
# TREE/etc/duress-boot.d, a companion elsewhere at its path); and the
# helper, runner and relay, when this system has them installed.
HELPER=$(dirname "$DURESS")/unlock-helper
snapshot() {
	local f
	rm -rf "$1"
	mkdir -p "$1/etc/duress-boot.d"
	"$HELPER" --list-files "$B" >"$T/list" || return 1
	while IFS= read -r -d '' f; do
		case $f in
		"$B"/*) cp -p "$f" "$1/etc/duress-boot.d/" ;;
		*) mkdir -p "$1${f%/*}" && cp -p "$f" "$1$f" ;;
		esac
	done <"$T/list"
	for f in "$PD/unlock-helper" "$PD/session-helper" "$PD/unlock-relay"; do
		[ -f "$f" ] || continue
		mkdir -p "$1${f%/*}"
		cp -p "$f" "$1$f"
	done
	# What cryptsetup-initramfs's hook puts there for the keyscript's disk.
	mkdir -p "$1/cryptroot" "$1${KS%/*}"
	printf 'cryptroot %s none luks,discard,keyscript=%s\n' "$DISK" "$KS" >"$1/cryptroot/crypttab"
	printf '#!/bin/sh\n' >"$1$KS" && chmod 755 "$1$KS"
}

B=$T/boot
mkdir -m 700 "$B"
new_action alert && sign "$B/alert"
new_action initramfs-wipe && sign "$B/initramfs-wipe"
new_action nosig
printf 'cryptroot UUID=1234 none luks,discard\n' >"$T/crypttab.plain"
# The keyscript's path is this build's (its libexecdir): the WARN's fix names it.
boot_check --crypttab "$T/crypttab.plain" --initramfs "$T/none"
KS=$(sed -n 's/.*; fix: add keyscript=\([^ ]*\) to the options .*/\1/p' <<<"$out")
[ -n "$KS" ] || KS=/usr/libexec/pam_duress/unlock-keyscript
PD=${KS%/*} # the helper and the runner are beside it
# with_installed PROGRAM COMMAND...: COMMAND in a private mount namespace where
# $PD/PROGRAM exists (a stand-in), as if installed on this system: an overlay
# on the nearest existing parent of $PD keeps everything under it in view (a
# tree cloned under /usr/local, say).  Exit 125 when that cannot be made.
with_installed() {
	local prog=$1 base=$PD
	shift
	while [ ! -d "$base" ]; do base=${base%/*}; done
	{ [ -n "$base" ] && [ "$base" != / ] && unshare -m true 2>/dev/null; } || return 125
	mkdir -p "$T/ov-$prog" || return 125
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m bash -c 'mount -t tmpfs none "$4" && mkdir "$4/u" "$4/w" &&
		mount -t overlay -o "lowerdir=$1,upperdir=$4/u,workdir=$4/w" none "$1" &&
		mkdir -p "$2" && printf "#!/bin/sh\n" >"$2/$3" && chmod 755 "$2/$3" || exit 125
		shift 4 && exec "$@"' sh "$base" "$PD" "$prog" "$T/ov-$prog" "$@"
}
# The disk: a file that exists (its key slots cannot be told: a WARN).
DISK=$T/disk.img
: >"$DISK"
printf '# the root disk\n\ncryptroot %s none luks,discard,keyscript=%s\n' "$DISK" "$KS" >"$T/crypttab.ks"
printf 'cryptroot UUID=1234 none luks,keyscript=/elsewhere/unlock-keyscript\n' >"$T/crypttab.other"

# --- the actions, with their kinds ---------------------------------------------
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "the section's heading names the directory" "disk-unlock prompt: the boot actions in $B"
expect "an after-boot action, armed" "$B/alert: after boot: ARMED"
expect "an initramfs- action runs before unlocking, armed" "$B/initramfs-wipe: before unlock: ARMED"
expect "an unsigned boot action: why it is skipped, as for the global directory" \
	"$B/nosig: after boot: SKIPPED: no signature (run: duress sign)"
check "an unsigned boot action: exit 1, not every action is armed" \
	test "$rc" -eq 1 -a "$(grep -cx 'not every action is armed' <<<"$out")" -eq 1
rm "$B/nosig"
echo '# edited' >>"$B/alert"
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "a changed boot action is skipped, with its kind" \
	"$B/alert: after boot: SKIPPED: content changed since signing; fix: if the change is yours, sign it again: duress sign --boot-dir $B $B/alert"
sign "$B/alert"
chmod 770 "$B"
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "a group-writable boot directory is skipped whole" \
	"$B: SKIPPED (whole directory): bad owner, or writable by group or others"
chmod 700 "$B"
out=$(duress check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$T/nodir" 2>&1)
expect "a missing --boot-dir is said" "$T/nodir: no such directory (no boot actions)"
out=$(duress check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "" 2>&1)
rc=$?
check_why "--boot-dir \"\": no boot section, exit 0" "got (exit $rc): $out" \
	test "$rc" -eq 0 -a -z "$(grep -e 'disk-unlock' -e crypttab -e initramfs <<<"$out")"

# --- one salt and cost -----------------------------------------------------------
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
check_why "one salt and cost: no ERROR, exit 0" "got (exit $rc): $out" \
	test "$rc" -eq 0 -a -z "$(grep ERROR <<<"$out")"
new_action other
duress sign --stdin --memlimit 16K --opslimit 1 --allow-weak-cost --boot-dir "$B" "$B/other" >/dev/null 2>&1 <<<"$PW"
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "two salt and cost sets: an ERROR with the fix" \
	"$B: ERROR: 2 different salts or costs, and the prompt derives one key per try: the actions of only one of them can match; fix: sign every action again with the same --memlimit and --opslimit, or with neither (duress sign then shares one salt), then sudo update-initramfs -u"
check_why "two salt and cost sets: exit 1 and the summary line" "got (exit $rc): $out" \
	test "$rc" -eq 1 -a -n "$(grep -x 'the disk-unlock prompt needs fixing (see the ERROR lines above)' <<<"$out")"
sign "$B/other"
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
check_why "signed again at one cost: the ERROR is gone, exit 0" "got (exit $rc): $out" \
	test "$rc" -eq 0 -a -z "$(grep ERROR <<<"$out")"

# --- crypttab ---------------------------------------------------------------------
boot_check --crypttab "$T/crypttab.plain" --initramfs "$T/none"
# The path is the one this build installs the keyscript at, taken from this
# very line above: its form is what is checked.
expect "crypttab without the keyscript: a WARN with the keyscript= option and update-initramfs" \
	"crypttab $T/crypttab.plain: WARN: no line uses the keyscript, so the disk-unlock prompt never checks a boot passphrase; fix: add keyscript=$KS to the options (4th field) of the disk's line, then sudo update-initramfs -u"
check_why "a WARN alone leaves the exit status 0" "exit $rc" test "$rc" -eq 0
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "crypttab with the keyscript: OK, naming the line" \
	"crypttab $T/crypttab.ks: OK: line 3 (cryptroot) uses the keyscript"
boot_check --crypttab "$T/crypttab.other" --initramfs "$T/none"
check_why "crypttab naming another keyscript (the hook would copy nothing): the WARN" "got: $out" \
	grep -q "^crypttab $T/crypttab.other: WARN: no line uses the keyscript" <<<"$out"
check_why "without the keyscript line, the initramfs is not compared (the hook copies nothing)" \
	"got: $out" test -z "$(grep -e '^OK: the initramfs' -e '^ERROR: the initramfs' -e '^WARN: cannot tell' <<<"$out")" -a -n "$(grep "^crypttab $T/crypttab.other: WARN" <<<"$out")"
boot_check --crypttab "$T/no-crypttab" --initramfs "$T/none"
check_why "no crypttab at all: a WARN with the fix" "got: $out" \
	grep -q "^crypttab $T/no-crypttab: WARN: no such file, so the disk-unlock prompt never checks a boot passphrase; fix: add keyscript=" <<<"$out"
# Issue 25, item 12: a source that names no disk here (cryptsetup's hook says
# "Couldn't resolve device" and makes the initramfs all the same).
printf 'cryptroot UUID=0b00b00b-0000-4000-8000-000000000025 none luks,keyscript=%s\n' "$KS" >"$T/crypttab.nodisk"
boot_check --crypttab "$T/crypttab.nodisk" --initramfs "$T/none"
expect "the keyscript's disk does not exist: an ERROR with the fix" \
	"crypttab $T/crypttab.nodisk: ERROR: /dev/disk/by-uuid/0b00b00b-0000-4000-8000-000000000025 does not exist, so the initramfs cannot find the disk of the line that uses the keyscript (update-initramfs says: cryptsetup: ERROR: Couldn't resolve device); fix: correct the line's source (2nd field): the UUID= of the disk's crypto_LUKS partition, which lsblk -f shows, then sudo update-initramfs -u"
check_why "... exit 1, and the section's summary line" "got (exit $rc): $out" \
	test "$rc" -eq 1 -a -n "$(grep -x 'the disk-unlock prompt needs fixing (see the ERROR lines above)' <<<"$out")"

# --- the initramfs ----------------------------------------------------------------
if ! command -v cpio >/dev/null || ! command -v unmkinitramfs >/dev/null; then
	for t in fresh early stale names temp missing-tool failing-tool cryptroot-ok no-cryptroot \
		left-out no-keyscript-option no-keyscript umask-none umask-hook umask-admin umask-admin-tight; do
		skip "initramfs: $t (needs cpio and unmkinitramfs: tools/deps.sh check)"
	done
else
	snapshot "$T/tree"
	initramfs "$T/tree" "$T/initrd.fresh"
	# A data file (a companion, notes) is not copied by the hook: not missing.
	printf 'K=1\n' >"$B/alert.conf" && chmod 600 "$B/alert.conf"
	# As root the caller's TMPDIR is not used (sudo may keep it; here a file,
	# where nothing can be made): /tmp is, and what is unpacked there is removed.
	# (valgrind, in the valgrind step, needs a TMPDIR it can write to: a directory there.)
	: >"$T/not-a-dir"
	caller_tmp=$T/not-a-dir
	[ -z "$WRAP" ] || { mkdir -p "$T/tmp" && caller_tmp=$T/tmp; }
	unpacked_before=$(unpack_dirs)
	TMPDIR=$caller_tmp boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh"
	expect "a fresh initramfs: OK, unpacked in /tmp, not in the caller's TMPDIR" \
		"OK: the initramfs $T/initrd.fresh holds the current boot actions"
	check_why "its temporary directory is removed" "left: $(unpack_dirs)" \
		test "$(unpack_dirs)" = "$unpacked_before" -a -n "$(grep '^OK: the initramfs' <<<"$out")"
	# Issue 25, item 12: what cryptsetup-initramfs's hook put in it for the
	# keyscript's disk (it prints its errors and makes the image all the same).
	expect "a fresh initramfs: its cryptroot/crypttab unlocks the disk through the keyscript" \
		"initramfs $T/initrd.fresh: OK: it unlocks cryptroot through the keyscript"
	# cryptroot_case DESCRIPTION CHANGE LINE: the tree changed by CHANGE (sh, in
	# the copy's directory), made into an initramfs: LINE, the ERROR, and exit 1.
	cryptroot_case() {
		rm -rf "$T/tree.c" && cp -a "$T/tree" "$T/tree.c" && (cd "$T/tree.c" && eval "$2")
		initramfs "$T/tree.c" "$T/initrd.c"
		boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.c"
		check_why "$1" "got (exit $rc): $out" test "$rc" -eq 1 -a -n "$(grep -xF -- "initramfs $T/initrd.c: ERROR: $3" <<<"$out")" \
			-a -n "$(grep -x 'the disk-unlock prompt needs fixing (see the ERROR lines above)' <<<"$out")"
	}
	cryptroot_case "no cryptroot/crypttab (cryptsetup-initramfs missing): an ERROR with the fix" 'rm -r cryptroot' \
		"it has no cryptroot/crypttab, so it unlocks no disk and never runs the keyscript; fix: sudo apt install cryptsetup-initramfs, then sudo update-initramfs -u and read its cryptsetup: lines"
	cryptroot_case "the disk left out of cryptroot/crypttab (the hook's ERROR): an ERROR naming it" \
		'echo "other_crypt UUID=1 none luks" >cryptroot/crypttab' \
		"its cryptroot/crypttab has no line for cryptroot, so it does not unlock that disk and the keyscript never asks; fix: run sudo update-initramfs -u and read its cryptsetup: lines: the line's source must be the disk's crypto_LUKS partition (lsblk -f), and a disk other than the root filesystem's needs the initramfs option"
	cryptroot_case "the disk unlocked without the keyscript (an image made before the line): an ERROR" \
		"echo 'cryptroot $DISK none luks,discard' >cryptroot/crypttab" \
		"it unlocks cryptroot without the keyscript (it was made before the crypttab line named it); fix: sudo update-initramfs -u"
	cryptroot_case "the keyscript the line names is not in it: an ERROR" "rm .$KS" \
		"it unlocks cryptroot through $KS, which is not in it, so that disk cannot be unlocked; fix: sudo update-initramfs -u (with the package installed)"
	# A hook that copies the data file too: the same bytes, not extra; others, changed.
	cp -p "$B/alert.conf" "$T/tree/etc/duress-boot.d/"
	initramfs "$T/tree" "$T/initrd.conf"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.conf"
	expect "a copy of a data file, the same: OK" "OK: the initramfs $T/initrd.conf holds the current boot actions"
	echo 'K=2' >"$T/tree/etc/duress-boot.d/alert.conf"
	initramfs "$T/tree" "$T/initrd.conf"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.conf"
	expect "a copy of a data file, different: changed" \
		"ERROR: the initramfs $T/initrd.conf is older than $B (alert.conf changed); fix: sudo update-initramfs -u"
	rm "$T/tree/etc/duress-boot.d/alert.conf"
	chmod 644 "$T/initrd.fresh"
	# Issue 25, item 12: the fix is what this machine's UMASK calls for.  In a
	# private mount namespace, /etc/initramfs-tools and the conf hooks' directory
	# are empty tmpfs, then SETUP (sh) writes what the case needs.
	READABLE="WARN: the initramfs $T/initrd.fresh is readable by every user, who can copy the boot signatures and guess the passphrase offline; fix:"
	CH=/usr/share/initramfs-tools/conf-hooks.d
	umask_case() { # umask_case DESCRIPTION SETUP FIX
		if [ ! -d /etc/initramfs-tools ] || [ ! -d "$CH" ] || ! unshare -m true 2>/dev/null; then
			skip "$1 (needs unshare -m, /etc/initramfs-tools and $CH)"
			return
		fi
		# shellcheck disable=SC2016 # expanded by the inner shell
		out=$(unshare -m --propagation private bash -c 'mount -t tmpfs none /etc/initramfs-tools &&
			mount -t tmpfs none "$1" && mkdir /etc/initramfs-tools/conf.d && eval "$2" && shift 2 &&
			exec "$@"' sh "$CH" "$2" "$DURESS" check --pam-dir "" --user-dir "" --global-dir "" \
			--boot-dir "$B" --dracut-conf "$T/dracut.none" --crypttab "$T/crypttab.ks" \
			--initramfs "$T/initrd.fresh" 2>&1)
		expect "$1" "$READABLE $3"
	}
	umask_case "readable, no UMASK anywhere, no conf hook: add UMASK=0077" ":" \
		"add UMASK=0077 to /etc/initramfs-tools/initramfs.conf, then sudo update-initramfs -u"
	umask_case "readable, the package's conf hook installed: made before it applied, update-initramfs" \
		'printf "UMASK=0077\n" >"$1/pam_duress"' \
		"sudo update-initramfs -u: it was made before UMASK=0077 applied (set by $CH/pam_duress while /etc/duress-boot.d exists)"
	umask_case "readable, the admin's UMASK=0022 (conf.d, after initramfs.conf's 0077): that file to change" \
		'printf "UMASK=0077\n" >"$1/pam_duress"; printf "MODULES=most\nUMASK=0077\n" >/etc/initramfs-tools/initramfs.conf; printf "export UMASK=\"022\"\n" >/etc/initramfs-tools/conf.d/umask' \
		"UMASK=0022 in /etc/initramfs-tools/conf.d/umask lets every user read it: make it UMASK=0077, then sudo update-initramfs -u"
	umask_case "readable, the admin's UMASK=0077, no conf hook: made before, update-initramfs" \
		'printf "  UMASK=0077 # root only\n" >/etc/initramfs-tools/initramfs.conf' \
		"sudo update-initramfs -u: it was made before UMASK=0077 applied (set by /etc/initramfs-tools/initramfs.conf)"
	chmod 600 "$T/initrd.fresh"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh"
	check_why "an initramfs only root reads: OK and no such WARN" "got: $out" \
		test -n "$(grep '^OK: the initramfs' <<<"$out")" -a -z "$(grep 'readable by every user' <<<"$out")"
	mkdir -p "$T/early/kernel/x86/microcode"
	printf 'microcode' >"$T/early/kernel/x86/microcode/GenuineIntel.bin"
	initramfs "$T/tree" "$T/initrd.early" "$T/early"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.early"
	expect "after an early cpio (main/): OK" \
		"OK: the initramfs $T/initrd.early holds the current boot actions"

	# The action changes after the initramfs was made: signed again, still stale.
	printf '#!/bin/sh\necho changed\n' >"$B/alert" && sign "$B/alert"
	new_action added && sign "$B/added"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.early"
	expect "a stale initramfs: an ERROR naming what changed, with the fix" \
		"ERROR: the initramfs $T/initrd.early is older than $B (added missing, added.sig missing, alert changed, alert.sig changed); fix: sudo update-initramfs -u"
	check_why "a stale initramfs: exit 1" "exit $rc" test "$rc" -eq 1
	snapshot "$T/tree"
	initramfs "$T/tree" "$T/initrd.fresh"
	rm "$B/added" "$B/added.sig"
	# A name is data: escaped in the ERROR line.
	printf '#!/bin/sh\n' >"$B/"$'x\ny' && chmod 700 "$B/"$'x\ny' && sign "$B/"$'x\ny'
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh"
	expect "a file gone from the boot directory is extra; a new one is missing, its name escaped" \
		"ERROR: the initramfs $T/initrd.fresh is older than $B (added extra, added.sig extra, x\\x0ay missing, x\\x0ay.sig missing); fix: sudo update-initramfs -u"
	rm "$B/"$'x\ny' "$B/"$'x\ny.sig'
	new_action unsigned
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh"
	check_why "an unsigned program is not missing: the hook does not copy what the prompt skips" \
		"got: $out" test -z "$(grep '^ERROR: the initramfs.*unsigned' <<<"$out")" -a \
		-n "$(grep '^ERROR: the initramfs' <<<"$out")"
	rm "$B/unsigned"

	# Companions bound with --also: copied by the hook, compared by check.
	printf 'K=1\n' >"$B/alert.conf" && chmod 600 "$B/alert.conf"
	printf 'W=1\n' >"$T/wipe.conf" && chmod 600 "$T/wipe.conf"
	sign --also "$B/alert.conf" "$B/alert" && sign --also "$T/wipe.conf" "$B/initramfs-wipe"
	snapshot "$T/tree"
	check "the hook's list holds the companions: beside the action, and at its own path" \
		test -f "$T/tree/etc/duress-boot.d/alert.conf" -a -f "$T/tree$T/wipe.conf"
	initramfs "$T/tree" "$T/initrd.comp"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.comp"
	expect "companions in the initramfs, the same: OK" "OK: the initramfs $T/initrd.comp holds the current boot actions"
	printf 'K=2\n' >"$B/alert.conf" && sign --also "$B/alert.conf" "$B/alert"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.comp"
	expect "a config changed and signed again: the config and the signature changed, with the fix" \
		"ERROR: the initramfs $T/initrd.comp is older than $B (alert.conf changed, alert.sig changed); fix: sudo update-initramfs -u"
	rm "$T/tree$T/wipe.conf"
	printf 'K=1\n' >"$B/alert.conf" && sign --also "$B/alert.conf" "$B/alert"
	initramfs "$T/tree" "$T/initrd.comp"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.comp"
	expect "a companion elsewhere, not in the initramfs: missing, by its path" \
		"ERROR: the initramfs $T/initrd.comp is older than $B ($T/wipe.conf missing); fix: sudo update-initramfs -u"
	rm "$B/alert.conf" "$T/wipe.conf"
	sign --no-also "$B/alert" && sign --no-also "$B/initramfs-wipe"

	# The helper this system has must be in the initramfs too: shown in a
	# private mount namespace, with a stand-in where the installed one would be.
	snapshot "$T/tree"
	initramfs "$T/tree" "$T/initrd.now"
	out=$(with_installed unlock-helper "$DURESS" check --dracut-conf "$T/dracut.none" --pam-dir "" --user-dir "" \
		--global-dir "" --boot-dir "$B" --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.now" 2>&1)
	if [ $? -ne 125 ]; then
		expect "a helper installed here but not in the initramfs: missing" \
			"ERROR: the initramfs $T/initrd.now is older than $B ($PD/unlock-helper missing); fix: sudo update-initramfs -u"
	else
		skip "a helper installed here but not in the initramfs (needs unshare -m and overlayfs)"
	fi

	mkdir "$T/empty"
	out=$(PATH=$T/empty "$DURESS" check --dracut-conf "$T/dracut.none" --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$B" \
		--crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh" 2>&1)
	expect "no unmkinitramfs in PATH: a WARN with the package to install" \
		"WARN: cannot tell whether the initramfs $T/initrd.fresh holds the current boot actions: unmkinitramfs is not installed (not found in PATH); fix: sudo apt install initramfs-tools-core"
	mkdir "$T/fake"
	printf '#!/bin/sh\nexit 1\n' >"$T/fake/unmkinitramfs" && chmod 755 "$T/fake/unmkinitramfs"
	out=$(PATH=$T/fake:$PATH "$DURESS" check --dracut-conf "$T/dracut.none" --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$B" \
		--crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh" 2>&1)
	expect "unmkinitramfs failing: a WARN, no crash, and the fix is a new image, not installing what is there" \
		"WARN: cannot tell whether the initramfs $T/initrd.fresh holds the current boot actions: unmkinitramfs failed on it; fix: sudo update-initramfs -u"
	# sudo may keep the caller's PATH: as root, a program another user owns,
	# or in a directory another user may write to, is never run.
	mkdir "$T/userbin" "$T/openbin"
	printf '#!/bin/sh\ntouch %s/ran.$(basename "$(dirname "$0")")\nexit 1\n' "$T" >"$T/userbin/unmkinitramfs"
	cp "$T/userbin/unmkinitramfs" "$T/openbin/unmkinitramfs"
	chmod 755 "$T/userbin/unmkinitramfs" "$T/openbin/unmkinitramfs"
	chown -R 65534 "$T/userbin"
	chmod 777 "$T/openbin"
	for d in userbin openbin; do
		out=$(PATH=$T/$d:$PATH "$DURESS" check --dracut-conf "$T/dracut.none" --pam-dir "" --user-dir "" --global-dir "" \
			--boot-dir "$B" --crypttab "$T/crypttab.ks" --initramfs "$T/initrd.fresh" 2>&1)
		check_why "as root, an unmkinitramfs in $d (another user's, or writable by all) is not run" "got: $out" \
			test ! -e "$T/ran.$d"
	done
	printf 'not an initramfs\n' >"$T/garbage"
	boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/garbage"
	check_why "garbage for an initramfs: a WARN or an ERROR, never a crash" "got (exit $rc): $out" \
		test "$rc" -le 1 -a -n "$(grep -E '^(WARN: cannot tell|ERROR: the initramfs)' <<<"$out")"
fi
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "no such initramfs: a WARN with the fix" \
	"WARN: cannot tell whether the initramfs $T/none holds the current boot actions: No such file or directory; fix: sudo update-initramfs -u"

# --- dracut: the config adding the module ------------------------------------------
DC=$T/dracut.conf.d
mkdir "$DC"
# dracut_conf TEXT: DC/pam-duress.conf holds TEXT (printf's format), alone.
dracut_conf() {
	rm -f "$DC"/*
	# shellcheck disable=SC2059 # TEXT is a format, for its \n
	printf "$1" >"$DC/pam-duress.conf"
}
# dracut_on DESC LINE: with DC, the dracut OK line for LINE and no crypttab
# line but its disk's key slots.
dracut_on() {
	boot_check --dracut-conf "$DC" --crypttab "$T/crypttab.plain" --initramfs "$T/none"
	check_why "$1" "got: $out" test -n "$(grep -xF "dracut $DC/pam-duress.conf: OK: line $2 adds the pam-duress module" <<<"$out")" \
		-a -z "$(grep '^crypttab' <<<"$out" | grep -v ': WARN: cannot tell the key slots of ')"
}
# dracut_off DESC: with DC, no dracut line, crypttab's WARN as before.
dracut_off() {
	boot_check --dracut-conf "$DC" --crypttab "$T/crypttab.plain" --initramfs "$T/none"
	check_why "$1" "got: $out" test -z "$(grep '^dracut' <<<"$out")" \
		-a -n "$(grep "^crypttab $T/crypttab.plain: WARN: no line uses the keyscript" <<<"$out")"
}
dracut_conf 'add_dracutmodules+=" pam-duress "\n'
dracut_on "dracut: += quoted, the OK line instead of crypttab's WARN" 1
check_why "dracut: the key slots of the disk crypttab lists are still reported (the keyscript's line is not needed)" \
	"got: $out" grep -q "^crypttab $T/crypttab.plain: WARN: cannot tell the key slots of /dev/disk/by-uuid/1234: " <<<"$out"
dracut_conf '# duress at the prompt\n\nadd_dracutmodules="crypt pam-duress"\n'
dracut_on "dracut: = quoted among others, after a comment and a blank line: its line" 3
dracut_conf "  add_dracutmodules+=' crypt pam-duress '\n"
dracut_on "dracut: single quotes, indented" 1
dracut_conf 'add_dracutmodules+=pam-duress\n'
dracut_on "dracut: unquoted" 1
dracut_conf '# add_dracutmodules+=" pam-duress "\n'
dracut_off "dracut: a commented line is off"
dracut_conf 'add_dracutmodules+=" crypt pam-duress-extra "\nomit_dracutmodules+=" pam-duress "\n'
dracut_off "dracut: another module, or another variable, is off"
dracut_conf 'add_dracutmodules+=" pam-duress "\n'
mv "$DC/pam-duress.conf" "$DC/pam-duress.conf.bak"
dracut_off "dracut: a file not named *.conf is off"
rm -f "$DC"/*

# A dracut machine (dracut in PATH, no update-initramfs) without the config.
PATH=$T/dbin boot_check --crypttab "$T/crypttab.plain" --initramfs "$T/none"
expect "a dracut machine without the config: the WARN with dracut's line to add, not keyscript=" \
	"dracut $T/dracut.none: WARN: no config adds the pam-duress module, so the disk-unlock prompt never checks a boot passphrase; fix: add add_dracutmodules+=\" pam-duress \" to $T/dracut.none/pam-duress.conf, then sudo dracut -f"
check_why "... and no crypttab line" "got: $out" test -z "$(grep -e '^crypttab' -e keyscript <<<"$out")"
PATH=$T/dbin:$T/itools boot_check --crypttab "$T/crypttab.plain" --initramfs "$T/none"
check_why "dracut and update-initramfs both in PATH: initramfs-tools' keyscript WARN" "got: $out" \
	test -n "$(grep "^crypttab $T/crypttab.plain: WARN: .*fix: add keyscript=.*sudo update-initramfs -u$" <<<"$out")"

# --- dracut: the initramfs, unpacked by lsinitrd ------------------------------------
dracut_conf 'add_dracutmodules+=" pam-duress "\n'
if ! command -v cpio >/dev/null || ! command -v lsinitrd >/dev/null; then
	for t in fresh relative stale readable early missing-tool relay; do
		skip "dracut initramfs: $t (needs cpio and lsinitrd, Debian: dracut-core)"
	done
else
	snapshot "$T/tree"
	initramfs "$T/tree" "$T/dracut.img"
	chmod 600 "$T/dracut.img"
	mkdir -p "$T/tmp"
	unpacked_before=$(unpack_dirs)
	TMPDIR=$T/tmp boot_check --dracut-conf "$DC" --initramfs "$T/dracut.img"
	expect "dracut: a fresh initramfs, unpacked by lsinitrd: OK" \
		"OK: the initramfs $T/dracut.img holds the current boot actions"
	check_why "dracut: its temporary directory is removed" "left: $(ls -A "$T/tmp") / $(unpack_dirs)" \
		test -z "$(ls -A "$T/tmp")" -a "$(unpack_dirs)" = "$unpacked_before" -a -n "$(grep '^OK: the initramfs' <<<"$out")"
	out=$(cd "$T" && "$DURESS" check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$B" \
		--dracut-conf "$DC" --initramfs dracut.img 2>&1)
	expect "dracut: a relative --initramfs (lsinitrd runs elsewhere): OK" \
		"OK: the initramfs dracut.img holds the current boot actions"
	chmod 644 "$T/dracut.img"
	boot_check --dracut-conf "$DC" --initramfs "$T/dracut.img"
	expect "dracut: an initramfs every user can read: a WARN with chmod, not UMASK=" \
		"WARN: the initramfs $T/dracut.img is readable by every user, who can copy the boot signatures and guess the passphrase offline; fix: sudo chmod 600 $T/dracut.img"
	chmod 600 "$T/dracut.img"
	initramfs "$T/tree" "$T/dracut.early" "$T/early"
	boot_check --dracut-conf "$DC" --initramfs "$T/dracut.early"
	expect "dracut: after an early cpio (lsinitrd skips it): OK" \
		"OK: the initramfs $T/dracut.early holds the current boot actions"
	new_action added && sign "$B/added"
	boot_check --dracut-conf "$DC" --initramfs "$T/dracut.img"
	expect "dracut: a stale initramfs: the ERROR with sudo dracut -f" \
		"ERROR: the initramfs $T/dracut.img is older than $B (added missing, added.sig missing); fix: sudo dracut -f"
	check_why "dracut: a stale initramfs: exit 1" "exit $rc" test "$rc" -eq 1
	rm "$B/added" "$B/added.sig"
	out=$(PATH=$T/empty "$DURESS" check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$B" \
		--dracut-conf "$DC" --initramfs "$T/dracut.img" 2>&1)
	expect "dracut: no lsinitrd in PATH: a WARN with what to install" \
		"WARN: cannot tell whether the initramfs $T/dracut.img holds the current boot actions: lsinitrd is not installed (not found in PATH); fix: install dracut's lsinitrd (Debian: sudo apt install dracut-core)"
	# The relay this system has must be in the initramfs too (as the helper above).
	out=$(with_installed unlock-relay "$DURESS" check --dracut-conf "$DC" --pam-dir "" \
		--user-dir "" --global-dir "" --boot-dir "$B" --initramfs "$T/dracut.img" 2>&1)
	if [ $? -ne 125 ]; then
		expect "dracut: a relay installed here but not in the initramfs: missing" \
			"ERROR: the initramfs $T/dracut.img is older than $B ($PD/unlock-relay missing); fix: sudo dracut -f"
	else
		skip "dracut: a relay installed here but not in the initramfs (needs unshare -m and overlayfs)"
	fi
fi
boot_check --dracut-conf "$DC" --initramfs "$T/none"
expect "dracut: no such initramfs: a WARN with sudo dracut -f" \
	"WARN: cannot tell whether the initramfs $T/none holds the current boot actions: No such file or directory; fix: sudo dracut -f"

# --- Issue 25, item 12: the config duress add binds; a boot-only setup -----------------
printf 'ARMED=no\n' >"$B/initramfs-wipe.conf" && chmod 600 "$B/initramfs-wipe.conf"
sign --also "$B/initramfs-wipe.conf" "$B/initramfs-wipe"
boot_check --crypttab "$T/crypttab.ks" --initramfs "$T/none"
expect "a boot action's config bound by its signature: its companion, said as such" \
	"$B/initramfs-wipe.conf: companion of initramfs-wipe (bound by its signature)"
check_why "... with no 'ignored: not an action' line" "got: $out" test -z "$(grep 'ignored' <<<"$out")"
rm "$B/initramfs-wipe.conf" && sign --no-also "$B/initramfs-wipe"

# A PAM stack without the module (no profile enabled), the boot directory there.
P=$T/pam-bootonly
mkdir -p "$P" "$T/pam-configs"
printf 'auth [success=1 default=ignore] pam_unix.so nullok\nauth requisite pam_deny.so\nauth required pam_permit.so\n' >"$P/common-auth"
for s in login sshd su sudo; do echo "@include common-auth" >"$P/$s"; done
printf 'auth required pam_deny.so\n' >"$P/other"
printf 'Name: Duress passwords\n' >"$T/pam-configs/duress"
# stack_check ARGS...: duress check of that stack and the boot section; $out and $rc.
stack_check() {
	out=$(duress check --pam-dir "$P" --pam-configs-dir "$T/pam-configs" --boot-dir "$B" \
		--dracut-conf "$T/dracut.none" --crypttab "$T/crypttab.ks" --initramfs "$T/none" "$@" 2>&1)
	rc=$?
}
BOOT_ONLY="no service has a pam_duress.so line: a boot-only setup (the disk-unlock prompt's section below); login-time duress passwords are off; to turn them on: sudo pam-auth-update --enable duress (a server; duress-laptop for a laptop)"
stack_check --user-dir "" --global-dir ""
expect "boot-only: one line says so" "$BOOT_ONLY"
check_why "boot-only: no PAM ERROR, the boot section fine: exit 0" "got (exit $rc): $out" \
	test "$rc" -eq 0 -a -z "$(grep -e ERROR -e '^service ' -e 'no pam_duress.so line found' <<<"$out")" \
	-a -n "$(grep -x 'every action is armed' <<<"$out")"
mkdir -m 700 "$T/login-actions"
new_login() { printf '#!/bin/sh\n' >"$T/login-actions/a" && chmod 700 "$T/login-actions/a" && duress sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$T/login-actions/a" >/dev/null 2>&1 <<<"$PW"; }
new_login
stack_check --user-dir "" --global-dir "$T/login-actions"
expect "boot-only, but login-time actions there: an ERROR, they never run" \
	"ERROR: no service has a pam_duress.so line, so the actions above never run; fix: sudo pam-auth-update --enable duress (a server; duress-laptop for a laptop)"
check_why "... exit 1, the stack needs fixing" "got (exit $rc): $out" \
	test "$rc" -eq 1 -a -n "$(grep -x 'the PAM stack needs fixing (see the service lines above)' <<<"$out")"
stack_check --user-dir "" --global-dir "" --service login
check_why "boot-only, a service named with --service: its ERROR as always" "got (exit $rc): $out" \
	test "$rc" -eq 1 -a -n "$(grep '^service login: ERROR: no pam_duress.so auth line' <<<"$out")" -a -z "$(grep -F "$BOOT_ONLY" <<<"$out")"
out=$(duress check --pam-dir "$P" --pam-configs-dir "$T/pam-configs" --boot-dir "" --user-dir "" --global-dir "" 2>&1)
rc=$?
check_why "no boot directory: no boot-only line, an ERROR a service" "got (exit $rc): $out" \
	test "$rc" -eq 1 -a "$(grep -c '^service .*: ERROR: no pam_duress.so auth line' <<<"$out")" -eq 4 -a -z "$(grep -F 'boot-only' <<<"$out")"
printf 'auth optional pam_duress.so\n@include common-auth\n' >"$P/sshd"
stack_check --user-dir "" --global-dir ""
check_why "a service with the module line: no boot-only line, the others' ERRORs" "got (exit $rc): $out" \
	test "$rc" -eq 1 -a -z "$(grep -F 'boot-only' <<<"$out")" -a -n "$(grep '^service login: ERROR: no pam_duress.so auth line' <<<"$out")"

# --- duress sign's reminder --------------------------------------------------------
new_action late
err=$(duress sign --stdin --boot-dir "$B" "$B/late" 2>&1 >/dev/null <<<"$PW")
check_why "signing in the boot directory: one line to run update-initramfs" "got: $err" \
	test "$(grep -cxF "duress: $B/late: a boot action: run sudo update-initramfs -u so that the initramfs holds it" <<<"$err")" -eq 1
mkdir -m 700 "$T/elsewhere"
printf '#!/bin/sh\n' >"$T/elsewhere/a" && chmod 700 "$T/elsewhere/a"
err=$(duress sign --stdin --boot-dir "$B" "$T/elsewhere/a" 2>&1 >/dev/null <<<"$PW")
check_why "signing elsewhere: signed, and no such line" "got: $err" \
	test -s "$T/elsewhere/a.sig" -a -z "$(grep update-initramfs <<<"$err")"
err=$(PATH=$T/dbin "$DURESS" sign --stdin --boot-dir "$B" "$B/late" 2>&1 >/dev/null <<<"$PW")
check_why "signing in the boot directory of a dracut machine: one line to run dracut -f" "got: $err" \
	test "$(grep -cxF "duress: $B/late: a boot action: run sudo dracut -f so that the initramfs holds it" <<<"$err")" -eq 1 \
	-a -z "$(grep update-initramfs <<<"$err")"

tap_end
