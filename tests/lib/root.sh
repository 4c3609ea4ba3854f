# SPDX-License-Identifier: GPL-2.0-or-later
#
# The preamble of the tests that run as root (e2e, package, the examples'
# root parts), sourced after tap.sh:
#   . "$(dirname "$0")/../lib/root.sh"
# What they check before they start (root, tools, a module pamtester can
# load), how they run things as a test account, the namespaces' links, the
# loop devices they make (detached on every exit path), and how they wait
# for what a login started to end.  The last, no_runner and what builds on
# it, serves the unprivileged tests too (duress test, examples' alert).
# shellcheck shell=bash

# require_root REASON: skip the whole test, saying REASON, unless root.
require_root() { [ "$(id -u)" -eq 0 ] || skip_all "$1"; }

# missing_tools TOOL...: those not found in PATH, each after a space.
missing_tools() {
	local t missing=""
	for t; do command -v "$t" >/dev/null 2>&1 || missing+=" $t"; done
	printf '%s' "$missing"
}

# sanitizer_built MODULE: MODULE needs a sanitizer runtime, or this is the
# asan step of run-checks.sh (DURESS_PRELOAD_ASAN): pamtester, su and sshd
# cannot load it without the runtime preloaded (and setuid su ignores
# LD_PRELOAD).
sanitizer_built() {
	[ -n "${DURESS_PRELOAD_ASAN:-}" ] || readelf -d "$1" 2>/dev/null | grep -Eq 'NEEDED.*lib(a|ub|t|l)san'
}

# as_user USER COMMAND...: COMMAND as USER, with its groups, in a clean
# environment (PATH, USER, LOGNAME and HOME, its home directory).
as_user() {
	local u=$1 home
	shift
	home=$(getent passwd "$u" | cut -d: -f6)
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- \
		env -i PATH=/usr/bin:/bin HOME="$home" USER="$u" LOGNAME="$u" "$@"
}
# user_action USER FILE: standard input into FILE, an action written by USER
# (mode 0700, as its owner would make it).
user_action() {
	# shellcheck disable=SC2016 # $1 belongs to the inner shell
	as_user "$1" sh -c 'umask 077; cat >"$1" && chmod 700 "$1"' sh "$2"
}

# up_in NS: the links that are up in network namespace NS, sorted, one line.
up_in() {
	ip -n "$1" -o link show up | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort | tr '\n' ' '
}

# --- loop devices ------------------------------------------------------------
LOOPS=()
# new_loop NAME [SIZE]: an image $T/NAME.img of SIZE (20M) on a loop device,
# named in $LOOP (not printed: the list of devices to detach must be kept in
# this shell).
new_loop() {
	truncate -s "${2:-20M}" "$T/$1.img"
	LOOP=$(losetup -f --show "$T/$1.img") || return 1
	LOOPS+=("$LOOP")
}
# shellcheck disable=SC2317 # called by at_exit
detach_loops() {
	local l
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
}
at_exit detach_loops

# --- what a login started ------------------------------------------------------
# no_process_of UID: nothing runs as UID.
no_process_of() { ! pgrep -u "$1" >/dev/null; }
# reap_uid SECONDS UID: waits up to SECONDS for the processes of UID (actions
# still running) to end, then ends them by PID.
reap_uid() {
	local p
	wait_for "$1" no_process_of "$2" && return 0
	for p in $(pgrep -u "$2"); do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
}

# no_runner RUNNER: no process runs the runner program RUNNER (its absolute
# path: another build's runner does not count).  The kernel's name of a
# process is its program's file name, cut to 15 bytes.
no_runner() {
	local p name
	name=$(basename "$1" | cut -c 1-15)
	for p in $(pgrep -x "$name"); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" != "$1" ] || return 1
	done
}
# actions_settled SECONDS RUNNER [UID]: waits until all that the logins so
# far started has ended: the module starts RUNNER before pam_authenticate
# returns and the runner waits for every action it starts, so once the login
# program is done and no RUNNER is left, an action that was to run has run;
# with UID, also until nothing runs as UID (a process an action detached, as
# alert's retries).  Fails when SECONDS pass first.
actions_settled() {
	wait_for "$1" no_runner "$2" || return 1
	[ -z "${3:-}" ] || wait_for "$1" no_process_of "$3"
}

