#!/bin/bash
# duress check's key-slot line for the disk the crypttab keyscript line
# unlocks (docs/boot.md, Timing): cryptsetup tries key slots in order, so a
# duress passphrase in a later slot unlocks a whole derivation later unless
# its slot is preferred.  LUKS2 images made here (cheap slots), read with
# the real cryptsetup luksDump.  TAP output for meson.
# Usage: test_check_keyslots.sh PATH/TO/duress KEYSCRIPT_PATH DOCS/boot.md
set -u
DURESS=$1 KEYSCRIPT=$2 DOC=$3
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: the boot directory must be root's"
command -v cryptsetup >/dev/null || skip_all "no cryptsetup (tools/deps.sh check)"

B=$T/boot.d
mkdir -m 700 "$B" && printf '#!/bin/sh\necho x\n' >"$B/mark" && chmod 700 "$B/mark"
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost --boot-dir "$B" "$B/mark" >/dev/null 2>&1 <<<"Boot-pw-1"
CHEAP=(--batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000)
printf one >"$T/k1" && printf two >"$T/k2"
# luks IMG SLOTS: a LUKS2 image with 1 or 2 key slots.
luks() {
	truncate -s 20M "$1" && cryptsetup luksFormat "${CHEAP[@]}" --type luks2 "$1" "$T/k1" &&
		{ [ "$2" = 1 ] || cryptsetup luksAddKey "${CHEAP[@]}" --key-file "$T/k1" "$1" "$T/k2"; }
}
luks "$T/two.img" 2 >/dev/null 2>&1 && luks "$T/one.img" 1 >/dev/null 2>&1 ||
	skip_all "cannot make a LUKS2 image here"
# slots_line SOURCE: the key-slot line of duress check for a crypttab naming SOURCE.
slots_line() {
	printf 'root %s none luks,keyscript=%s\n' "$1" "$KEYSCRIPT" >"$T/crypttab"
	"$DURESS" check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$B" \
		--crypttab "$T/crypttab" --initramfs /nonexistent 2>&1 |
		grep -F "crypttab $T/crypttab: " | grep -vF ": OK: line 1 (root) uses the keyscript"
}
expect() {
	local got
	got=$(slots_line "$2")
	if [ "$got" = "$3" ]; then ok "$1"; else
		not_ok "$1"
		printf 'expected: %s\ngot:      %s\n' "$3" "$got" | diag
	fi
}
P="crypttab $T/crypttab"

expect "two slots, none preferred: WARN with the fix" "$T/two.img" \
	"$P: WARN: $T/two.img has 2 key slots and none is preferred: cryptsetup tries them in order, so a passphrase in a later slot unlocks a whole key derivation later, which a stopwatch sees; fix: sudo cryptsetup config --priority prefer --key-slot N $T/two.img, N the duress passphrase's slot"
cryptsetup config --priority prefer --key-slot 1 "$T/two.img"
expect "the duress slot preferred: OK" "$T/two.img" \
	"$P: OK: $T/two.img tries its preferred key slot first"
expect "one key slot: WARN, a duress passphrase opens nothing" "$T/one.img" \
	"$P: WARN: $T/one.img has one key slot, so a duress passphrase opens nothing and only before-unlock actions can run; fix: sudo cryptsetup luksAddKey $T/one.img (the duress passphrase), then prefer its slot (docs/boot.md, Timing)"
# Issue 26, item 1: the real passphrase's slot killed (luksKillSlot, or
# luksChangeKey on the wrong one), only the preferred, duress, slot left.
cp "$T/two.img" "$T/left.img" && cryptsetup luksKillSlot --batch-mode "$T/left.img" 0 >/dev/null 2>&1
expect "only the preferred (duress) slot left: WARN, every unlock is a duress unlock" "$T/left.img" \
	"$P: WARN: the only key slot of $T/left.img is the preferred one, the duress passphrase's: every unlock runs the boot actions; fix: sudo cryptsetup luksAddKey $T/left.img (the real passphrase) (docs/boot.md, Changing a passphrase)"
: >"$T/plain.img"
expect "not LUKS: WARN, cannot tell" "$T/plain.img" \
	"$P: WARN: cannot tell the key slots of $T/plain.img: cryptsetup luksDump failed (not LUKS, or not readable: run as root); fix: run duress check as root, with cryptsetup installed"
expect "UUID=: looked up under /dev/disk/by-uuid; none there: the keyscript's disk cannot be found, an ERROR" \
	"UUID=0b00b00b-0000-4000-8000-000000000019" \
	"$P: ERROR: /dev/disk/by-uuid/0b00b00b-0000-4000-8000-000000000019 does not exist, so the initramfs cannot find the disk of the line that uses the keyscript (update-initramfs says: cryptsetup: ERROR: Couldn't resolve device); fix: correct the line's source (2nd field): the UUID= of the disk's crypto_LUKS partition, which lsblk -f shows, then sudo update-initramfs -u"
if truncate -s 20M "$T/luks1.img" &&
	cryptsetup luksFormat "${CHEAP[@]}" --type luks1 "$T/luks1.img" "$T/k1" >/dev/null 2>&1; then
	expect "LUKS1 (no LUKS2 key slot section): WARN, cannot tell, never silent" "$T/luks1.img" \
		"$P: WARN: cannot tell the key slots of $T/luks1.img: no LUKS2 key slot in cryptsetup luksDump's output (LUKS1?); fix: check them by hand (docs/boot.md, Timing)"
else
	skip "LUKS1: cannot make a LUKS1 image here"
fi
expect "a source with a / after UUID=: not looked up" "UUID=../../etc/passwd" \
	"$P: WARN: cannot tell the key slots of UUID=../../etc/passwd: not a device path, UUID=, PARTUUID= or LABEL=; fix: check them by hand (docs/boot.md, Timing)"

# Issue 25, item 12: docs/boot.md step 2's command lists every key slot of a
# LUKS2 header (grep -A1 '^Keyslots' showed slot 0 alone), run as written but for sudo.
cmd=$(grep -m 1 'cryptsetup luksDump "\$DEV" |' "$DOC" | sed -e 's/^sudo //' -e 's/ *#.*$//')
got=$(DEV=$T/two.img bash -c "$cmd" 2>&1)
check_why "docs/boot.md step 2: its luksDump command shows both key slots of a two-slot disk" \
	"command: $cmd; got: $got" test "$got" = "$(printf '  0: luks2\n  1: luks2')"
tap_end
