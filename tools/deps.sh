#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install the Debian packages that the build, the tests and the demo need.
# Quiet when everything is already there.  As root it installs what is missing
# (apt-get update first, only then); otherwise it prints the command to run.
#
#   tools/deps.sh          install missing packages (root) or say how
#   tools/deps.sh --list   print the package list and exit

set -eu

PACKAGES="
build-essential meson ninja-build pkg-config
libpam0g-dev libsodium-dev libpwquality-dev libcrypt-dev
libcmocka-dev libpam-wrapper libpamtest0-dev libnss-wrapper pamtester
mandoc valgrind cppcheck clang clang-tidy libclang-rt-14-dev
openssh-server openssh-client sshpass expect
passwd login util-linux procps bsdutils
cracklib-runtime python3 xxd openssl sudo
"

if [ "${1:-}" = "--list" ]; then
	# shellcheck disable=SC2086 # one package a line
	printf '%s\n' $PACKAGES
	exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: dpkg-query not found: this script knows only Debian and derivatives;" >&2
	# shellcheck disable=SC2086,SC2116 # the list on one line
	echo "deps.sh: install the equivalents of: $(echo $PACKAGES)" >&2
	exit 1
fi

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = "installed" ] || missing="$missing $p"
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing Debian packages:$missing" >&2
	echo "deps.sh: install them with:" >&2
	echo "sudo apt-get install -y --no-install-recommends$missing"
	exit 1
fi

echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the list is intended
apt-get install -y -qq --no-install-recommends $missing
