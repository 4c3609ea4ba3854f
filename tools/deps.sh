#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install the Debian packages that one use of the tree needs.  Groups:
#   build   make, make install: the module, the CLI, the man pages
#   demo    make demo (pam_wrapper, nss_wrapper, pamtester); includes build
#   deb     make deb: debian/control's Build-Depends (debhelper for
#           debhelper-compat, the rest is build's) and dpkg-buildpackage's
#           own needs (dpkg-dev, build-essential, fakeroot); includes build
#   boot    the VM boot test (tests/boot, issue 19): QEMU (TCG), the real
#           mkinitramfs with cryptsetup's hooks, static busybox for the
#           test root, mke2fs -d, depmod for the fetched cloud kernel.
#           Installing initramfs-tools and cryptsetup-initramfs runs
#           update-initramfs for the kernels installed on this machine (none
#           in a container: a no-op there; on a desktop it regenerates the
#           initramfs, as a kernel upgrade does); the test itself never
#           touches /etc, /boot or the machine's initramfs (it builds in a
#           private mount namespace over an overlay of /); dracut-core for
#           the dracut boot test (boot-dracut-duress: an initramfs with systemd and
#           systemd-cryptsetup in it, as Fedora boots): it is dracut's
#           builder and lsinitrd without the dracut package, which conflicts
#           with initramfs-tools, and it does not touch the machine's
#           initramfs on install; systemd too (dracut-core only recommends
#           it): its systemd-cryptsetup and password agents go in the image
#   check   make check: the test suites, sanitizers, valgrind, static
#           analysis, the root end-to-end tests, the Debian and RPM package
#           tests, the VM boot test; includes all the others.  For the
#           decoy-keyring example's test, the real GNOME keyring daemon,
#           secret-tool, gdbus and dbus-daemon; not its PAM module, whose
#           package would run pam-auth-update and change this machine's PAM
#           stack: the test fetches and unpacks it (apt-get download)
# Quiet when everything is already there.  As root it installs what is missing
# (apt-get update first, only then); otherwise it prints the command to run
# and exits 1.
#
#   tools/deps.sh [GROUP]          install the missing packages of GROUP (check)
#   tools/deps.sh --list [GROUP]   print GROUP's packages, one a line, and exit

set -eu

BUILD="
build-essential meson ninja-build pkg-config python3
libpam0g-dev libsodium-dev libpwquality-dev libcrypt-dev
"
DEMO="
libpam-wrapper libnss-wrapper pamtester openssl
"
DEB="
debhelper dpkg-dev fakeroot
"
CHECK="
libcmocka-dev libpamtest0-dev
mandoc valgrind cppcheck clang clang-tidy clang-format libclang-rt-14-dev
openssh-server openssh-client sshpass expect
passwd login util-linux procps bsdutils
cracklib-runtime xxd sudo
lintian rpm
curl wget iproute2 cryptsetup-bin coreutils
cpio initramfs-tools-core
gnome-keyring libsecret-tools libglib2.0-bin dbus-daemon
"
BOOT="
qemu-system-x86 initramfs-tools cryptsetup-initramfs cryptsetup-bin
busybox-static zstd cpio kmod e2fsprogs python3 dracut-core systemd
"

usage() {
	echo "usage: tools/deps.sh [--list] [build|demo|deb|boot|check]" >&2
	exit 2
}

# packages GROUP: the packages of GROUP and of the groups it includes.
packages() {
	case $1 in
	build) echo "$BUILD" ;;
	demo) echo "$BUILD $DEMO" ;;
	deb) echo "$BUILD $DEB" ;;
	boot) echo "$BOOT" ;;
	check) echo "$BUILD $DEMO $DEB $CHECK $BOOT" ;;
	*) usage ;;
	esac
}

list=false
if [ "${1:-}" = "--list" ]; then
	list=true
	shift
fi
[ $# -le 1 ] || usage
PACKAGES=$(packages "${1:-check}")

if $list; then
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
