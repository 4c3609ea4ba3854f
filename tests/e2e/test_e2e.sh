#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End-to-end tests as root, with real clients, real accounts and the real
# pam_unix: pamtester, su (from an unprivileged user, through a
# pseudo-terminal) and OpenSSH's sshd on 127.0.0.1 logged into with
# sshpass + ssh.  TAP output, one line per assertion.
#
#   test_e2e.sh [--bench-only] MODULE DURESS_CLI
#
# MODULE is the built pam_duress.so (used by its absolute path), DURESS_CLI
# the built `duress` command (actions are signed with it, per-user ones as
# their owner).  --bench-only sets everything up and only times ssh logins
# (bench/ssh_login.sh; the test itself times nothing).  E2E_BENCH_N (10):
# logins of each kind timed.
#
# It runs in a private root (private_etc_or_rerun, tests/lib/root.sh): its
# own mount and PID namespaces, /run a tmpfs there ($T in it), /etc an
# overlay whose upper layer is in it.  The users dtest_Ra (logs in, owns
# actions) and dtest_Rb (runs su), R a random tag, their homes, the PAM
# service files /etc/pam.d/duress-e2e-R and duress-e2e-R-before, sshd's
# host key, config, logs and /run/sshd exist there only; pamtester, su, sudo
# and sshd read that /etc.  However the test ends, SIGKILL included, they go
# with it, and so do the sshds, the syslog listener and the actions still
# running (the PID namespace ends with its first process).  The passwords
# are random.  A normal end also stops the sshds and the listener (by PID)
# and waits for the actions still running as the test users (bounded).
# What it writes outside: the login records of its users in /var/log
# (wtmp, btmp, lastlog), which the log-parity section compares.

# su uses the PAM service "su": it runs in a private mount namespace
# (unshare -m) where the test's service file is bind-mounted over
# /etc/pam.d/su, so the real file is never edited and no other process sees
# the change.  sshd takes its PAM service from its program name: it is run
# through a symlink named like the test's service.  The log-parity section
# runs a second sshd in a private mount namespace whose /dev/log is the
# socket of syslog_listen.py (next to this script; its header says how the
# namespace gets a /dev/log when the host has none).
#
# Not root, a sanitizer-built module (the asan step of run-checks.sh: sshd,
# su and pamtester would need the sanitizer runtime preloaded, and setuid su
# ignores LD_PRELOAD) or a missing tool: prints "1..0 # SKIP reason" and
# exits 0, which meson counts as skipped (with protocol 'tap', meson 1.0
# treats exit status 77 as an error).  Scripts are not run under valgrind:
# DURESS_VALGRIND is ignored.

set -u
set -o pipefail

ARGS=("$@")
BENCH_ONLY=0
if [ "${1:-}" = "--bench-only" ]; then
	BENCH_ONLY=1
	shift
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 [--bench-only] MODULE DURESS_CLI" >&2
	exit 2
fi
BENCH_N=${E2E_BENCH_N:-10}
export LC_ALL=C
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"
# shellcheck source=tests/lib/sshd.sh
. "$(dirname "$0")/../lib/sshd.sh"

require_root "not root: the end-to-end tests create users and run sshd"
private_etc_or_rerun "${ARGS[@]}"
sanitizer_built "$1" &&
	skip_all "sanitizer-built module: sshd, su and pamtester cannot load it without the runtime preloaded"
missing=$(missing_tools pamtester sshd ssh ssh-keygen sshpass expect setpriv unshare useradd userdel \
	chpasswd usermod mount timeout readelf)
[ -x /usr/bin/su ] || missing+=" su"
[ -z "$missing" ] || skip_all "missing tools:$missing (tools/deps.sh installs them)"

MODULE=$(readlink -f "$1")
DURESS_SRC=$(readlink -f "$2")
[ -f "$MODULE" ] || skip_all "no module at $1"
# The action runner of the same build tree, next to the module (src/meson.build).
RUNNER=$(dirname "$MODULE")/session-helper
[ -x "$RUNNER" ] || skip_all "no session-helper (the runner) next to $1"
[ -x "$DURESS_SRC" ] || skip_all "no duress CLI at $2"
SSHD_BIN=$(command -v sshd)
SSHD_BIN=$(readlink -f "$SSHD_BIN")

R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
U1=dtest_${R}a # logs in; owns the per-user actions
U2=dtest_${R}b # the unprivileged user who runs su
SERVICE=duress-e2e-$R
PAMFILE=/etc/pam.d/$SERVICE
# Passwords: real, duress (a per-user and a global action), slow (a per-user
# action that outlives the login), wrong.  Random: the accounts exist in
# this namespace only, but a password is never one their names give away.
RP1=$(random_password)
RP2=$(random_password)
DP=$(random_password)
SP=$(random_password)
WP=$(random_password)

# shellcheck disable=SC2317 # called by at_exit
cleanup() {
	local u uid
	stop_sshd
	for u in "$U1" "$U2"; do
		uid=$(id -u "$u" 2>/dev/null) && reap_uid 10 "$uid"
	done
}
at_exit cleanup

# $T (tap.sh's) is traversable by the test users (results, homes, the expect script).
RES=$T/results    # evidence written by the actions
GLOBAL=$T/global  # global_dir=: root-owned 0700
mkdir -p "$T/home" "$T/bin" "$T/ssh" "$RES" "$GLOBAL" || setup_failed "directories"
chmod 1777 "$RES"
chmod 700 "$GLOBAL" "$T/ssh"
# The CLI, where the test users can run it whatever the build tree's modes.
install -m 755 "$DURESS_SRC" "$T/bin/duress" || setup_failed "copy the duress CLI"
DURESS=$T/bin/duress

# --- users ------------------------------------------------------------------
for u in "$U1" "$U2"; do
	getent passwd "$u" >/dev/null && setup_failed "user $u already exists"
	useradd -m -d "$T/home/$u" -s /bin/bash "$u" >"$T/useradd.log" 2>&1 ||
		setup_failed "useradd $u" "$T/useradd.log"
done
printf '%s:%s\n%s:%s\n' "$U1" "$RP1" "$U2" "$RP2" | chpasswd ||
	setup_failed "chpasswd"
UID1=$(id -u "$U1")

# --- the PAM service ----------------------------------------------------------
[ -e "$PAMFILE" ] && setup_failed "$PAMFILE already exists"
(
	set -o noclobber
	cat >"$PAMFILE" <<EOF
# pam_duress end-to-end test ($0); in its private /etc only.
auth     [success=2 default=ignore]  pam_unix.so nodelay
auth     [success=1 default=ignore]  $MODULE global_dir=$GLOBAL runner=$RUNNER
auth     requisite                   pam_deny.so
auth     required                    pam_permit.so
account  required                    pam_unix.so
session  required                    pam_permit.so
password requisite                   pam_deny.so
EOF
) || setup_failed "write $PAMFILE"
# The private root at work: the accounts and the service are in the /etc
# that PAM reads here, and not in the machine's.
# shellcheck disable=SC2317 # called through check
in_this_etc_only() {
	getent passwd "$U1" >/dev/null && getent passwd "$U2" >/dev/null && [ -e "$PAMFILE" ] &&
		! grep -q "^dtest_$R" "$MACHINE_ETC/passwd" "$MACHINE_ETC/shadow" "$MACHINE_ETC/group" &&
		[ ! -e "$MACHINE_ETC/pam.d/$SERVICE" ]
}
check "private root: $U1, $U2 and $PAMFILE are in this /etc, not in the machine's" in_this_etc_only

