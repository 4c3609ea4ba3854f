#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The GNOME login keyring after a duress login, with the real pieces: a
# gnome-keyring-daemon on a D-Bus session bus of the test's own, started and
# unlocked by the real pam_gnome_keyring placed after pam_duress in the
# stack (auth and session, as Debian's gdm-password has it), logins through
# the real libpam with pam_wrapper (pamtester: authenticate, open_session),
# an nss_wrapper account, the built module and runner; as uid 20026 when the
# test runs as root (the daemon is started as it, the action runs as it),
# else as the caller.  What a desktop shows is read over the bus without a
# prompt: the login collection's Locked property, SearchItems' unlocked and
# locked lists, and secret-tool lookup (which cannot prompt here: the bus
# activates nothing, so a locked item is simply not returned).
#
#   1. The tell, measured: after a duress login the real login keyring stays
#      locked (its item is in SearchItems' locked list, lookup finds
#      nothing); after a real login it is unlocked and lookup finds the
#      real secret.
#   2. examples/decoy-keyring, installed by `duress add` (signed with its
#      config, ARMED), run by the module with wait=: after a duress login
#      the decoy, prepared as docs/examples.md says, is unlocked with no
#      prompt, lookup finds the decoy's secret, and nothing of the real
#      keyring is reachable, locked or not; the real files are in the stash
#      byte for byte.  With no daemon running (a fresh login), with the
#      real session's daemon still running (it is asked to lock), and at a
#      screen unlock of the real session (authenticate only).
#   3. Rehearsal (DURESS_REHEARSE=1) of the swap (also through `duress test
#      --rehearse`) and of the restore: a line a step, nothing changed; a second duress login before any restore
#      keeps the saved real keyring; `decoy-keyring restore` brings it back
#      and a real login unlocks it as before.
#   4. No decoy prepared, a decoy that is not a keyring: exit 1, one line
#      saying so, nothing moved; a session bus but no gdbus: exit 1, one
#      line; as root: refused.
#
#   test_decoy_keyring.sh DURESS MODULE EXAMPLES_DIR CACHE
#
# pam_gnome_keyring.so is the system's when libpam-gnome-keyring is
# installed; else Debian's package is fetched once (apt-get download, the
# version of the installed gnome-keyring) into CACHE and unpacked there:
# installing it would run pam-auth-update and change the machine's PAM
# stack, so tools/deps.sh does not.
#
# Nothing is added to the machine's /etc (nss_wrapper, pam_wrapper); the
# buses die with the test (setpriv --pdeathsig), the keyring daemons with
# their bus, by PID at the end, or by a watchdog's hand once a SIGKILL has
# ended the test.
set -u
DURESS=$(realpath "$1")
MODULE=$(realpath "$2")
EXAMPLES=$(realpath "$3")
CACHE=$4
RUNNER=$(readlink -f "$(dirname "$MODULE")/session-helper")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/tap.sh
. "$HERE/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$HERE/../lib/root.sh"
own_shadow_or_rerun "$@"

