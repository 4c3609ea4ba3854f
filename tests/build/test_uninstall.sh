#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make install into two staging roots A and B, then make uninstall of A: A
# must be left with no file of ours (and without our own directories), B
# untouched; then make uninstall of B keeps a file that is not ours.
#
#   test_uninstall.sh SRCDIR BUILDDIR MAKE PREFIX RUNNER_DIR DOCDIR

set -u
SRC=$1 BUILD=$2 MAKE=$3 PREFIX=$4 RUNNER_DIR=$5 DOCDIR=$6
# shellcheck source=tests/lib/tap.sh
. "$SRC/tests/lib/tap.sh"
# A make that runs this test must not hand its jobserver or flags down.
unset MAKEFLAGS MFLAGS MAKELEVEL

A=$T/a B=$T/b

run_make() { # run_make TARGET DESTDIR
	"$MAKE" -s --no-print-directory -C "$SRC" BUILDDIR="$BUILD" PREFIX="$PREFIX" \
		DESTDIR="$2" "$1" >"$T/make.log" 2>&1 || { cat "$T/make.log" >&2; return 1; }
}
# Files and symlinks under a root, with their content (or link target).
snapshot() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '%y %m %p %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0r sha256sum)
}
ours_left() { # the files and symlinks under $1
	find "$1" \( -type f -o -type l \) -print
}

check "make install DESTDIR=a" run_make install "$A"
check "make install DESTDIR=b" run_make install "$B"

for f in "$PREFIX/bin/duress" "$RUNNER_DIR/session-helper" "$PREFIX/share/man/man1/duress.1" \
	"$PREFIX/share/man/man8/pam_duress.8" "$DOCDIR/README.md" "$DOCDIR/SECURITY.md" \
	"$DOCDIR/CHANGELOG.md"; do
	check "installed: $f" test -f "$A$f"
done
# meson.build lists docs/*.md by name: one added to docs/ must be listed too.
for f in "$SRC"/docs/*.md; do
	check "installed: docs/${f##*/}" test -f "$A$DOCDIR/docs/${f##*/}"
done
for f in "$PREFIX/bin/duress_sign" "$PREFIX/share/man/man1/duress_sign.1"; do
	check "installed symlink: $f" test -L "$A$f"
done
module=$(find "$A" -name pam_duress.so -type f)
check "installed: the module (${module#"$A"})" test -n "$module"
moduledir=$(dirname "$module")

before_b=$(snapshot "$B")
check "make uninstall DESTDIR=a" run_make uninstall "$A"
left=$(ours_left "$A")
if [ -z "$left" ]; then ok "no file left under a"; else not_ok "left under a: $left"; fi
check "runner directory removed" test ! -e "$A$RUNNER_DIR"
check "doc directory removed" test ! -e "$A$DOCDIR"
check "PAM module directory itself kept" test -d "$moduledir"
check "b untouched by the uninstall of a" test "$before_b" = "$(snapshot "$B")"
check "make uninstall again (nothing installed) succeeds" run_make uninstall "$A"

echo 'not ours' >"$B$DOCDIR/NOTES"
check "make uninstall DESTDIR=b" run_make uninstall "$B"
left=$(ours_left "$B")
if [ "$left" = "$B$DOCDIR/NOTES" ]; then
	ok "only the foreign file is left under b"
else
	not_ok "left under b: $left"
fi
check "doc directory with a foreign file kept" test -d "$B$DOCDIR"
check "runner directory removed from b" test ! -e "$B$RUNNER_DIR"

tap_end