# --- actions ------------------------------------------------------------------
# evidence_script KIND: records who ran it, when, its argv and environment.
evidence_script() {
	cat <<EOF
#!/bin/sh
# pam_duress e2e evidence
tmp=$RES/.tmp.$1.\$\$
{
	echo "uid=\$(id -u)"
	echo "ts=\$(date +%s%N)"
	echo "argv=\$(tr '\\0' ' ' </proc/\$\$/cmdline)"
	env | sort
} >"\$tmp" && mv "\$tmp" "$RES/$1.\$\$"
EOF
}
# An action that outlives the login: it waits until the test releases it
# (release_slow, once the login program has ended), so that "the login ended
# before the action" is an order whatever the machine's load.  Its wait is
# bounded only against a hang (bound 60 s, read when the script is made):
# released=no in its evidence says it was not released but gave up.
slow_script() {
	cat <<EOF
#!/bin/sh
# pam_duress e2e: an action that outlives the login
: >"$RES/slow-start.\$\$"
n=0
while [ ! -e "$RES/slow-release" ] && [ \$n -lt $(($(bound 60) * 10)) ]; do sleep 0.1; n=\$((n + 1)); done
released=no
[ ! -e "$RES/slow-release" ] || released=yes
tmp=$RES/.tmp.slow.\$\$
{ echo "uid=\$(id -u)"; echo "ts=\$(date +%s%N)"; echo "released=\$released"; } >"\$tmp" &&
	mv "\$tmp" "$RES/slow-done.\$\$"
EOF
}
# release_slow: lets the slow action end (clear_results takes the mark away).
release_slow() { : >"$RES/slow-release"; }

UDIR=$T/home/$U1/.duress
install -d -m 700 -o "$U1" -g "$(id -g "$U1")" "$UDIR" || setup_failed "mkdir $UDIR"
evidence_script user | user_action "$U1" "$UDIR/10-evidence"
slow_script | user_action "$U1" "$UDIR/20-slow"
(umask 077 && evidence_script global >"$GLOBAL/10-evidence" && chmod 700 "$GLOBAL/10-evidence")

# Per-user actions signed by their owner, the global one by root, at the default cost.
echo "$DP" | as_user "$U1" "$DURESS" sign --stdin "$UDIR/10-evidence" >"$T/sign.log" 2>&1
check_diag "duress sign as the user: per-user action signed" "$T/sign.log" \
	test -s "$UDIR/10-evidence.sig" -a "$(stat -c %U "$UDIR/10-evidence.sig" 2>/dev/null)" = "$U1"
echo "$SP" | as_user "$U1" "$DURESS" sign --stdin "$UDIR/20-slow" >"$T/sign.log" 2>&1
check_diag "duress sign as the user: second action, its own password" "$T/sign.log" \
	test -s "$UDIR/20-slow.sig"
echo "$DP" | "$DURESS" sign --stdin "$GLOBAL/10-evidence" >"$T/sign.log" 2>&1
check_diag "duress sign as root: global action signed" "$T/sign.log" \
	test -s "$GLOBAL/10-evidence.sig" -a "$(stat -c %U "$GLOBAL/10-evidence.sig" 2>/dev/null)" = root
[ "$failed" -eq 0 ] || setup_failed "signing"