missing=$(missing_tools gnome-keyring-daemon secret-tool dbus-daemon dbus-run-session gdbus pamtester setpriv openssl)
[ -z "$missing" ] || skip_all "missing:$missing (tools/deps.sh check installs them)"
# fetch_keyring_module: Debian's libpam-gnome-keyring, of the installed
# gnome-keyring's version, unpacked in $CACHE/root (once; a lock serializes
# two runs).
fetch_keyring_module() {
	local v
	v=$(dpkg-query -W -f '${Version}' gnome-keyring 2>/dev/null) || return 1
	mkdir -p "$CACHE" && (
		flock 9 || exit 1
		[ ! -e "$CACHE/$v.done" ] || exit 0
		rm -rf "$CACHE/root" "$CACHE"/*.deb
		cd "$CACHE" && { apt-get download -q "libpam-gnome-keyring=$v" ||
			apt-get download -q libpam-gnome-keyring; } >"$CACHE/download.log" 2>&1 &&
			dpkg-deb -x libpam-gnome-keyring_*.deb root && : >"$CACHE/$v.done"
	) 9>"$CACHE/.lock"
}
found=
for d in /lib/*/security /usr/lib/*/security /usr/lib64/security /lib/security; do
	[ ! -e "$d/pam_gnome_keyring.so" ] || found=$d/pam_gnome_keyring.so
done
if [ -z "$found" ] && fetch_keyring_module; then
	found=$(find "$CACHE/root" -name pam_gnome_keyring.so | head -n 1)
fi
[ -n "$found" ] || skip_all "missing: pam_gnome_keyring.so (libpam-gnome-keyring: not installed, and apt-get download failed; see $CACHE/download.log)"

if [ "$(id -u)" -eq 0 ]; then uid=20026 gid=20026; else uid=$(id -u) gid=$(id -g); fi
REAL=$(random_password)
DURESS_PW=$(random_password)
H=$T/home/alice
D=$H/.duress
K=$H/.local/share/keyrings
R=$T/run
STASH=$D/.keyring/real
mkdir -p "$T/pam.d" "$H" "$T/empty" "$T/saved"
mkdir -m 700 "$D" "$R"
printf 'root:x:0:0:root:/root:/bin/sh\nalice:%s:%s:%s:Alice:%s:/bin/sh\n' \
	"$(openssl passwd -6 "$REAL")" "$uid" "$gid" "$H" >"$T/passwd"
printf 'root:x:0:\nalice:x:%s:\n' "$gid" >"$T/group"
# pam_env stands in for pam_systemd, which gives the session its runtime
# directory (where the daemon puts its control socket and finds the bus).
echo "XDG_RUNTIME_DIR DEFAULT=$R" >"$T/pam_env.conf"
# Debian's common-auth (module after pam_unix), then gdm-password's lines.
cat >"$T/pam.d/keyring-test" <<EOF
auth [success=2 default=ignore] pam_unix.so nodelay
auth [success=1 default=ignore] $MODULE global_dir=$T/none runner=$RUNNER wait=10
auth requisite pam_deny.so
auth required pam_permit.so
auth optional $found
account required pam_permit.so
session optional pam_env.so readenv=1 user_readenv=0 conffile=$T/pam_env.conf
session optional $found auto_start
EOF
chown -R "$uid:$gid" "$H" "$R"

NSS=(LD_PRELOAD=libnss_wrapper.so NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group")
USER_ENV=(PATH=/usr/bin:/bin HOME="$H" USER=alice LOGNAME=alice XDG_RUNTIME_DIR="$R"
	DBUS_SESSION_BUS_ADDRESS="unix:path=$R/bus" "${NSS[@]}")
# as_alice COMMAND...: COMMAND as the account, in its session's environment.
AS_ALICE=(env -i "${USER_ENV[@]}")
[ "$(id -u)" -ne 0 ] || AS_ALICE=(setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "${AS_ALICE[@]}")
as_alice() { "${AS_ALICE[@]}" "$@"; }
# pam PASSWORD OPERATION...: pamtester on the stack above; its output in
# $T/login.out.
pam() {
	printf '%s\n' "$1" | env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" \
		PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$T/pam.d" NSS_WRAPPER_PASSWD="$T/passwd" \
		NSS_WRAPPER_GROUP="$T/group" timeout "$(bound 60)" pamtester keyring-test alice "${@:2}" \
		>"$T/login.out" 2>&1
}
# login PASSWORD: a login (authenticate, open_session).
login() { pam "$1" authenticate open_session; }
# unlock PASSWORD: a screen unlock: authenticate only, from a program of the
# running session (its XDG_RUNTIME_DIR is where pam_gnome_keyring's auth part
# finds the running daemon, and unlocks the login keyring through it).
unlock() { XDG_RUNTIME_DIR=$R pam "$1" authenticate; }
logged_in() { grep -q "successfully opened a session" "$T/login.out"; }
accepted() { grep -q "successfully authenticated" "$T/login.out"; }

# --- a session: its bus, its keyring daemon ------------------------------------
BUS_PID=
# start_bus: a session bus for the account that activates nothing (no service
# directories), killed if this shell dies: its parent is this shell (a simple
# command put in the background: forked, then exec'd all the way).
start_bus() {
	rm -rf "${R:?}"/*
	"${AS_ALICE[@]}" XDG_DATA_HOME="$T/empty" XDG_DATA_DIRS="$T/empty" \
		setpriv --pdeathsig KILL -- dbus-daemon --session --nofork --address="unix:path=$R/bus" \
		>/dev/null 2>&1 &
	BUS_PID=$!
	wait_for 10 test -S "$R/bus"
}
# daemons: the PIDs of what runs with this test's account's HOME (the
# keyring daemons, whose HOME pam_gnome_keyring set, and any client left).
daemons() { grep -lzx "HOME=$H" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }
no_daemon() { [ -z "$(daemons)" ]; }
# end_session: the bus ends, and with it the daemon; by PID if it lingers.
end_session() {
	local p
	if [ -n "$BUS_PID" ]; then
		kill "$BUS_PID" 2>/dev/null
		wait "$BUS_PID" 2>/dev/null
		BUS_PID=
	fi
	wait_for 10 no_daemon && return 0
	for p in $(daemons); do kill -KILL "$p" 2>/dev/null; done
}
at_exit end_session
# A daemon started by pam_gnome_keyring outlives its bus while it has no
# D-Bus connection yet, and at_exit does not run when this shell is killed
# (meson's SIGKILL at a timeout): a watchdog in a session of its own ends
# this test's daemons, by PID, once this shell is gone.
# shellcheck disable=SC2016 # $1 and $2 belong to the watchdog
setsid -f bash -c "$(declare -f daemons)"'
	H=$2
	while kill -0 "$1" 2>/dev/null; do sleep 1; done
	for p in $(daemons); do kill -KILL "$p" 2>/dev/null; done' watchdog "$$" "$H" </dev/null >/dev/null 2>&1
# secrets: what the desktop's autostart does after login: the running
# daemon's secret service on the bus.
secrets() { as_alice timeout "$(bound 20)" gnome-keyring-daemon --start --components=secrets >/dev/null 2>&1; }
# session PASSWORD: a new bus, a login, the secret service.
session() {
	start_bus || setup_failed "a session bus (dbus-daemon)"
	login "$1"
	logged_in || return 1
	secrets
}

call() { # call PATH METHOD ARGS...: a Secret Service call over the bus
	as_alice timeout "$(bound 20)" gdbus call --session --dest org.freedesktop.secrets --object-path "$1" \
		--method "${@:2}" 2>&1
}
locked() { call /org/freedesktop/secrets/collection/login org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Locked; }
label() { call /org/freedesktop/secrets/collection/login org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Label; }
# found ATTR VALUE: "U L", the numbers of unlocked and locked items SearchItems
# finds (every collection: the real keyring's items if it is loaded at all).
found() {
	local out
	out=$(call /org/freedesktop/secrets org.freedesktop.Secret.Service.SearchItems "{'$1': '$2'}")
	echo "$(grep -o "'/org" <<<"${out%%], *}" | wc -l) $(grep -o "'/org" <<<"${out#*], }" | wc -l)"
}
lookup() { as_alice timeout "$(bound 20)" secret-tool lookup "$@" 2>/dev/null; }
store() { # store SECRET ATTR VALUE...: into the default (login) collection
	printf '%s' "$1" | as_alice timeout "$(bound 20)" secret-tool store --label=Mail "${@:2}"
}
# sums: what is in the keyrings directory and the duress directory, and
# each file's SHA-256 (for "nothing changed").
sums() { (cd "$H" && find .local/share/keyrings .duress -print0 | sort -z | xargs -0 sha256sum 2>/dev/null; find .local/share/keyrings .duress | sort); }

# --- 1. the tell, measured -----------------------------------------------------
# A real login with no keyring yet: the daemon makes the login keyring with
# the real password.  Two items: one the decoy will also have
# (account=mail), one only the real keyring has (kind=real-only).
session "$REAL" || setup_failed "a real login that starts the keyring daemon" "$T/login.out"
if ! store RealSecret-1 account mail || ! store RealOnly-2 kind real-only; then
	setup_failed "storing the real secrets (secret-tool store)"
fi
end_session
[ -f "$K/login.keyring" ] || setup_failed "the daemon made $K/login.keyring"
cp -p "$K/login.keyring" "$T/saved/login.keyring"
[ ! -f "$K/user.keystore" ] || cp -p "$K/user.keystore" "$T/saved/user.keystore"

# Any signed action makes the duress password log in; this one does nothing.
printf '#!/bin/sh\nexit 0\n' >"$D/noop"
chmod 700 "$D/noop"
chown "$uid:$gid" "$D/noop"
as_alice env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libnss_wrapper.so" "$DURESS" sign --stdin "$D/noop" <<<"$DURESS_PW" >"$T/sign.out" 2>&1 ||
	setup_failed "duress sign of a no-op action" "$T/sign.out"

session "$DURESS_PW"
check_diag "without the example: the duress password logs in" "$T/login.out" logged_in
out=$(locked)
check_why "without the example: after a duress login the login keyring is locked" "got: $out" test "$out" = "(<true>,)"
out=$(found account mail)
check_why "... its item is there, locked (the desktop would ask for the keyring password)" "got: $out" test "$out" = "0 1"
check "... secret-tool lookup finds nothing" test -z "$(lookup account mail)"
end_session

session "$REAL"
check_diag "a real login logs in" "$T/login.out" logged_in
out=$(locked)
check_why "after a real login the login keyring is unlocked" "got: $out" test "$out" = "(<false>,)"
check "... lookup finds the real secret" test "$(lookup account mail)" = RealSecret-1
# Left running: the next duress login finds the real session's daemon.

# --- 2. the decoy, prepared as docs/examples.md says, installed by duress add --
rm -f "$D/noop" "$D/noop.sig"
# shellcheck disable=SC2016 # the procedure's own variables
PREPARE='set -eu
d=$(mktemp -d) && mkdir -m 700 "$d/run"
env -u GNOME_KEYRING_CONTROL XDG_DATA_HOME=$d XDG_RUNTIME_DIR=$d/run dbus-run-session -- sh -c '\''
	IFS= read -r pw
	printf %s "$pw" | gnome-keyring-daemon --unlock --daemonize --components=secrets >/dev/null
	unset pw
	printf %s DecoySecret-3 | secret-tool store --label=Mail account mail'\''
mkdir -p -m 700 "$1"
cp "$d/keyrings/login.keyring" "$1/decoy.keyring"
rm -rf "$d"'
as_alice env TMPDIR="$H" sh -c "$PREPARE" sh "$D/.keyring" <<<"$DURESS_PW" >"$T/prepare.out" 2>&1
check_diag "the decoy prepared as documented (its own daemon, a private bus)" "$T/prepare.out" \
	test -f "$D/.keyring/decoy.keyring"

# An ASan build of duress needs its runtime first in LD_PRELOAD.
as_alice env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libnss_wrapper.so" "$DURESS" add decoy-keyring --stdin --no-edit --examples-dir "$EXAMPLES" --pam-dir "$T/pam.d" \
	--set "BUS=$R/bus" <<<"$DURESS_PW" >"$T/add.out" 2>&1
check_diag "duress add decoy-keyring: ARMED" "$T/add.out" grep -qx "$D/decoy-keyring: ARMED" "$T/add.out"
# bound_to SIG: the paths the signature binds (its also= field, unpadded base64).
bound_to() {
	local also
	also=$(cut -d'$' -f5 "$1")
	also=${also#also=}
	while [ $((${#also} % 4)) -ne 0 ]; do also=$also=; done
	base64 -d <<<"$also" | tr '\0' '\n'
}
check "... signed with its config (--also)" test "$(bound_to "$D/decoy-keyring.sig")" = "$D/decoy-keyring.conf"

# A rehearsal, as the runner runs actions: a line a step, nothing changed.
run_action() { # run_action [ARG]: the installed action as the runner runs it; rc, $T/out, $T/err
	(cd / && as_alice env ${ACTION_PATH:+PATH=$ACTION_PATH} PAM_USER=alice PAM_SERVICE=keyring-test PAM_TYPE=auth \
		${REHEARSE:+DURESS_REHEARSE=$REHEARSE} sh "$D/decoy-keyring" "$@" </dev/null >"$T/out" 2>"$T/err")
	rc=$?
}
before=$(sums)
REHEARSE=1 run_action
check_diag "rehearsal, the real daemon running: exit 0" "$T/err" test "$rc" -eq 0
want="decoy-keyring: would move $K/login.keyring to $STASH/login.keyring"
[ ! -f "$T/saved/user.keystore" ] || want+=$'\n'"decoy-keyring: would move $K/user.keystore to $STASH/user.keystore"
want+=$'\n'"decoy-keyring: would put a copy of $D/.keyring/decoy.keyring in place as $K/login.keyring"
want+=$'\n'"decoy-keyring: would lock the login keyring of the keyring daemon running on $R/bus"
check_why "rehearsal: one line a step" "$(diag <"$T/out")" test "$(cat "$T/out")" = "$want"
check "rehearsal: nothing changed" test "$(sums)" = "$before"
check "rehearsal: the running keyring still unlocked" test "$(locked)" = "(<false>,)"

# duress test --rehearse: the same lines, through the module's own check and
# the real runner, as the owner rehearses it.
as_alice env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" \
	PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$T/pam.d" "$DURESS" test --rehearse --stdin \
	--service keyring-test --pam-dir "$T/pam.d" alice <<<"$DURESS_PW" >"$T/rehearse.out" 2>&1
check_diag "duress test --rehearse: the decoy-keyring matches" "$T/rehearse.out" \
	grep -qx "  decoy-keyring: matches" "$T/rehearse.out"
check_diag "... its rehearsal's lines, the lock included" "$T/rehearse.out" \
	test "$(grep "^decoy-keyring: would " "$T/rehearse.out")" = "$want"
check "... nothing changed" test "$(sums)" = "$before"

# decoy_unlocked WHEN: the assertions of a duress login with the example.
decoy_unlocked() {
	local out
	check_diag "$1: the duress password is accepted" "$T/login.out" accepted
	check "$1: the real login.keyring is in the stash, byte for byte" cmp -s "$T/saved/login.keyring" "$STASH/login.keyring"
	[ ! -f "$T/saved/user.keystore" ] ||
		check "$1: ... and user.keystore" cmp -s "$T/saved/user.keystore" "$STASH/user.keystore"
	check "$1: the decoy is in place as login.keyring" cmp -s "$D/.keyring/decoy.keyring" "$K/login.keyring"
	check "$1: no temporary file left in the keyrings directory" \
		test -z "$(find "$K" -mindepth 1 -name '.*' -print)"
	out=$(locked)
	check_why "$1: the login keyring is unlocked (no prompt)" "got: $out" test "$out" = "(<false>,)"
	check "$1: ... labelled Login, as a real one" test "$(label)" = "(<'Login'>,)"
	out=$(found account mail)
	check_why "$1: one item for account=mail, unlocked, none locked" "got: $out" test "$out" = "1 0"
	out=$(lookup account mail)
	check_why "$1: lookup finds the decoy's secret" "got: $out" test "$out" = DecoySecret-3
	out=$(found kind real-only)
	check_why "$1: the real-only item is not reachable at all, locked or not" "got: $out" test "$out" = "0 0"
}

# The real session's daemon still runs (a screen unlock, a second login).
login "$DURESS_PW"
secrets
decoy_unlocked "duress login, the real daemon running"
end_session

# --- 3. a second duress login before any restore; the restore ------------------
before=$(sums)
run_action
check_diag "again before a restore: exit 0" "$T/err" test "$rc" -eq 0
check "... says the real keyring is already saved" grep -q "a real keyring is already saved in $STASH" "$T/err"
check "... the saved real keyring and the decoy in place unchanged" test "$(sums)" = "$before"

REHEARSE=1 run_action restore
want="decoy-keyring: would move $STASH/login.keyring back to $K/login.keyring"
[ ! -f "$T/saved/user.keystore" ] || want+=$'\n'"decoy-keyring: would move $STASH/user.keystore back to $K/user.keystore"
check_why "restore rehearsal: exit 0, a line a file" "$(diag <"$T/out")" test "$rc" -eq 0 -a "$(cat "$T/out")" = "$want"
check "restore rehearsal: nothing changed" test "$(sums)" = "$before"
run_action restore
check_diag "restore: exit 0" "$T/err" test "$rc" -eq 0
check "restore: the real login.keyring back, byte for byte" cmp -s "$T/saved/login.keyring" "$K/login.keyring"
check "restore: the stash holds no keyring" test ! -e "$STASH/login.keyring"

session "$REAL"
check_diag "after the restore, a real login logs in" "$T/login.out" logged_in
check "... the login keyring unlocked" test "$(locked)" = "(<false>,)"
check "... lookup finds the real secret" test "$(lookup account mail)" = RealSecret-1
check "... and the real-only one" test "$(lookup kind real-only)" = RealOnly-2
end_session

# A fresh duress login: no daemon until pam_gnome_keyring starts one.
session "$DURESS_PW"
decoy_unlocked "duress login, no daemon running"
end_session
run_action restore
session "$REAL"
check "restored again: a real login unlocks the real keyring" test "$(lookup kind real-only)" = RealOnly-2
# The real session's screen locked, unlocked with the duress password.
unlock "$DURESS_PW"
decoy_unlocked "screen unlock, the real daemon running"
end_session
run_action restore

# --- 4. failures ---------------------------------------------------------------
before=$(sums)
mv "$D/.keyring/decoy.keyring" "$T/decoy.off"
run_action
check "no decoy prepared: exit 1" test "$rc" -eq 1
check_why "... one line saying so" "$(diag <"$T/err")" \
	test "$(cat "$T/err")" = "decoy-keyring: no decoy keyring prepared at $D/.keyring/decoy.keyring (a GNOME keyring file): nothing done"
grep -vF .keyring/decoy.keyring <<<"$before" >"$T/sums.want"
sums >"$T/sums.got"
check_same "... nothing moved" "$T/sums.want" "$T/sums.got"
# shellcheck disable=SC2016 # $1 belongs to the inner shell
as_alice sh -c 'echo not a keyring >"$1"' sh "$D/.keyring/decoy.keyring"
run_action
check "a decoy that is not a keyring file: exit 1, nothing moved" \
	test "$rc" -eq 1 -a -f "$K/login.keyring" -a ! -e "$STASH/login.keyring"
# A session bus, but no gdbus to ask it whether a daemon holds the real
# keyring: the swap is done, and the action says it could not tell.
mv "$T/decoy.off" "$D/.keyring/decoy.keyring"
mkdir "$T/nogdbus"
for tool in sh id head mkdir mv cp rm timeout; do ln -s "$(command -v "$tool")" "$T/nogdbus/$tool"; done
start_bus || setup_failed "a session bus (dbus-daemon)"
ACTION_PATH=$T/nogdbus run_action
check "a session bus and no gdbus: exit 1" test "$rc" -eq 1
check_why "... one line saying it cannot tell" "$(diag <"$T/err")" \
	test "$(cat "$T/err")" = "decoy-keyring: no gdbus (libglib2.0-bin): cannot tell whether a keyring daemon on $R/bus still holds the real keyring"
check "... the files swapped all the same" cmp -s "$T/saved/login.keyring" "$STASH/login.keyring"
run_action restore
end_session
# Only user.keystore saved (a first duress login where there was no
# login.keyring): a real file is saved all the same, and no move may
# overwrite it.
# shellcheck disable=SC2016 # $1 belongs to the inner shell
as_alice sh -c 'echo saved >"$1"' sh "$STASH/user.keystore"
before=$(sums)
run_action
check "only user.keystore saved: exit 0, nothing moved or overwritten" test "$rc" -eq 0 -a "$(sums)" = "$before"
rm -f "$STASH/user.keystore"
if [ "$(id -u)" -eq 0 ]; then
	(cd / && env -i PATH=/usr/bin:/bin HOME=/root sh "$D/decoy-keyring" </dev/null >"$T/out" 2>"$T/err")
	check "as root: refused, exit 1" test $? -eq 1 -a -n "$(grep -F "per-user action only" "$T/err")"
else
	skip "as root: refused (needs root)"
fi

tap_end
