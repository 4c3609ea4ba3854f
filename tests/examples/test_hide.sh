#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# examples/hide on a scratch tree in a temporary directory: MOVE and REMOVE
# (spaces and odd characters in names, a missing path, symbolic links not
# followed, shred really overwriting), then as root in a private mount
# namespace: UNMOUNT of a loop-device filesystem (idle and busy) and LUKS=
# on a LUKS2 image when the kernel has device-mapper.
#
#   test_hide.sh EXAMPLES_DIR/hide
set -u
SCRIPT=$1
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

H=$T/home
O=$T/outside
ODD="-odd 'q' \"d\" \$x *[b] \\ ;&|"

# run_hide CONFIG-LINES...: the example with its CONFIG line pointing at a
# config made of those lines, run as the module runs an action (clean
# environment, HOME=$H, cwd /, stdin on /dev/null).  Sets rc; stderr in
# $T/err.
run_hide() {
	printf '%s\n' "$@" >"$T/hide.conf"
	sed "s|^CONFIG=.*|CONFIG=$T/hide.conf|" "$SCRIPT" >"$T/hide"
	(cd / && env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME="$H" USER=u \
		PAM_TYPE=auth sh "$T/hide" </dev/null >"$T/out" 2>"$T/err")
	rc=$?
}
absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
all_zero() { [ -s "$1" ] && cmp -s -n "$(stat -c %s "$1")" "$1" /dev/zero; }

make_tree() {
	rm -rf "$H" "$O" "$T/hidden"
	mkdir -p "$H/docs/sub" "$H/with space" "$O/keep" "$O/dir"
	echo secret >"$H/docs/secret.txt"
	echo deep >"$H/docs/sub/deep.txt"
	echo notes >"$H/with space/notes.txt"
	echo odd >"$H/$ODD"
	echo tilde >"$H/tilde file"
	echo target >"$O/target.txt"
	echo kept >"$O/keep/kept.txt"
	echo dir >"$O/dir/inside.txt"
	ln -s "$O/target.txt" "$H/link-out"
	ln -s "$O/dir" "$H/link-dir"
	ln -s "$O/keep" "$H/docs/link-in"
	# A second name for secret.txt outside the tree shows what shred did to
	# the data after the listed name is gone.
	ln "$H/docs/secret.txt" "$O/secret-hardlink"
}

# --- MOVE ---
make_tree
run_hide "HIDE_DIR=$T/hidden" "MOVE=$H/with space" "MOVE=$H/$ODD" \
	"MOVE=$H/link-out" "MOVE=$H/missing" "MOVE=~/tilde file"
check "move: exit 0 with a missing path" [ "$rc" -eq 0 ]
check "move: the missing path is skipped with a message" \
	grep -qF "skip: $H/missing does not exist" "$T/err"
run=("$T"/hidden/hidden.*)
check "move: one new directory under HIDE_DIR" [ "${#run[@]}" -eq 1 ]
check "move: ... of mode 0700" [ "$(stat -c %a "${run[0]}")" = 700 ]
check "move: a directory with a space moved with its content" \
	[ "$(cat "${run[0]}/1.with space/notes.txt")" = notes ]
check "move: ... and is gone from its place" absent "$H/with space"
check "move: the odd name moved" [ "$(cat "${run[0]}/2.$ODD")" = odd ]
check "move: ... and is gone from its place" absent "$H/$ODD"
check "move: a listed symbolic link moved as a link" \
	[ "$(readlink "${run[0]}/3.link-out")" = "$O/target.txt" ]
check "move: ... and is gone from its place" absent "$H/link-out"
check "move: the link's target stayed where it was" [ "$(cat "$O/target.txt")" = target ]
check "move: ~/ is the home" [ "$(cat "${run[0]}/4.tilde file")" = tilde ]

# --- REMOVE, with shred ---
make_tree
run_hide "REMOVE=$H/docs/" "REMOVE=$H/link-dir/" "REMOVE=$H/link-out" \
	"REMOVE=$H/$ODD" "REMOVE=$H/missing" "REMOVE=relative/path" COLOUR=red
check "remove: a relative path fails the run" [ "$rc" -ne 0 ]
check "remove: ... and is named" grep -qF "REMOVE=relative/path: not an absolute path" "$T/err"
check "remove: an unknown key is named" grep -q "unknown key COLOUR ignored" "$T/err"
check "remove: the missing path is skipped with a message" \
	grep -qF "skip: $H/missing does not exist" "$T/err"
check "remove: the directory tree is gone" absent "$H/docs"
check "remove: the odd name is gone" absent "$H/$ODD"
check "remove: a link inside the tree was not followed" \
	[ "$(cat "$O/keep/kept.txt")" = kept ]
check "remove: a listed link (with a trailing slash) removed" absent "$H/link-dir"
check "remove: ... its target directory kept" [ "$(cat "$O/dir/inside.txt")" = dir ]
check "remove: a listed link to a file removed" absent "$H/link-out"
check "remove: ... its target kept" [ "$(cat "$O/target.txt")" = target ]
case $(stat -f -c %T "$T") in
btrfs | zfs | tmpfs | ramfs | overlayfs | nfs* | cifs | smb2 | fuse*)
	skip "remove: shred skipped on $(stat -f -c %T "$T") (by design)"
	;;
*) check "remove: the data was overwritten (seen through a hard link)" \
	all_zero "$O/secret-hardlink" ;;
esac
check "remove: other entries ran" [ -d "$H/with space" ]

