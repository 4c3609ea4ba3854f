#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Help texts: each command prints its own on stdout and exits 0, and
# `duress --help` describes every option its synopsis lines list; the built
# man pages name the version in their .Os line.
# Usage: test_help.sh DURESS [MANPAGE]...
DURESS=$1
shift
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# help_of ARGS...: the help on stdout in $out; exit 0 and nothing on stderr.
help_of() {
	out=$(duress "$@" 2>"$T/err")
	local rc=$?
	check "$*: exit 0" test $rc -eq 0
	check "$*: nothing on stderr" test ! -s "$T/err"
}

# --- duress --help -----------------------------------------------------------------
help_of --help
main=$out
check "--help: the general usage" grep -qx "Usage: duress COMMAND \[OPTION\]... ARG..." <<<"$main"
for cmd in sign verify check test add; do
	check "--help: lists the $cmd command" grep -q "^  $cmd " <<<"$main"
done
# Every --option of a command's synopsis has a line of its own under Options.
listed=$(sed -n '/^Commands:/,/^Options:/p' <<<"$main" | grep -o -- '--[a-z-]*' | sort -u)
options=$(sed -n '/^Options:/,$p' <<<"$main")
check "--help: the synopsis lists options" test "$(wc -w <<<"$listed")" -ge 8
for o in $listed; do
	check "--help: $o is described" grep -Eq -- "^  (-h, )?$o [A-Z= ]*  +[a-z]" <<<"$options"
done
check "--help: --version is described" grep -Eq -- "^  --version +show the version" <<<"$options"
help_of -h
check "-h: the same text as --help" test "$out" = "$main"

# --- each command's own help ------------------------------------------------------
help_of sign --help
sign=$out
check "sign --help: its own usage line" grep -q "^Usage: duress sign \[--stdin\]" <<<"$sign"
check "sign --help: not the general help" test "$sign" != "$main"
for o in --stdin --also --memlimit --opslimit --help; do
	check "sign --help: describes $o" grep -Eq -- "^  (-h, )?$o" <<<"$sign"
done
check "sign --help: says how the real password is checked" grep -q "unix_chkpwd" <<<"$sign"
check "sign --help: says its exit status" grep -q "^Exit 0 when every FILE was signed" <<<"$sign"
help_of sign -h
check "sign -h: the same as sign --help" test "$out" = "$sign"
ln -s "$(readlink -f "$DURESS")" "$T/duress_sign"
out=$($WRAP "$T/duress_sign" --help)
check "duress_sign --help: exit 0 with sign's help" test $? -eq 0 -a "$out" = "$sign"

help_of verify --help
check "verify --help: its own usage line" grep -qx "Usage: duress verify \[--stdin\] \[--state-dir DIR\] FILE" <<<"$out"
check "verify --help: describes --stdin" grep -q -- "^  --stdin" <<<"$out"
check "verify --help: no option of sign" test "$(grep -c -- "--also\|--memlimit\|--opslimit" <<<"$out")" -eq 0
check "verify --help: says its exit status" grep -q "^Exit 0 on a match, 1 on no match, 2 on error" <<<"$out"

help_of check --help
check "check --help: its own usage line" grep -q "^Usage: duress check" <<<"$out"
help_of test --help
check "test --help: its own usage line" grep -q "^Usage: duress test" <<<"$out"
help_of add --help
add=$out
check "add --help: its own usage line" grep -q "^Usage: duress add --list" <<<"$add"
for o in --list --global --set --no-edit --stdin --force --examples-dir --pam-dir --memlimit --help; do
	check "add --help: describes $o" grep -Eq -- "^  (-h, )?$o" <<<"$add"
done
check "add --help: says its exit status" grep -q "^Exit 0 when the action is ARMED" <<<"$add"
err=$(duress add --bogus 2>&1 >/dev/null)
check "add --bogus: exit 2 and points at add --help" test $? -eq 2 -a -n "$(grep "try 'duress add --help'" <<<"$err")"

# --- bad usage points at the command's help --------------------------------------
err=$(duress verify --also x y 2>&1 >/dev/null)
check "verify --also: exit 2" test $? -eq 2
check "verify --also: points at verify --help" grep -q "try 'duress verify --help'" <<<"$err"
err=$(duress sign --bogus x 2>&1 >/dev/null)
check "sign --bogus: exit 2" test $? -eq 2
check "sign --bogus: points at sign --help" grep -q "try 'duress sign --help'" <<<"$err"

# --- the man pages' footer ----------------------------------------------------------
out=$(duress --version)
check "--version: exit 0" test $? -eq 0
version=$(sed -n 's/^duress //p' <<<"$out")
check "--version: a version number" grep -Eq '^[0-9]+\.[0-9]+' <<<"$version"
for page in "$@"; do
	check "$(basename "$page"): .Os pam_duress $version" grep -qx "\.Os pam_duress $version" "$page"
done

tap_end
