#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# examples/luks-wipe on LUKS2 images on loop devices (root only): a dry run
# changes nothing (header checksum and key slots), ARMED=yes removes one slot
# or erases them all, a device that is not LUKS is refused and left alone;
# a rehearsal (DURESS_REHEARSE=1) prints the command and changes nothing,
# armed or not, while DURESS_REHEARSE=0 or empty is a real run.
#
#   test_luks_wipe.sh EXAMPLES_DIR/luks-wipe
set -u
SCRIPT=$1
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

require_root "needs root (loop devices, cryptsetup)"
command -v cryptsetup >/dev/null || skip_all "cryptsetup not installed (Debian: cryptsetup-bin)"

printf 'first passphrase' >"$T/key0"
printf 'second passphrase' >"$T/key1"
FAST_KDF=(--pbkdf pbkdf2 --pbkdf-force-iterations 1000)

# luks_with_two_slots DEV: LUKS2, slot 0 opened by key0, slot 1 by key1.
luks_with_two_slots() {
	cryptsetup luksFormat --type luks2 --batch-mode "${FAST_KDF[@]}" \
		--key-slot 0 --key-file "$T/key0" "$1" &&
		cryptsetup luksAddKey --batch-mode "${FAST_KDF[@]}" --key-slot 1 \
			--key-file "$T/key0" "$1" "$T/key1"
}

# The LUKS2 header and key slots live in the first 16 MiB (data offset).
header_sum() { head -c 16M "$1" | sha256sum; }
slots() { cryptsetup luksDump "$1" | sed -n 's/^  \([0-9]*\): luks2$/\1/p' | tr '\n' ' '; }
opens_with() { cryptsetup open --test-passphrase --key-file "$T/$2" "$1" </dev/null 2>/dev/null; }

# run_wipe CONFIG-LINES...: the example with its CONFIG line pointing at a
# config made of the given lines, run as the module runs an action (clean
# environment, cwd /, stdin on /dev/null, umask 077).  Sets rc and out;
# stdout and stderr stay in $T/out and $T/err.  WIPE_ENV: more variables
# (DURESS_REHEARSE).
WIPE_ENV=()
run_wipe() {
	printf '%s\n' "$@" >"$T/luks-wipe.conf"
	sed "s|^CONFIG=.*|CONFIG=$T/luks-wipe.conf|" "$SCRIPT" >"$T/luks-wipe"
	(cd / && umask 077 && env -i PATH=/usr/bin:/bin HOME=/root USER=root \
		PAM_USER=root PAM_TYPE=auth "${WIPE_ENV[@]}" sh "$T/luks-wipe" </dev/null \
		>"$T/out" 2>"$T/err")
	rc=$?
	out=$(cat "$T/out")
}

new_loop luks || skip_all "no loop device"
DEV=$LOOP
luks_with_two_slots "$DEV" || skip_all "cannot format a LUKS2 image on $DEV"
before=$(header_sum "$DEV")

run_wipe "DEVICE=$DEV" ACTION=kill-slot SLOT=1
check "dry run by default: exit 0" [ "$rc" -eq 0 ]
check "dry run prints the command it would run" \
	grep -q "would run: cryptsetup luksKillSlot --batch-mode -- $DEV 1" "$T/out"
check "dry run kill-slot: header checksum unchanged" [ "$(header_sum "$DEV")" = "$before" ]
check "dry run kill-slot: both slots still there" [ "$(slots "$DEV")" = "0 1 " ]

run_wipe "DEVICE=$DEV" ACTION=erase ARMED=Yes
check "ARMED=Yes (not exactly yes) says so" grep -q "not exactly 'yes': dry run" "$T/err"
check "ARMED=Yes erase: header checksum unchanged" [ "$(header_sum "$DEV")" = "$before" ]

run_wipe "DEVICE=$DEV" ACTION=kill-slot SLOT=one ARMED=yes
check "a bad SLOT is refused" [ "$rc" -ne 0 ]
check "a bad SLOT: one line on stderr" [ "$(wc -l <"$T/err")" -eq 1 ]
run_wipe "DEVICE=${DEV#/}" ACTION=erase ARMED=yes
check "a relative DEVICE is refused" grep -q "must be an absolute path" "$T/err"
check "refused configs: header checksum unchanged" [ "$(header_sum "$DEV")" = "$before" ]

