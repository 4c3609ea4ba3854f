#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The README's commands as a new user meets them: in a fresh Debian 12 root
# (mmdebstrap's `important` set, plus git, sudo and openssh), from a clone
# of this repository's HEAD, as root: `apt-get update && apt-get install
# make git`, then `make demo`; as an ordinary account `u`, its own clone and
# `make demo` without a password, then with a random one; as root, `make
# check`, timed.  Prints each step's exit status and the tail of its
# output; the whole logs stay in ROOT/root/*.log.
#
#   sudo tools/fresh-root.sh [ROOT]      (default /srv/fresh; made if absent)
#
# Needs root, mmdebstrap and the Debian mirror.  Nothing of the machine
# changes but ROOT: every mount is made in a private mount namespace, and
# ROOT is bound onto itself there, because on a real machine / is a mount
# point and `unshare --propagation private` (which the root suites use)
# refuses a root that is not.  Made again from nothing: rm -rf ROOT first.
# An existing ROOT is used only if this script made it.
set -eu
R=${1:-/srv/fresh}
SRC=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
MIRROR=http://deb.debian.org/debian
[ "$(id -u)" -eq 0 ] || {
	echo "fresh-root: run as root" >&2
	exit 1
}
command -v mmdebstrap >/dev/null || {
	echo "fresh-root: needs mmdebstrap (apt-get install mmdebstrap)" >&2
	exit 1
}
# The root adds an account and removes a tree: only ever in a root this
# script made (its mark), never in one given by mistake, such as /.
MARK=.made-by-fresh-root
if [ ! -e "$R" ]; then
	echo "== $(date +%T) mmdebstrap into $R"
	mmdebstrap --variant=important --include=git,sudo,openssh-client,openssh-server bookworm "$R" \
		"deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
		"deb $MIRROR-security bookworm-security main"
	: >"$R/$MARK"
fi
if [ ! -e "$R/$MARK" ] || [ "$(readlink -f "$R")" = / ]; then
	echo "fresh-root: $R exists and was not made by this script; give a new path" >&2
	exit 1
fi
rm -rf "$R/srcrepo"
git clone -q --bare "$SRC" "$R/srcrepo"
cp /etc/resolv.conf "$R/etc/resolv.conf"

# What runs inside the root, as root.
cat >"$R/root/fresh-steps.sh" <<'EOF'
set -u
export DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
step() { # step NAME COMMAND...: runs it, logged to /root/NAME.log
	local name=$1 start rc
	shift
	echo "== $(date +%T) $name"
	start=$(date +%s)
	"$@" >"/root/$name.log" 2>&1
	rc=$?
	echo "$name: exit $rc in $(($(date +%s) - start)) s"
	tail -n 3 "/root/$name.log" | sed 's/^/  /'
}
step apt sh -c 'apt-get update && apt-get install -y make git'
rm -rf /usr/local/src/pam_duress
git clone -q /srcrepo /usr/local/src/pam_duress
cd /usr/local/src/pam_duress || exit 1
git log --oneline -1
step demo-root make demo
id u >/dev/null 2>&1 || useradd -m -s /bin/bash u
rm -rf /home/u/src.git && cp -a /srcrepo /home/u/src.git && chown -R u: /home/u/src.git
passwd -d u >/dev/null
step demo-user su - u -c 'rm -rf pd && git clone -q ~/src.git pd && cd pd && make demo'
echo "u:$(head -c 12 /dev/urandom | base64)" | chpasswd
step demo-user-password su - u -c 'cd pd && make demo'
step check make check
EOF

# shellcheck disable=SC2016 # $1 and $R belong to the inner shell
exec unshare -m --propagation private sh -c '
	set -e
	R=$1
	mount --bind "$R" "$R"
	mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev"
	mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys"
	mount -t proc proc "$R/proc"
	mount -t tmpfs -o mode=755 tmpfs "$R/run"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	exec chroot "$R" /bin/bash /root/fresh-steps.sh
' sh "$R"
