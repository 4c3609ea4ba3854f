# SPDX-License-Identifier: GPL-2.0-or-later
#
# The TAP helpers of every shell test, sourced before anything else:
#   . "$(dirname "$0")/../lib/tap.sh"
#
# One line per assertion ("ok N - what", "not ok N - what" followed by the
# diagnostics as "# " lines), and one way to end: tap_end prints the plan
# "1..N" and fails when an assertion failed; skip_all REASON, for a
# test that cannot run here (not root, a missing tool), prints
# "1..0 # SKIP REASON" and exits 0, which meson counts as skipped (with
# protocol 'tap', exit status 77 would be an error).
#
# Also: a temporary directory $T (mode 0755, so that test users can traverse
# it) removed on every exit path after the commands given to at_exit;
# duress() runs $DURESS under $DURESS_VALGRIND (set by tools/run-checks.sh)
# when there is one; wait_for polls with a deadline; bound scales a bound
# against a hang; tap_part runs a part of the test in another process (the
# script again, in a private namespace) that numbers on from here.
#
# Every bound against a hang (wait_for's, and `timeout "$(bound N)"`) is
# multiplied by DURESS_TIMEOUT_FACTOR: a whole number, 1 when unset or not
# one; tools/run-checks.sh sets it from the machine's load (docs/testing.md).
# shellcheck shell=bash

WRAP=${DURESS_VALGRIND:-}
case ${DURESS_TIMEOUT_FACTOR:-} in
[1-9] | [1-9][0-9] | 100) TIMEOUT_FACTOR=$DURESS_TIMEOUT_FACTOR ;;
*) TIMEOUT_FACTOR=1 ;;
esac
# In a part (tap_part): no plan, and numbers that go on from the parent's;
# for this process only.
TAP_PART=${TAP_PART:-}
n=${TAP_PART_FROM:-0}
export -n TAP_PART TAP_PART_FROM
failed=0
AT_EXIT=()
T=$(mktemp -d)
chmod 755 "$T"

# at_exit COMMAND: run COMMAND (eval'd) when the script exits, before $T is
# removed; the last one given runs first.
at_exit() { AT_EXIT=("$1" "${AT_EXIT[@]}"); }
# shellcheck disable=SC2317 # called by the trap
tap_exit() {
	local c
	trap - EXIT
	for c in "${AT_EXIT[@]}"; do eval "$c"; done
	rm -rf "$T"
}
trap tap_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; echo "SKIP: $1" >&2; }
skip_all() {
	echo "1..0 # SKIP $1"
	echo "SKIP: $1" >&2
	exit 0
}
# diag: standard input as TAP diagnostics.
diag() { sed 's/^/# /'; }
# tap_end: the plan (but in a part: its parent prints it); fails when an
# assertion failed.  The script's last command, or "tap_end; exit".
tap_end() {
	[ -n "$TAP_PART" ] || echo "1..$n"
	[ "$failed" -eq 0 ]
}

# check DESCRIPTION COMMAND...: one assertion, COMMAND's success.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# check_why DESCRIPTION WHY COMMAND...: check, and on failure WHY (what the
# failure means) as a diagnostic.
check_why() {
	local desc=$1 why=$2
	shift 2
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
		echo "$why" | diag
	fi
}
# fails COMMAND...: COMMAND fails (check DESCRIPTION fails COMMAND...).
fails() { ! "$@"; }
# check_diag DESCRIPTION FILE COMMAND...: check, and on failure the tail of
# FILE (a log of what was tested) as diagnostics.
check_diag() {
	local desc=$1 file=$2
	shift 2
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
		show_tail "$file"
	fi
}
# show_tail FILE: its last lines as diagnostics (nothing for an empty or missing FILE).
show_tail() {
	[ -s "$1" ] || return 0
	{
		echo "--- tail of $1:"
		tail -n 25 "$1"
	} 2>&1 | diag
}
# check_same DESCRIPTION A B: files A and B are byte-identical; on failure, how they differ.
check_same() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1"
		diff -u "$2" "$3" | head -n 40 | diag
	fi
}
# setup_failed WHAT [FILE]: a step the assertions need failed: one failed
# assertion (with the tail of FILE), and the run ends.
setup_failed() {
	not_ok "setup: $1"
	[ -z "${2:-}" ] || show_tail "$2"
	tap_end
	exit
}

# bound SECONDS: a bound against a hang, SECONDS times DURESS_TIMEOUT_FACTOR.
bound() { echo $(($1 * TIMEOUT_FACTOR)); }

# random_password: 20 random characters of [A-Za-z0-9_-]: a test account's
# password is never one a name or a tag on the machine gives away.
random_password() { head -c 15 /dev/urandom | base64 | tr '+/' '-_'; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds, polled every 0.1 s, at
# most bound SECONDS; fails when the time is up.
wait_for() {
	local i
	for ((i = 0; i < $(bound "$1") * 10; i++)); do
		"${@:2}" && return 0
		sleep 0.1
	done
	return 1
}

# tap_part COMMAND...: COMMAND is a part of this test in another process
# that sources this file too (the script again, in a private namespace): it
# numbers its assertions on from this one's and prints no plan; its lines
# are counted here as they pass, so that even a part that was killed leaves
# the count right.  PART_STATUS is COMMAND's exit status.
tap_part() {
	local out=$T/tap-part.$n
	TAP_PART=1 TAP_PART_FROM=$n "$@" | tee "$out"
	# shellcheck disable=SC2034 # for the caller
	PART_STATUS=${PIPESTATUS[0]}
	n=$((n + $(grep -cE '^(not )?ok ' "$out")))
	failed=$((failed + $(grep -c '^not ok ' "$out")))
}

duress() { $WRAP "$DURESS" "$@"; }
