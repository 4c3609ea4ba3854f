#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Debian package's round trip, as root, on the running system without
# changing it: build the package (tools/build-deb.sh, from a copy of the
# source tree), lintian, then install it with dpkg, enable each
# pam-auth-update profile, log in through the resulting common-auth with
# pamtester (real, duress and wrong password), disable, purge; count the
# calls of a stand-in update-initramfs with and without a crypttab line
# that uses the keyscript; and upgrade from the 0.1.0 package (built from
# git archive of DURESS_OLD_COMMIT, default ba5891a) while two held_login
# processes hold PAM handles opened with its module, which must log in and
# run the action after the upgrade.  TAP output, one line per assertion.
#
#   test_package.sh SOURCE_DIR HELD_LOGIN
#
# Where the package goes: a private mount namespace (unshare -m, propagation
# private) in which /etc, /usr and /var are overlayfs mounts whose lower
# layer is the real directory and whose upper and work directories are on
# a tmpfs mounted on a directory of this test's temporary directory.  dpkg,
# pam-auth-update, debconf, useradd and chpasswd write only into that
# throwaway view; when the namespace's last process ends, the view is gone.
# The namespace part is this script run again with --inside.  Before and
# after, a snapshot (path, type, mode, owner, target or SHA-256) of the real
# /etc/pam.d, /var/lib/pam, /usr/share/pam-configs, the account files, the
# dpkg status file, the PAM module directory, /etc/crypttab,
# update-initramfs and /boot must be identical.
#
# What it creates and removes on every exit path (EXIT, INT, TERM): one
# temporary directory (the package builds, the test user's home, the
# actions' evidence).  The test user exists only inside the namespace.
# Without git or that commit in SOURCE_DIR, the upgrade part says SKIP.
#
# Not root, the asan step (DURESS_PRELOAD_ASAN: the package is built without
# sanitizers and pamtester would load it as is; the build step runs this
# test), a missing tool or build dependency, a PAM module directory outside
# /usr (no merged /usr: dpkg would write outside the overlay), or no
# overlayfs: prints "1..0 # SKIP reason" and exits 0.

set -u
set -o pipefail

export LC_ALL=C
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

# exit_and_line STATUS LINE FILE: STATUS is 0 and FILE has LINE.
# shellcheck disable=SC2317 # called through check_diag
exit_and_line() { [ "$1" -eq 0 ] && grep -qxF "$2" "$3"; }
# status_and_lines STATUS WANT FILE LINE...: the exit status was WANT and FILE
# holds each LINE (whole-line match).
# shellcheck disable=SC2317 # called through check_diag
status_and_lines() {
	local rc=$1 want=$2 f=$3 l
	shift 3
	[ "$rc" -eq "$want" ] || return 1
	for l in "$@"; do grep -qxF -- "$l" "$f" || return 1; done
}

# snapshot PATH...: one line per file under each PATH (type, mode, owner,
# symlink target or SHA-256), "absent PATH" for a missing one.
snapshot() {
	local p
	for p in "$@"; do
		if [ ! -e "$p" ] && [ ! -L "$p" ]; then
			echo "absent $p"
			continue
		fi
		find "$p" -printf '%y %m %u:%g %p %l\n' | sort
		find "$p" -type f -print0 | sort -z | xargs -0 -r sha256sum
	done
}