# --- evidence helpers ------------------------------------------------------------
clear_results() { find "$RES" -mindepth 1 -delete; }
count() { find "$RES" -maxdepth 1 -name "$1.*" | wc -l; }
# at_least N KIND: N files KIND.* or more.
# shellcheck disable=SC2317 # called through wait_for
at_least() { [ "$(count "$2")" -ge "$1" ]; }
# wait_count KIND N SECONDS: until at least N files KIND.* exist (bounded).
wait_count() { wait_for "$3" at_least "$2" "$1"; }
# field KIND KEY: KEY's value in the (first) evidence file KIND.*.
field() {
	local f
	f=$(find "$RES" -maxdepth 1 -name "$1.*" | head -n 1)
	[ -n "$f" ] && sed -n "s/^$2=//p" "$f" | head -n 1
}
# shellcheck disable=SC2317 # called through check
no_password_in_evidence() {
	! grep -rqF -e "$DP" -e "$SP" -e "$RP1" "$RES"
}
# settle: until the actions that the logins so far started have run (see
# actions_settled): then "no action ran" can no longer turn out wrong.
settle() {
	actions_settled 10 "$RUNNER" || echo "# a runner ($RUNNER) still runs after 10 s"
}
show_results() {
	{
		echo "--- results:"
		for f in "$RES"/*; do
			[ -e "$f" ] || continue
			echo "$f:"
			grep -E '^(uid|argv|PAM_[A-Z]+)=' "$f"
		done
	} | diag
}
# expect_evidence WHAT SERVICE USER EXTRA_KEY EXTRA_VALUE: the per-user and
# the global action of one duress login.
expect_evidence() {
	local what=$1 service=$2 user=$3 key=$4 value=$5 u_ok=0 g_ok=0
	wait_count user 1 10 && u_ok=1
	wait_count global 1 10 && g_ok=1
	if [ "$u_ok" = 1 ] && [ "$(field user uid)" = "$UID1" ] &&
		[ "$(field user PAM_USER)" = "$user" ] && [ "$(field user PAM_SERVICE)" = "$service" ] &&
		[ "$(field user "$key")" = "$value" ] && [ "$(field user PAM_TYPE)" = auth ]; then
		ok "$what: per-user action ran as $user (uid $UID1), PAM_SERVICE=$service, $key=$value"
	else
		not_ok "$what: per-user action ran as $user (uid $UID1), PAM_SERVICE=$service, $key=$value"
		show_results
	fi
	if [ "$g_ok" = 1 ] && [ "$(field global uid)" = 0 ] &&
		[ "$(field global PAM_SERVICE)" = "$service" ]; then
		ok "$what: global action ran as root, PAM_SERVICE=$service"
	else
		not_ok "$what: global action ran as root, PAM_SERVICE=$service"
		show_results
	fi
	check "$what: exactly one run of each action" \
		test "$(count user)" -eq 1 -a "$(count global)" -eq 1
}

# --- sshd: tests/lib/sshd.sh (start_sshd, ssh_login) ------------------------------
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# median MS...: the median of the numbers, in seconds.
median() {
	printf '%s\n' "$@" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000 }'
}

# bench_pairs A_PW A_OK B_PW B_OK [A_SETUP A_UNDO]: BENCH_N interleaved pairs
# of ssh logins (A then B), each timed in ms into BENCH_A / BENCH_B; A_OK and
# B_OK say whether the login must succeed (1) or fail (0); BENCH_BAD counts
# the logins that did otherwise.  A_SETUP runs before each A and A_UNDO after
# it, outside the timed span.
bench_pairs() {
	local i t0 rc
	BENCH_A=() BENCH_B=() BENCH_BAD=0
	for ((i = 0; i < BENCH_N; i++)); do
		${5:-:}
		t0=$(date +%s%N)
		ssh_login "$1" password true
		rc=$?
		BENCH_A+=("$(ms_since "$t0")")
		${6:-:}
		bench_expected "$rc" "$2" || BENCH_BAD=$((BENCH_BAD + 1))
		t0=$(date +%s%N)
		ssh_login "$3" password true
		rc=$?
		BENCH_B+=("$(ms_since "$t0")")
		bench_expected "$rc" "$4" || BENCH_BAD=$((BENCH_BAD + 1))
	done
}
# bench_expected RC OK: whether ssh's status RC is a success when OK is 1, a failure when 0.
bench_expected() {
	if [ "$2" = 1 ]; then [ "$1" -eq 0 ]; else [ "$1" -ne 0 ]; fi
}

# bench_report WHAT A_NAME B_NAME TARGET: checks the logins, adds a row B / A to BENCH_TABLE.
bench_report() {
	local a b
	a=$(median "${BENCH_A[@]}")
	b=$(median "${BENCH_B[@]}")
	echo "# $1, ms: $2 ${BENCH_A[*]}; $3 ${BENCH_B[*]}"
	check_diag "ssh timing, $1: all $((2 * BENCH_N)) logins gave the expected answer" \
		"$T/sshd.log" test "$BENCH_BAD" -eq 0
	BENCH_TABLE+=("$(awk -v w="$1" -v an="$2" -v bn="$3" -v a="$a" -v b="$b" -v t="$4" 'BEGIN {
		printf "| %s | %s %.3f s | %s %.3f s | %.2f | %s |", w, bn, b, an, a, (a > 0 ? b / a : 0), t }')")
}

# The account's per-user directory, away for the "without actions" logins.
# shellcheck disable=SC2317 # called through bench_pairs
bench_hide_udir() { mv "$UDIR" "$UDIR.away"; }
# shellcheck disable=SC2317 # called through bench_pairs
bench_show_udir() { mv "$UDIR.away" "$UDIR"; }

# The before-pam_unix stack of docs/configuration.md: the module prompts, pam_unix reuses the token.
bench_pam_before() {
	cat <<EOF
# pam_duress end-to-end test ($0), module before pam_unix; in its private /etc only.
auth     [success=done default=ignore]  $MODULE global_dir=$GLOBAL runner=$RUNNER
auth     [success=1 default=ignore]     pam_unix.so nodelay try_first_pass
auth     requisite                      pam_deny.so
auth     required                       pam_permit.so
account  required                       pam_unix.so
session  required                       pam_permit.so
password requisite                      pam_deny.so
EOF
}

# What a coercer or a prober can compare, as ratios of the medians of one
# run (issue 8): ssh logins duress / real in both placements, and a wrong
# password for the account with its per-user actions / without them (the
# same account with its ~/.duress moved away, so that OpenSSH's per-account
# failure delay is the same for both; the same global directory; pam_unix
# nodelay).  The PAM file is put back as it was at the end.
ssh_bench() {
	local after=$T/pam.after
	BENCH_TABLE=()
	clear_results
	cp "$PAMFILE" "$after"
	bench_pairs "$RP1" 1 "$DP" 1
	bench_report "duress / real, module after pam_unix" real duress "<= 1.25"
	bench_pam_before >"$PAMFILE"
	bench_pairs "$RP1" 1 "$DP" 1
	bench_report "duress / real, module before pam_unix" real duress "0.95 - 1.05"
	cat "$after" >"$PAMFILE"
	bench_pairs "$WP" 0 "$WP" 0 bench_hide_udir bench_show_udir
	bench_report "wrong password, with / without per-user actions" without with "0.90 - 1.10"
	echo "# ssh login medians, $BENCH_N of each interleaved:"
	echo "# | what | B | A | ratio B / A | target |"
	echo "# |---|---|---|---|---|"
	printf '# %s\n' "${BENCH_TABLE[@]}"
	# Let the actions of the duress logins finish before anything else.
	wait_count global $((2 * BENCH_N)) 10
}

if [ "$BENCH_ONLY" = 1 ]; then
	start_sshd || setup_failed "start sshd" "$T/sshd.log"
	ssh_bench
	tap_end
	exit
fi

# ================================================================================
# 1. pamtester against the real pam_unix and the module
# ================================================================================
# pamtester SERVICE USER PASSWORD RHOST: reads the password from stdin.
pt() {
	printf '%s\n' "$3" | timeout "$(bound 30)" pamtester -I rhost="$4" -I ruser=e2e-ruser "$SERVICE" "$2" \
		authenticate acct_mgmt >"$T/pt.out" 2>&1
}

clear_results
pt x "$U1" "$RP1" pt-real
check_diag "pamtester, real password: authenticated" "$T/pt.out" grep -q "successfully authenticated" "$T/pt.out"
pt x "$U1" "$WP" pt-wrong
rc=$?
check_diag "pamtester, wrong password: refused" "$T/pt.out" \
	test "$rc" -ne 0 -a "$(grep -c "Authentication failure" "$T/pt.out")" -ge 1
settle
check "pamtester, real and wrong password: no action ran" test -z "$(ls -A "$RES")"
[ -z "$(ls -A "$RES")" ] || show_results

clear_results
pt x "$U1" "$DP" pt-duress
rc=$?
check_diag "pamtester, duress password: authenticated" "$T/pt.out" \
	test "$rc" -eq 0 -a "$(grep -c "successfully authenticated" "$T/pt.out")" -ge 1
expect_evidence "pamtester, duress password" "$SERVICE" "$U1" PAM_RHOST pt-duress
check "pamtester, duress password: PAM_RUSER passed" test "$(field user PAM_RUSER)" = e2e-ruser
check "pamtester, duress password: argv[0] is the action's name" \
	test "$(field user argv | cut -d' ' -f1)" = 10-evidence
check "pamtester, duress password: no password in the actions' environment" no_password_in_evidence

# The runner must hold none of the application's descriptors: pamtester's
# stdout, a pipe, is closed when pamtester exits, while the action still
# waits to be released (were the pipe held, it would close only when the
# action gave up waiting, its evidence written).
clear_results
printf '%s\n' "$SP" | timeout "$(bound 30)" pamtester -I rhost=pt-slow "$SERVICE" "$U1" authenticate 2>&1 |
	cat >"$T/pt.out"
done_already=$(count slow-done)
release_slow
check_diag "pamtester, slow action: authenticated" "$T/pt.out" grep -q "successfully authenticated" "$T/pt.out"
check_why "pamtester, slow action: its stdout pipe is closed while the action still runs" \
	"the pipe stayed open until the action ended ($done_already evidence file(s) already written): the action runner holds the application's descriptors" \
	test "$done_already" -eq 0
wait_count slow-done 1 15
check "pamtester, slow action: it completed once released, as $U1" \
	test "$(field slow-done uid)" = "$UID1" -a "$(field slow-done released)" = yes

# A global duress password never logs in root; the actions still run.
clear_results
pt x root "$DP" pt-root
rc=$?
check_diag "pamtester, root with the global duress password: refused" "$T/pt.out" \
	test "$rc" -ne 0 -a "$(grep -c "successfully authenticated" "$T/pt.out")" -eq 0
wait_count global 1 10
check "pamtester, root with the global duress password: global action ran as root" \
	test "$(field global uid)" = 0 -a "$(field global PAM_USER)" = root

# A locked account stays locked; the actions still run.
clear_results
usermod -L "$U1"
pt x "$U1" "$DP" pt-locked
rc=$?
usermod -U "$U1"
check_diag "pamtester, locked account, duress password: refused" "$T/pt.out" \
	test "$rc" -ne 0 -a "$(grep -c "successfully authenticated" "$T/pt.out")" -eq 0
wait_count user 1 10
check "pamtester, locked account, duress password: per-user action ran" \
	test "$(field user uid)" = "$UID1" -a "$(field user PAM_RHOST)" = pt-locked

# ================================================================================
# 2. su from an unprivileged user, through a pseudo-terminal
# ================================================================================
cat >"$T/su.exp" <<'EOF'
# su USER -c "$E2E_SU_CMD", password from $E2E_PW; exit status of su, or 3/4.
# The command ends by printing E2E-SU-END.  Each wait: $E2E_EXPECT_TIMEOUT s.
set timeout $env(E2E_EXPECT_TIMEOUT)
set user [lindex $argv 0]
spawn -noecho /usr/bin/su $user -c $env(E2E_SU_CMD)
expect {
	"assword:" {}
	timeout { puts "\nE2E: no password prompt"; exit 3 }
	eof { puts "\nE2E: su ended before asking"; exit 4 }
}
send -- "$env(E2E_PW)\r"
puts "\nE2E: password sent"
expect {
	"E2E-SU-END" { puts "\nE2E: command done" }
	"Authentication failure" {}
	timeout { puts "\nE2E: timeout after the password"; exit 3 }
	eof {}
}
expect {
	eof {}
	timeout { puts "\nE2E: no end of file"; exit 3 }
}
puts "\nE2E: eof"
lassign [wait] pid spawn_id os_error value
exit $value
EOF
chmod 644 "$T/su.exp"

# su_as_user2 PASSWORD [PAMFILE [COMMAND]]: su to U1 as U2, "su" being
# PAMFILE ($PAMFILE) in a private mount namespace, running COMMAND (id -un).
# Output in $T/su.out and, without CRs, $T/su.txt.
su_as_user2() {
	local rc
	# shellcheck disable=SC2016 # $1... belong to the inner shell
	timeout "$(bound 60)" unshare -m --propagation private -- /bin/sh -c '
		mount --bind "$1" /etc/pam.d/su || exit 5
		cd "$2" || exit 5
		exec setpriv --reuid="$3" --regid="$4" --init-groups -- \
			env -i PATH=/usr/bin:/bin HOME="$2/home/$3" TERM=dumb E2E_PW="$5" \
			E2E_EXPECT_TIMEOUT="$8" E2E_SU_CMD="$7; echo E2E-SU-END" expect -f "$2/su.exp" "$6"' sh \
		"${2:-$PAMFILE}" "$T" "$U2" "$(id -g "$U2")" "$1" "$U1" "${3:-id -un}" "$(bound 20)" \
		>"$T/su.out" 2>&1
	rc=$?
	tr -d '\r' <"$T/su.out" >"$T/su.txt"
	return $rc
}

clear_results
su_as_user2 "$RP1"
rc=$?
check_diag "su, real password: succeeds and runs as $U1" "$T/su.txt" \
	test "$rc" -eq 0 -a "$(grep -cx "$U1" "$T/su.txt")" -eq 1
su_as_user2 "$WP"
rc=$?
check_diag "su, wrong password: Authentication failure" "$T/su.txt" \
	test "$rc" -ne 0 -a "$(grep -c "Authentication failure" "$T/su.txt")" -ge 1 \
	-a "$(grep -cx "$U1" "$T/su.txt")" -eq 0
settle
check "su, real and wrong password: no action ran" test -z "$(ls -A "$RES")"
[ -z "$(ls -A "$RES")" ] || show_results
check "su: the real /etc/pam.d/su is untouched outside the namespace" \
	test "$(grep -c "$MODULE" /etc/pam.d/su)" -eq 0

clear_results
su_as_user2 "$DP"
rc=$?
check_diag "su, duress password: succeeds and runs as $U1" "$T/su.txt" \
	test "$rc" -eq 0 -a "$(grep -cx "$U1" "$T/su.txt")" -eq 1
expect_evidence "su, duress password" su "$U1" PAM_RUSER "$U2"
check "su, duress password: PAM_TTY is the pseudo-terminal" \
	grep -q '^PAM_TTY=/dev/pts/' "$(find "$RES" -name 'user.*' | head -n 1)"

# A slow action must not hold the terminal: su ends while the action still
# waits to be released, and the action then goes on.
clear_results
su_as_user2 "$SP"
rc=$?
su_end=$(date +%s%N)
done_already=$(count slow-done)
release_slow
check_diag "su, slow action: su succeeds" "$T/su.txt" \
	test "$rc" -eq 0 -a "$(grep -cx "$U1" "$T/su.txt")" -eq 1
check_why "su, slow action: the terminal is released while the action still runs" \
	"su ended only once the action had ($done_already evidence file(s) already written)" \
	test "$done_already" -eq 0
wait_count slow-done 1 15
check "su, slow action: it completed after su ended, once released" \
	test "$(count slow-done)" -eq 1 -a "$(field slow-done ts)" -gt "$su_end" \
	-a "$(field slow-done released)" = yes
reap_uid 10 "$UID1"

# --- What the su process shows its session, a real and a duress login (issue 24).
# A coercer in the session reads su's /proc/PID/stat and status (world-readable):
# the page faults and CPU time of the children su reaped (cminflt, cmajflt,
# cutime, cstime) and its peak memory (VmHWM).  Before pam_unix, every login
# reaches the module, derives and starts the runner (with nothing to run for
# a real one): the real logins must show the runner's children too, and the
# two kinds the same ranges.  su reaps children of its own in every login
# (about 120 page faults here), so "the runner's children too" is: more than
# a real login after pam_unix, which never reaches the module.  The after
# placement's figures are printed for docs/tells.md, not judged.  Counts
# only: the times (ticks) are printed, bench/bench_match.c compares them.
SU_COUNTERS_N=${E2E_SU_COUNTERS_N:-5}
# shellcheck disable=SC2016 # expanded by the session's shell, with su as its parent
COUNTERS_CMD='set -- $(sed "s/^.*) //" /proc/$PPID/stat); echo "E2E-STAT $8 $9 ${11} ${12} ${13} ${14} ${15}"; sed -n "s/^VmHWM:[^0-9]*\([0-9]*\).*/E2E-HWM \1/p" /proc/$PPID/status'
bench_pam_before >"$T/pam.before"
chmod 644 "$T/pam.before"
# su_counters KIND PAMFILE PASSWORD: one su login; appends "minflt cminflt
# cmajflt utime stime cutime cstime hwm_kib" of the su process, as its
# session read them, to $T/counters.KIND.  Fails if the login or the reading did.
su_counters() {
	local stat hwm
	su_as_user2 "$3" "$2" "$COUNTERS_CMD" || return 1
	stat=$(sed -n 's/^E2E-STAT //p' "$T/su.txt")
	hwm=$(sed -n 's/^E2E-HWM //p' "$T/su.txt")
	[ "$(echo "$stat" | wc -w)" -eq 7 ] && [ -n "$hwm" ] || return 1
	echo "$stat $hwm" >>"$T/counters.$1"
}
# column KIND N: the Nth figure of each login of KIND, one a line.
column() { awk -v n="$2" '{ print $n }' "$T/counters.$1"; }
# ranges_overlap KIND_A KIND_B N: the Nth figure's ranges (min..max) of the two kinds overlap.
ranges_overlap() {
	awk -v n="$3" 'FNR == 1 { f++ } { v = $n
		if (!(f in lo) || v < lo[f]) lo[f] = v
		if (!(f in hi) || v > hi[f]) hi[f] = v }
		END { exit !(lo[1] <= hi[2] && lo[2] <= hi[1]) }' "$T/counters.$1" "$T/counters.$2"
}
# range KIND N: "min-max" of the Nth figure.
range() { column "$1" "$2" | sort -n | sed -n '1h; $ { x; G; s/\n/-/; p }'; }
# show_counters KIND...: one diagnostic line per kind.
show_counters() {
	local k
	for k in "$@"; do
		echo "# su $k ($(wc -l <"$T/counters.$k") logins): cminflt $(range "$k" 2), cmajflt $(range "$k" 3), cutime $(range "$k" 6), cstime $(range "$k" 7) ticks; own: minflt $(range "$k" 1), utime $(range "$k" 4), stime $(range "$k" 5) ticks; VmHWM $(range "$k" 8) KiB"
	done
}

clear_results
rm -f "$T"/counters.*
bad=0
for ((i = 0; i < SU_COUNTERS_N; i++)); do
	su_counters b-real "$T/pam.before" "$RP1" || bad=$((bad + 1))
	su_counters b-duress "$T/pam.before" "$DP" || bad=$((bad + 1))
	su_counters a-real "$PAMFILE" "$RP1" || bad=$((bad + 1))
	su_counters a-duress "$PAMFILE" "$DP" || bad=$((bad + 1))
done
settle
show_counters b-real b-duress a-real a-duress
check_diag "su counters: all $((4 * SU_COUNTERS_N)) logins succeeded and read su's /proc files" \
	"$T/su.txt" test "$bad" -eq 0
check "su counters, before pam_unix: the duress logins ran their actions" \
	test "$(count user)" -eq $((2 * SU_COUNTERS_N)) -a "$(count global)" -eq $((2 * SU_COUNTERS_N))
# above KIND_A KIND_B N: every login of KIND_A has a larger Nth figure than any of KIND_B.
above() {
	[ -s "$T/counters.$1" ] && [ -s "$T/counters.$2" ] &&
		[ "$(column "$1" "$3" | sort -n | head -n 1)" -gt "$(column "$2" "$3" | sort -n | tail -n 1)" ]
}
check_why "su counters, before pam_unix: every real login reaps the runner's children (cminflt above a real login's after pam_unix), as a duress login does" \
	"cminflt: real before pam_unix $(range b-real 2), real after $(range a-real 2), duress before $(range b-duress 2)" \
	above b-real a-real 2
for f in 2:cminflt 3:cmajflt 8:VmHWM; do
	check_why "su counters, before pam_unix: real and duress ${f#*:} ranges overlap" \
		"real $(range b-real "${f%%:*}"), duress $(range b-duress "${f%%:*}")" \
		ranges_overlap b-real b-duress "${f%%:*}"
done
reap_uid 10 "$UID1"

# ================================================================================
# 3. sudo: a duress password never elevates (SPEC 4)
# ================================================================================
# sudo_as_user1 PASSWORD: `sudo -S id -u` as U1, in a private mount namespace
# where the test's service file is /etc/pam.d/sudo and a sudoers file lets
# U1 run anything.  Output in $T/sudo.out.
printf '%s ALL=(ALL:ALL) ALL\nDefaults !lecture, passwd_tries=1\n' "$U1" >"$T/sudoers"
chmod 440 "$T/sudoers"
sudo_as_user1() {
	# shellcheck disable=SC2016 # $1... belong to the inner shell
	printf '%s\n' "$1" | timeout "$(bound 60)" unshare -m --propagation private -- /bin/sh -c '
		mount --bind "$1" /etc/pam.d/sudo || exit 5
		mount --bind "$2" /etc/sudoers || exit 5
		exec setpriv --reuid="$3" --regid="$4" --init-groups -- \
			env -i PATH=/usr/bin:/bin HOME="$5/home/$3" \
			sudo -S -k -p "" id -u' sh \
		"$PAMFILE" "$T/sudoers" "$U1" "$(id -g "$U1")" "$T" >"$T/sudo.out" 2>&1
}

if [ -x /usr/bin/sudo ] && [ -e /etc/pam.d/sudo ] && [ -e /etc/sudoers ]; then
	clear_results
	sudo_as_user1 "$RP1"
	rc=$?
	check_diag "sudo, real password: runs the command as root" "$T/sudo.out" \
		test "$rc" -eq 0 -a "$(grep -cx 0 "$T/sudo.out")" -eq 1
	settle
	check "sudo, real password: no action ran" test -z "$(ls -A "$RES")"
	clear_results
	sudo_as_user1 "$DP"
	rc=$?
	check_diag "sudo, duress password: refused, nothing runs as root" "$T/sudo.out" \
		test "$rc" -ne 0 -a "$(grep -cx 0 "$T/sudo.out")" -eq 0
	expect_evidence "sudo, duress password" sudo "$U1" PAM_RUSER "$U1"
	check "sudo: the real /etc/pam.d/sudo is untouched outside the namespace" \
		test "$(grep -c "$MODULE" /etc/pam.d/sudo)" -eq 0
else
	skip "sudo is not installed (tools/deps.sh installs it)"
fi

# ================================================================================
# 4. OpenSSH sshd on 127.0.0.1
# ================================================================================
if ! start_sshd; then
	not_ok "sshd starts on 127.0.0.1"
	tail -n 25 "$T/sshd.log" | diag
	tap_end
	exit
fi
ok "sshd starts on 127.0.0.1 port $SSH_PORT as $SERVICE"

clear_results
ssh_login "$RP1" password 'id -un'
rc=$?
check_diag "ssh, real password: logs in and runs the command" "$T/ssh.err" \
	test "$rc" -eq 0 -a "$(cat "$T/ssh.out")" = "$U1"
ssh_login "$WP" password 'id -un'
rc=$?
check_diag "ssh, wrong password: refused (exit 255)" "$T/sshd.log" \
	test "$rc" -eq 255 -a ! -s "$T/ssh.out"
grep -q "Permission denied" "$T/ssh.err" || { echo "ssh said:"; cat "$T/ssh.err"; } | diag
settle
check "ssh, real and wrong password: no action ran" test -z "$(ls -A "$RES")"
[ -z "$(ls -A "$RES")" ] || show_results

clear_results
ssh_login "$DP" password 'id -un'
rc=$?
check_diag "ssh, duress password: logs in and runs the command" "$T/sshd.log" \
	test "$rc" -eq 0 -a "$(cat "$T/ssh.out")" = "$U1"
expect_evidence "ssh, duress password" "$SERVICE" "$U1" PAM_RHOST 127.0.0.1
check "ssh, duress password: no password in the actions' environment" no_password_in_evidence

clear_results
ssh_login "$DP" keyboard-interactive 'id -un'
rc=$?
check_diag "ssh keyboard-interactive, duress password: logs in" "$T/sshd.log" \
	test "$rc" -eq 0 -a "$(cat "$T/ssh.out")" = "$U1"
expect_evidence "ssh keyboard-interactive, duress password" "$SERVICE" "$U1" PAM_RHOST 127.0.0.1

# An action still running when the session closes completes: it waits to
# be released until the connection's checks are done.
clear_results
ssh_login "$SP" password 'id -un'
rc=$?
ssh_end=$(date +%s%N)
check_diag "ssh, slow action: logs in" "$T/sshd.log" test "$rc" -eq 0 -a "$(cat "$T/ssh.out")" = "$U1"
check "ssh, slow action: the session ends while the action still runs" \
	test "$(count slow-done)" -eq 0
# Server-side TCP sockets of sshd's port still open (ESTABLISHED or CLOSE_WAIT).
open_server_sockets() {
	local hex
	hex=$(printf '%04X' "$SSH_PORT")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p=":$hex" '$2 ~ p"$" && ($4 == "01" || $4 == "08")' | wc -l
}
# shellcheck disable=SC2317 # called through wait_for and check_why
no_open_server_socket() { [ "$(open_server_sockets)" -eq 0 ]; }
wait_for 2 no_open_server_socket
check_why "ssh, slow action: the connection is closed on the server side when the session ends" \
	"$(open_server_sockets) socket(s) on port $SSH_PORT still open while the action runs: the action runner holds sshd's descriptors" \
	no_open_server_socket
wait_count slow-start 1 5
check "ssh, slow action: started during the login" test "$(count slow-start)" -eq 1
release_slow
wait_count slow-done 1 15
check "ssh, slow action: completed after the session closed, once released, as $U1" \
	test "$(count slow-done)" -eq 1 -a "$(field slow-done ts)" -gt "$ssh_end" \
	-a "$(field slow-done uid)" = "$UID1" -a "$(field slow-done released)" = yes

# (The ssh logins timed in pairs, ssh_bench, are bench/ssh_login.sh's.)
check_diag "sshd still running after all logins" "$T/sshd.log" kill -0 "$SSHD_PID"


# ================================================================================
# 5. Log parity: what syslog and sshd's own log say about real and duress logins
# ================================================================================
# A second sshd runs in a private mount namespace whose /dev/log is a socket
# of syslog_listen.py (its header says how, with or without a host /dev/log),
# so pam_unix's, the module's and the runner's syslog(3) lines are captured
# without touching the host's logging.  For each login the new syslog lines
# and the new lines of sshd's -e log are normalised (norm_log) and compared.
LISTENER=$(dirname "$(readlink -f "$0")")/syslog_listen.py
NS=$T/ns
SYSLOG=$NS/syslog.txt
NS_LOG=$NS/sshd.log
SERVICE_B=$SERVICE-before
PAMFILE_B=/etc/pam.d/$SERVICE_B
FP=$(random_password) # a per-user action that exits 3
NS_SSHD_PID=""
LISTENER_PID=""

# shellcheck disable=SC2317 # called by the trap
logs_cleanup() {
	local p
	for p in $NS_SSHD_PID $LISTENER_PID; do
		kill -TERM "$p" 2>/dev/null
		timeout 5 tail --pid="$p" -f /dev/null 2>/dev/null
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	NS_SSHD_PID=""
	LISTENER_PID=""
}
at_exit logs_cleanup

start_listener() {
	python3 "$LISTENER" "$NS/log.sock" "$SYSLOG" "$(bound 240)" 1048576 </dev/null 2>"$NS/listener.err" &
	LISTENER_PID=$!
	wait_for 5 test -S "$NS/log.sock"
}

# The namespace's /dev/log (see syslog_listen.py), then sshd in the foreground.
# shellcheck disable=SC2016 # $1... belong to the inner shell
NS_SETUP='
set -e
sock=$1 real=$2/dev.real
shift 2
if [ -e /dev/log ]; then
	mount --bind "$sock" /dev/log
else
	mkdir "$real"
	mount --rbind /dev "$real"
	mount -t tmpfs -o mode=755,nosuid duress-e2e-dev /dev
	for e in "$real"/* "$real"/.[!.]*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		d=/dev/${e##*/}
		# a link into /run (journald), hidden in the private root: replaced below
		[ "$d" != /dev/log ] || continue
		if [ "$d" = /dev/ptmx ]; then
			ln -s pts/ptmx "$d"
		elif [ -L "$e" ]; then
			cp -P "$e" "$d"
		elif [ -d "$e" ]; then
			mkdir "$d" && mount --rbind "$e" "$d"
		else
			: >"$d" && mount --bind "$e" "$d"
		fi
	done
	: >/dev/log
	mount --bind "$sock" /dev/log
