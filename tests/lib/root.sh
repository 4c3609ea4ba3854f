# SPDX-License-Identifier: GPL-2.0-or-later
#
# The preamble of the tests that run as root (e2e, package, the examples'
# root parts), sourced after tap.sh:
#   . "$(dirname "$0")/../lib/root.sh"
# What they check before they start (root, tools, a module pamtester can
# load), how they run things as a test account, the namespaces' links, the
# loop devices they make (detached on every exit path, SIGKILL included),
# how they wait for what a login started to end, and where they change the
# system: a private root that dies with them for the suites that add
# accounts or PAM files (private_etc_or_rerun: nothing they do can outlive
# them or reach the machine's /etc), overlays of /etc, /usr and /var for
# the package tests (overlay_system).  no_runner and what builds on it
# serves the unprivileged tests too (duress test, examples' alert).
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
# this shell).  Detached at the end by detach_loops; and, however this shell
# ends (SIGKILL included), by the kernel: the device is set to detach itself
# when its last user closes it (autoclear), and this shell holds it open.
new_loop() {
	local fd
	truncate -s "${2:-20M}" "$T/$1.img"
	LOOP=$(losetup -f --show "$T/$1.img") || return 1
	LOOPS+=("$LOOP")
	# shellcheck disable=SC2034 # held open until this shell ends
	exec {fd}<"$LOOP" && loop_autoclear "$LOOP"
}
# loop_autoclear DEVICE: sets the loop device's LO_FLAGS_AUTOCLEAR (which
# losetup cannot): LOOP_GET_STATUS64, the flag, LOOP_SET_STATUS64.
loop_autoclear() {
	python3 - "$1" <<'EOF'
import fcntl, struct, sys
LOOP_SET_STATUS64, LOOP_GET_STATUS64, LO_FLAGS_AUTOCLEAR = 0x4C04, 0x4C05, 4
FLAGS = 52  # offset of lo_flags in struct loop_info64 (232 bytes)
info = bytearray(232)
with open(sys.argv[1], "rb") as dev:
    fcntl.ioctl(dev, LOOP_GET_STATUS64, info)
    struct.pack_into("I", info, FLAGS, struct.unpack_from("I", info, FLAGS)[0] | LO_FLAGS_AUTOCLEAR)
    fcntl.ioctl(dev, LOOP_SET_STATUS64, info)
EOF
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

# --- a root that dies with the test ----------------------------------------------
# The suites that add accounts, groups or PAM files (e2e, sign-user, demo,
# examples-e2e, example-self-uninstall) call private_etc_or_rerun first: a
# SIGKILL at any point (meson's at a timeout) must leave the machine as it
# was, so nothing of theirs may outlive their first process, and what they
# change is in a view of their own.  tests/e2e/test_killed.py proves it.
#
# PRIVATE_NS: a command prefix that runs a command in a mount namespace of
# its own (propagation private: no mount goes back to the machine) as the
# first process of a PID namespace of its own, with a /proc of its own.
# When that first process ends, however it ends, the kernel kills all that
# is left in the namespace: actions the runner detached, sshd's sessions
# (setsid), what timeout(1) put in a process group of its own.  When unshare
# itself is killed, so is that first process (--kill-child).
PRIVATE_NS=(unshare --mount --propagation private --pid --fork --kill-child --mount-proc --)
# Run by sh as that first process, before the test starts again there: a
# tmpfs on /run, where the test's temporary directory goes ($TMPDIR, so
# that tap.sh's $T is made there and not on the machine's /tmp).  The
# machine's /run is hidden: sshd's /run/sshd, utmp, sudo's timestamps and
# the module's slots are the test's, and nscd's socket is gone, so account
# lookups read the overlaid files and never the machine's cache.
# /tmp becomes an overlay whose upper layer is on that tmpfs: what is
# there (a build tree cloned under /tmp) can still be read, and nothing
# done to it inside reaches the machine.  pam_wrapper needs it: at its
# first pam_start it removes any /tmp/pam.? directory whose recorded pid
# is not alive, and from inside this PID namespace every pid outside
# looks dead, so a pam_wrapper here would delete the live configuration
# of a test running alongside (tests/e2e/test_private_tmp.sh).
# shellcheck disable=SC2016 # $0 and $@ belong to sh
PRIVATE_RUN_SETUP='mount -t tmpfs -o mode=755 duress-private-run /run && mkdir -m 1777 /run/tmp &&
	mkdir -m 1777 /run/tmp.upper && mkdir /run/tmp.work &&
	mount -t overlay -o lowerdir=/tmp,upperdir=/run/tmp.upper,workdir=/run/tmp.work duress-private-tmp /tmp &&
	export TMPDIR=/run/tmp
exec "$0" "$@"'
# Where private_etc_or_rerun puts the overlay's layers, and the machine's
# /etc, read-only (for "the machine's /etc is as it was").
PRIVATE_DIR=/run/private
MACHINE_ETC=/run/machine-etc

# overlay_on DIR NAME PATH...: in this process's private mount namespace, a
# tmpfs named NAME on DIR and each PATH an overlayfs mount whose lower layer
# is PATH as it is and whose upper and work directories are on that tmpfs:
# what is written to PATH goes there only, gone with the namespace.  Fails
# at the first step that fails, before anything is written to a PATH.
overlay_on() {
	local ov=$1 name=$2 p layer
	shift 2
	mount -t tmpfs -o mode=700,size=1G "$name" "$ov" || return 1
	for p; do
		layer=$ov/$(tr / _ <<<"${p#/}")
		mkdir "$layer.upper" "$layer.work" || return 1
		mount -t overlay -o "lowerdir=$p,upperdir=$layer.upper,workdir=$layer.work" "$name-${p##*/}" "$p" ||
			return 1
		[ "$(findmnt -n -o FSTYPE -M "$p" | tail -n 1)" = overlay ] || return 1
	done
}

# in_private_root: this process is in a private root of private_etc_or_rerun
# (or in a mount namespace made inside one): /run is its tmpfs, /tmp and
# /etc its overlays with the upper layers there, $T under /run.
in_private_root() {
	[ "$(findmnt -n -o SOURCE -M /run | tail -n 1)" = duress-private-run ] &&
		[ "$(findmnt -n -o FSTYPE,SOURCE -M /tmp | tail -n 1)" = "overlay duress-private-tmp" ] &&
		[ "$(findmnt -n -o FSTYPE,SOURCE -M /etc | tail -n 1)" = "overlay duress-private-etc" ] &&
		findmnt -n -o OPTIONS -M /etc | tail -n 1 | grep -q "upperdir=$PRIVATE_DIR/" &&
		[ "${T#/run/tmp/}" != "$T" ]
}

# private_etc_or_rerun ARGS...: unless it is already there, runs this script
# again (exec, with ARGS) in PRIVATE_NS after PRIVATE_RUN_SETUP; there, the
# machine's /etc read-only at $MACHINE_ETC and /etc an overlay whose layers
# are in /run (overlay_on): the accounts, PAM files and homes (under $T) a
# test adds are seen by what it starts (PAM, su, sudo, sshd: they read the
# overlaid /etc) and by nothing else, and go with it however it ends,
# SIGKILL included.  Call it after require_root, before anything is
# written; a root that is not so ends the test before it changes anything.
# ("There" is the PID namespace's first process, its mount namespace not
# the one it was started from: an inherited variable cannot fake it.)
private_etc_or_rerun() {
	if [ "$$" -ne 1 ] || [ -z "${DURESS_PRIVATE_FROM:-}" ] ||
		[ "$DURESS_PRIVATE_FROM" = "$(readlink /proc/self/ns/mnt)" ]; then
		command -v unshare >/dev/null || skip_all "missing: unshare (private mount and PID namespaces)"
		unshare --mount --pid --fork true 2>/dev/null ||
			skip_all "cannot make private mount and PID namespaces here (unshare --mount --pid --fork)"
		rmdir "$T"
		DURESS_PRIVATE_FROM=$(readlink /proc/self/ns/mnt) \
			exec "${PRIVATE_NS[@]}" sh -c "$PRIVATE_RUN_SETUP" "$0" "$@"
	fi
	unset DURESS_PRIVATE_FROM
	if ! private_etc || ! in_private_root; then
		setup_failed "a private root: mount and PID namespaces, /run a tmpfs, /etc an overlay on it"
	fi
}
# private_etc: in the private root, the machine's /etc read-only at
# $MACHINE_ETC, /etc overlaid, and (where /var/run is no link to /run) nscd's
# socket hidden too.
private_etc() {
	mkdir -m 700 "$PRIVATE_DIR" "$MACHINE_ETC" && mount --bind -o ro /etc "$MACHINE_ETC" &&
		overlay_on "$PRIVATE_DIR" duress-private /etc || return 1
	[ -L /var/run ] || [ ! -d /var/run/nscd ] || mount -t tmpfs -o mode=755 duress-private-nscd /var/run/nscd
}

# own_shadow_or_rerun ARGS...: as root, unless it is already there, runs
# this script again (exec, with ARGS) in a private mount namespace, and
# there binds an empty file over /etc/shadow.  For the tests whose fake
# accounts live in nss_wrapper's files: the module reads shadow entries with
# getspnam_r(), which nss_wrapper does not wrap, so the machine's own entry
# for a fake name (a locked "alice") would decide instead.  Not root:
# nothing to do (shadow is unreadable, and counts as no entry).
own_shadow_or_rerun() {
	[ "$(id -u)" -eq 0 ] || return 0
	if [ -z "${DURESS_SHADOW_FROM:-}" ] || [ "$DURESS_SHADOW_FROM" = "$(readlink /proc/self/ns/mnt)" ]; then
		unshare -m --propagation private true 2>/dev/null ||
			skip_all "cannot make a private mount namespace here (unshare -m)"
		rmdir "$T"
		DURESS_SHADOW_FROM=$(readlink /proc/self/ns/mnt) exec unshare -m --propagation private "$0" "$@"
	fi
	unset DURESS_SHADOW_FROM
	if ! { : >"$T/shadow" && chmod 600 "$T/shadow"; }; then setup_failed "an empty shadow file in $T"; fi
	[ ! -e /etc/shadow ] || mount --bind "$T/shadow" /etc/shadow ||
		setup_failed "an empty file over /etc/shadow in a private mount namespace"
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
	unshare -m --propagation private -- bash -c "$(declare -f overlay_on); overlay_on \"\$1\" duress-probe /etc" \
		bash "$T" >/dev/null 2>&1 && return 1
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
overlay_system() { overlay_on "$1" "$2" /etc /usr /var; }
