#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every place that states the version says the same one (issue 25, item 13):
# Meson's project version, the top entry of debian/changelog (the Debian
# package's version), `duress --version`, the newest released heading of
# CHANGELOG.md, the Fedora spec (Version and its newest %changelog entry),
# the Arch PKGBUILD, and the versions the README and docs name in commands.
# That top debian/changelog entry is newer than the one below it and is not
# UNRELEASED (lintian refuses that distribution).  docs/debian.md,
# "Versions", says when a version is cut.  No root; TAP.
#
#   test_version.sh SOURCE_DIR DURESS MESON_VERSION

set -u
export LC_ALL=C

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

if [ $# -ne 3 ]; then
	echo "usage: $0 SOURCE_DIR DURESS MESON_VERSION" >&2
	exit 2
fi
SRC=$1
DURESS=$2
V=$3

check "Meson's project version ($V) is MAJOR.MINOR.PATCH" \
	grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$V"

# debian/changelog's entries: "pam-duress (VERSION) DISTRIBUTION; urgency=...".
mapfile -t deb_entries < <(sed -n 's/^pam-duress (\([^)]*\)) \([^;]*\);.*/\1 \2/p' "$SRC/debian/changelog")
read -r deb_top deb_dist <<<"${deb_entries[0]:-}"
check "debian/changelog's top entry (the package's version, $deb_top) is Meson's" test "$deb_top" = "$V"
check "debian/changelog's top entry is for a distribution, not UNRELEASED ($deb_dist)" \
	test -n "$deb_dist" -a "$deb_dist" != UNRELEASED
read -r deb_prev _ <<<"${deb_entries[1]:-}"
if [ -z "$deb_prev" ]; then
	skip "debian/changelog has one entry: nothing older to compare with"
elif ! command -v dpkg >/dev/null; then
	skip "no dpkg to compare Debian versions"
else
	check "debian/changelog's top entry ($deb_top) is newer than the one below it ($deb_prev)" \
		dpkg --compare-versions "$deb_top" gt "$deb_prev"
fi

check "duress --version prints \"duress $V\"" test "$("$DURESS" --version)" = "duress $V"

# The first "## [X.Y.Z]" heading: [Unreleased] above it is work not yet in a version.
released=$(sed -n 's/^## \[\([0-9][^]]*\)\].*/\1/p' "$SRC/CHANGELOG.md" | head -n 1)
check "CHANGELOG.md's newest released heading (${released:-none}) is Meson's version" \
	test "$released" = "$V"
check "CHANGELOG.md's newest released heading has its date (## [$V] — YYYY-MM-DD)" \
	grep -qE "^## \[$V\] — [0-9]{4}-[0-9]{2}-[0-9]{2}$" "$SRC/CHANGELOG.md"

SPEC=$SRC/dist/fedora/pam_duress.spec
check "the Fedora spec's Version is $V" test "$(sed -n 's/^Version: *//p' "$SPEC")" = "$V"
check "the Fedora spec's newest %changelog entry is for $V-" \
	test "$(sed -n '/^%changelog/,$p' "$SPEC" | grep -m 1 '^\*' | sed 's/.* - \([^ -]*\)-[^ ]*$/\1/')" = "$V"
check "the Arch PKGBUILD's pkgver is $V" test "$(sed -n 's/^pkgver=//p' "$SRC/dist/arch/PKGBUILD")" = "$V"

# Every version the README, the docs and the recipes name in a file name or
# a "Version X:" line; a historical mention like "fdtree (0.1.0)" is none.
stale=$(grep -rnoE '(pam_duress-|libpam-duress_|^Version )[0-9]+\.[0-9]+\.[0-9]+' \
	"$SRC/README.md" "$SRC/docs" "$SRC/dist" | grep -vE "[-_ ]$V\$")
check "the README, docs and recipes name no other version in a file name or Version line" test -z "$stale"
[ -z "$stale" ] || echo "$stale" | diag

tap_end