fi
exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"'

# start_ns_sshd SERVICE: an sshd with the main one's configuration on a port
# of its own, PAM service SERVICE, in a fresh private mount namespace.
start_ns_sshd() {
	local port
	ensure_run_sshd || return 1
	rm -rf "$NS/dev.real"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
		return 1
	sed -e "s/^Port .*/Port $port/" -e "s|^PidFile .*|PidFile $NS/sshd.pid|" \
		"$T/ssh/sshd_config" >"$NS/sshd_config"
	ln -sfn "$SSHD_BIN" "$NS/$1"
	: >"$NS_LOG"
	unshare -m --propagation private -- /bin/sh -c "$NS_SETUP" sh "$NS/log.sock" "$NS" \
		"$NS/$1" -D -e -f "$NS/sshd_config" >"$NS_LOG" 2>&1 </dev/null &
	NS_SSHD_PID=$!
	sshd_listening "$NS_LOG" "$NS_SSHD_PID" "$port" || return 1
	NS_PORT=$port
}
stop_ns_sshd() {
	kill -TERM "$NS_SSHD_PID" 2>/dev/null
	timeout 5 tail --pid="$NS_SSHD_PID" -f /dev/null
	kill -KILL "$NS_SSHD_PID" 2>/dev/null
	wait "$NS_SSHD_PID" 2>/dev/null
	NS_SSHD_PID=""
}