# A rehearsal (DURESS_REHEARSE=1) is a dry run even when armed.
WIPE_ENV=(DURESS_REHEARSE=1)
run_wipe "DEVICE=$DEV" ACTION=kill-slot SLOT=1 ARMED=yes
check_diag "rehearsal, armed kill-slot: exit 0, prints the exact command" "$T/out" [ "$rc $out" = \
	"0 luks-wipe: rehearsal (armed: a real run runs it); would run: cryptsetup luksKillSlot --batch-mode -- $DEV 1" ]
check "rehearsal, armed kill-slot: header checksum unchanged, both slots there" \
	[ "$(header_sum "$DEV") $(slots "$DEV")" = "$before 0 1 " ]
run_wipe "DEVICE=$DEV" ACTION=erase ARMED=yes
check_diag "rehearsal, armed erase: exit 0, prints the exact command" "$T/out" [ "$rc $out" = \
	"0 luks-wipe: rehearsal (armed: a real run runs it); would run: cryptsetup luksErase --batch-mode -- $DEV" ]
check "rehearsal, armed erase: header checksum unchanged, both slots there" \
	[ "$(header_sum "$DEV") $(slots "$DEV")" = "$before 0 1 " ]
run_wipe "DEVICE=$DEV" ACTION=kill-slot SLOT=0
check_diag "rehearsal, not armed: says a real run only prints it" "$T/out" [ "$out" = \
	"luks-wipe: rehearsal (not armed: a real run only prints it); would run: cryptsetup luksKillSlot --batch-mode -- $DEV 0" ]
# Any other value is a real run (below: armed, with DURESS_REHEARSE=0 and empty).
WIPE_ENV=()

# As the owner of a per-user action would run it: refused.
printf 'DEVICE=%s\nACTION=erase\nARMED=yes\n' "$DEV" >"$T/luks-wipe.conf"
chmod 644 "$T/luks-wipe.conf" "$T/luks-wipe"
(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
	sh "$T/luks-wipe" </dev/null >/dev/null 2>"$T/err")
check "not root: refused" grep -q "must run as root" "$T/err"
check "not root: header checksum unchanged" [ "$(header_sum "$DEV")" = "$before" ]

WIPE_ENV=(DURESS_REHEARSE=0)
run_wipe "DEVICE=$DEV" ACTION=kill-slot SLOT=1 ARMED=yes COLOUR=red
check "armed kill-slot (DURESS_REHEARSE=0: a real run): exit 0" [ "$rc" -eq 0 ]
check "an unknown key is named on stderr" grep -q "unknown key COLOUR ignored" "$T/err"
check "armed kill-slot: slot 1 gone, slot 0 kept" [ "$(slots "$DEV")" = "0 " ]
check "armed kill-slot: the other slot still opens" opens_with "$DEV" key0
check "armed kill-slot: the killed passphrase no longer opens" \
	fails opens_with "$DEV" key1

WIPE_ENV=(DURESS_REHEARSE=)
run_wipe "DEVICE=$DEV" ACTION=erase ARMED=yes
WIPE_ENV=()
check "armed erase (DURESS_REHEARSE empty: a real run): exit 0" [ "$rc" -eq 0 ]
check "armed erase: luksDump lists no key slot" [ -z "$(slots "$DEV")" ]
check "armed erase: the remaining passphrase no longer opens" \
	fails opens_with "$DEV" key0

new_loop plain
PLAIN=$LOOP
head -c 1M /dev/urandom | dd of="$PLAIN" conv=notrunc status=none
plain_before=$(sha256sum <"$PLAIN")
run_wipe "DEVICE=$PLAIN" ACTION=erase ARMED=yes
check "a device that is not LUKS: refused" [ "$rc" -ne 0 ]
check "not LUKS: says so" grep -q "refused: $PLAIN is not a LUKS device" "$T/err"
check "not LUKS: the device is unchanged" [ "$(sha256sum <"$PLAIN")" = "$plain_before" ]
[ -z "$out" ] || echo "# stdout: $out"

tap_end