# --- a throwaway view of the system -------------------------------------------------
# private_etc_or_rerun ARGS...: unless already there, runs this script again
# (exec, with ARGS) in a private mount namespace; there, an overlay on /etc
# whose upper layer is a tmpfs, and a tmpfs on $T: the accounts, PAM files
# and homes a test adds are seen by what it starts and by nothing else, and
# go with the namespace however the test ends, SIGKILL included.  Call it
# after require_root; a namespace where /etc is not such an overlay ends
# the test before it touches anything.
private_etc_or_rerun() {
	if [ -z "${DURESS_PRIVATE_ETC:-}" ]; then
		command -v unshare >/dev/null || skip_all "missing: unshare (a private mount namespace)"
		rmdir "$T"
		DURESS_PRIVATE_ETC=1 exec unshare -m --propagation private -- "$0" "$@"
	fi
	# Registered first, so run last: then tap.sh's rm -rf takes the directory.
	at_exit "umount -l $T"
	if ! mount -t tmpfs -o mode=755 private-tmp "$T" ||
		! mkdir "$T/.etc" || ! mount -t tmpfs -o mode=700 private-etc "$T/.etc" ||
		! mkdir "$T/.etc/u" "$T/.etc/w" ||
		! mount -t overlay -o "lowerdir=/etc,upperdir=$T/.etc/u,workdir=$T/.etc/w" private-etc /etc ||
		[ "$(findmnt -n -o FSTYPE -M /etc | tail -n 1)" != overlay ]; then
		setup_failed "a private mount namespace with /etc overlaid"
	fi
}

# overlay_unusable: prints why the system overlays (overlay_system) cannot be
# used here and succeeds, or fails silently when they can: the PAM module
# directory must be under /usr (no merged /usr: dpkg and make install would
# write outside the overlays) and a tmpfs-backed overlay must mount in a
# private mount namespace.
overlay_unusable() {
	local pamdir
	pamdir=$(pkg-config --variable=libdir pam)/security
	case "$(readlink -f "$pamdir")/" in
	/usr/*) ;;
	*)
		echo "the PAM module directory $pamdir is not under /usr (no merged /usr): it would be outside the overlay"
		return 0
		;;
	esac
	# shellcheck disable=SC2016 # $1 belongs to the inner shell
	unshare -m --propagation private -- sh -c \
		'mount -t tmpfs none "$1" && mkdir "$1/u" "$1/w" && mount -t overlay -o "lowerdir=/etc,upperdir=$1/u,workdir=$1/w" none /etc' \
		sh "$T" >/dev/null 2>&1 && return 1
	echo "cannot mount a tmpfs-backed overlay on /etc in a private mount namespace"
}
# system_overlay_or_skip: skip the whole test unless the overlays can be
# used; sets PAMDIR, libpam's module directory.
system_overlay_or_skip() {
	local why
	# shellcheck disable=SC2034 # for the caller
	PAMDIR=$(pkg-config --variable=libdir pam)/security
	if why=$(overlay_unusable); then skip_all "$why"; fi
}
# overlay_system DIR NAME: in this process's private mount namespace (unshare
# -m --propagation private), /etc, /usr and /var become overlayfs mounts whose
# lower layer is the real directory and whose upper and work directories are
# on a tmpfs (named NAME) mounted on DIR: dpkg, apt-get, make install write
# only into that view, gone when the namespace's last process ends.
overlay_system() {
	local ov=$1 name=$2 d
	mount -t tmpfs -o mode=700,size=1G "$name" "$ov" || return 1
	for d in etc usr var; do
		mkdir "$ov/$d.upper" "$ov/$d.work" || return 1
		mount -t overlay -o "lowerdir=/$d,upperdir=$ov/$d.upper,workdir=$ov/$d.work" "$name-$d" "/$d" || return 1
		[ "$(findmnt -n -o FSTYPE -M "/$d")" = overlay ] || return 1
	done
}