# norm_log: what may differ between any two logins is replaced by a fixed
# word: syslog's timestamp, process ids ("ident[123]", "on pid 123"), the
# client's and server's ports, the random tag in user and service names,
# session and channel numbers.  sshd's "Close session:" line is dropped: sshd
# logs it only when the channel closes before the client's disconnect is
# read, a race that two real logins lose or win alike.  Nothing else: the
# lines, their order, their priorities (<PRI>) and every other word must match.
norm_log() {
	sed -E -e '/^Close session: /d' -e 's/^(<[0-9]+>)[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} /\1TIME /' \
		-e 's/\[[0-9]+\]/[PID]/g' -e 's/ pid [0-9]+/ pid PID/g' \
		-e 's/ port [0-9]+/ port PORT/g' -e "s/$R/R/g" \
		-e 's/ (session|id) [0-9]+/ \1 N/g'
}
# login_logged: until all that a login to the namespaced sshd logs is
# written: its actions have run (settle); sshd's process for the connection
# has ended, so its lines are in $NS_LOG and its login records written; and a
# mark sent to the syslog socket after that is in $SYSLOG (the listener reads
# the datagrams in the order they were sent).  The marks are not the
# login's: logged_login leaves them out.
MARKS=0
login_logged() {
	settle
	wait_for 10 no_child_of "$NS_SSHD_PID" || echo "# sshd's connection still runs after 10 s"
	MARKS=$((MARKS + 1))
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(sys.argv[2].encode(), sys.argv[1])' \
		"$NS/log.sock" "duress-e2e-mark $MARKS"
	wait_for 10 grep -qx "duress-e2e-mark $MARKS" "$SYSLOG" || echo "# the syslog mark $MARKS did not arrive in 10 s"
}
# shellcheck disable=SC2317 # called through wait_for
no_child_of() { ! pgrep -P "$1" >/dev/null; }
# btmp records of the test user (lastb's file); other runs use other names.
btmp_count() { utmpdump /var/log/btmp 2>/dev/null | grep -cF "[$U1" || true; }

