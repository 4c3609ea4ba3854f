#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the Debian packages (source and binary, unsigned) from a copy of
# this source tree, so that the tree itself stays clean: dpkg-buildpackage
# writes into the tree (obj-*/, debian/tmp, ...) and its results into the
# tree's parent directory.
#
#   tools/build-deb.sh [OUTDIR]      (default: build-deb)
#
# The copy leaves out .git and the build directories (build/, build-*/,
# builddir/, obj-*/), so the tree need not be a git checkout.  Afterwards
# OUTDIR holds the .deb, .dsc, .tar.xz, .buildinfo and .changes files and
# the build log, and the last line printed is the path of libpam-duress's
# .deb.  What an earlier run left in OUTDIR is removed first, nothing else.

set -eu

SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-build-deb}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case "$SRC/" in
"$OUT"/*) echo "build-deb.sh: OUTDIR $OUT contains the source tree" >&2; exit 2 ;;
esac

VERSION=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
# Entries under CHANGELOG.md's [Unreleased] are in no version yet: this
# package would say VERSION and hold more (docs/debian.md, "Versions").
if sed -n '/^## \[Unreleased\]/,/^## \[[0-9]/p' "$SRC/CHANGELOG.md" 2>/dev/null | grep -qE '^(- |### )'; then
	echo "build-deb.sh: warning: CHANGELOG.md has changes under [Unreleased]: this package says $VERSION but holds more; cut a version before it goes to anyone (docs/debian.md, Versions)" >&2
fi
rm -rf "$OUT"/pam-duress-[0-9]*/
rm -f "$OUT"/libpam-duress*_*.deb "$OUT"/pam-duress_*.dsc "$OUT"/pam-duress_*.tar.* \
	"$OUT"/pam-duress_*.buildinfo "$OUT"/pam-duress_*.changes "$OUT/build.log"
TREE=$OUT/pam-duress-$VERSION
mkdir "$TREE"
# An OUTDIR inside the tree is one of the excluded build directories or is
# left out by name.
tar -C "$SRC" --exclude=./.git --exclude='./build' --exclude='./build-*' \
	--exclude='./builddir' --exclude='./obj-*' --exclude="./${OUT#"$SRC"/}" -cf - . |
	tar -C "$TREE" -xf -

LOG=$OUT/build.log
if ! (cd "$TREE" && dpkg-buildpackage -us -uc) >"$LOG" 2>&1; then
	tail -n 40 "$LOG" >&2
	echo "build-deb.sh: dpkg-buildpackage failed; the whole log is $LOG" >&2
	exit 1
fi
rm -rf "$TREE"
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
DEB=$OUT/libpam-duress_${VERSION}_$ARCH.deb
[ -f "$DEB" ] || { echo "build-deb.sh: no $DEB after the build" >&2; exit 1; }
echo "$DEB"
