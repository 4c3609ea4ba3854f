#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The whole test suite, as `make check` and .ci/run call it.
#
#   tools/run-checks.sh [STEP...]
#
# Steps, in this order (default: all of them):
#   build     ordinary build in build/ + meson test
#   asan      ASan+UBSan build in build-asan/ + meson test
#   valgrind  the unit, cli and pam suites of build/ under valgrind
#   static    cppcheck and clang-tidy over src/, clang-format over every C file,
#             tools/secret-compare.sh (secrets compared in constant time)
#   man       mandoc -Tlint over man/*.[0-9]
#   fuzz      each libFuzzer target for FUZZ_SECONDS (20) from its corpus
#
# Every test that meson runs counts as one test, and so does each of
# cppcheck, clang-tidy, clang-format, secret-compare and mandoc, and the
# last check: the machine's PAM configuration (PAM_DIRS) is byte for byte
# what it was when the run started.  A build that fails counts as one
# failed test.  The last line printed is "N passed, N failed, N skipped";
# the exit status is non-zero when anything failed.
#
# Contract with tests/meson.build:
#   - suites: unit, pam (others run in the build and asan steps only);
#     tests in a suite named "nosan" are left out of the asan step and those
#     in a suite named "novalgrind" out of the valgrind step;
#   - asan step: tests/meson.build's default test setup sets
#     DURESS_PRELOAD_ASAN (libasan.so, to put first in LD_PRELOAD before
#     libpam_wrapper.so / libnss_wrapper.so) and the sanitizer options; it is
#     unset in every other step;
#   - valgrind step: tests whose command is an ELF program run under
#     valgrind (meson --wrapper); tests run by an interpreter (sh, bash,
#     python, expect...) run without it, and should put $DURESS_VALGRIND
#     (a command prefix, set in this step only) before the programs they start.
#
# Timeouts scale with the machine: one whole number, the timeout factor,
# multiplies every meson timeout (meson test --timeout-multiplier; times
# VALGRIND_TIMEOUT_MULTIPLIER in the valgrind step) and, exported as
# DURESS_TIMEOUT_FACTOR, every bound a test keeps against a hang (the PAM
# and fault suites' login and evidence waits, the scripts' wait_for and
# `timeout "$(bound N)"`, the VM boots' prompt and build bounds).  It is
# DURESS_TIMEOUT_FACTOR when that is set (1 to 100); otherwise it is
# measured once at the start: the machine's load (the higher of its 1- and
# 5-minute averages) plus the NPROC tests run at once, per core, rounded
# (2 on a quiet 2-core machine, 6 at load 8).  No test measures time:
# a larger factor only lets a slow machine finish.
#
# Environment: NPROC (parallel tests, cores + 1), DURESS_TIMEOUT_FACTOR (measured),
# VALGRIND_TIMEOUT_MULTIPLIER (5), VALGRIND_SUITES ("unit pam": the module
# and the core, which live on in login programs; "unit cli pam" adds the CLI),
# FUZZ_SECONDS (20), PAM_DIRS ("/etc/pam.d /var/lib/pam /usr/share/pam-configs").

set -u
set -o pipefail

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$ROOT" || exit 2

# One test more than the cores: the root and PAM suites wait on logins,
# sshd and dpkg a third of the time (measured: 35% idle at 2 on 2 cores).
NPROC=${NPROC:-$(($(nproc) + 1))}
VALGRIND_TIMEOUT_MULTIPLIER=${VALGRIND_TIMEOUT_MULTIPLIER:-5}
VALGRIND_SUITES=${VALGRIND_SUITES:-unit pam}
VALGRIND="valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite"
# The module forks a runner; what valgrind would find in that copy of the
# process it finds in the process itself, and an error exit there would
# read as "cannot start the action runner".
VALGRIND+=" --track-fds=yes --trace-children=no --child-silent-after-fork=yes -q"
# A false leak seen from the forked runner; the file says why.
VALGRIND+=" --suppressions=$ROOT/tests/valgrind.supp"
ALL_STEPS="build asan valgrind static man fuzz"
PAM_DIRS=${PAM_DIRS:-/etc/pam.d /var/lib/pam /usr/share/pam-configs}