# logged_login NAME PASSWORD EVIDENCE...: one ssh login to the namespaced
# sshd; once the listed evidence kinds exist and U1's processes have ended,
# the new syslog and sshd lines, normalised, go to $NS/NAME.syslog and
# $NS/NAME.sshd, the new btmp records' count to $NS/NAME.btmp, the actions
# that ran to $NS/NAME.ran.
logged_login() {
	local name=$1 pw=$2 s0 l0 b0 k
	shift 2
	clear_results
	s0=$(wc -l <"$SYSLOG")
	l0=$(wc -l <"$NS_LOG")
	b0=$(btmp_count)
	SSH_PORT=$NS_PORT ssh_login "$pw" password 'id -un'
	echo "$?:$(cat "$T/ssh.out")" >"$NS/$name.rc"
	for k in "$@"; do wait_count "$k" 1 10; done
	reap_uid 10 "$UID1"
	login_logged
	tail -n +"$((s0 + 1))" "$SYSLOG" | sed '/^duress-e2e-mark /d' | norm_log >"$NS/$name.syslog"
	tail -n +"$((l0 + 1))" "$NS_LOG" | norm_log >"$NS/$name.sshd"
	echo $(($(btmp_count) - b0)) >"$NS/$name.btmp"
	echo "user=$(count user) global=$(count global) fail=$(count fail)" >"$NS/$name.ran"
}
# utmp_norm: utmpdump's records without what differs between any two logins
# (pid, terminal number, time, the random tag).
utmp_norm() {
	sed -E -e 's/^\[([0-9])\] \[[ 0-9]+\]/[\1] [PID]/' -e 's/(ts|pts)\/[0-9]+/\1\/N/g' \
		-e 's/\[[0-9]{4}-[0-9-]+T[^]]*\]/[TIME]/g' -e "s/$R/R/g" -e 's/ +\]/]/g'
}
# pty_login NAME PASSWORD EVIDENCE...: like logged_login, with a terminal
# (ssh -tt: sshd writes wtmp and lastlog only for sessions with one); the new
# wtmp records naming U1 (other tests may log in meanwhile) go to $NS/NAME.wtmp, U1's lastlog entry to $NS/NAME.lastlog
# if the login changed it (nothing if it did not).
pty_login() {
	local name=$1 pw=$2 w0 ll0 ll k
	shift 2
	clear_results
	w0=$(utmpdump /var/log/wtmp 2>/dev/null | wc -l)
	ll0=$(lastlog -u "$U1" 2>/dev/null | tail -n +2)
	SSHPASS=$pw timeout "$(bound 30)" sshpass -e ssh -F /dev/null -tt \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
		-o ConnectTimeout=10 -o PreferredAuthentications=password -o PubkeyAuthentication=no \
		-o NumberOfPasswordPrompts=1 -p "$NS_PORT" "$U1@127.0.0.1" 'id -un' \
		</dev/null >"$T/ssh.out" 2>"$T/ssh.err"
	echo "$?:$(tr -d '\r' <"$T/ssh.out")" >"$NS/$name.rc"
	for k in "$@"; do wait_count "$k" 1 10; done
	reap_uid 10 "$UID1"
	login_logged
	utmpdump /var/log/wtmp 2>/dev/null | tail -n +"$((w0 + 1))" | grep -F "] [$U1" |
		utmp_norm >"$NS/$name.wtmp"
	ll=$(lastlog -u "$U1" 2>/dev/null | tail -n +2)
	{ [ "$ll" = "$ll0" ] || echo "$ll"; } |
		sed -E -e "s/$R/R/g" -e 's/pts\/[0-9]+/pts\/N/' -e 's/ [A-Z][a-z]{2} [A-Z][a-z]{2} .*$/ TIME/' \
			>"$NS/$name.lastlog"
}
# same_log WHAT A B KIND: the normalised KIND lines of logins A and B match.
same_log() {
	if cmp -s "$NS/$2.$4" "$NS/$3.$4"; then
		ok "$1: $4 lines identical ($(wc -l <"$NS/$2.$4") lines)"
	else
		not_ok "$1: $4 lines identical"
		diff -u "$NS/$2.$4" "$NS/$3.$4" | diag
	fi
}
# logged_in NAME: the login succeeded and sshd logged it.
# shellcheck disable=SC2317 # called through check_diag
logged_in() {
	[ "$(cat "$NS/$1.rc")" = "0:$U1" ] && grep -q "^Accepted password for " "$NS/$1.sshd"
}
# one_more_pam_unix_failure REAL DURESS: the duress syslog is the real one
# plus exactly one pam_unix "authentication failure" line.
one_more_pam_unix_failure() {
	local re='pam_unix([^)]*:auth): authentication failure;'
	[ "$(grep -c "$re" "$NS/$2.syslog")" -eq "$(($(grep -c "$re" "$NS/$1.syslog") + 1))" ] &&
		diff <(grep -v "$re" "$NS/$1.syslog") <(grep -v "$re" "$NS/$2.syslog") >/dev/null
}

