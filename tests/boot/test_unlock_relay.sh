#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# unlock-relay without a VM (the dracut boot test is boot-dracut-duress's): the
# relay between an asker (as systemd-cryptsetup is, under the drop-in's
# bind) and an agent (as the console and plymouth agents are), both played
# by agent_peer.py over real sockets, with the real unlock-helper (test
# build) and runner behind it.  Root only: in a private mount namespace with
# a tmpfs on /run (the helper's record).
#
#   test_unlock_relay.sh RELAY DURESS SRCDIR
# RELAY is the test build of unlock-relay, which starts the test build of
# unlock-helper.
set -u
RELAY=$1 DURESS=$2 SRC=$3
. "$SRC/tests/lib/tap.sh"
. "$SRC/tests/lib/root.sh"

require_root "needs root (a private mount namespace, root's boot directory)"
if [ -z "${RELAY_TEST_NS:-}" ]; then
	rm -rf "$T"
	RELAY_TEST_NS=1 exec unshare -m --propagation private -- "$0" "$@"
fi
mount -t tmpfs -o mode=755 relay-run /run || setup_failed "a tmpfs on /run"

# A copy in $T: a user runs it too (with /usr/bin/python3: the PATH one may be
# under /root), who may not reach the source tree.
cp "$SRC/tests/boot/agent_peer.py" "$T/agent_peer.py" || setup_failed "agent_peer.py"
PEER="python3 $T/agent_peer.py"
PW='duress boot pass'
B=$T/boot.d R=$T/relay A=$T/agent OUT=$T/out
mkdir -m 700 "$B" "$R" "$OUT" || setup_failed "directories"
# An after-boot action and a before-unlock one that takes a second: the
# asker sees its mark only if the relay waited for it before answering.
printf '#!/bin/sh\necho ran >>%s/after\n' "$OUT" >"$B/alert"
printf '#!/bin/sh\nsleep 1\necho ran >>%s/before\n' "$OUT" >"$B/initramfs-nuke"
chmod 700 "$B/alert" "$B/initramfs-nuke"
printf '%s\n' "$PW" | "$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$B/alert" "$B/initramfs-nuke" \
	>"$T/sign.log" 2>&1 || setup_failed "duress sign" "$T/sign.log"

hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
start_relay() {
	"$RELAY" "$R" "$A" "$B" 2>>"$T/relay.log" &
	RELAY_PID=$!
	wait_for 5 test -d "$A"
}
stop_relay() { kill "$RELAY_PID" 2>/dev/null && wait "$RELAY_PID" 2>/dev/null; }
at_exit 'stop_relay'
# relay_round SUFFIX ID ANSWER: an asker asks, an agent answers "+ANSWER" (or
# HEX:... as it is); the asker's answer in $T/got.SUFFIX, the agent's copy in $T/copy.SUFFIX.
relay_round() {
	local a=$3
	case $a in HEX:*) a=${a#HEX:} ;; *) a=$(hex "+$a") ;; esac
	$PEER ask "$R" "$A" "$1" "$2" "$OUT/before" >"$T/got.$1" 2>&1 &
	local asker=$!
	$PEER answer "$A" "$1" "$a" "$T/copy.$1" 2>"$T/answer.$1"
	local sent=$?
	wait "$asker"
	local got=$?
	return $((sent + got))
}
got() { sed -n 1p "$T/got.$1"; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

check "usage: an odd argument count is exit 2" sh -c "'$RELAY' a 2>/dev/null; [ \$? = 2 ]"

# Started as systemd starts it (Type=notify): it makes its directory, then says READY.
rmdir "$R"
$PEER notify "$T/notify" "$R" >"$T/notify.out" 2>&1 &
notified=$!
wait_for 5 test -S "$T/notify"
NOTIFY_SOCKET=$T/notify start_relay
wait "$notified"
check_diag "READY=1 to systemd's notify socket" "$T/notify.out" grep -qx 'READY=1' "$T/notify.out"
check "... once its directory was there" grep -qx 'dir=yes' "$T/notify.out"
check "... root's 0700" test "$(stat -c %a:%u "$R")" = 700:0
check "the agents' directory is made when missing" test -d "$A"

# --- a wrong passphrase ----------------------------------------------------------
check_diag "a wrong passphrase: asked through the agents and answered" "$T/relay.log" \
	relay_round w1 'cryptsetup:/dev/vda' 'not it'
check "... the asker got the agent's answer byte for byte" test "$(got w1)" = "$(hex '+not it')"
check "... from root" grep -qx 'uid=0' "$T/got.w1"
check "... the agents' copy is the question word for word but for Socket=" \
	diff <(grep -v -e '^Socket=' -e '^PID=' "$T/copy.w1") <(printf '%s\n' '[Ask]' AcceptCached=1 Echo=0 \
		NotAfter=0 'Message=Please enter passphrase for disk cryptroot:' Icon=drive-harddisk \
		'Id=cryptsetup:/dev/vda')
check "... its Socket= is the relay's own, in the relay's directory" grep -qx "Socket=$R/relay.w1" "$T/copy.w1"
check "... the copy is gone once answered" $PEER gone "$A" w1
check "... nothing ran, no record" test ! -e "$OUT/before" -a ! -e /run/unlock-helper
check "... the relay's socket is gone" test ! -e "$R/relay.w1"

# --- the duress passphrase -------------------------------------------------------
check_diag "the duress passphrase: answered" "$T/relay.log" relay_round d1 'cryptsetup:/dev/vda' "$PW"
check "... the asker got it byte for byte (the disk unlocks as with any key slot)" test "$(got d1)" = "$(hex "+$PW")"
check "... the before-unlock action had run when the answer came" grep -qx 'mark=yes' "$T/got.d1"
check "... it ran once" test "$(lines "$OUT/before")" = 1
check "... the after-boot action is in the record, not run" \
	sh -c "grep -qa ' alert' /run/unlock-helper/record && test ! -e '$OUT/after'"
rm -rf /run/unlock-helper

# --- what is not checked ---------------------------------------------------------
check "a cancel ('-') is handed on" relay_round c1 'cryptsetup:/dev/vda' 'HEX:2d'
check "... as it is" test "$(got c1)" = 2d
check "... nothing ran" test "$(lines "$OUT/before")" = 1
check "a question not cryptsetup's is passed through" relay_round o1 'other:thing' "$PW"
check "... its copy names the asker's own socket" grep -qx "Socket=$R/sck.o1" "$T/copy.o1"
check "... the answer reached the asker" test "$(got o1)" = "$(hex "+$PW")"
check "... and was not checked (nothing ran)" test "$(lines "$OUT/before")" = 1 -a ! -e /run/unlock-helper

# Two passwords in one answer ("+" and NUL-separated, as from the kernel
# keyring): each checked, the answer handed on whole.
check "two passwords in one answer" relay_round m1 'cryptsetup:/dev/vda' "HEX:$(hex '+x')00$(hex "$PW")00"
check "... handed on whole" test "$(got m1)" = "$(hex '+x')00$(hex "$PW")00"
check "... the duress one among them was checked" test "$(lines "$OUT/before")" = 2
rm -rf /run/unlock-helper

# --- a question withdrawn, a question left by a stopped relay --------------------
$PEER ask "$R" "$A" x1 'cryptsetup:/dev/vda' >/dev/null 2>&1 &
asker=$!
wait_for 5 test -e "$A/ask.x1"
rm "$R/ask.x1"
kill "$asker"
wait "$asker" 2>/dev/null
rm -f "$R/sck.x1"
check "a question withdrawn (its file removed): the copy goes too" $PEER gone "$A" x1
check "... and the relay's socket" wait_for 5 test ! -e "$R/relay.x1"

$PEER ask "$R" "$A" s1 'cryptsetup:/dev/vda' >"$T/got.s1" 2>&1 &
asker=$!
wait_for 5 grep -q "^Socket=$R/relay.s1" "$A/ask.s1"
stop_relay
check "the relay stopped: its question's copy now names the asker's own socket" \
	grep -qx "Socket=$R/sck.s1" "$A/ask.s1"
$PEER answer "$A" s1 "$(hex '+after stop')"
wait "$asker"
check "... and the agent's answer reaches the asker directly" test "$(got s1)" = "$(hex '+after stop')"

# A question posted while no relay ran: taken up when it starts.
$PEER ask "$R" "$A" p1 'cryptsetup:/dev/vda' "$OUT/before" >"$T/got.p1" 2>&1 &
asker=$!
wait_for 5 test -e "$R/ask.p1"
start_relay
check "a question posted before the relay started is relayed" wait_for 5 grep -q "^Socket=$R/relay.p1" "$A/ask.p1"
$PEER answer "$A" p1 "$(hex "+$PW")"
wait "$asker"
check "... answered, and checked" test "$(got p1)" = "$(hex "+$PW")" -a "$(lines "$OUT/before")" = 3

# The relay's directory is 0700: nobody but root reaches its sockets.
$PEER ask "$R" "$A" n1 'cryptsetup:/dev/vda' >"$T/got.n1" 2>&1 &
asker=$!
wait_for 5 test -e "$A/ask.n1"
chmod 755 "$A"
chmod 644 "$A/ask.n1"
check "a user cannot answer a relayed question" \
	sh -c "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 $T/agent_peer.py answer '$A' n1 $(hex "+$PW") 2>/dev/null; [ \$? = 3 ]"
$PEER answer "$A" n1 "$(hex '+root')"
wait "$asker"
check "... root still can" test "$(got n1)" = "$(hex '+root')"
check "... and the user's answer ran nothing" test "$(lines "$OUT/before")" = 3

# The directory's mode stops a user before the relay's own uid check is
# reached.  Past it (a socket root connected, then used by the user, as a
# descriptor handed on would be), the kernel stamps the user's uid on the
# answer, and the relay must ignore it: not checked, not handed on.
IGNORED="ask.u1: an answer not from root, or too long: ignored"
$PEER ask "$R" "$A" u1 'cryptsetup:/dev/vda' "$OUT/before" >"$T/got.u1" 2>&1 &
asker=$!
check "a user's answer reaches the relay's socket (connected by root)" \
	$PEER answer-as 65534 "$A" u1 "$(hex "+$PW")"
check_diag "... the relay ignored it as not root's" "$T/relay.log" wait_for 5 grep -qF "$IGNORED" "$T/relay.log"
check "... the question is still asked" test -e "$A/ask.u1"
$PEER answer "$A" u1 "$(hex '+root')"
wait "$asker"
check "... the asker got root's answer, not the user's" test "$(got u1)" = "$(hex '+root')"
check "... and the user's duress passphrase ran nothing" test "$(lines "$OUT/before")" = 3

stop_relay
check "stopped with nothing left in it, its directory is removed" test ! -e "$R"
check_diag "the relay logged nothing else (no error)" "$T/relay.log" \
	fails grep -vF "$IGNORED" "$T/relay.log"
tap_end
