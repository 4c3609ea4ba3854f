#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A pam_wrapper started in a private root (tests/lib/root.sh's PRIVATE_NS
# after PRIVATE_RUN_SETUP, where the demo and other root suites run) leaves
# the machine's pam_wrapper directories alone.  TAP; root only (SKIP
# otherwise).
#
# pam_wrapper keeps its copy of the PAM configuration in /tmp/pam.?, with
# the owner's pid in it, and at its first pam_start removes such a
# directory when that pid is not alive.  In a PID namespace of its own,
# every pid of the machine looks dead: a pam_wrapper there deleted the
# configuration of a PAM test running alongside (pam-privilege failed in
# CI with "no default config other").  Here, directories standing for
# such tests (their pid this shell's, alive, and invisible from inside)
# are put at the names the first pids of a PID namespace take, and
# pamtester runs through pam_wrapper in a private root three times.

set -u
export LC_ALL=C

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

if [ "${1:-}" = --inside ]; then
	# Here: the private root's first process.  One line per pamtester run:
	# its exit status.
	for i in 1 2 3; do
		env LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$2" \
			pamtester probe root authenticate >/dev/null 2>&1
		echo "run $i: $?"
	done
	exit 0
fi

require_root "root only: mount and PID namespaces, and directories in the machine's /tmp"
missing=$(missing_tools pamtester unshare findmnt)
[ -z "$missing" ] || skip_all "missing:$missing"
ldconfig -p | grep -qF libpam_wrapper.so || skip_all "missing: libpam_wrapper.so (libpam-wrapper)"
unshare --mount --pid --fork true 2>/dev/null || skip_all "cannot make mount and PID namespaces here"

mkdir "$T/pam.d"
printf 'auth required pam_permit.so\n' >"$T/pam.d/probe"
cp "$T/pam.d/probe" "$T/pam.d/other"

# Only names nobody uses now, and only those are removed at the end; a
# PAM test starting meanwhile passes over them (their pid is alive).
OURS=()
# shellcheck disable=SC2016 # expanded when it runs
at_exit 'for d in "${OURS[@]}"; do rm -rf "$d"; done'
for c in 1 2 3 4 5 6 7 8 9; do
	d=/tmp/pam.$c
	mkdir -m 700 "$d" 2>/dev/null || continue
	OURS+=("$d")
	printf '%s' "$$" >"$d/pid"
	echo "$d" >"$d/mark"
done
[ "${#OURS[@]}" -ge 5 ] || skip_all "most of /tmp/pam.1 to /tmp/pam.9 are taken: PAM tests are running"

# Exactly as private_etc_or_rerun starts a suite.
out=$(timeout "$(bound 60)" "${PRIVATE_NS[@]}" sh -c "$PRIVATE_RUN_SETUP" "$(readlink -f "$0")" --inside "$T/pam.d" 2>&1)
check_why "pamtester through pam_wrapper succeeds three times in the private root" \
	"$out" test "$out" = "$(printf 'run %s: 0\n' 1 2 3)"
gone=""
for d in "${OURS[@]}"; do
	[ "$(cat "$d/mark" 2>/dev/null)" = "$d" ] && [ "$(cat "$d/pid" 2>/dev/null)" = "$$" ] || gone+=" $d"
done
check_why "the machine's live pam_wrapper directories are all still there (${#OURS[@]})" \
	"removed or changed:$gone" test -z "$gone"
check "nothing of the private root's /tmp reached the machine's (no new /tmp/pam.? with its pids)" \
	test -z "$(grep -lx '[1-9]' /tmp/pam.?/pid 2>/dev/null)"
tap_end
