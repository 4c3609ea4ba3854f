#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Switching between the Debian package's pam-auth-update profiles (issue 25,
# item 10): with duress-laptop enabled, "pam-auth-update --enable duress"
# changes nothing (the profiles conflict, and pam-auth-update keeps the one
# of higher priority, the laptop's), so README.md gives the commands that
# switch.  They are taken from README.md and run as written (but for sudo)
# in a private mount namespace: /etc an overlay with a tmpfs upper layer,
# /usr/share/pam-configs, /var/lib/pam and /var/cache/debconf bind-mounted
# copies, so nothing of the machine changes (checked: its PAM stack and
# pam-auth-update's state the same before and after).  The profiles are
# debian/pam-configs' own: the package need not be installed.  Root only
# (SKIP otherwise).  TAP output.
#   test_profile_switch.sh README.md DEBIAN_PAM_CONFIGS_DIR
set -u
README=$(realpath "$1")
PROFILES=$(realpath "$2")
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root (mount namespaces)"
command -v pam-auth-update >/dev/null || skip_all "pam-auth-update not installed (Debian: libpam-runtime)"
unshare -m --propagation private true 2>/dev/null ||
	skip_all "no private mount namespace here (unshare -m --propagation private)"

# The README's commands: the code lines "sudo pam-auth-update --disable A --enable B".
readme_switch() { # readme_switch FROM TO: the command, without sudo and its comment
	grep -E "^sudo pam-auth-update --disable $1 --enable $2( |\$)" "$README" | head -n 1 |
		sed -e 's/^sudo //' -e 's/ *#.*$//'
}
TO_SERVER=$(readme_switch duress-laptop duress)
TO_LAPTOP=$(readme_switch duress duress-laptop)
check_why "README.md gives the command that switches from the laptop profile to the server one" \
	"no line 'sudo pam-auth-update --disable duress-laptop --enable duress' in $README" test -n "$TO_SERVER"
check_why "README.md gives the command that switches back" \
	"no line 'sudo pam-auth-update --disable duress --enable duress-laptop' in $README" test -n "$TO_LAPTOP"

# What a mistake here could change on the machine.  Files that name pam_duress
# are left out (other tests of a shared machine add and remove theirs), and so
# is debconf's database, which pam-auth-update run outside a namespace (by
# another test, or an admin) rewrites: the namespace has its own copy.
state() {
	find /etc/pam.d /var/lib/pam /usr/share/pam-configs -xdev -type f ! -name '*duress*' \
		! -exec grep -q pam_duress {} \; -print0 | sort -z | xargs -0 sha256sum
}
state >"$T/before"

R=$T/r
mkdir "$R"
export T R PROFILES TO_SERVER TO_LAPTOP DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2016 # expanded by the inner shell
timeout "$(bound 120)" unshare -m --propagation private bash -c '
	set -e
	mkdir "$T/ns"
	mount -t tmpfs -o mode=700 tmpfs "$T/ns"
	mkdir "$T/ns/upper" "$T/ns/work"
	mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/ns/upper,workdir=$T/ns/work" /etc
	for d in /usr/share/pam-configs /var/lib/pam /var/cache/debconf; do
		c=$T/ns/copy${d//\//_}
		mkdir "$c"
		cp -a "$d/." "$c/"
		mount --bind "$c" "$d"
	done
	# The stack as on a machine without the package, then its profiles.
	rm -f /usr/share/pam-configs/duress*
	pam-auth-update --package >/dev/null 2>&1 || true
	cp "$PROFILES"/* /usr/share/pam-configs/
	auth_lines() { grep -E "^auth.*pam_(unix|duress)\.so" /etc/pam.d/common-auth | tr -s " \t" " " | sed -e "s/ \[[^]]*\]//" -e "s/ *$//" >"$R/$1"; }
	pam-auth-update --enable duress-laptop >"$R/log" 2>&1
	auth_lines laptop
	pam-auth-update --enable duress >>"$R/log" 2>&1
	auth_lines enable-only
	$TO_SERVER >>"$R/log" 2>&1
	auth_lines server
	$TO_LAPTOP >>"$R/log" 2>&1
	auth_lines laptop-again
' >"$T/ns.log" 2>&1
rc=$?
check_diag "the namespace part ran" "$T/ns.log" test "$rc" -eq 0

LAPTOP="auth pam_duress.so user_dir=/var/lib/duress/%u
auth pam_unix.so nullok try_first_pass"
SERVER="auth pam_unix.so nullok
auth pam_duress.so"
lines_are() { [ "$(cat "$R/$1" 2>/dev/null)" = "$2" ]; }
# switched_to COMMAND FILE LINES: COMMAND came from README.md and left LINES.
switched_to() { [ -n "$1" ] && lines_are "$2" "$3"; }
check_why "duress-laptop enabled: its line before pam_unix" "got: $(cat "$R/laptop" 2>&1)" lines_are laptop "$LAPTOP"
check_why "then --enable duress alone: nothing changes (the conflict keeps the laptop's profile)" \
	"got: $(cat "$R/enable-only" 2>&1)" lines_are enable-only "$LAPTOP"
check_why "the README's command ($TO_SERVER): the server's line after pam_unix, one pam_duress line" \
	"got: $(cat "$R/server" 2>&1)" switched_to "$TO_SERVER" server "$SERVER"
check_why "the README's command back ($TO_LAPTOP): the laptop's line again" \
	"got: $(cat "$R/laptop-again" 2>&1)" switched_to "$TO_LAPTOP" laptop-again "$LAPTOP"
state >"$T/after"
check_same "the machine's PAM stack and pam-auth-update's state are as before" "$T/before" "$T/after"

tap_end
