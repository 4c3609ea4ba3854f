# Sourced by the CLI test scripts: a temporary directory $T (removed on exit),
# TAP output helpers, and duress() running $DURESS under $DURESS_VALGRIND
# (set by tools/run-checks.sh) when there is one.  Call tap_end last.
# shellcheck shell=bash
WRAP=${DURESS_VALGRIND:-}
T=$(mktemp -d)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; echo "SKIP: $1" >&2; }
check() { # check DESCRIPTION COMMAND...
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
duress() { $WRAP "$DURESS" "$@"; }
tap_end() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