# The asan variable belongs to the asan step only.
unset DURESS_PRELOAD_ASAN DURESS_VALGRIND

# timeout_factor: prints DURESS_TIMEOUT_FACTOR, or the one the load calls
# for (see the header); exits 2 on a value that is not a whole number 1-100.
timeout_factor()
{
	local load1 load5 rest

	case ${DURESS_TIMEOUT_FACTOR:-} in
	[1-9] | [1-9][0-9] | 100)
		echo "$DURESS_TIMEOUT_FACTOR"
		return
		;;
	"") ;;
	*)
		echo "run-checks.sh: DURESS_TIMEOUT_FACTOR=$DURESS_TIMEOUT_FACTOR: a whole number from 1 to 100, please" >&2
		exit 2
		;;
	esac
	read -r load1 load5 rest </proc/loadavg
	awk -v a="$load1" -v b="$load5" -v n="$NPROC" -v c="$(nproc)" 'BEGIN {
		f = int(((a > b ? a : b) + n) / c + 0.5)
		print (f < 1 ? 1 : (f > 100 ? 100 : f)) }'
}

# A test dependency that is missing is an error here, not a skipped suite.
TESTS=enabled

TMP=$(mktemp -d "${TMPDIR:-/tmp}/duress-checks.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

total_pass=0 total_fail=0 total_skip=0
summary=()

usage()
{
	awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub(/^# ?/, ""); print }' "$0"
}

banner()
{
	printf '\n======== %s ========\n' "$*"
}

# record STEP SECONDS PASS FAIL SKIP [NOTE]
record()
{
	local status=ok

	total_pass=$((total_pass + $3))
	total_fail=$((total_fail + $4))
	total_skip=$((total_skip + $5))
	[ "$4" -gt 0 ] && status=FAIL
	summary+=("$(printf '%-4s %-22s %4ss  %3d passed, %d failed, %d skipped%s' \
		"$status" "$1" "$2" "$3" "$4" "$5" "${6:+  ($6)}")")
}


# setup DIR "NAME=VALUE..." "NAME=VALUE...": configure DIR with the options of
# the first list (kept up to date) and, when first set up, of the second list.
setup()
{
	local dir=$1 kv=() want=() init=() wipe=() o

	read -r -a kv <<<"$2"
	for o in "${kv[@]}"; do want+=("-D$o"); done
	for o in $3; do init+=("-D$o"); done
	if [ ! -f "$dir/build.ninja" ]; then
		# A setup that failed half-way leaves a directory meson refuses.
		[ -f "$dir/meson-private/coredata.dat" ] && wipe=(--wipe)
		echo "+ meson setup ${wipe[*]:+${wipe[*]} }$dir ${want[*]} ${init[*]}"
		meson setup "${wipe[@]}" "$dir" "${want[@]}" "${init[@]}"
	elif ! python3 tools/options-match.py "$dir" "${kv[@]}"; then
		echo "+ meson configure $dir ${want[*]}"
		meson configure "$dir" "${want[@]}"
	fi
}

# build DIR: compile everything; logs go to stdout.
build()
{
	echo "+ ninja -C $1"
	ninja -C "$1"
}

# Sets PASS FAIL SKIP from the summary `meson test` printed into LOG.
parse_meson_summary()
{
	local log=$1 rc=$2

	read -r PASS FAIL SKIP < <(awk -F: '
		/^Ok:/ { p += $2 }
		/^Expected Fail:/ { p += $2 }
		/^Fail:/ { f += $2 }
		/^Unexpected Pass:/ { f += $2 }
		/^Timeout:/ { f += $2 }
		/^Skipped:/ { s += $2 }
		END { printf "%d %d %d\n", p, f, s }' "$log")
	# meson test failed without a failing test (e.g. a build error).
	if [ "$rc" -ne 0 ] && [ "$FAIL" -eq 0 ]; then
		FAIL=1
	fi
}

# run_meson_test NAME DIR MULTIPLIER [ARGS...]: meson's timeouts times
# MULTIPLIER; sets PASS FAIL SKIP.
run_meson_test()
{
	local name=$1 dir=$2 mult=$3 rc

	shift 3
	echo "+ meson test -C $dir --print-errorlogs --num-processes $NPROC --timeout-multiplier $mult $*"
	meson test -C "$dir" --print-errorlogs --num-processes "$NPROC" \
		--timeout-multiplier "$mult" "$@" 2>&1 |
		tee "$TMP/$name.log"
	rc=$?
	parse_meson_summary "$TMP/$name.log" "$rc"
}

# Prints the suites (without the project prefix) that DIR's tests belong to.
suites_of()
{
	meson introspect "$1" --tests 2>/dev/null | python3 -c '
import json, sys
print("\n".join(sorted({s.split(":")[-1] for t in json.load(sys.stdin) for s in t["suite"]})))'
}

step_build()
{
	local t0=$SECONDS

	banner "ordinary build (build/)"
	if ! setup build "tests=$TESTS" "prefix=/usr/local" || ! build build; then
		record "build" $((SECONDS - t0)) 0 1 0 "build failed"
		return
	fi
	run_meson_test build build "$DURESS_TIMEOUT_FACTOR"
	record "build: meson test" $((SECONDS - t0)) "$PASS" "$FAIL" "$SKIP"
}

step_asan()
{
	local t0=$SECONDS opts nosan=() suites

	banner "ASan+UBSan build (build-asan/)"
	# Without --no-as-needed the linker resolves crypt_r (and other intercepted
	# functions) against libasan and drops libcrypt: the interceptor then calls
	# a NULL "real" crypt_r.  c_link_args come after the project's own flags.
	opts="b_sanitize=address,undefined b_lundef=false b_asneeded=false"
	opts+=" c_link_args=-Wl,--no-as-needed tests=$TESTS"
	if ! setup build-asan "$opts" "prefix=/usr/local" || ! build build-asan; then
		record "asan" $((SECONDS - t0)) 0 1 0 "build failed"
		return
	fi
	# Read whole first: under pipefail, grep -q leaving early can fail the
	# pipe, and the nosan tests (VM boots among them) would then run here.
	suites=$(suites_of build-asan)
	if ! grep -qx nosan <<<"$suites"; then
		echo "no suite nosan in build-asan: meson introspect failed?" >&2
		record "asan" $((SECONDS - t0)) 0 1 0 "suites unknown"
		return
	fi
	nosan=(--no-suite nosan)
	# The sanitizer runtime's settings come from tests/meson.build's default test setup.
	run_meson_test asan build-asan "$DURESS_TIMEOUT_FACTOR" "${nosan[@]}"
	record "asan: meson test" $((SECONDS - t0)) "$PASS" "$FAIL" "$SKIP"
}

# valgrind_tests DIR SUITE...: prints "elf NAME" or "script NAME" for each
# test of DIR in one of the SUITEs and not in the suite novalgrind.  A test
# run by an interpreter (sh, bash, python, expect...) is a script: under
# valgrind it would check the interpreter, not our code.
valgrind_tests()
{
	meson introspect "$1" --tests 2>/dev/null | python3 -c '
import json, os, re, sys
want = set(sys.argv[1:])
interp = re.compile(r"^(ba|da|z|k)?sh$|^python[0-9.]*$|^perl$|^expect$|^tclsh[0-9.]*$|^env$")
seen = {}
for t in json.load(sys.stdin):
    suites = {s.split(":")[-1] for s in t["suite"]}
    if not suites & want or "novalgrind" in suites:
        continue
    exe = t["cmd"][0]
    kind = "elf"
    if interp.match(os.path.basename(exe)):
        kind = "script"
    else:
        try:
            with open(exe, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    kind = "script"
        except OSError:
            pass
    seen.setdefault(t["name"], kind)
for name, kind in seen.items():
    print(kind, name)' "${@:2}"
}

# Tests that are ELF programs run under valgrind (meson --wrapper); script
# tests run as they are, with DURESS_VALGRIND set for the programs they start.
step_valgrind()
{
	local t0=$SECONDS list elf=() script=() suites=() kind name s
	local p=0 f=0 k=0 mult=$((VALGRIND_TIMEOUT_MULTIPLIER * DURESS_TIMEOUT_FACTOR))

	banner "valgrind (build/)"
	if ! command -v valgrind >/dev/null; then
		echo "valgrind not installed (make deps)"
		record "valgrind" 0 0 1 0 "no valgrind"
		return
	fi
	if ! setup build "tests=$TESTS" "prefix=/usr/local" || ! build build; then
		record "valgrind" $((SECONDS - t0)) 0 1 0 "build failed"
		return
	fi
	# shellcheck disable=SC2086 # a list of suite names
	list=$(valgrind_tests build $VALGRIND_SUITES)
	while read -r kind name; do
		[ "$kind" = elf ] && elf+=(":$name")
		[ "$kind" = script ] && script+=(":$name")
	done <<<"$list"
	for s in $VALGRIND_SUITES; do suites+=(--suite "$s"); done
	if [ ${#elf[@]} -gt 0 ]; then
		DURESS_VALGRIND=$VALGRIND run_meson_test valgrind build "$mult" --wrapper "$VALGRIND" \
			"${suites[@]}" "${elf[@]}"
		p=$((p + PASS)) f=$((f + FAIL)) k=$((k + SKIP))
	fi
	if [ ${#script[@]} -gt 0 ]; then
		DURESS_VALGRIND=$VALGRIND run_meson_test valgrind-scripts build "$mult" \
			"${suites[@]}" "${script[@]}"
		p=$((p + PASS)) f=$((f + FAIL)) k=$((k + SKIP))
	fi
	record "valgrind: meson test" $((SECONDS - t0)) "$p" "$f" "$k" \
		"${#elf[@]} under valgrind, ${#script[@]} scripts"
}

step_cppcheck()
{
	local t0=$SECONDS fail=0 inc=()

	banner "cppcheck src/"
	# The project's config.h is force-included by the compiler: give it to cppcheck too.
	[ -f build/config.h ] && inc=(-Ibuild --include=build/config.h)
	echo "+ cppcheck ... src/"
	cppcheck --enable=warning,performance,portability --error-exitcode=1 --inline-suppr -q \
		--suppress=missingIncludeSystem -Isrc "${inc[@]}" -D_GNU_SOURCE src/ || fail=1
	record "cppcheck" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

step_clang_tidy()
{
	local t0=$SECONDS fail=0 files

	banner "clang-tidy src/"
	if [ ! -f build/compile_commands.json ]; then
		record "clang-tidy" $((SECONDS - t0)) 0 1 0 "no build/compile_commands.json"
		return
	fi
	# The .c files of src/ that the build compiles (so that their flags are known).
	files=$(python3 -c '
import json, os, sys
root = os.path.realpath("src") + os.sep
seen = set()
for e in json.load(open("build/compile_commands.json")):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if f.startswith(root) and f.endswith(".c") and f not in seen:
        seen.add(f)
        print(f)')
	if [ -z "$files" ]; then
		echo "no file of src/ in build/compile_commands.json"
		record "clang-tidy" $((SECONDS - t0)) 0 1 0 "nothing to check"
		return
	fi
	echo "+ clang-tidy -p build $(wc -w <<<"$files") files"
	# One log per file, printed in order once all are done.
	mkdir -p "$TMP/tidy"
	# shellcheck disable=SC2016,SC2086 # $1 and $0 belong to the inner shell
	printf '%s\n' $files | xargs -P "$NPROC" -n 1 sh -c \
		'exec clang-tidy -p build --quiet --extra-arg=-Wno-unknown-warning-option "$1" \
			>"$0/$(echo "$1" | tr / _).log" 2>&1' "$TMP/tidy" || fail=1
	cat "$TMP"/tidy/*.log | grep -v '^[0-9]* warnings\{0,1\} generated\.$'
	record "clang-tidy" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

# Every C file of the tree formatted as .clang-format says: a new file or
# edit that is not fails here, with the differences shown.
step_clang_format()
{
	local t0=$SECONDS fail=0 f files=()

	banner "clang-format --dry-run --Werror"
	while IFS= read -r -d '' f; do
		files+=("$f")
	done < <(find src tests fuzz bench -name '*.[ch]' -type f -print0 | sort -z)
	echo "+ clang-format --dry-run --Werror ${#files[@]} files"
	clang-format --dry-run --Werror "${files[@]}" || fail=1
	record "clang-format" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

# No secret (tag, hash, key, password) compared with memcmp, strcmp and
# the like in src/: a test cannot see the timing, this rule can.
step_secret_compare()
{
	local t0=$SECONDS fail=0

	banner "secret comparisons in constant time"
	echo "+ tools/secret-compare.sh src"
	tools/secret-compare.sh src || fail=1
	record "secret-compare" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

step_static()
{
	# cppcheck wants build/config.h, clang-tidy build/compile_commands.json.
	[ -f build/compile_commands.json ] ||
		setup build "tests=$TESTS" "prefix=/usr/local"
	step_cppcheck
	step_clang_tidy
	step_clang_format
	step_secret_compare
}

step_man()
{
	local t0=$SECONDS fail=0 pages=()

	shopt -s nullglob
	pages=(man/*.[0-9])
	shopt -u nullglob
	[ ${#pages[@]} -eq 0 ] && return
	banner "mandoc -Tlint"
	echo "+ mandoc -Tlint -W warning ${pages[*]}"
	mandoc -Tlint -W warning "${pages[@]}" || fail=1
	record "mandoc" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

step_fuzz()
{
	local t0=$SECONDS fail=0

	banner "libFuzzer (build-fuzz/)"
	tools/fuzz.sh "${FUZZ_SECONDS:-20}" || fail=1
	record "fuzz" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

# pam_snapshot: name, type, mode, owner and sha256 (or link target) of
# everything under PAM_DIRS, one line each; "absent" for a missing directory.
pam_snapshot()
{
	local d

	for d in $PAM_DIRS; do
		if [ ! -e "$d" ]; then
			echo "absent $d"
			continue
		fi
		find "$d" -printf '%y %m %U:%G %p\0' | sort -z |
			while IFS= read -r -d '' entry; do
				case $entry in
				f*) echo "$entry $(sha256sum <"${entry#* * * }" | cut -d' ' -f1)" ;;
				l*) echo "$entry -> $(readlink "${entry#* * * }")" ;;
				*) echo "$entry" ;;
				esac
			done
	done
}

step_pam_unchanged()
{
	local t0=$SECONDS fail=0

	banner "machine's PAM configuration unchanged"
	pam_snapshot >"$TMP/pam.after"
	echo "+ diff of $PAM_DIRS (start of the run, end of the run)"
	diff -u "$TMP/pam.before" "$TMP/pam.after" || fail=1
	record "PAM files unchanged" $((SECONDS - t0)) $((1 - fail)) "$fail" 0
}

steps=()
for a in "$@"; do
	case $a in
	-h | --help)
		usage
		exit 0
		;;
	build | asan | valgrind | static | man | fuzz)
		steps+=("$a")
		;;
	*)
		echo "run-checks.sh: unknown step: $a (steps: $ALL_STEPS)" >&2
		exit 2
		;;
	esac
done
[ ${#steps[@]} -eq 0 ] && read -r -a steps <<<"$ALL_STEPS"

# As root, the tests run this tree's programs as other accounts (nobody,
# test users): a tree they cannot reach (a clone under /root, mode 0700)
# would fail dozens of them for no bug.  Said once, before anything runs.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
	! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$ROOT/tools/run-checks.sh"; then
	echo "run-checks.sh: other accounts cannot read $ROOT (a directory on the way is closed to them, as /root is), and the tests run its programs as them: clone it where every user can read (e.g. /usr/local/src or /srv), or run make check as an ordinary user (the root suites then SKIP)" >&2
	exit 2
fi

factor=$(timeout_factor) || exit 2
if [ -n "${DURESS_TIMEOUT_FACTOR:-}" ]; then
	echo "timeout factor: $factor (DURESS_TIMEOUT_FACTOR)"
else
	echo "timeout factor: $factor (load $(cut -d' ' -f1-2 /proc/loadavg), $(nproc) cores; DURESS_TIMEOUT_FACTOR=N sets it)"
fi
export DURESS_TIMEOUT_FACTOR=$factor
start=$SECONDS
pam_snapshot >"$TMP/pam.before"
for s in "${steps[@]}"; do
	"step_$s"
done
step_pam_unchanged

banner "summary ($((SECONDS - start))s, timeout factor $DURESS_TIMEOUT_FACTOR)"
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