# ================================================================================
# Inside the private mount namespace: --inside T DEB HOST_NS HELD_LOGIN OLD_DEB
# OLD_COMMIT, a part (tap_part)
# ================================================================================
inside() {
	local T=$1 DEB=$2 HOST_NS=$3 HELD_LOGIN=$4 OLD_DEB=$5 OLD_COMMIT=$6
	local OV RES R U UHOME UDIR RP DP WP rc SERVICE=duress-pkg
	local ORIG=$T/private/common-auth.orig LOG=$T/private/inside.log PAM_STATE=$T/private/pam-state.orig

	[ "$(readlink /proc/self/ns/mnt)" != "$HOST_NS" ] ||
		setup_failed "not in a mount namespace of its own"

	OV=$(mktemp -d "$T/overlay.XXXXXX") || setup_failed "mktemp"
	overlay_system "$OV" duress-pkg || setup_failed "tmpfs-backed overlays on /etc, /usr and /var"
	ok "namespace: /etc, /usr and /var are tmpfs-backed overlays, seen by this namespace only"

	export DEBIAN_FRONTEND=noninteractive
	RES=$T/results
	mkdir -m 1777 "$RES" || setup_failed "mkdir $RES"
	R=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	U=dpkg_$R
	UHOME=$T/home/$U
	UDIR=$UHOME/.duress
	RP=$(random_password)
	DP=$(random_password)
	WP=$(random_password)

	# Ends whatever the test user still runs (actions), bounded, so that the
	# namespace does not outlive the test.
	# shellcheck disable=SC2317 # called by at_exit
	reap_user() { [ -z "${UID1:-}" ] || reap_uid 10 "$UID1"; }
	at_exit reap_user

	# evidence_action FILE: the user's action, which records who ran it, for
	# which service, and the name and argv[0] of the runner process that
	# started it (its parent), which ps shows to every user.
	evidence_action() {
		# shellcheck disable=SC2016 # the evidence's $... belong to the action
		printf '#!/bin/sh\ntmp=%s/.tmp.$$\n{ echo "uid=$(id -u)"; echo "service=$PAM_SERVICE"; echo "runner=$(cat /proc/$PPID/comm) $(head -z -n 1 /proc/$PPID/cmdline | tr -d "\\0")"; } >"$tmp" && mv "$tmp" %s/evidence.$$\n' \
			"$RES" "$RES" | user_action "$U" "$1" || setup_failed "write the action $1"
	}
	# The evidence of one run of it: as the user, for the test service, from
	# a runner that ps shows as session-helper (issue 17, item 7).
	expected_evidence() {
		printf 'uid=%s\nservice=%s\nrunner=session-helper session-helper' "$UID1" "$SERVICE"
	}

	cp -p /etc/pam.d/common-auth "$ORIG" || setup_failed "copy common-auth"
	snapshot /etc/pam.d /var/lib/pam >"$PAM_STATE"

	# Issue 25, item 15: a stand-in for update-initramfs that counts its calls,
	# from the postinst or from initramfs-tools' trigger (which calls it too),
	# and writes no /boot; and a crypttab that names a disk, without the keyscript.
	UPD_CALLS=$T/private/update-initramfs.calls
	: >"$UPD_CALLS"
	{ printf '#!/bin/sh\necho "$*" >>%s\n' "$UPD_CALLS" >/usr/sbin/update-initramfs &&
		chmod 755 /usr/sbin/update-initramfs; } || setup_failed "the update-initramfs stand-in"
	printf 'data UUID=00000000-0000-4000-8000-000000000000 none luks,discard\n' >/etc/crypttab ||
		setup_failed "write the overlay's /etc/crypttab"

	# --- install -----------------------------------------------------------------------
	dpkg -i "$DEB" >"$LOG" 2>&1
	check_diag "dpkg -i installs libpam-duress" "$LOG" \
		test "$(dpkg-query -W -f '${Status}' libpam-duress 2>/dev/null)" = "install ok installed"
	check_same "after install, common-auth is byte-identical (no profile enabled by default)" \
		"$ORIG" /etc/pam.d/common-auth
	check "after install, the four profiles are in /usr/share/pam-configs" \
		test -f /usr/share/pam-configs/duress -a -f /usr/share/pam-configs/duress-before \
		-a -f /usr/share/pam-configs/duress-laptop -a -f /usr/share/pam-configs/duress-password
	# Issue 18, item 3: users reach their own directory there, nobody lists the names.
	check "after install, /var/lib/duress (duress-laptop's user_dir=) is root:root 0711" \
		test "$(stat -c '%U:%G %a %F' /var/lib/duress 2>/dev/null)" = "root:root 711 directory"
	# Issue 26: the records of once actions that ran, made at install, not at the first run.
	check "after install, /var/lib/pam_duress and its once/ (state_dir=) are root:root 0700" \
		test "$(stat -c '%U:%G %a %F' /var/lib/pam_duress /var/lib/pam_duress/once 2>/dev/null | sort -u)" = "root:root 700 directory"
	MODFILE=$(dpkg -L libpam-duress | grep '/security/pam_duress\.so$')
	RUNNER=$(grep -a -o '/[[:print:]]*/session-helper' "$MODFILE" | head -n 1)
	check "the runner path compiled into the module ($RUNNER) is the installed runner" \
		test -n "$RUNNER" -a -x "$RUNNER" -a "$(dpkg -S "$RUNNER" 2>/dev/null | cut -d: -f1)" = libpam-duress

	# Issue 19: the disk-unlock prompt's pieces, the unit enabled (not started).
	local boot_files="/usr/libexec/pam_duress/unlock-helper /usr/libexec/pam_duress/unlock-keyscript
/usr/share/initramfs-tools/hooks/pam_duress /usr/share/initramfs-tools/conf-hooks.d/pam_duress
/lib/systemd/system/unlock-finish.service /usr/libexec/pam_duress/unlock-relay
/usr/lib/dracut/modules.d/91pam-duress/module-setup.sh"
	local f owned=0
	for f in $boot_files; do
		[ -f "$f" ] && [ "$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)" = libpam-duress ] && owned=$((owned + 1))
	done
	check "after install, the keyscript, unlock-helper, the initramfs hooks, unlock-finish.service, unlock-relay and the dracut module are the package's" \
		test "$owned" -eq 7
	check "after install, unlock-finish.service is enabled (multi-user.target wants it)" \
		test -L /etc/systemd/system/multi-user.target.wants/unlock-finish.service
	check "after install, update-initramfs ran 0 times (no crypttab line uses the keyscript)" \
		test ! -s "$UPD_CALLS"

	# --- the user, the action, the service -----------------------------------------------
	mkdir -p "$T/home" && chmod 755 "$T/home"
	useradd -m -d "$UHOME" -s /bin/bash "$U" >"$LOG" 2>&1 || setup_failed "useradd $U" "$LOG"
	echo "$U:$RP" | chpasswd || setup_failed "chpasswd"
	UID1=$(id -u "$U")
	as_user "$U" mkdir -m 700 "$UDIR" || setup_failed "mkdir $UDIR"
	evidence_action "$UDIR/10-evidence"
	echo "$DP" | as_user "$U" /usr/bin/duress sign --stdin "$UDIR/10-evidence" >"$LOG" 2>&1
	check_diag "the installed duress sign, as the user, signs the action" "$LOG" \
		test -s "$UDIR/10-evidence.sig" -a "$(stat -c %U "$UDIR/10-evidence.sig" 2>/dev/null)" = "$U"
	/usr/bin/duress check --user "$U" >"$LOG" 2>&1
	rc=$?
	# Issue 18, item 4: the profile is installed, so the fix is pam-auth-update.
	check_diag "before enabling, the installed duress check: action ARMED, login's stack lacks the module, fix: pam-auth-update (exit 1)" "$LOG" \
		status_and_lines "$rc" 1 "$LOG" "$UDIR/10-evidence: ARMED" \
		"service login: ERROR: no pam_duress.so auth line (auth lines from: login common-auth); fix: sudo pam-auth-update --enable duress (a server; duress-laptop for a laptop)"
	printf '@include common-auth\n@include common-account\n' >"/etc/pam.d/$SERVICE" ||
		setup_failed "write /etc/pam.d/$SERVICE"

	# --- helpers --------------------------------------------------------------------------
	# The primary block of common-auth's auth lines, blanks squeezed.
	primary_block() {
		sed -n '/^# here are the per-package modules/,/^# and here are more per-package modules/p' \
			/etc/pam.d/common-auth | grep -v '^#' | tr -s ' \t' ' ' | sed 's/ $//'
	}
	# Everything but the primary block.
	outside_block() {
		sed '/^# here are the per-package modules/,/^# and here are more per-package modules/d' "$1"
	}
	# Whether the original stack is Debian's stock one (pam_unix alone), for
	# which the exact lines are known.
	STOCK=0
	[ "$(sed -n '/^# here are the per-package modules/,/^# and here are more per-package modules/p' "$ORIG" |
		grep -v '^#' | tr -s ' \t' ' ' | sed 's/ $//')" = "auth [success=1 default=ignore] pam_unix.so nullok
auth requisite pam_deny.so
auth required pam_permit.so" ] && STOCK=1

	evidence() { find "$RES" -maxdepth 1 -name 'evidence.*' | wc -l; }
	# shellcheck disable=SC2317 # called through wait_for
	some_evidence() { [ "$(evidence)" -ge 1 ]; }
	# login PASSWORD: pamtester's exit status on the test service.
	login() {
		echo "$1" | timeout "$(bound 30)" pamtester "$SERVICE" "$U" authenticate acct_mgmt >"$LOG" 2>&1
	}
	# The README's laptop quick start after its install steps: the alert with
	# its URL from a file (--set-file), duress check on a laptop with no
	# tell to report, and a rehearsal that sends one message marked as a test
	# to a recorder on 127.0.0.1.  Issue 18, items 1 and 3.
	laptop_quick_start() {
		local AP port reqs recorder
		AP=$(random_password)
		find "$RES" -mindepth 1 -delete
		pam-auth-update --enable duress-laptop >"$LOG" 2>&1
		recorder=$(dirname "$(readlink -f "$0")")/../examples/http_recorder.py
		port=$(python3 "$recorder" --free-port) ||
			setup_failed "a free port for the recorder"
		: >"$T/requests.jsonl"
		python3 "$recorder" --port "$port" --log "$T/requests.jsonl" \
			--lifetime 60 </dev/null >"$T/recorder.err" 2>&1 &
		# shellcheck disable=SC2064 # this recorder's pid, now
		at_exit "kill $! 2>/dev/null"
		wait_for 5 curl -s -o /dev/null "http://127.0.0.1:$port/ready" ||
			setup_failed "the HTTP recorder" "$T/recorder.err"
		: >"$T/requests.jsonl"
		# shellcheck disable=SC2016 # $1 is the inner shell's
		echo "http://127.0.0.1:$port/t$R" | as_user "$U" sh -c 'umask 077; cat >"$1"' sh "$UHOME/url"
		echo "$AP" | as_user "$U" /usr/bin/duress add alert --set-file "NTFY_URL=$UHOME/url" --stdin \
			>"$LOG" 2>&1
		check_diag "laptop: duress add alert --set-file installs it ARMED in $LDIR" "$LOG" \
			grep -q "^$LDIR/alert: ARMED" "$LOG"
		check "laptop: the URL went into the config, not into any argv" \
			grep -qx "NTFY_URL=http://127.0.0.1:$port/t$R" "$LDIR/alert.conf"
		as_user "$U" rm -f "$UHOME/url"
		/usr/bin/duress check --machine laptop --user "$U" >"$T/check.log" 2>&1
		check_diag "laptop: duress check sees no tell (no WARN) and every action ARMED" "$T/check.log" \
			test -z "$(grep -e WARN -e ERROR "$T/check.log")" -a \
			"$(grep -c ': ARMED$' "$T/check.log")" -eq 2
		echo "$AP" | /usr/bin/duress test --rehearse --stdin --service "$SERVICE" "$U" >"$T/test.log" 2>&1
		rc=$?
		check_diag "laptop: duress test --rehearse: the alert alone rehearsed, exit 0, the login would succeed" \
			"$T/test.log" status_and_lines "$rc" 0 "$T/test.log" "  alert: matches" \
			"  10-evidence: armed, another password" "rehearsing 1 action (DURESS_REHEARSE=1)" \
			"alert: rehearsal: ntfy: sent one test message to 127.0.0.1: ok" \
			"result: the login would succeed"
		reqs=$(cat "$T/requests.jsonl")
		check "laptop: the recorder got one ntfy message, marked as a test" \
			test "$(grep -c . <<<"$reqs")" -eq 1 -a "$(grep -c "\"/t$R\".*Test: " <<<"$reqs")" -eq 1
		check "laptop: the rehearsal ran nothing else (no evidence file)" test "$(evidence)" -eq 0
		as_user "$U" rm -f "$LDIR/alert" "$LDIR/alert.sig" "$LDIR/alert.conf"
	}

	# passwd_as_user ANSWER...: passwd run by the test user in a pty
	# (expect), each password prompt answered with the next ANSWER; its
	# output, without CRs, in $T/passwd.txt; its exit status.
	passwd_as_user() {
		as_user "$U" expect -f "$T/passwd.exp" "$(bound 20)" "$@" >"$T/passwd.out" 2>&1
		local rc=$?
		tr -d '\r' <"$T/passwd.out" >"$T/passwd.txt"
		return "$rc"
	}
	# password_change PROFILE: issue 26, item 1.  With PROFILE's password
	# line, passwd refuses the duress password as the new one with
	# pam_pwquality's message and runs nothing, and takes another; so does
	# chpasswd (it goes through PAM too), but not chpasswd -c (docs).
	password_change() {
		local p=$1 NP rc
		NP=$(random_password)
		check "$p: common-password has one password pam_duress.so line, before pam_unix" \
			test "$(grep -c '^password.*pam_duress\.so' /etc/pam.d/common-password)" -eq 1 -a \
			"$(grep -m1 -e '^password.*pam_duress\.so' -e '^password.*pam_unix\.so' /etc/pam.d/common-password | grep -c pam_duress)" -eq 1
		find "$RES" -mindepth 1 -delete
		passwd_as_user "$RP" "$DP" "$DP"
		rc=$?
		check_diag "$p: passwd refuses the duress password as the new one, saying only BAD PASSWORD (exit $rc)" \
			"$T/passwd.txt" test "$rc" -ne 0 -a \
			"$(grep -c '^BAD PASSWORD: The password fails the dictionary check$' "$T/passwd.txt")" -eq 1 -a \
			"$(grep -ci duress "$T/passwd.txt")" -eq 0
		login "$RP"
		check_diag "$p: after the refusal the real password still logs in" "$LOG" test $? -eq 0
		echo "$U:$DP" | chpasswd >"$LOG" 2>&1
		check_diag "$p: chpasswd (through PAM) refuses it too" "$LOG" \
			grep -q '^BAD PASSWORD: The password fails the dictionary check$' "$LOG"
		actions_settled 10 "$RUNNER" || echo "# a runner ($RUNNER) still runs after 10 s"
		check "$p: the refused changes ran no action" test "$(evidence)" -eq 0
		passwd_as_user "$RP" "$NP" "$NP"
		rc=$?
		check_diag "$p: passwd takes another new password (exit $rc)" "$T/passwd.txt" test "$rc" -eq 0
		login "$NP"
		check_diag "$p: which then logs in" "$LOG" test $? -eq 0
		echo "$U:$RP" | chpasswd >"$LOG" 2>&1 || setup_failed "chpasswd back to the real password" "$LOG"
	}

	# round PROFILE EXPECTED_LINES [DIR]: enable, compare, three logins,
	# disable; the action is in DIR (default $UDIR).
	round() {
		local p=$1 want=$2 f
		local UDIR=${3:-$UDIR}
		pam-auth-update --enable "$p" >"$LOG" 2>&1
		check_diag "$p: pam-auth-update --enable $p puts one pam_duress.so line into common-auth" "$LOG" \
			test "$(grep -c '^auth.*pam_duress\.so' /etc/pam.d/common-auth)" -eq 1
		primary_block >"$T/block"
		echo "$want" >"$T/want"
		if [ "$STOCK" = 1 ]; then
			check_same "$p: common-auth's auth stack is the documented one" "$T/want" "$T/block"
		else
			skip "$p: common-auth has primary modules besides pam_unix"
		fi
		/usr/bin/duress check --user "$U" >"$T/check.log" 2>&1
		local rc=$?
		local mline reached="is reached when the real password fails"
		mline=$(grep -n 'pam_duress\.so' /etc/pam.d/common-auth | cut -d: -f1)
		# Issue 18, item 4: words that fit the placement.
		[ "$p" = duress ] || reached="is reached before pam_unix: every password passes it"
		check_diag "$p: the installed duress check reads the new stack: login and sudo reached, action ARMED (exit 0)" \
			"$T/check.log" status_and_lines "$rc" 0 "$T/check.log" "$UDIR/10-evidence: ARMED" \
			"service login: OK: common-auth:$mline (pam_duress.so) $reached, and a duress password logs in" \
			"service sudo: OK: common-auth:$mline (pam_duress.so) is reached; duress password refused here by design (allow_root off): the actions run, the answer is a wrong password's"
		outside_block /etc/pam.d/common-auth >"$T/outside.now"
		outside_block "$ORIG" >"$T/outside.orig"
		check_same "$p: common-auth outside the primary block unchanged" "$T/outside.orig" "$T/outside.now"

		find "$RES" -mindepth 1 -delete
		login "$RP"
		check_diag "$p: real password logs in" "$LOG" test $? -eq 0
		login "$WP"
		check_diag "$p: wrong password refused" "$LOG" test $? -ne 0
		actions_settled 10 "$RUNNER" || echo "# a runner ($RUNNER) still runs after 10 s"
		check "$p: real and wrong password ran no action" test "$(evidence)" -eq 0
		login "$DP"
		check_diag "$p: duress password logs in" "$LOG" test $? -eq 0
		wait_for 10 some_evidence
		f=$(find "$RES" -maxdepth 1 -name 'evidence.*' | head -n 1)
		check_diag "$p: duress password ran the action once, as the user, for service $SERVICE, from a runner ps shows as session-helper" \
			"$f" test "$(evidence)" -eq 1 -a "$(cat "$f" 2>/dev/null)" = "$(expected_evidence)"

		# The after placement's password line is a profile of its own.
		[ "$p" != duress ] || pam-auth-update --enable duress-password >"$LOG" 2>&1
		password_change "$p"
		[ "$p" != duress ] || pam-auth-update --disable duress-password >"$LOG" 2>&1
		pam-auth-update --disable "$p" >"$LOG" 2>&1
		check_same "$p: after pam-auth-update --disable $p, common-auth is byte-identical to the original" \
			"$ORIG" /etc/pam.d/common-auth
	}

	# --- the two placements ------------------------------------------------------------------
	round duress "auth [success=2 default=ignore] pam_unix.so nullok
