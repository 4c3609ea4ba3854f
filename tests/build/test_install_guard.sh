#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make install on a machine as a newcomer finds it (issue 18, item 6):
#   - without root and without DESTDIR it stops with one line (not meson's
#     traceback) and a non-zero exit; with DESTDIR (a packager's staged
#     install) it installs as before;
#   - as root it refuses to overwrite a module that a Debian package owns,
#     says what to do, and installs once the file is the admin's again
#     (dpkg-divert --local --rename) or staged with DESTDIR.
# Not root: the first part runs as this user and the rest is SKIP.  As root
# the non-root part runs as nobody and the package part in a private mount
# namespace whose /etc, /usr and /var are throwaway overlays
# (overlay_system, tests/lib/root.sh), where a stand-in libpam-duress that
# owns the module's path is installed with dpkg.
#
#   test_install_guard.sh SRCDIR BUILDDIR MAKE PREFIX MODULE

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

SRC=$1 BUILD=$2 MAKE=$3 PREFIX=$4 MODULE=$5
# make_install [VAR=VALUE...]: the Makefile's install of this build directory
# (its prefix, so nothing is reconfigured).
make_install() {
	"$MAKE" --no-print-directory -C "$SRC" BUILDDIR="$BUILD" PREFIX="$PREFIX" "$@" install
}
# one_line FILE WORD...: FILE is a single line holding every WORD.
# shellcheck disable=SC2317 # called through check_diag
one_line() {
	local f=$1 w
	shift
	[ "$(wc -l <"$f")" -eq 1 ] || return 1
	for w; do grep -qF -- "$w" "$f" || return 1; done
}

# ================================================================================
# Inside a private mount namespace, as root: --inside OUTER_T SRCDIR BUILDDIR
# MAKE PREFIX MODULE (a part, tap_part)
# ================================================================================
inside() {
	local OV MOD FAKE LOG=$T/inside.log rc
	# In the outer test's directory: this process's own is removed while
	# the overlays are still mounted.
	OV=$(mktemp -d "$OUTER/overlay.XXXXXX") || setup_failed "mktemp"
	overlay_system "$OV" duress-guard || setup_failed "tmpfs-backed overlays on /etc, /usr and /var"
	MOD=$(python3 -c 'import json, sys; print(next(d for d in json.load(open(sys.argv[1])).values() if d.endswith("/pam_duress.so")))' \
		"$BUILD/meson-info/intro-installed.json") || setup_failed "the module's destination"

	# A stand-in libpam-duress: the module's path, owned by the package.
	FAKE=$T/fake
	mkdir -p "$FAKE/DEBIAN" "$FAKE$(dirname "$MOD")"
	echo "the packaged module" >"$FAKE$MOD"
	printf 'Package: libpam-duress\nVersion: 0.0.0-test\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: stand-in\n stand-in owning the module path\n' \
		>"$FAKE/DEBIAN/control"
	{ dpkg-deb -b "$FAKE" "$T/fake.deb" && dpkg -i "$T/fake.deb"; } >"$LOG" 2>&1 ||
		setup_failed "install the stand-in libpam-duress" "$LOG"
	cp "$FAKE$MOD" "$T/packaged"
	# shellcheck disable=SC2016 # $1 belongs to the inner shell
	check "dpkg -S $MOD: libpam-duress" sh -c 'dpkg -S "$1" | grep -q "^libpam-duress: "' sh "$MOD"

	make_install >"$LOG" 2>&1
	rc=$?
	check_diag "as root, make install over libpam-duress's module fails" "$LOG" test "$rc" -ne 0
	check_same "the packaged module is not overwritten" "$T/packaged" "$MOD"
	# shellcheck disable=SC2016 # $1 and $2 belong to the inner shell
	check_diag "it names the file and the package, and says what to do" "$LOG" \
		sh -c 'grep -qF "$1 belongs to the package libpam-duress" "$2" &&
			grep -qF "sudo apt-get remove libpam-duress" "$2" && grep -qF "DESTDIR=DIR" "$2"' sh "$MOD" "$LOG"

	make_install DESTDIR="$T/staged" >"$LOG" 2>&1
	check_diag "as root, make install DESTDIR=... still stages everything with the package there" "$LOG" \
		cmp -s "$MODULE" "$T/staged$MOD"

	dpkg-divert --local --rename --add "$MOD" >"$LOG" 2>&1 || setup_failed "dpkg-divert" "$LOG"
	make_install >"$LOG" 2>&1
	check_diag "after dpkg-divert --local --rename, make install installs the module" "$LOG" cmp -s "$MODULE" "$MOD"
	check_same "... and the package's copy is kept as $MOD.distrib" "$T/packaged" "$MOD.distrib"
}