# --- REMOVE, SHRED=no ---
make_tree
run_hide SHRED=no "REMOVE=$H/docs"
check "SHRED=no: exit 0" [ "$rc" -eq 0 ]
check "SHRED=no: removed" absent "$H/docs"
check "SHRED=no: the data was not overwritten" [ "$(cat "$O/secret-hardlink")" = secret ]
run_hide SHRED=maybe "REMOVE=$H/with space"
check "SHRED=maybe: refused" [ "$rc" -ne 0 ]
check "SHRED=maybe: nothing done" [ -d "$H/with space" ]

# --- root: UNMOUNT and LUKS= in a private mount namespace ---
if [ "$(id -u)" -ne 0 ]; then
	skip "UNMOUNT and LUKS= need root"
	tap_end
	exit
fi

# in_namespace SCRIPT: bash SCRIPT in a new private mount namespace, with $T
# and the function run_hide; what it mounts is gone when it ends.
in_namespace() {
	timeout 60 unshare -m --propagation private bash -c "
		T='$T' SCRIPT='$SCRIPT' H='$H'
		$(declare -f run_hide)
		$1"
}

if ! new_loop plain 16M || ! mkfs.ext4 -q "$LOOP"; then
	skip "no loop device for UNMOUNT"
else
	PLAIN=$LOOP
	mkdir -p "$T/mnt" "$T/busy"
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_namespace '
		mount '"$PLAIN"' "$T/mnt" && echo x >"$T/mnt/file" || exit 1
		run_hide "UNMOUNT=$T/mnt"
		echo "$rc" >"$T/idle.rc"
		mountpoint -q "$T/mnt" && echo mounted >"$T/idle.after"

		mount '"$PLAIN"' "$T/busy" || exit 1
		(cd "$T/busy" && exec sleep 60) & holder=$!
		start=$(date +%s)
		run_hide UNMOUNT_TIMEOUT=3 BUSY=fail "UNMOUNT=$T/busy"
		echo "$rc" >"$T/fail.rc"
		mountpoint -q "$T/busy" && echo mounted >"$T/fail.after"
		run_hide UNMOUNT_TIMEOUT=3 "UNMOUNT=$T/busy"
		echo "$rc $(( $(date +%s) - start ))" >"$T/lazy.rc"
		cp "$T/err" "$T/lazy.err"
		mountpoint -q "$T/busy" && echo mounted >"$T/lazy.after"
		kill "$holder"
		run_hide "UNMOUNT=$T/mnt"
		cp "$T/err" "$T/notmounted.err"
		true'
	check "UNMOUNT: idle mount: exit 0" [ "$(cat "$T/idle.rc")" = 0 ]
	check "UNMOUNT: idle mount unmounted" [ ! -e "$T/idle.after" ]
	check "UNMOUNT BUSY=fail: busy mount: exit non-zero" [ "$(cat "$T/fail.rc")" != 0 ]
	check "UNMOUNT BUSY=fail: busy mount left mounted" [ -e "$T/fail.after" ]
	read -r lazy_rc lazy_secs <"$T/lazy.rc"
	check "UNMOUNT BUSY=lazy: busy mount: exit 0" [ "$lazy_rc" = 0 ]
	check "UNMOUNT BUSY=lazy: busy mount detached" [ ! -e "$T/lazy.after" ]
	check "UNMOUNT BUSY=lazy: says it was busy" grep -q "busy" "$T/lazy.err"
	check "UNMOUNT: busy mounts handled in bounded time (${lazy_secs}s < 15s)" \
		[ "$lazy_secs" -lt 15 ]
	check "UNMOUNT: a directory that is not a mount point is skipped" \
		grep -qF "skip: $T/mnt is not a mount point" "$T/notmounted.err"
fi

# LUKS= needs device-mapper in the kernel (dm-crypt) and cryptsetup.
if ! command -v cryptsetup >/dev/null; then
	skip "LUKS=: cryptsetup not installed (Debian: cryptsetup-bin)"
elif ! grep -qw device-mapper /proc/misc 2>/dev/null; then
	skip "LUKS=: this kernel has no device-mapper (cannot open a LUKS image)"
elif ! new_loop luks 40M; then
	skip "LUKS=: no loop device"
else
	LUKS=$LOOP
	NAME=duress-test-hide-$$
	printf 'passphrase' >"$T/key"
	cryptsetup luksFormat --type luks2 --batch-mode --pbkdf pbkdf2 \
		--pbkdf-force-iterations 1000 --key-file "$T/key" "$LUKS"
	mkdir -p "$T/luks"
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_namespace '
		cryptsetup open --key-file "$T/key" '"$LUKS $NAME"' || exit 1
		mkfs.ext4 -q /dev/mapper/'"$NAME"' && mount /dev/mapper/'"$NAME"' "$T/luks" || exit 1
		echo x >"$T/luks/file"
		run_hide "LUKS='"$NAME"'"
		echo "$rc" >"$T/luks.rc"
		findmnt --source /dev/mapper/'"$NAME"' >/dev/null && echo mounted >"$T/luks.mounted"
		true'
	check "LUKS=: exit 0" [ "$(cat "$T/luks.rc" 2>/dev/null)" = 0 ]
	check "LUKS=: unmounted" [ ! -e "$T/luks.mounted" ]
	check "LUKS=: the mapping is closed" fails dmsetup info "$NAME"
	cryptsetup close "$NAME" 2>/dev/null
fi

run_hide "LUKS=no-such-mapping-$$" "LUKS=../x"
check "LUKS=: a mapping that is not open is skipped" grep -q "skip: /dev/mapper/no-such-mapping-$$ is not open" "$T/err"
check "LUKS=: a name with a slash is refused" grep -qF "LUKS=../x: not a device-mapper name" "$T/err"
check "LUKS=: ... and fails the run" [ "$rc" -ne 0 ]

tap_end
