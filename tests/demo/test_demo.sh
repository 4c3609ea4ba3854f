#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `make demo` as the README promises it: it passes as whoever runs it.
#
#   test_demo.sh SOURCE_DIR BUILD_DIR
#
# The demo (tests/demo/demo.sh) as the caller; as root, also as an ordinary
# user without a password (nobody), as one with a password set, and as root
# beside a locked account named alice, the demo's own user's name (accounts
# added in a private mount namespace with /etc overlaid, so that nothing is
# left however this test ends; tests/lib/root.sh).  Each run must end "demo: OK"
# with all four of its rows ok: the row that failed for every non-root user
# was "sign real password", whose check went to pam_unix's setgid helper,
# which reads the machine's shadow file and not the demo's.
#
# SKIP in the asan step: pamtester cannot load a sanitizer-built module.

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

[ $# -eq 2 ] || {
	echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2
	exit 2
}
# As root, in a private mount namespace with /etc overlaid: the account
# with a password exists there only.
[ "$(id -u)" -eq 0 ] && private_etc_or_rerun "$@"
SRC=$(cd "$1" && pwd) BUILD=$(cd "$2" && pwd)
DEMO=$SRC/tests/demo/demo.sh

sanitizer_built "$BUILD/src/pam_duress.so" && skip_all "the demo's pamtester cannot load a sanitizer-built module"
missing=$(missing_tools pamtester)
[ -z "$missing" ] || skip_all "missing:$missing (tools/deps.sh demo)"

# demo_as WHO LOG [COMMAND PREFIX...]: the demo's four rows all ok, as WHO.
demo_as() {
	local who=$1 log=$2
	shift 2
	"$@" env -i PATH=/usr/bin:/bin TMPDIR="$T" bash "$DEMO" "$BUILD" >"$log" 2>&1
	check_diag "demo as $who: it says OK" "$log" grep -q '^demo: OK' "$log"
	check_diag "demo as $who: duress sign refuses the fake account's real password" "$log" \
		grep -Eq '^ *0: sign real password +refused +ok$' "$log"
	check_diag "demo as $who: the duress login ran the action, the others did not" "$log" \
		test "$(grep -Ec '^ *[123]: .* ok$' "$log")" -eq 3
}

demo_as "$(id -un)" "$T/caller.log"

if [ "$(id -u)" -ne 0 ]; then
	skip "as other users: not root"
	tap_end
	exit
fi

# The runs as other users write in $T (0755) and read the build tree.
chmod 1777 "$T"
if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$DEMO" -a -x "$BUILD"; then
	skip "as other users: $SRC is not readable by other users (see README.md, Build)"
	tap_end
	exit
fi

demo_as "nobody (no password)" "$T/nobody.log" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --

if ! useradd -M -d /nonexistent -s /bin/sh dtest_demo >"$T/useradd.log" 2>&1 ||
	! printf 'dtest_demo:%s\n' "$(random_password)" | chpasswd; then
	setup_failed "an account with a password" "$T/useradd.log"
fi
demo_as "a user with a password" "$T/user.log" \
	setpriv --reuid="$(id -u dtest_demo)" --regid="$(id -g dtest_demo)" --clear-groups --

# As root on a machine with a locked account named alice (useradd gives it
# "!"): the module reads the machine's shadow entry (nss_wrapper does not wrap
# getspnam_r), which made the duress login fail as a locked account's; the
# demo's fake user takes another name there.
if getent passwd alice >/dev/null || getent shadow alice >/dev/null; then
	skip "as root beside a locked alice: the machine has an account alice"
elif ! useradd -M -d /nonexistent -s /bin/sh alice >"$T/useradd-alice.log" 2>&1; then
	setup_failed "a locked account named alice" "$T/useradd-alice.log"
else
	demo_as "root, beside a locked account alice" "$T/root-alice.log"
	check_diag "demo as root beside a locked alice: its fake user is another name" "$T/root-alice.log" \
		grep -Eq '^user: +alice-demo-[0-9a-f]{6}, uid 20001' "$T/root-alice.log"
fi

tap_end