if [ "${1:-}" = "--inside" ]; then
	shift
	OUTER=$1 SRC=$2 BUILD=$3 MAKE=$4 PREFIX=$5 MODULE=$6
	inside
	exit 0
fi

# ================================================================================
# Without root
# ================================================================================
LOG=$T/make.log
if [ "$(id -u)" -ne 0 ]; then
	make_install >"$LOG" 2>&1
	rc=$?
	check_diag "not root, make install fails (exit $rc)" "$LOG" test "$rc" -ne 0
	check_diag "... with one line that says: as root, or DESTDIR" "$LOG" one_line "$LOG" "sudo make install" "DESTDIR=DIR"
	make_install DESTDIR="$T/staged" >"$LOG" 2>&1
	# shellcheck disable=SC2016 # $1 and $2 belong to the inner shell
	check_diag "not root, make install DESTDIR=... stages the module" "$LOG" \
		sh -c 'cmp -s "$1" "$(find "$2" -name pam_duress.so | head -n 1)"' sh "$MODULE" "$T/staged"
	skip "the package part needs root"
	tap_end
	exit
fi

missing=$(missing_tools setpriv unshare mount findmnt dpkg dpkg-deb dpkg-divert pkg-config python3)
[ -z "$missing" ] || skip_all "missing tools:$missing"
NOBODY=nobody
getent passwd "$NOBODY" >/dev/null || skip_all "no user nobody"
as_user "$NOBODY" test -r "$SRC/Makefile" -a -r "$BUILD/build.ninja" ||
	skip_all "nobody cannot read $SRC or $BUILD"

as_user "$NOBODY" "$MAKE" --no-print-directory -C "$SRC" BUILDDIR="$BUILD" PREFIX="$PREFIX" install >"$LOG" 2>&1
rc=$?
check_diag "as nobody, make install fails (exit $rc)" "$LOG" test "$rc" -ne 0
check_diag "... with one line that says: as root, or DESTDIR" "$LOG" one_line "$LOG" "sudo make install" "DESTDIR=DIR"

# A staged install as nobody: nobody cannot write this build directory's
# install log, so a tmpfs of its own goes over meson-logs in a namespace.
mkdir "$T/staged" && chown "$NOBODY" "$T/staged"
# shellcheck disable=SC2016 # $1... belong to the inner shell
unshare -m --propagation private -- sh -c 'mount -t tmpfs -o mode=1777 duress-logs "$1/meson-logs" &&
	exec setpriv --reuid="$2" --regid="$(id -g "$2")" --init-groups -- env -i PATH=/usr/bin:/bin HOME=/ \
	"$3" --no-print-directory -C "$4" BUILDDIR="$1" PREFIX="$5" DESTDIR="$6" install' \
	sh "$BUILD" "$NOBODY" "$MAKE" "$SRC" "$PREFIX" "$T/staged" >"$LOG" 2>&1
# shellcheck disable=SC2016 # $1 and $2 belong to the inner shell
check_diag "as nobody, make install DESTDIR=... stages the module" "$LOG" \
	sh -c 'cmp -s "$1" "$(find "$2" -name pam_duress.so | head -n 1)"' sh "$MODULE" "$T/staged"

# ================================================================================
# As root, over a package's module
# ================================================================================
if why=$(overlay_unusable); then
	skip "package part: $why"
	tap_end
	exit
fi
tap_part timeout -k 10 "$(bound 120)" unshare -m --propagation private -- \
	"$(readlink -f "$0")" --inside "$T" "$SRC" "$BUILD" "$MAKE" "$PREFIX" "$MODULE"
check "the namespace part ran to its end (exit $PART_STATUS)" test "$PART_STATUS" -eq 0
tap_end
