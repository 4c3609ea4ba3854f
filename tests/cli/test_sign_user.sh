#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `duress sign` run by a normal user asks unix_chkpwd whether the password is
# the account's real one.  Needs root to set up a real account, which stays
# invisible to the machine: everything happens in a private root
# (private_etc_or_rerun, tests/lib/root.sh: mount and PID namespaces of its
# own, /etc an overlay there, so useradd and chpasswd write only into it)
# with /dev overlaid too (a /dev/log socket that records what unix_chkpwd
# logs).  The account's password is random; all of it goes with the test
# however it ends.
# Usage: test_sign_user.sh DURESS
CHKPWD=/usr/sbin/unix_chkpwd
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

require_root "needs root (a throwaway account in a private root)"
missing=$(missing_tools unshare useradd chpasswd setpriv logger python3 "$CHKPWD")
[ -z "$missing" ] || skip_all "missing:$missing"
private_etc_or_rerun "$@"
DURESS=$(readlink -f "$1")
U=duresstest
RP=$(random_password)

{ mkdir "$T/ns" && overlay_on "$T/ns" duress-sign-dev /dev; } || setup_failed "an overlay on /dev"
# (Only so that tap.sh can remove $T: the mounts would go with the namespace.)
at_exit "umount -l /dev '$T/ns'"
rm -f /dev/log

# Records each syslog datagram as one line of $T/log.
python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
os.chmod("/dev/log", 0o666)
out = open(sys.argv[1], "ab", buffering=0)
open(sys.argv[1] + ".ready", "w").close()
while True:
    out.write(s.recv(8192).replace(b"\n", b" ") + b"\n")
' "$T/log" &
for _ in $(seq 100); do [ -e "$T/log.ready" ] && break; sleep 0.05; done

H=$T/home
useradd -l -M -d "$H" -s /bin/sh "$U" >"$T/useradd.log" 2>&1 || setup_failed "useradd $U" "$T/useradd.log"
echo "$U:$RP" | chpasswd || setup_failed "chpasswd"
mkdir -p "$H/.duress" "$T/bin"
cp "$DURESS" "$T/bin/duress"
chmod 755 "$T/bin" "$T/bin/duress"

# as_user NAME PASSWORD: signs ~/.duress/NAME as the user; $out, $rc.
as_user() {
	printf '#!/bin/sh\ntrue\n' >"$H/.duress/$1"
	chmod 700 "$H/.duress/$1"
	chown -R "$U:$U" "$H"
	log_sync
	: >"$T/log"
	# shellcheck disable=SC2086 # $WRAP is a command prefix
	out=$(printf '%s\n' "$2" | setpriv --reuid="$U" --regid="$U" --init-groups \
		$WRAP "$T/bin/duress" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$H/.duress/$1" 2>&1)
	rc=$?
	log_sync
}

# Waits until a line sent now is in $T/log: all that unix_chkpwd sent before it is.
log_sync() {
	local mark="sync-$RANDOM$RANDOM"
	logger -u /dev/log "$mark"
	for _ in $(seq 200); do grep -q "$mark" "$T/log" && return; sleep 0.05; done
	echo "# the log listener is not answering" >&2
}
REAL="that is the account's real password, which pam_unix accepts first"
NOCHECK="warning: could not check that this is not the account's real password"

as_user real "$RP"
check "user, real password: refused (exit 1)" test $rc -eq 1
check "user, real password: says why" grep -qF "duress: $H/.duress/real: $REAL" <<<"$out"
check "user, real password: no signature" test ! -e "$H/.duress/real.sig"
check "user, real password: unix_chkpwd logs nothing on a match" test "$(grep -c unix_chkpwd "$T/log")" -eq 0

as_user other 'Other-pw-78y'
check "user, another password: signed" test $rc -eq 0 -a -s "$H/.duress/other.sig"
# (valgrind's report of the descriptors bash left open is not ours; its errors set rc.)
check "user, another password: one line, no warning" \
	test "$(grep -v '^==[0-9]*==' <<<"$out")" = "$H/.duress/other: signed (other.sig)"
check "user, another password: unix_chkpwd logs a failed check" \
	grep -q "unix_chkpwd\[[0-9]*\]: password check failed for user ($U)" "$T/log"
echo "# unix_chkpwd logged: $(grep unix_chkpwd "$T/log" | tr -d "\0")"

# root keeps reading the shadow file itself.
out=$(printf '%s\n' "$RP" | $WRAP "$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$H/.duress/other" 2>&1)
check "root, the owner's real password: refused (exit 1)" test $? -eq 1
check "root, the owner's real password: says why" grep -qF "$REAL" <<<"$out"

# No helper to ask: signed, with one line saying the check was not done.
mount --bind /dev/null "$CHKPWD"
as_user nohelper 'Other-pw-78y'
check "no unix_chkpwd: still signed" test $rc -eq 0 -a -s "$H/.duress/nohelper.sig"
check "no unix_chkpwd: says the check could not be done" \
	grep -qxF "duress: $H/.duress/nohelper: $NOCHECK: cannot run $CHKPWD" <<<"$out"
check "no unix_chkpwd: only that one warning" test "$(grep -c "warning" <<<"$out")" -eq 1
umount "$CHKPWD"

# A helper that never answers is killed after its time.  It waits until the
# test releases it (bounded only against a hang), then leaves hang.ended:
# sign must end while it still waits.
# shellcheck disable=SC2016 # $n belongs to the helper's shell
printf '#!/bin/sh\necho $$ >%s/hang.pid\nn=0\nwhile [ ! -e %s/hang.release ] && [ $n -lt %s ]; do sleep 0.1; n=$((n + 1)); done\n: >%s/hang.ended\n' \
	"$H" "$T" "$(($(bound 60) * 10))" "$H" >"$T/bin/hang"
chmod 755 "$T/bin/hang"
mount --bind "$T/bin/hang" "$CHKPWD"
as_user hung 'Other-pw-78y'
ended_already=$([ -e "$H/hang.ended" ] && echo yes || echo no)
: >"$T/hang.release"
check "hung unix_chkpwd: sign ends anyway, while the helper still waits" \
	test $rc -eq 0 -a "$ended_already" = no
check "hung unix_chkpwd: still signed" test -s "$H/.duress/hung.sig"
check "hung unix_chkpwd: says it did not answer" \
	grep -qxF "duress: $H/.duress/hung: $NOCHECK: unix_chkpwd did not answer in time" <<<"$out"
check "hung unix_chkpwd: the helper was killed and reaped" \
	test -s "$H/hang.pid" -a ! -e "/proc/$(cat "$H/hang.pid")"
umount "$CHKPWD"

# A helper that crashes.
printf '#!/bin/sh\nkill -SEGV $$\n' >"$T/bin/crash"
chmod 755 "$T/bin/crash"
mount --bind "$T/bin/crash" "$CHKPWD"
as_user crash 'Other-pw-78y'
check "crashing unix_chkpwd: still signed" test $rc -eq 0 -a -s "$H/.duress/crash.sig"
check "crashing unix_chkpwd: a warning, never taken for 'not the real password'" \
	grep -qxF "duress: $H/.duress/crash: $NOCHECK: unix_chkpwd failed" <<<"$out"
umount "$CHKPWD"

tap_end
