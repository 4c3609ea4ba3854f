#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The timeout factor (tools/run-checks.sh's header, docs/testing.md): one
# whole number that multiplies every meson timeout and, exported as
# DURESS_TIMEOUT_FACTOR, every bound a test keeps against a hang.  TAP.
#
#   test_timeout_factor.sh SOURCE_DIR
#
# run-checks.sh runs from a copy of tools/ in a temporary tree, with meson
# and ninja stand-ins first in PATH that record how they were called (and
# with DURESS_TIMEOUT_FACTOR) and answer "Ok: 1": its build and valgrind
# steps, the factor given, refused, or measured from a load average written
# over /proc/loadavg in a private mount namespace (root only; SKIP
# otherwise), on 2 cores (OMP_NUM_THREADS, which nproc follows).  Then the
# helpers the tests use: tap.sh's bound and wait_for, bootvm.py's bound.

set -u
export LC_ALL=C

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

SRC=$(readlink -f "$1")
unset DURESS_TIMEOUT_FACTOR

mkdir -p "$T/tree/tools" "$T/bin" "$T/pam"
cp "$SRC/tools/run-checks.sh" "$SRC/tools/options-match.py" "$T/tree/tools/"
CALLS=$T/calls
cat >"$T/bin/meson" <<EOF
#!/bin/sh
echo "factor=\${DURESS_TIMEOUT_FACTOR-unset} \$*" >>"$CALLS"
case \$1 in
setup) mkdir -p "\$2" && : >"\$2/build.ninja" ;;
test) printf 'Ok: 1\nFail: 0\nSkipped: 0\n' ;;
introspect) echo '[{"name": "t", "suite": ["pam_duress:unit"], "cmd": ["/bin/true"]}]' ;;
esac
EOF
printf '#!/bin/sh\nexit 0\n' >"$T/bin/ninja"
printf '#!/bin/sh\nexit 0\n' >"$T/bin/valgrind"
chmod 755 "$T/bin/meson" "$T/bin/ninja" "$T/bin/valgrind"

# checks STEP [VAR=VALUE...]: run-checks.sh STEP in the copy, from a fresh
# build directory; its output in $T/out, its status in $rc, the stand-ins'
# calls in $CALLS.
checks() {
	rm -rf "$T/tree/build" "$CALLS"
	env PATH="$T/bin:$PATH" PAM_DIRS="$T/pam" "${@:2}" "$T/tree/tools/run-checks.sh" "$1" \
		>"$T/out" 2>&1
	rc=$?
}
# test_calls: the stand-in's `meson test` lines.
test_calls() { grep -E '^factor=[^ ]* test ' "$CALLS" 2>/dev/null; }
# calls_with FACTOR MULTIPLIER: how many `meson test` calls saw the factor
# DURESS_TIMEOUT_FACTOR and --timeout-multiplier MULTIPLIER.
calls_with() { test_calls | grep -cE -- "^factor=$1 test .*--timeout-multiplier $2( |\$)"; }

checks build DURESS_TIMEOUT_FACTOR=3
check_diag "DURESS_TIMEOUT_FACTOR=3: run-checks says so" "$T/out" \
	grep -qx 'timeout factor: 3 (DURESS_TIMEOUT_FACTOR)' "$T/out"
check_diag "DURESS_TIMEOUT_FACTOR=3: meson test gets --timeout-multiplier 3, the tests the factor" \
	"$CALLS" test "$(calls_with 3 3)" -eq 1 -a "$(test_calls | wc -l)" -eq 1
checks valgrind DURESS_TIMEOUT_FACTOR=3 VALGRIND_TIMEOUT_MULTIPLIER=5
check_diag "valgrind step: --timeout-multiplier 15 (5 for valgrind, times the factor), the tests 3" \
	"$CALLS" test "$(calls_with 3 15)" -eq 1 -a "$(test_calls | wc -l)" -eq 1

for bad in 0 101 x 2.5; do
	checks build DURESS_TIMEOUT_FACTOR="$bad"
	check_diag "DURESS_TIMEOUT_FACTOR=$bad: refused (exit 2), before any step" "$T/out" \
		test "$rc" -eq 2 -a ! -e "$CALLS" -a \
		"$(grep -c "DURESS_TIMEOUT_FACTOR=$bad: a whole number from 1 to 100" "$T/out")" -eq 1
done

# measured LOADAVG WANT: the factor measured on 2 cores at that load average.
measured() {
	printf '%s %s %s 1/100 4242\n' "$1" "$1" "$1" >"$T/loadavg"
	rm -rf "$T/tree/build" "$CALLS"
	# shellcheck disable=SC2016 # $1... belong to the inner shell
	unshare -m --propagation private -- sh -c 'mount --bind "$1" /proc/loadavg && shift &&
		exec env "$@"' sh "$T/loadavg" PATH="$T/bin:$PATH" PAM_DIRS="$T/pam" OMP_NUM_THREADS=2 \
		NPROC=2 "$T/tree/tools/run-checks.sh" build >"$T/out" 2>&1
	check_diag "load $1 on 2 cores, 2 tests at a time: factor $2, given to meson and the tests" "$T/out" \
		test "$(calls_with "$2" "$2")" -eq 1 -a \
		"$(grep -c "^timeout factor: $2 (load $1 $1, 2 cores" "$T/out")" -eq 1
}
if [ "$(id -u)" -eq 0 ]; then
	measured 0.00 1
	measured 1.20 2
	measured 8.00 5
	measured 30.00 16
else
	skip "the factor measured from the load (root: /proc/loadavg is overmounted in a private namespace)"
fi

# The tests' side: tap.sh's bound and wait_for, bootvm.py's bound.
# shellcheck disable=SC2016 # $1... belong to the inner shells
tap_bound() { env DURESS_TIMEOUT_FACTOR="$1" bash -c '. "$1"; bound 7' sh "$SRC/tests/lib/tap.sh"; }
check "tap.sh: bound 7 is 7 with no factor, 28 with 4, 7 with one that is not a whole number" \
	test "$(tap_bound '')" = 7 -a "$(tap_bound 4)" = 28 -a "$(tap_bound x)" = 7
# wait_for 1 polls ten times a second: a factor of 3 makes it thirty looks.
looks() {
	: >"$T/looks"
	# shellcheck disable=SC2016 # $1... belong to the inner shell
	env DURESS_TIMEOUT_FACTOR="$1" bash -c '. "$1"; wait_for 1 sh -c "echo >>\"\$0\"; false" "$2"' \
		sh "$SRC/tests/lib/tap.sh" "$T/looks"
	wc -l <"$T/looks"
}
check "tap.sh: wait_for 1 gives up after 10 looks, 30 with the factor 3" \
	test "$(looks '')" -eq 10 -a "$(looks 3)" -eq 30
py_bound() {
	env DURESS_TIMEOUT_FACTOR="$1" python3 -B -c \
		'import sys; sys.path.insert(0, sys.argv[1]); import bootvm; print(bootvm.bound(7))' \
		"$SRC/tests/boot"
}
check "bootvm.py: bound(7) is 7 with no factor, 28 with 4, 7 with one that is not a whole number" \
	test "$(py_bound '')" = 7 -a "$(py_bound 4)" = 28 -a "$(py_bound x)" = 7

tap_end
