#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# examples/hide on a scratch tree in a temporary directory: MOVE and REMOVE
# (spaces and odd characters in names, a missing path, symbolic links not
# followed, files really overwritten, a path through a link refused, no
# helper: nothing done), then as root: a user swapping a name for a symbolic
# link exactly between hide's look and its act (REMOVE= directory and file,
# MOVE= path component), or for root's file with one link (another inode),
# a rehearsal (DURESS_REHEARSE=1: each entry named, nothing touched, fdtree
# never called), and in a private mount namespace: mounts inside a REMOVE=
# tree (a directory, a tmpfs, a file), UNMOUNT of a loop-device filesystem (idle and busy) and
# LUKS= on a LUKS2 image when the kernel has device-mapper.
#
#   test_hide.sh EXAMPLES_DIR/hide FDTREE FDTREE_HOOKED
#
# FDTREE is the helper hide runs (found through HIDE_HELPER_DIR); FDTREE_HOOKED
# the test build of it that runs $FDTREE_TEST_HOOK between a look and an act.
set -u
SCRIPT=$1
HELPER_DIR=$(cd "$(dirname "$2")" && pwd)
HOOKED=$(realpath "$3")
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

H=$T/home
O=$T/outside
ODD="-odd 'q' \"d\" \$x *[b] \\ ;&|"

# run_hide CONFIG-LINES...: the example with its CONFIG line pointing at a
# config made of those lines, run as the module runs an action (clean
# environment, HOME=$H, cwd /, stdin on /dev/null), plus HIDE_ENV (the
# helper's directory; a test hook) and BIN_FIRST (a directory put first in
# PATH).  Sets rc; stderr in $T/err.
HIDE_ENV=("HIDE_HELPER_DIR=$HELPER_DIR")
BIN_FIRST=
run_hide() {
	printf '%s\n' "$@" >"$T/hide.conf"
	sed "s|^CONFIG=.*|CONFIG=$T/hide.conf|" "$SCRIPT" >"$T/hide"
	(cd / && env -i PATH="${BIN_FIRST:+$BIN_FIRST:}/usr/bin:/bin:/usr/sbin:/sbin" HOME="$H" \
		USER=u PAM_TYPE=auth "${HIDE_ENV[@]}" sh "$T/hide" </dev/null >"$T/out" 2>"$T/err")
	rc=$?
}
absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
# The data of a removed file, seen through a descriptor opened before (fd 3).
held_zero() { [ -s /dev/fd/3 ] && cmp -s -n "$(stat -L -c %s /dev/fd/3)" /dev/fd/3 /dev/zero; }
held_is() { [ "$(cat /dev/fd/3)" = "$1" ]; }

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
	# A second name for secret.txt outside the tree: its data is not only
	# the tree's, so it must not be overwritten.
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
exec 3<"$H/docs/sub/deep.txt"
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
*) check "remove: the data was overwritten (seen through a descriptor held open)" \
	held_zero ;;
esac
exec 3<&-
check "remove: a file with another hard link was deleted, not overwritten" \
	[ "$(cat "$O/secret-hardlink")" = secret ]
check "remove: ... and says so" grep -qF "$H/docs/secret.txt has other hard links" "$T/err"
check "remove: other entries ran" [ -d "$H/with space" ]

# --- REMOVE, SHRED=no ---
make_tree
exec 3<"$H/docs/sub/deep.txt"
run_hide SHRED=no "REMOVE=$H/docs"
check "SHRED=no: exit 0" [ "$rc" -eq 0 ]
check "SHRED=no: removed" absent "$H/docs"
check "SHRED=no: the data was not overwritten" held_is deep
exec 3<&-
run_hide SHRED=maybe "REMOVE=$H/with space"
check "SHRED=maybe: refused" [ "$rc" -ne 0 ]
check "SHRED=maybe: nothing done" [ -d "$H/with space" ]