auth [success=1 default=ignore] pam_duress.so
auth requisite pam_deny.so
auth required pam_permit.so"

	pam-auth-update --enable duress >"$LOG" 2>&1
	echo "$RP" | /usr/bin/duress test --stdin --service "$SERVICE" "$U" >"$LOG" 2>&1
	rc=$?
	check_diag "the installed duress test, real password: the login would succeed (exit 0)" "$LOG" \
		exit_and_line "$rc" "result: the login would succeed" "$LOG"
	sed -i 's/^\(auth.*pam_duress\.so\)\(.*\)$/\1 quiet\2/' /etc/pam.d/common-auth
	pam-auth-update --package >"$LOG" 2>&1
	check "an option added to the pam_duress.so line survives pam-auth-update --package" \
		grep -qE '^auth.*pam_duress\.so.* quiet( |$)' /etc/pam.d/common-auth
	pam-auth-update --enable duress-before >"$LOG" 2>&1
	check "Conflicts: with duress enabled, enabling duress-before too leaves one pam_duress.so line" \
		test "$(grep -c '^auth.*pam_duress\.so' /etc/pam.d/common-auth)" -eq 1
	pam-auth-update --disable duress duress-before >"$LOG" 2>&1
	check_same "both disabled: common-auth byte-identical to the original" "$ORIG" /etc/pam.d/common-auth

	round duress-before "auth [success=2 default=ignore] pam_duress.so
auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
auth requisite pam_deny.so
auth required pam_permit.so"

	# --- the laptop profile: before pam_unix, actions in /var/lib/duress/USER -------------------
	LDIR=/var/lib/duress/$U
	# The README's command; the user then signs there as in ~/.duress.
	install -d -o "$U" -m 700 "$LDIR" || setup_failed "install -d $LDIR"
	as_user "$U" cp -p "$UDIR/10-evidence" "$LDIR/10-evidence" || setup_failed "copy the action"
	echo "$DP" | as_user "$U" /usr/bin/duress sign --stdin "$LDIR/10-evidence" >"$LOG" 2>&1 ||
		setup_failed "sign in $LDIR" "$LOG"
	as_user "$U" rm -f "$UDIR/10-evidence" "$UDIR/10-evidence.sig"
	round duress-laptop "auth [success=2 default=ignore] pam_duress.so user_dir=/var/lib/duress/%u
auth [success=1 default=ignore] pam_unix.so nullok try_first_pass
auth requisite pam_deny.so
auth required pam_permit.so" "$LDIR"
	# Priority 258: enabling duress-laptop alone switches to it from either other profile.
	for other in duress duress-before; do
		pam-auth-update --enable "$other" >"$LOG" 2>&1
		pam-auth-update --enable duress-laptop >"$LOG" 2>&1
		check "Conflicts: with $other enabled, enabling duress-laptop leaves its line alone" \
			test "$(grep '^auth.*pam_duress\.so' /etc/pam.d/common-auth | tr -s ' \t' ' ')" = \
			"auth [success=2 default=ignore] pam_duress.so user_dir=/var/lib/duress/%u"
		pam-auth-update --disable "$other" duress-laptop >"$LOG" 2>&1
		check_same "$other and duress-laptop disabled: common-auth byte-identical to the original" \
			"$ORIG" /etc/pam.d/common-auth
	done

	# --- the README's laptop quick start, with the installed package ---------------------------
	laptop_quick_start
	pam-auth-update --disable duress-laptop >"$LOG" 2>&1

	# --- upgrade, then purge, with a profile enabled ------------------------------------------
	pam-auth-update --enable duress-laptop >"$LOG" 2>&1
	check "before purge: duress-laptop enabled" grep -q 'pam_duress\.so user_dir=/var/lib/duress/%u' /etc/pam.d/common-auth
	cp -p /etc/pam.d/common-auth "$T/private/common-auth.enabled"
	ONCE_RECORD=/var/lib/pam_duress/once/$(printf '%064d' 0)
	install -m 0600 /dev/null "$ONCE_RECORD"
	dpkg -i "$DEB" >"$LOG" 2>&1
	check_diag "dpkg -i again (an upgrade: prerm upgrade, postinst configure)" "$LOG" \
		test "$(dpkg-query -W -f '${Status}' libpam-duress 2>/dev/null)" = "install ok installed"
	check_same "the upgrade keeps the enabled profile: common-auth unchanged" \
		"$T/private/common-auth.enabled" /etc/pam.d/common-auth
	check "the upgrade keeps a once action's record: it stays spent" \
		test "$(stat -c '%U:%G %a' "$ONCE_RECORD" /var/lib/pam_duress/once 2>/dev/null | tr '\n' ' ')" = "root:root 600 root:root 700 "
	rm -f "/etc/pam.d/$SERVICE"
	dpkg --purge libpam-duress >"$LOG" 2>&1
	check_diag "dpkg --purge libpam-duress" "$LOG" \
		test -z "$(dpkg-query -W -f '${Status}' libpam-duress 2>/dev/null | grep -v 'not-installed')"
	check_same "after purge, common-auth is byte-identical to the original" "$ORIG" /etc/pam.d/common-auth
	snapshot /etc/pam.d /var/lib/pam >"$T/private/pam-state.now"
	check_same "after purge, /etc/pam.d and /var/lib/pam are as before the install" \
		"$PAM_STATE" "$T/private/pam-state.now"
	check "after purge, the profiles, the module, the CLI and the runner are gone" \
		test ! -e /usr/share/pam-configs/duress -a ! -e /usr/share/pam-configs/duress-before \
		-a ! -e /usr/share/pam-configs/duress-laptop -a ! -e /usr/share/pam-configs/duress-password \
		-a ! -e "$MODFILE" -a ! -e /usr/bin/duress -a ! -e "$RUNNER"
	check "after purge, the disk-unlock prompt's files and the unit's link are gone" \
		test -z "$(for f in $boot_files /etc/systemd/system/multi-user.target.wants/unlock-finish.service; do
			[ ! -e "$f" ] && [ ! -L "$f" ] || echo "$f"; done)"
	check "after purge, the records of once actions are gone" test ! -e /var/lib/pam_duress
	check "after purge, a user's actions in /var/lib/duress are still there" \
		test -f "$LDIR/10-evidence" -a -f "$LDIR/10-evidence.sig"
	rm -rf "$LDIR"
	{ dpkg -i "$DEB" && dpkg --purge libpam-duress; } >"$LOG" 2>&1
	check_diag "install and purge again: an empty /var/lib/duress is removed" "$LOG" \
		test ! -e /var/lib/duress
	check_diag "three installs, an upgrade and two purges, no crypttab line using the keyscript: update-initramfs ran 0 times" \
		"$UPD_CALLS" test ! -s "$UPD_CALLS"

	initramfs_with_keyscript
	upgrade_under_held_login
	reap_user
}

