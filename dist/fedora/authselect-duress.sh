#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Adds pam_duress to the system-auth and password-auth templates of an
# authselect custom profile, for local accounts only:
#
#   dist/fedora/authselect-duress.sh [--before] [--options 'OPTS'] PROFILE_DIR
#
# PROFILE_DIR is what `authselect create-profile duress -b BASE` made
# (/etc/authselect/custom/duress).  Default placement: right after pam_unix, as
# "sufficient"; --before puts it right before pam_unix as
# [success=done default=ignore] and adds try_first_pass to pam_unix, which then
# checks the password pam_duress read instead of asking again.  OPTS are module
# options (e.g. 'services=login,gdm-password').
#
# In the password section, "password requisite pam_duress.so OPTS" goes right
# after pam_pwquality (or first): a new password that is a duress password
# is refused before pam_unix stores it.
#
# The templates of the sssd profile skip pam_unix for accounts that are not
# local with "[default=N ...] pam_localuser.so"; the new line sits in the
# skipped range, so each such N grows by one and non-local (SSSD) accounts skip
# pam_duress too.  No other jump crosses the place of the new line in
# authselect's profiles; a template that already names pam_duress, or does
# not have exactly one "auth ... pam_unix.so" and one "password ... pam_unix.so"
# line, is left alone (exit 1).

set -eu

placement=after
options=""
while [ $# -gt 1 ]; do
	case $1 in
	--before) placement=before ;;
	--options) options=" $2"; shift ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || { echo "usage: $0 [--before] [--options 'OPTS'] PROFILE_DIR" >&2; exit 2; }
dir=$1

edit() { # edit TEMPLATE: prints the edited template
	awk -v placement="$placement" -v options="$options" '
	function fail(msg) { print FILENAME ": " msg > "/dev/stderr"; failed = 1; exit 1 }
	$1 ~ /^(auth|password)$/ && /pam_duress\.so/ { fail("already has pam_duress") }
	$1 == "auth" && /(^|[[:space:]])pam_unix\.so([[:space:]]|$)/ { unix++ }
	$1 == "password" && /(^|[[:space:]])pam_unix\.so([[:space:]]|$)/ { punix++ }
	# The password line goes right after pam_pwquality (which asks, and asks
	# again after a weak password), or first: before pam_localuser, whose
	# default=1 must still jump over pam_unix alone.
	$1 == "password" && !pwline { pwline = NR }
	$1 == "password" && /pam_pwquality\.so/ { pwline = NR + 1 }
	{ lines[NR] = $0 }
	END {
		if (failed) exit 1
		if (unix != 1) fail("expected one auth pam_unix.so line, found " unix)
		if (punix != 1) fail("expected one password pam_unix.so line, found " punix)
		after = sprintf("%-12s%-45s%s", "auth", "sufficient", "pam_duress.so" options)
		before = sprintf("%-12s%-45s%s", "auth", "[success=done default=ignore]", "pam_duress.so" options)
		password = sprintf("%-12s%-45s%s", "password", "requisite", "pam_duress.so" options)
		for (i = 1; i <= NR; i++) {
			line = lines[i]
			if (i == pwline)
				print password
			split(line, f, /[[:space:]]+/)
			if (f[1] == "auth" && line ~ /pam_localuser\.so/ && match(line, /default=[0-9]+/)) {
				n = substr(line, RSTART + 8, RLENGTH - 8) + 1
				line = substr(line, 1, RSTART - 1) "default=" n substr(line, RSTART + RLENGTH)
			}
			if (f[1] == "auth" && line ~ /(^|[[:space:]])pam_unix\.so([[:space:]]|$)/) {
				if (placement == "before") {
					print before
					sub(/pam_unix\.so/, "pam_unix.so try_first_pass", line)
					print line
				} else {
					print line
					print after
				}
				continue
			}
			print line
		}
	}' "$1"
}

for t in system-auth password-auth; do
	[ -f "$dir/$t" ] || { echo "$0: $dir/$t not found" >&2; exit 1; }
	[ -L "$dir/$t" ] && { echo "$0: $dir/$t is a symlink to the base profile: create the profile without --symlink-pam" >&2; exit 1; }
done
# Both templates or neither.
trap 'rm -f "$dir/system-auth.duress-new" "$dir/password-auth.duress-new"' EXIT
for t in system-auth password-auth; do
	edit "$dir/$t" >"$dir/$t.duress-new"
done
for t in system-auth password-auth; do
	mv "$dir/$t.duress-new" "$dir/$t"
	echo "$dir/$t: pam_duress added $placement pam_unix"
done
