#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make deb on a machine without debhelper (issue 18, item 6): it installs its
# own build dependencies, as make demo and make check do.
#   - tools/deps.sh's deb group covers debian/control's Build-Depends (any
#     user);
#   - as root (SKIP otherwise), in a private mount namespace whose /etc, /usr
#     and /var are throwaway overlays (overlay_system, tests/lib/root.sh),
#     debhelper is removed with dpkg --remove --force-depends; then make deb
#     as nobody fails, naming debhelper and the command that installs it, and
#     as root installs debhelper with apt-get and builds the package.  The
#     machine's own dpkg database and /usr are untouched.  Without a
#     reachable archive (apt-get cannot fetch debhelper) that one assertion
#     is SKIP.
#
#   test_deb_deps.sh SRCDIR

set -u
set -o pipefail
export LC_ALL=C
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"
# A make that runs this test must not hand its jobserver or flags down.
unset MAKEFLAGS MFLAGS MAKELEVEL

# status PACKAGE: dpkg's status word for PACKAGE (installed, config-files, ...).
status() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null; }
# shellcheck disable=SC2317 # called through check_diag
debhelper_gone() { [ "$(status debhelper)" != installed ] && ! command -v dh >/dev/null; }
# shellcheck disable=SC2317 # called through check_diag
# debhelper_installed_by LOG: debhelper is installed, and LOG says deps.sh did it.
debhelper_installed_by() { [ "$(status debhelper)" = installed ] && grep -qxF "deps.sh: installing: debhelper" "$1"; }

# ================================================================================
# Inside a private mount namespace, as root: --inside OUTER_T SRCDIR (a part)
# ================================================================================
inside() {
	local OUTER=$1 SRC=$2 OV LOG=$T/inside.log rc deb
	OV=$(mktemp -d "$OUTER/overlay.XXXXXX") || setup_failed "mktemp"
	overlay_system "$OV" duress-deb || setup_failed "tmpfs-backed overlays on /etc, /usr and /var"

	dpkg --remove --force-depends debhelper >"$LOG" 2>&1
	check_diag "in the namespace, debhelper is removed (dh is gone)" "$LOG" debhelper_gone

	as_user nobody "$MAKE" --no-print-directory -C "$SRC" deb DEBDIR="$OUTER/deb-nobody" >"$LOG" 2>&1
	rc=$?
	# shellcheck disable=SC2016 # $1 belongs to the inner shell
	check_diag "as nobody, make deb fails before building (exit $rc), naming debhelper and the command" "$LOG" \
		sh -c '[ "$1" -ne 0 ] && grep -qxF "deps.sh: missing Debian packages: debhelper" "$2" &&
			grep -qxF "sudo apt-get install -y --no-install-recommends debhelper" "$2" &&
			! grep -q dpkg-buildpackage "$2"' sh "$rc" "$LOG"

	"$MAKE" --no-print-directory -C "$SRC" deb DEBDIR="$OUTER/deb" >"$LOG" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qE "Failed to fetch|Temporary failure resolving|Unable to locate package|Could not resolve" "$LOG"; then
		skip "as root, make deb installs debhelper: apt-get cannot fetch it here"
		return
	fi
	check_diag "as root, make deb installs debhelper itself (deps.sh: installing: debhelper)" "$LOG" \
		debhelper_installed_by "$LOG"
	deb=$(tail -n 1 "$LOG")
	check_diag "... and builds the package (exit $rc, $deb)" "$LOG" \
		test "$rc" -eq 0 -a -f "$deb" -a "${deb%.deb}" != "$deb"
}

if [ "${1:-}" = "--inside" ]; then
	shift
	MAKE=$3
	inside "$1" "$2"
	exit 0
fi

SRC=$(readlink -f "$1") MAKE=${2:-make}

# --- the deb group and debian/control -------------------------------------------------
# Build-Depends, one package a line, without versions or architectures;
# debhelper-compat is a virtual package of debhelper.
sed -n '/^Build-Depends:/,/^[^ ]/p' "$SRC/debian/control" | sed '$d; s/^Build-Depends://' |
	tr ',' '\n' | sed 's/[[(<].*//; s/[[:space:]]//g; /^$/d; s/^debhelper-compat$/debhelper/' |
	sort -u >"$T/build-depends"
"$SRC/tools/deps.sh" --list deb 2>&1 | sort -u >"$T/deb-group"
check "debian/control has Build-Depends ($(paste -sd ' ' "$T/build-depends"))" test -s "$T/build-depends"
comm -23 "$T/build-depends" "$T/deb-group" >"$T/not-in-group"
check_diag "tools/deps.sh's deb group has every Build-Depends" "$T/not-in-group" test ! -s "$T/not-in-group"
comm -23 <(printf '%s\n' build-essential dpkg-dev fakeroot) "$T/deb-group" >"$T/not-in-group"
check_diag "... and dpkg-buildpackage's own: build-essential, dpkg-dev, fakeroot" "$T/not-in-group" \
	test ! -s "$T/not-in-group"

# --- make deb without debhelper ---------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	skip "make deb without debhelper: needs root (a private mount namespace)"
	tap_end
	exit
fi
missing=$(missing_tools dpkg dpkg-query apt-get setpriv unshare mount findmnt pkg-config "$MAKE")
if [ -n "$missing" ]; then
	skip "make deb without debhelper: missing tools:$missing"
	tap_end
	exit
fi
if ! as_user nobody "$SRC/tools/deps.sh" deb >"$T/deps.out" 2>&1; then
	skip "make deb without debhelper: the deb group is not all installed here: $(tr '\n' ' ' <"$T/deps.out")"
	tap_end
	exit
fi
if why=$(overlay_unusable); then
	skip "make deb without debhelper: $why"
	tap_end
	exit
fi
before=$(status debhelper; command -v dh)
t_start=$(date +%s)
tap_part timeout -k 10 "$(bound 240)" unshare -m --propagation private -- \
	"$(readlink -f "$0")" --inside "$T" "$SRC" "$MAKE"
check "the namespace part ran to its end (exit $PART_STATUS, $(($(date +%s) - t_start)) s)" test "$PART_STATUS" -eq 0
check "the machine's debhelper is untouched" test "$before" = "$(status debhelper; command -v dh)"
tap_end