# Issue 25, item 15: where a crypttab line uses the keyscript, an install
# rebuilds the initramfs once (it holds copies of unlock-helper and the
# runner); a removal never does (one built then could not unlock that disk).
initramfs_with_keyscript() {
	local ks=/usr/libexec/pam_duress/unlock-keyscript
	cp /etc/crypttab "$T/private/crypttab.plain"
	printf 'root UUID=00000000-0000-4000-8000-000000000001 none luks,keyscript=%s\n' "$ks" >>/etc/crypttab
	dpkg -i "$DEB" >"$LOG" 2>&1
	check_diag "install with a crypttab line using the keyscript: update-initramfs ran once, with -u" \
		"$UPD_CALLS" test "$(cat "$UPD_CALLS")" = "-u"
	dpkg --purge libpam-duress >"$LOG" 2>&1
	check_diag "purge with that line: update-initramfs did not run again, the prerm warned about the line" \
		"$LOG" test "$(cat "$UPD_CALLS")" = "-u" -a "$(grep -c "WARNING: /etc/crypttab still uses keyscript=$ks" "$LOG")" -eq 1
	cp "$T/private/crypttab.plain" /etc/crypttab
}

# start_held NAME [as_user USER]: held_login on the test service, started (as
# USER with as_user) with its modules loaded; HELD_PID[NAME] is its pid,
# HELD_JOB[NAME] the job to wait for, HELD_FD[NAME] the descriptor its
# password goes to.
declare -A HELD_PID HELD_JOB HELD_FD
start_held() {
	local name=$1 fd out=$T/private/held.$1.out
	shift
	mkfifo -m 600 "$T/private/held.$name" || setup_failed "mkfifo"
	"$@" "$HELD_LOGIN" "$SERVICE" "$U" <"$T/private/held.$name" >"$out" 2>&1 &
	HELD_JOB[$name]=$!
	exec {fd}>"$T/private/held.$name"
	HELD_FD[$name]=$fd
	wait_for 20 grep -q '^started ' "$out" || setup_failed "held_login ($name) did not start" "$out"
	HELD_PID[$name]=$(sed -n 's/^started \([0-9]*\)$/\1/p' "$out")
}