# --- rehearsal (DURESS_REHEARSE=1): each entry named, nothing touched ---
# fdtree through a stand-in that records each call and runs the real one: a
# rehearsal must never call it (it has no read-only mode).
mkdir -m 755 "$T/spy"
printf '#!/bin/sh\necho "$*" >>%s/spy.log\nexec %s/fdtree "$@"\n' "$T" "$HELPER_DIR" >"$T/spy/fdtree"
chmod 755 "$T/spy/fdtree"
# tree_state: every name, type, size, link target and content under $H and $O.
tree_state() {
	find "$H" "$O" -printf '%p %y %s %l\n' | sort
	find "$H" "$O" -type f -exec sha256sum {} + | sort
}
make_tree
tree_state >"$T/state.before"
HIDE_ENV=("HIDE_HELPER_DIR=$T/spy" DURESS_REHEARSE=1)
run_hide "HIDE_DIR=$T/hidden" "MOVE=$H/with space" "MOVE=$H/$ODD" "MOVE=~/tilde file" \
	"REMOVE=$H/docs/" "REMOVE=$H/link-out" "REMOVE=$H/missing" "UNMOUNT=$H/docs/sub"
HIDE_ENV=("HIDE_HELPER_DIR=$HELPER_DIR")
check_diag "rehearsal: exit 0, one line per entry: what it would do to which path" "$T/out" [ "$rc
$(cat "$T/out")" = "0
hide: would move $H/with space into a new directory $T/hidden/hidden.XXXXXX, as 1.with space
hide: would move $H/$ODD into a new directory $T/hidden/hidden.XXXXXX, as 2.$ODD
hide: would move $H/tilde file into a new directory $T/hidden/hidden.XXXXXX, as 3.tilde file
hide: would overwrite with zeros, then remove $H/docs (and all under it on the same mount)
hide: would overwrite with zeros, then remove $H/link-out (and all under it on the same mount)" ]
check "rehearsal: what a real run skips is said on stderr (missing path, not a mount point)" \
	sh -c "grep -qxF 'hide: skip: $H/missing does not exist' '$T/err' && grep -qxF 'hide: skip: $H/docs/sub is not a mount point' '$T/err' && [ -s '$T/out' ]"
tree_state >"$T/state.after"
check_same "rehearsal: nothing moved, removed or changed" "$T/state.before" "$T/state.after"
check "rehearsal: no HIDE_DIR made, fdtree never called" sh -c "[ ! -e '$T/hidden' ] && [ ! -e '$T/spy.log' ]"
# The stand-in works (so the check above can fail): a real run calls it.
HIDE_ENV=("HIDE_HELPER_DIR=$T/spy")
run_hide SHRED=no "REMOVE=$H/docs"
HIDE_ENV=("HIDE_HELPER_DIR=$HELPER_DIR")
{ absent "$H/docs" && grep -qxF "remove $H/docs" "$T/spy.log"; } ||
	not_ok "setup: the fdtree stand-in records a real run's call"

# --- a symbolic link among a configured path's directories: refused ---
make_tree
run_hide "HIDE_DIR=$T/hidden" "REMOVE=$H/link-dir/inside.txt" "MOVE=$H/link-dir/inside.txt"
check "link in the path: exit non-zero" [ "$rc" -ne 0 ]
check "link in the path: REMOVE= refused, the link's target kept" \
	[ "$(cat "$O/dir/inside.txt")" = dir ]
check "link in the path: ... and the link is named" \
	grep -qF "$H/link-dir is a symbolic link: refused" "$T/err"
check "link in the path: MOVE= refused too" \
	[ "$(grep -cF "$H/link-dir is a symbolic link: refused" "$T/err")" -eq 2 ]

# --- no helper: MOVE= and REMOVE= refused, nothing touched ---
make_tree
mkdir -p "$T/no-helper"
HIDE_ENV=("HIDE_HELPER_DIR=$T/no-helper")
run_hide "HIDE_DIR=$T/hidden" "MOVE=$H/docs" "REMOVE=$H/with space" "REMOVE=$H/link-out"
HIDE_ENV=("HIDE_HELPER_DIR=$HELPER_DIR")
check "no helper: exit non-zero" [ "$rc" -ne 0 ]
check "no helper: one line per entry" [ "$(grep -c "refused: no usable fdtree" "$T/err")" -eq 3 ]
check "no helper: nothing moved" [ "$(cat "$H/docs/secret.txt")" = secret ]
check "no helper: ... no directory made" absent "$T/hidden"
check "no helper: nothing removed" [ "$(cat "$H/with space/notes.txt")" = notes ]
check "no helper: ... not even a link" [ -L "$H/link-out" ]

# --- root: the swaps (a user, root's file), mounts, UNMOUNT and LUKS= ---
if [ "$(id -u)" -ne 0 ]; then
	skip "the swap, mount, UNMOUNT and LUKS= parts need root"
	tap_end
	exit
fi

# in_namespace SCRIPT: bash SCRIPT in a new private mount namespace, with $T
# and the function run_hide; what it mounts is gone when it ends.  Bounded
# only against a hang: 60 s (bound: times DURESS_TIMEOUT_FACTOR), ten times
# what the slowest part here takes loaded.
in_namespace() {
	timeout "$(bound 60)" unshare -m --propagation private bash -c "
		T='$T' SCRIPT='$SCRIPT' H='$H' BIN_FIRST=
		$(declare -p HIDE_ENV)
		$(declare -f run_hide)
		$1"
}

# --- a user swaps a name for a symbolic link between hide's look and act ---
# The user (nobody) owns a directory inside the tree root removes or moves
# from; the link points at a root-owned 0644 file of the user's choosing.
# $T/swap makes the swap once, as the user.  The moment is exact for both
# scripts: today's hide runs shred (REMOVE=) or mv (MOVE=) after its look,
# and stand-ins first in PATH swap, then exec the real program; the new hide
# runs fdtree, whose test build runs $T/hook at each point between a look
# and an act, which swaps when it reaches the name in $T/swap.at.
USER_ID=65534
mkdir -p "$T/bin" "$T/hooked"
ln -sf "$HOOKED" "$T/hooked/fdtree"
for prog in shred mv; do
	printf '#!/bin/sh\n"%s/swap"\nexec %s "$@"\n' "$T" "$(command -v "$prog")" >"$T/bin/$prog"
done
printf '#!/bin/sh\n[ -e "%s/swapped" ] && exit 0\n: >"%s/swapped"\n' "$T" "$T" >"$T/swap"
printf 'exec setpriv --reuid=%s --regid=%s --clear-groups sh "%s/swap.sh"\n' \
	"$USER_ID" "$USER_ID" "$T" >>"$T/swap"
# shellcheck disable=SC2016 # expanded by the hook
printf '#!/bin/sh\n[ "$1:$2" = "$(cat "%s/swap.at")" ] && exec "%s/swap"\nexit 0\n' \
	"$T" "$T" >"$T/hook"
chmod 755 "$T/bin/shred" "$T/bin/mv" "$T/swap" "$T/hook"

# swap_case AT SWAP-COMMANDS CONFIG-LINES...: a fresh user tree in $T/u
# (userdir, owned by the user, holds sub/file, file and work/file), a
# victim $T/victim/file, then hide run with the swap armed at AT.
swap_case() {
	rm -rf "$T/u" "$T/victim" "$T/hidden" "$T/swapped"
	mkdir -p "$T/u/tree/userdir/sub" "$T/u/tree/userdir/work" "$T/victim"
	printf 'root data\n' >"$T/victim/file"
	chmod 644 "$T/victim/file"
	cp "$T/victim/file" "$T/victim.orig"
	echo "user data" >"$T/u/tree/userdir/sub/file"
	echo "user file" >"$T/u/tree/userdir/file"
	echo "user work" >"$T/u/tree/userdir/work/file"
	echo "root's own" >"$T/u/tree/top"
	chown -R "$USER_ID:$USER_ID" "$T/u/tree/userdir"
	printf '%s\n' "$1" >"$T/swap.at"
	printf '%s\n' "$2" >"$T/swap.sh"
	shift 2
	HIDE_ENV=("HIDE_HELPER_DIR=$T/hooked" "FDTREE_TEST_HOOK=$T/hook")
	BIN_FIRST=$T/bin
	run_hide "$@"
	HIDE_ENV=("HIDE_HELPER_DIR=$HELPER_DIR")
	BIN_FIRST=
}
victim_intact() { cmp -s "$T/victim/file" "$T/victim.orig"; }

UD=$T/u/tree/userdir
swap_case "open:$UD/sub" "cd '$UD' && mv sub sub.old && ln -s '$T/victim' sub" \
	"REMOVE=$T/u/tree"
check "swap, REMOVE= directory: the swap happened" [ -e "$T/swapped" ]
check_why "swap, REMOVE= directory: root's file is byte-identical" \
	"root overwrote a file through a link the user put in the tree" victim_intact
check "swap, REMOVE= directory: the user's files are gone" absent "$T/u/tree"
check "swap, REMOVE= directory: exit 0" [ "$rc" -eq 0 ]

swap_case "open:$UD/file" "cd '$UD' && mv file file.old && ln -s '$T/victim/file' file" \
	"REMOVE=$T/u/tree"
check "swap, REMOVE= file: the swap happened" [ -e "$T/swapped" ]
check_why "swap, REMOVE= file: root's file is byte-identical" \
	"root overwrote a file through a link the user put in the tree" victim_intact
check "swap, REMOVE= file: the user's files are gone" absent "$T/u/tree"

swap_case "move:$UD/work/file" "cd '$UD' && mv work work.old && ln -s '$T/victim' work" \
	"HIDE_DIR=$T/hidden" "MOVE=$UD/work/file"
check "swap, MOVE= path component: the swap happened" [ -e "$T/swapped" ]
check_why "swap, MOVE= path component: root's file is still in its place" \
	"root moved a file through a link the user put in the path" victim_intact
moved=("$T"/hidden/hidden.*/1.file)
check "swap, MOVE= path component: the user's file was moved" \
	[ "$(cat "${moved[0]}" 2>/dev/null)" = "user work" ]

# A root 0644 file with one link, renamed by the user over a file of the tree
# between fdtree's look at that file and its open for overwriting: the same
# type, mount and link count as the user's file, only the inode differs.
# fdtree unlinks the name (it is in the tree) but must not overwrite root's
# data, seen here through a descriptor held open.
rm -rf "$T/uown"
mkdir -p "$T/uown"
printf 'root data\n' >"$T/uown/rootfile"
chmod 644 "$T/uown/rootfile"
chown "$USER_ID:$USER_ID" "$T/uown"
exec 3<"$T/uown/rootfile"
swap_case "open:$UD/file" "mv '$T/uown/rootfile' '$UD/file'" "REMOVE=$T/u/tree"
check "swap, another inode: the swap happened" sh -c "[ -e '$T/swapped' ] && [ ! -e '$T/uown/rootfile' ]"
check_why "swap, another inode: root's file was not overwritten" \
	"root overwrote a file the user renamed into the tree after fdtree's look" held_is "root data"
check "swap, another inode: ... and says so" \
	grep -qF "$UD/file changed while it was being removed: not overwritten" "$T/err"
check "swap, another inode: the tree is gone" absent "$T/u/tree"
exec 3<&-

# --- as root, a helper that someone else could change is not run ---
make_tree
mkdir -p "$T/writable"
cp "$HELPER_DIR/fdtree" "$T/writable/fdtree"
chmod 775 "$T/writable"
HIDE_ENV=("HIDE_HELPER_DIR=$T/writable")
run_hide "REMOVE=$H/with space"
HIDE_ENV=("HIDE_HELPER_DIR=$HELPER_DIR")
check "group-writable helper directory: refused" grep -q "refused: no usable fdtree" "$T/err"
check "group-writable helper directory: nothing removed" [ -d "$H/with space" ]

# --- mounts inside a REMOVE= tree are not entered ---
mkdir -p "$T/m/tree/tmp" "$T/m/tree/bind" "$T/m/elsewhere"
echo top >"$T/m/tree/top"
echo elsewhere >"$T/m/elsewhere/file"
# shellcheck disable=SC2016 # expanded by the inner shell
in_namespace '
	mount -t tmpfs tmpfs "$T/m/tree/tmp" && echo tmpfs >"$T/m/tree/tmp/file" || exit 1
	# The same filesystem through a bind mount: same device, another mount.
	mount --bind "$T/m/elsewhere" "$T/m/tree/bind" || exit 1
	run_hide "REMOVE=$T/m/tree"
	echo "$rc" >"$T/m.rc"
	cp "$T/err" "$T/m.err"
	cat "$T/m/tree/tmp/file" >"$T/m.tmpfs" 2>/dev/null
	true' || echo "# could not mount in a private namespace"
check "mounts: exit non-zero (the mount points stay)" [ "$(cat "$T/m.rc" 2>/dev/null)" = 1 ]
check "mounts: a tmpfs inside the tree is not entered" [ "$(cat "$T/m.tmpfs" 2>/dev/null)" = tmpfs ]
check "mounts: a bind mount of the same filesystem is not entered" \
	[ "$(cat "$T/m/elsewhere/file" 2>/dev/null)" = elsewhere ]
check "mounts: ... and each is named" \
	[ "$(grep -c "is another mount: not entered" "$T/m.err" 2>/dev/null)" = 2 ]
check "mounts: the rest of the tree is gone" absent "$T/m/tree/top"

# A file bind-mounted over a file of the tree: the same filesystem, another
# mount.  fdtree refuses to cross it at its look, so the mount's source (here
# outside the tree) keeps its data, and it says which mount it left.
mkdir -p "$T/fm/tree/sub"
echo top >"$T/fm/tree/top"
: >"$T/fm/tree/sub/mounted"
echo source >"$T/fm/source"
# shellcheck disable=SC2016 # expanded by the inner shell
in_namespace '
	mount --bind "$T/fm/source" "$T/fm/tree/sub/mounted" || exit 1
	run_hide "REMOVE=$T/fm/tree"
	echo "$rc" >"$T/fm.rc"
	cp "$T/err" "$T/fm.err"
	true' || echo "# could not mount in a private namespace"
check "a file mount: exit non-zero (the mount point stays)" [ "$(cat "$T/fm.rc" 2>/dev/null)" = 1 ]
check_why "a file mount: its source is untouched" \
	"root overwrote or removed the file mounted inside the tree" \
	[ "$(cat "$T/fm/source" 2>/dev/null)" = source ]
check_diag "a file mount: refused at its look, and named" "$T/fm.err" \
	grep -qF "$T/fm/tree/sub/mounted is another mount: not entered" "$T/fm.err"
check "a file mount: the rest of the tree is gone" absent "$T/fm/tree/top"

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
	# Both busy runs ended (not cut off by in_namespace's bound): the
	# timeout was kept.  How long they took is for reading, not asserted.
	echo "# UNMOUNT_TIMEOUT=3 twice, busy: ${lazy_secs} s"
	check "UNMOUNT BUSY=lazy: busy mount: exit 0" [ "$lazy_rc" = 0 ]
	check "UNMOUNT BUSY=lazy: busy mount detached" [ ! -e "$T/lazy.after" ]
	check "UNMOUNT BUSY=lazy: says it was busy" grep -q "busy" "$T/lazy.err"
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
