#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check as root in a clone other accounts cannot read (under /root,
# mode 0700): tools/run-checks.sh says so in one line and runs nothing,
# rather than failing the tests that run the tree's programs as test
# accounts.  Root only (SKIP otherwise).
#
#   test_tree_reachable.sh SOURCE_DIR

. "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: only root's make check runs programs as other accounts"
command -v setpriv >/dev/null || skip_all "missing: setpriv"

# A copy of the script in a tree under a directory closed to others; with
# the step man and no man page there, it would run nothing and pass.
mkdir -p "$T/closed/clone/tools"
cp "$1/tools/run-checks.sh" "$T/closed/clone/tools/"
chmod 700 "$T/closed"
PAM_DIRS=$T/none "$T/closed/clone/tools/run-checks.sh" man >"$T/closed.out" 2>&1
rc=$?
check_diag "a tree others cannot read: exit status 2" "$T/closed.out" test "$rc" -eq 2
check_diag "a tree others cannot read: one line that says where to clone" "$T/closed.out" \
	test "$(grep -c 'clone it where every user can read' "$T/closed.out")" -eq 1
check_diag "a tree others cannot read: nothing ran" "$T/closed.out" fails grep -q 'passed' "$T/closed.out"

# The same tree opened to others runs.
chmod 755 "$T/closed"
PAM_DIRS=$T/none "$T/closed/clone/tools/run-checks.sh" man >"$T/open.out" 2>&1
rc=$?
check_diag "the same tree readable by all: it runs" "$T/open.out" test "$rc" -eq 0
tap_end