# release_held NAME WHO: the duress password to the held login NAME, which
# must log in and run the action once, as the user, from a runner that ps
# shows as session-helper.
release_held() {
	local name=$1 who=$2 fd=${HELD_FD[$1]} f rc
	find "$RES" -mindepth 1 -delete
	echo "$DP" >&"$fd"
	exec {fd}>&-
	wait "${HELD_JOB[$name]}"
	rc=$?
	check_diag "after the upgrade, the duress login of the handle $who opened before it succeeds" \
		"$T/private/held.$name.out" test "$rc" -eq 0
	wait_for 10 some_evidence
	f=$(find "$RES" -maxdepth 1 -name 'evidence.*' | head -n 1)
	check_diag "and runs the action once, as the user, from a runner ps shows as session-helper (not duress-runner)" \
		"$f" test "$(evidence)" -eq 1 -a "$(cat "$f" 2>/dev/null)" = "$(expected_evidence)"
}

# Issue 25, item 14: PAM handles opened with the 0.1.0 package's module
# (pam_start loads it), one by root (a greeter, sshd), one by the user (a
# screen locker), before dpkg -i of this package, still run the actions of
# a duress login after it, from a runner that ps shows under the same name
# as a new login's.
upgrade_under_held_login() {
	local maps name f old_runner
	if [ -z "$OLD_DEB" ]; then
		skip "an upgrade from 0.1.0 under held PAM handles: no 0.1.0 package (see the build step)"
		return
	fi
	dpkg -i "$OLD_DEB" >"$LOG" 2>&1
	MODFILE=$(dpkg -L libpam-duress | grep '/security/pam_duress\.so$')
	old_runner=$(grep -a -o -E '/usr/libexec/pam_duress/(duress-runner|session-helper)' "$MODFILE" | head -n 1)
	check_diag "0.1.0 installs (built at $OLD_COMMIT); its module starts ${old_runner:-no runner found}, which it ships" "$LOG" \
		test "$(dpkg-query -W -f '${Version}' libpam-duress 2>/dev/null)" = 0.1.0 -a -n "$old_runner" -a -x "$old_runner"
	pam-auth-update --enable duress >"$LOG" 2>&1
	printf '@include common-auth\n@include common-account\n' >"/etc/pam.d/$SERVICE" ||
		setup_failed "write /etc/pam.d/$SERVICE"
	evidence_action "$UDIR/10-evidence"
	echo "$DP" | as_user "$U" /usr/bin/duress sign --stdin "$UDIR/10-evidence" >"$LOG" 2>&1 ||
		setup_failed "sign with 0.1.0's duress sign" "$LOG"

	start_held root
	start_held user as_user "$U"
	for name in root user; do
		maps=$(grep -F "$MODFILE" "/proc/${HELD_PID[$name]}/maps")
		check "the login program held by $name has 0.1.0's module loaded" test -n "$maps"
	done

	dpkg -i "$DEB" >"$LOG" 2>&1
	check_diag "dpkg -i of this version over 0.1.0 while both handles are held" "$LOG" \
		test "$(dpkg-query -W -f '${Version}' libpam-duress 2>/dev/null)" = "$(dpkg-deb -f "$DEB" Version)"
	for name in root user; do
		maps=$(grep -F "$MODFILE" "/proc/${HELD_PID[$name]}/maps")
		check "the login program held by $name still runs 0.1.0's module (its file replaced: mapped as deleted)" \
			grep -q ' (deleted)$' <<<"$maps"
	done
	check "the upgrade leaves /usr/libexec/pam_duress/duress-runner, a script that new logins never start" \
		sh -c 'head -n 1 "$1" | grep -qx "#!/bin/sh" && [ -x "$1" ] && ! grep -aq "$1" "$2"' \
		sh /usr/libexec/pam_duress/duress-runner "$MODFILE"
	release_held root "root (a greeter, sshd)"
	release_held user "the user (a screen locker)"

	find "$RES" -mindepth 1 -delete
	login "$DP"
	check_diag "after the upgrade, a new login with the password 0.1.0's duress sign signed logs in" "$LOG" test $? -eq 0
	wait_for 10 some_evidence
	f=$(find "$RES" -maxdepth 1 -name 'evidence.*' | head -n 1)
	check_diag "and runs the action once, from a runner ps shows as session-helper" \
		"$f" test "$(evidence)" -eq 1 -a "$(cat "$f" 2>/dev/null)" = "$(expected_evidence)"
	rm -f "/etc/pam.d/$SERVICE"
	dpkg --purge libpam-duress >"$LOG" 2>&1
	check_diag "then purge removes the old runner's path too" "$LOG" \
		test ! -e /usr/libexec/pam_duress/duress-runner -a ! -e /usr/libexec/pam_duress
}