if ! command -v python3 >/dev/null 2>&1 || ! command -v utmpdump >/dev/null 2>&1; then
	skip "log parity needs python3 and utmpdump"
else
	mkdir -m 700 "$NS" || setup_failed "mkdir $NS"
	: >"$SYSLOG"
	start_listener || setup_failed "syslog listener" "$NS/listener.err"
	[ -e "$PAMFILE_B" ] && setup_failed "$PAMFILE_B already exists"
	(
		set -o noclobber
		cat >"$PAMFILE_B" <<EOF
# pam_duress end-to-end test ($0), module before pam_unix; in its private /etc only.
auth     [success=done default=ignore]  $MODULE global_dir=$GLOBAL runner=$RUNNER
auth     required                       pam_unix.so nodelay try_first_pass
account  required                       pam_unix.so
session  required                       pam_permit.so
password requisite                      pam_deny.so
EOF
	) || setup_failed "write $PAMFILE_B"
	{ evidence_script fail && echo "exit 3"; } | user_action "$U1" "$UDIR/30-fail"
	echo "$FP" | as_user "$U1" "$DURESS" sign --stdin "$UDIR/30-fail" >"$T/sign.log" 2>&1 ||
		setup_failed "sign the failing action" "$T/sign.log"

	# --- module before pam_unix: a duress login must leave the real one's lines.
	start_ns_sshd "$SERVICE_B" || setup_failed "start the namespaced sshd" "$NS_LOG"
	logged_login b-real "$RP1"
	logged_login b-duress "$DP" user global
	logged_login b-fail "$FP" fail
	pty_login bt-real "$RP1"
	pty_login bt-duress "$DP" user global
	# sshd's [priv] process (the session's grandparent) as the session reads
	# it, for docs/tells.md: printed, not judged (its preauth child's figures
	# vary with the connection).
	# shellcheck disable=SC2016 # expanded by the session's shell
	sshd_cmd='P=$(sed "s/^.*) //" /proc/$PPID/stat | cut -d" " -f2); '${COUNTERS_CMD//\$PPID/\$P}
	for i in 1 2 3; do
		for k in "real $RP1" "duress $DP"; do
			SSH_PORT=$NS_PORT ssh_login "${k#* }" password "$sshd_cmd"
			[ "$(grep -c '^E2E-' "$T/ssh.out")" -eq 2 ] &&
				echo "$(sed -n 's/^E2E-STAT //p' "$T/ssh.out") $(sed -n 's/^E2E-HWM //p' "$T/ssh.out")" \
					>>"$T/counters.sshd-${k%% *}"
		done
	done
	settle
	reap_uid 10 "$UID1"
	show_counters sshd-real sshd-duress | sed 's/^# su /# sshd [priv], before pam_unix, /'
	stop_ns_sshd
	check_diag "log parity, before pam_unix: real login logged in" "$NS/b-real.sshd" logged_in b-real
	check_diag "log parity, before pam_unix: duress login logged in" "$NS/b-duress.sshd" logged_in b-duress
	check "log parity, before pam_unix: only the duress logins ran actions" test \
		"$(cat "$NS"/b-{real,duress,fail}.ran)" = "user=0 global=0 fail=0
user=1 global=1 fail=0
user=0 global=0 fail=1"
	same_log "log parity, before pam_unix, real vs duress" b-real b-duress syslog
	same_log "log parity, before pam_unix, real vs duress" b-real b-duress sshd
	check_diag "log parity, before pam_unix: action exiting 3 ran" "$NS/b-fail.sshd" logged_in b-fail
	same_log "log parity, before pam_unix, real vs duress with an action exiting 3" b-real b-fail syslog
	same_log "log parity, before pam_unix, real vs duress with an action exiting 3" b-real b-fail sshd

	# --- module after pam_unix ($PAMFILE): pam_unix's failure line is the one difference.
	start_ns_sshd "$SERVICE" || setup_failed "start the namespaced sshd" "$NS_LOG"
	logged_login a-real "$RP1"
	logged_login a-duress "$DP" user global
	pty_login at-real "$RP1"
	pty_login at-duress "$DP" user global
	stop_ns_sshd
	check "log parity, after pam_unix: only the duress login ran actions" test \
		"$(cat "$NS"/a-{real,duress}.ran)" = "user=0 global=0 fail=0
user=1 global=1 fail=0"
	check_diag "log parity, after pam_unix: real login logged in" "$NS/a-real.sshd" logged_in a-real
	check_diag "log parity, after pam_unix: duress login logged in" "$NS/a-duress.sshd" logged_in a-duress
	same_log "log parity, after pam_unix, real vs duress" a-real a-duress sshd
	if one_more_pam_unix_failure a-real a-duress; then
		ok "log parity, after pam_unix: the duress login adds exactly one pam_unix \"authentication failure\" line (documented tell)"
	else
		not_ok "log parity, after pam_unix: the duress login adds exactly one pam_unix \"authentication failure\" line (documented tell)"
		diff -u "$NS/a-real.syslog" "$NS/a-duress.syslog" | diag
	fi
	for p in bt at; do
		check_diag "wtmp, lastlog ($p): real and duress logins with a terminal logged in" "$T/ssh.err" \
			test "$(cat "$NS/$p-real.rc" "$NS/$p-duress.rc")" = "0:$U1
0:$U1"
		check "wtmp, lastlog ($p): the real login left a login record and a new lastlog entry" \
			test "$(grep -c '^\[7\] .*\[pts/N\]' "$NS/$p-real.wtmp")" -eq 1 -a -s "$NS/$p-real.lastlog"
		same_log "wtmp ($p), real vs duress" "$p-real" "$p-duress" wtmp
		same_log "lastlog ($p), real vs duress" "$p-real" "$p-duress" lastlog
	done
	check "btmp: no duress login leaves a failed-login record, like a real one" \
		test "$(cat "$NS"/{b-real,b-duress,b-fail,a-real,a-duress}.btmp | sort -u)" = 0
	logs_cleanup
fi

tap_end