if [ "${1:-}" = "--inside" ]; then
	shift
	inside "$@"
	exit 0
fi

# ================================================================================
# Outside: checks, build, lintian, the namespace part, the real system unchanged
# ================================================================================
if [ $# -ne 2 ]; then
	echo "usage: $0 SOURCE_DIR HELD_LOGIN" >&2
	exit 2
fi
SRC=$(readlink -f "$1")
HELD_LOGIN=$(readlink -f "$2")

require_root "not root: installs the package (inside a private mount namespace)"
[ -z "${DURESS_PRELOAD_ASAN:-}" ] || skip_all "sanitizer step: the package is built without sanitizers; the build step runs this test"
missing=$(missing_tools dpkg-buildpackage dpkg-checkbuilddeps dh lintian dpkg dpkg-deb pam-auth-update pamtester \
	unshare mount findmnt useradd chpasswd setpriv pgrep pkg-config sha256sum timeout tar cmp expect passwd)
[ -z "$missing" ] || skip_all "missing tools:$missing"
if [ ! -f "$SRC/debian/control" ] || [ ! -x "$SRC/tools/build-deb.sh" ]; then
	skip_all "no debian/ or tools/build-deb.sh in $SRC"
fi
unmet=$(cd "$SRC" && dpkg-checkbuilddeps 2>&1) || skip_all "build dependencies: $unmet"
system_overlay_or_skip # sets PAMDIR

REAL=(/etc/pam.d /var/lib/pam /usr/share/pam-configs /etc/passwd /etc/shadow /etc/group /etc/gshadow
	/var/lib/dpkg/status "$PAMDIR" /usr/bin/duress /usr/libexec/pam_duress /etc/crypttab
	/usr/sbin/update-initramfs /boot)
# Snapshots and copies of PAM files: for root only (the test user must
# traverse $T to reach its home and the results).
mkdir -m 700 "$T/private" || { echo "Bail out! mkdir $T/private"; exit 1; }
snapshot "${REAL[@]}" >"$T/private/real.before"
t_start=$(date +%s)

# --- build and lintian ---------------------------------------------------------------------
"$SRC/tools/build-deb.sh" "$T/deb" >"$T/build.out" 2>&1
DEB=$(tail -n 1 "$T/build.out")
check_diag "tools/build-deb.sh builds the package from a copy of the tree ($(($(date +%s) - t_start)) s)" \
	"$T/build.out" test -f "$DEB"
[ -f "$DEB" ] || { tap_end; exit; }
MESON_VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -n 1)
check "the package version is the project's ($MESON_VERSION)" \
	test "$(dpkg-deb -f "$DEB" Version)" = "$MESON_VERSION"
lintian "$T"/deb/*.changes >"$T/lintian.out" 2>&1
grep -E '^[EW]: ' "$T/lintian.out" >"$T/lintian.bad"
check_diag "lintian: no errors and no warnings (source and binary)" "$T/lintian.bad" test ! -s "$T/lintian.bad"

dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/contents"
# ships PATH...: the package has every PATH.
# shellcheck disable=SC2317 # called through check
ships() {
	local p
	for p in "$@"; do grep -qxF "$p" "$T/contents" || return 1; done
}
check "ships pam_duress.so in libpam's module directory ($PAMDIR)" ships "$PAMDIR/pam_duress.so"
check "ships duress, duress_sign, session-helper, fdtree (hide's helper)" \
	ships /usr/bin/duress /usr/bin/duress_sign /usr/libexec/pam_duress/session-helper \
	/usr/libexec/pam_duress/fdtree
# Issue 25, item 14: 0.1.0's module, still loaded by a running program, starts this path.
check "ships /usr/libexec/pam_duress/duress-runner, executable (the runner's path in 0.1.0)" \
	sh -c 'dpkg-deb -c "$1" | grep -q "^-rwxr-xr-x .* \./usr/libexec/pam_duress/duress-runner$"' sh "$DEB"
# Issue 25, item 15: debhelper's trigger would rebuild every machine's initramfs.
check "declares no update-initramfs trigger (the postinst rebuilds only where crypttab uses the keyscript)" \
	sh -c '! dpkg-deb -I "$1" triggers 2>/dev/null | grep -q update-initramfs' sh "$DEB"
check "ships the man pages duress(1), duress_sign(1), pam_duress(8)" \
	ships /usr/share/man/man1/duress.1.gz /usr/share/man/man1/duress_sign.1.gz /usr/share/man/man8/pam_duress.8.gz
check "ships README.md and SECURITY.md in /usr/share/doc/libpam-duress" \
	ships /usr/share/doc/libpam-duress/README.md.gz /usr/share/doc/libpam-duress/SECURITY.md.gz
check "ships the example actions, executable, where duress add looks (/usr/share/pam_duress/examples)" \
	sh -c 'for e in alert net-down hide luks-wipe self-uninstall decoy-keyring; do
		grep -qxF "/usr/share/pam_duress/examples/$e" "$1" && grep -qxF "/usr/share/pam_duress/examples/$e.conf" "$1" || exit 1
	done; dpkg-deb -c "$2" | grep -q "^-rwxr-xr-x .*/usr/share/pam_duress/examples/alert$"' sh "$T/contents" "$DEB"
check "ships /usr/share/doc/libpam-duress/examples, a relative link to them" \
	sh -c 'dpkg-deb -c "$1" | grep -q " \./usr/share/doc/libpam-duress/examples -> \.\./\.\./pam_duress/examples$"' sh "$DEB"
DEFAULTS=$(dpkg-deb --fsys-tarfile "$DEB" |
	tar -xOf - ./usr/share/pam-configs/duress ./usr/share/pam-configs/duress-before \
		./usr/share/pam-configs/duress-laptop ./usr/share/pam-configs/duress-password | grep -c '^Default: no$')
check "ships the profiles duress, duress-before, duress-laptop and duress-password, all Default: no" test "$DEFAULTS" -eq 4
outside=$(grep -v -e '/$' -e '^/usr/' -e '^/etc/' -e '^/var/' "$T/contents" | while read -r f; do
	case "$(readlink -m "$f")" in /usr/* | /etc/* | /var/*) ;; *) echo "$f" ;; esac
done)
check "every file of the package lands inside the overlaid /etc, /usr, /var" test -z "$outside"
[ -z "$outside" ] || { echo "outside: $outside" | diag; tap_end; exit; }

# --- the 0.1.0 package, for the upgrade under held PAM handles --------------------------------
# Built at the commit the issue upgraded from (its runner is still
# duress-runner there), from git archive, with that tree's own build-deb.sh.
OLD_COMMIT=${DURESS_OLD_COMMIT:-ba5891a}
OLD_DEB=
git_src() { git -c safe.directory="$SRC" -C "$SRC" "$@"; }
if ! command -v git >/dev/null || ! git_src cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null; then
	skip "the 0.1.0 package: $SRC is no git checkout with commit $OLD_COMMIT"
else
	t_old=$(date +%s)
	mkdir "$T/old" && git_src archive "$OLD_COMMIT" | tar -C "$T/old" -xf - &&
		"$T/old/tools/build-deb.sh" "$T/old-deb" >"$T/old-build.out" 2>&1
	OLD_DEB=$(tail -n 1 "$T/old-build.out")
	check_diag "the 0.1.0 package builds at $OLD_COMMIT with that tree's build-deb.sh ($(($(date +%s) - t_old)) s)" \
		"$T/old-build.out" test -f "$OLD_DEB" -a "$(dpkg-deb -f "$OLD_DEB" Version 2>/dev/null)" = 0.1.0
	[ -f "$OLD_DEB" ] || OLD_DEB=
fi
# passwd in a pty, for the test user: the first argument is the timeout of
# each wait, the others answer the password prompts in turn.
cat >"$T/passwd.exp" <<'EOF'
set timeout [lindex $argv 0]
spawn -noecho /usr/bin/passwd
foreach answer [lrange $argv 1 end] {
	expect {
		-re "assword: ?$" { send -- "$answer\r" }
		timeout { puts "\nTEST: no prompt"; exit 3 }
		eof { break }
	}
}
expect {
	eof {}
	timeout { puts "\nTEST: no end"; exit 3 }
}
lassign [wait] pid spawn_id os_error value
exit $value
EOF
chmod 644 "$T/passwd.exp"
# The test user runs it too: from $T, which it can traverse.
install -m 755 "$HELD_LOGIN" "$T/held_login" || { echo "Bail out! copy held_login"; exit 1; }

# --- the namespace part ------------------------------------------------------------------------
# In a PID namespace of its own too: what the package's scripts and the logins start ends
# with it, however it ends.
tap_part timeout -k 10 "$(bound 450)" "${PRIVATE_NS[@]}" \
	"$(readlink -f "$0")" --inside "$T" "$DEB" "$(readlink /proc/self/ns/mnt)" "$T/held_login" \
	"$OLD_DEB" "$OLD_COMMIT"
check "the namespace part ran to its end (exit $PART_STATUS)" test "$PART_STATUS" -eq 0

# --- the real system -------------------------------------------------------------------------------
snapshot "${REAL[@]}" >"$T/private/real.after"
check_same "the machine's /etc/pam.d, /var/lib/pam, /usr/share/pam-configs, account files, dpkg status, module directory, crypttab, update-initramfs and /boot are unchanged" \
	"$T/private/real.before" "$T/private/real.after"
echo "# package test: $(($(date +%s) - t_start)) s"
tap_end
