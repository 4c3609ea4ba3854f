#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Self-contained demo of pam_duress, as `make demo` runs it:
#
#   tests/demo/demo.sh BUILD_DIR
#
# A fake user "alice" (nss_wrapper) logs in three times through a PAM stack of
# its own (pam_wrapper) made of the real pam_unix.so and BUILD_DIR's
# pam_duress.so, with pamtester as the login program: once with her real
# password, once with her duress password, once with a wrong one.  Her signed
# action writes evidence when it runs; the demo shows it after each login.
#
# No root needed and nothing outside one temporary directory is touched.  As a
# normal user alice gets your own uid (without root, per-user actions can only
# run as yourself); as root she gets uid/gid 20001 and her action runs as her.
#
# Exit status: 0 when all three logins behave as they should (and duress sign
# refuses alice's real password), 1 when one does not, 2 when the demo cannot
# run at all.

set -u
set -o pipefail

REAL_PW='Alice-real-Passw0rd'
DURESS_PW='correct-Horse-battery-duress-42'
WRONG_PW='a-Wrong-guess-1234'
SERVICE=duress-demo
# Actions run detached: how long to wait for the evidence of one (tenths of a second).
WAIT_TENTHS=100
# How long to watch for an action that must not run.
QUIET_TENTHS=15

die() {
	echo "demo: $*" >&2
	exit 2
}

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" 2>/dev/null && pwd) || die "no build directory $1"
MODULE=$BUILD/src/pam_duress.so
DURESS=$BUILD/src/duress
[ -f "$MODULE" ] || die "$MODULE not found: build first (make)"
[ -x "$DURESS" ] || die "$DURESS not found: build first (make)"
command -v pamtester >/dev/null || die "pamtester not found (apt-get install pamtester)"

# Finds a shared library in the usual places; prints its path.
find_lib() {
	local d multiarch

	multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
	for d in ${multiarch:+/usr/lib/$multiarch /lib/$multiarch} /usr/lib64 /usr/lib /usr/local/lib; do
		if [ -e "$d/$1" ]; then
			echo "$d/$1"
			return 0
		fi
	done
	return 1
}
PAM_WRAPPER_LIB=$(find_lib libpam_wrapper.so) || die "libpam_wrapper.so not found (apt-get install libpam-wrapper)"
NSS_WRAPPER_LIB=$(find_lib libnss_wrapper.so) || die "libnss_wrapper.so not found (apt-get install libnss-wrapper)"

# A SHA-512 crypt hash of $1, from whichever tool is there.
crypt_hash() {
	local h

	h=$(openssl passwd -6 -stdin <<<"$1" 2>/dev/null)
	if [[ $h != "\$6\$"* ]]; then
		h=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.stdin.readline().rstrip("\n"), crypt.mksalt(crypt.METHOD_SHA512)))' <<<"$1" 2>/dev/null)
	fi
	[[ $h == "\$6\$"* ]] && echo "$h"
}

indent() {
	sed 's/^/    /'
}

# Headings in bold on a terminal.
BOLD='' PLAIN=''
if [ -t 1 ]; then
	BOLD=$'\033[1m' PLAIN=$'\033[0m'
fi
heading() {
	printf '\n%s== %s ==%s\n' "$BOLD" "$*" "$PLAIN"
}

# ---------------------------------------------------------------------------
heading "Setting up a fake system in a temporary directory"

T=$(mktemp -d "${TMPDIR:-/tmp}/pam_duress-demo.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$T"' EXIT
trap 'exit 2' INT TERM HUP

if [ "$(id -u)" -eq 0 ]; then
	UID_A=20001 GID_A=20001
	# alice's action, running as uid 20001, must get through to her home.
	chmod 711 "$T"
else
	UID_A=$(id -u) GID_A=$(id -g)
fi
# The module reads shadow entries with getspnam_r(), which nss_wrapper does
# not wrap: as root it sees the machine's /etc/shadow, where an account of
# the same name (a locked "alice") would decide the login.  So the fake user
# is "alice" only where the machine has no account of that name.
USER_A=alice
if getent passwd "$USER_A" >/dev/null 2>&1 || getent shadow "$USER_A" >/dev/null 2>&1; then
	USER_A=alice-demo-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
fi
HOME_A=$T/home/$USER_A
EVIDENCE=$HOME_A/evidence.log
mkdir -p "$HOME_A/.duress" "$T/duress.d" "$T/pam.d"
chmod 700 "$HOME_A" "$HOME_A/.duress" "$T/duress.d"

HASH=$(crypt_hash "$REAL_PW") || die "cannot make a SHA-512 crypt hash (need openssl or python3 with crypt)"
# The hash sits in the passwd field itself: pam_unix reads it there without root.
printf '%s:%s:%s:%s:Alice Demo:%s:/bin/sh\n' "$USER_A" "$HASH" "$UID_A" "$GID_A" "$HOME_A" >"$T/passwd"
printf 'root:x:0:0:root:/root:/bin/sh\n' >>"$T/passwd"
printf '%s:x:%s:\nroot:x:0:\n' "$USER_A" "$GID_A" >"$T/group"
[ "$GID_A" = 20001 ] && printf 'demo-staff:x:20002:%s\n' "$USER_A" >>"$T/group"
# The same hash as a shadow entry lets `duress sign` notice the real password.
printf '%s:%s:19000:0:99999:7:::\n' "$USER_A" "$HASH" >"$T/shadow"
chmod 600 "$T/shadow"

# The stack of SPEC section 1, with this build's module and a private global_dir.
cat >"$T/pam.d/$SERVICE" <<EOF
auth	[success=2 default=ignore]	pam_unix.so nullok nodelay
auth	[success=1 default=ignore]	$MODULE global_dir=$T/duress.d runner=$BUILD/src/session-helper
auth	requisite			pam_deny.so
auth	required			pam_permit.so
account	required			pam_permit.so
EOF
# libpam also reads "other"; without one pam_wrapper complains on stderr.
printf 'auth\trequired\tpam_deny.so\n' >"$T/pam.d/other"

# alice's duress action: it records who ran it and with what environment.
cat >"$HOME_A/.duress/evidence" <<'EOF'
#!/bin/sh
# Demo duress action: leave evidence that it ran, and as whom.
{
	echo "--- action ran at $(date '+%H:%M:%S') ---"
	echo "uid:    $(id -u)"
	echo "groups: $(id -G)"
	echo "argv:   $(tr '\0' ' ' </proc/$$/cmdline)"
	echo "\$0:     $0"
	echo "cwd:    $(pwd)"
	echo "umask:  $(umask)"
	env | grep -E '^(PAM_[A-Z]+|PAMUSER|USER|LOGNAME|HOME|SHELL|PATH)=' | sort | sed 's/^/env:    /'
	echo "--- end ---"
} >>"$HOME/evidence.log"
EOF
chmod 700 "$HOME_A/.duress/evidence"

if [ "$(id -u)" -eq 0 ]; then
	chown -R "$UID_A:$GID_A" "$HOME_A"
fi

echo "temporary root:  $T"
echo "user:            $USER_A, uid $UID_A, home $HOME_A"
echo "real password:   $REAL_PW"
echo "duress password: $DURESS_PW"
echo "PAM service $SERVICE:"
indent <"$T/pam.d/$SERVICE"

# Everything below sees the fake passwd/group/shadow and the private PAM config.
export NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group NSS_WRAPPER_SHADOW=$T/shadow
export PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR=$T/pam.d
unset PAM_WRAPPER_DEBUGLEVEL NSS_WRAPPER_DEBUGLEVEL PAM_WRAPPER_KEEP_DIR
PRELOAD="$PAM_WRAPPER_LIB:$NSS_WRAPPER_LIB"

# pamtester's output without pam_wrapper's complaint about a missing default
# config (if it makes one), and with the unechoed password prompt on a line of
# its own.
tidy() {
	sed -E -e 's/PWRAP_ERROR\[[^]]*\] - SYSLOG\([0-9]+\): _pam_init_handlers: no default config [^[:space:]]*//' \
		-e '/^[[:space:]]*$/d' -e 's/^Password: /Password: (typed, not echoed)\n/'
}

# ---------------------------------------------------------------------------
heading "Signing $USER_A's action with duress sign"

echo "\$ duress sign --stdin $HOME_A/.duress/evidence   (with $USER_A's REAL password)"
out=$(LD_PRELOAD=$NSS_WRAPPER_LIB "$DURESS" sign --stdin "$HOME_A/.duress/evidence" <<<"$REAL_PW" 2>&1)
rc=$?
indent <<<"$out"
failures=0
summary=()
if [ $rc -ne 0 ] && [ ! -e "$HOME_A/.duress/evidence.sig" ]; then
	echo "    -> refused, as it should be: pam_unix would accept that password first"
	summary+=("$(printf '%-22s %-26s %s' "0: sign real password" "refused" ok)")
else
	echo "    -> UNEXPECTED: signed with the real password"
	summary+=("$(printf '%-22s %-26s %s' "0: sign real password" "accepted" UNEXPECTED)")
	failures=$((failures + 1))
fi

echo "\$ duress sign --stdin $HOME_A/.duress/evidence   (with the duress password)"
out=$(LD_PRELOAD=$NSS_WRAPPER_LIB "$DURESS" sign --stdin "$HOME_A/.duress/evidence" <<<"$DURESS_PW" 2>&1)
rc=$?
indent <<<"$out"
[ $rc -eq 0 ] || die "duress sign failed"
echo "\$ cat evidence.sig"
indent <"$HOME_A/.duress/evidence.sig"
echo "\$ duress verify --stdin $HOME_A/.duress/evidence"
LD_PRELOAD=$NSS_WRAPPER_LIB "$DURESS" verify --stdin "$HOME_A/.duress/evidence" <<<"$DURESS_PW" | indent
echo "\$ ls -l $HOME_A/.duress"
# shellcheck disable=SC2012 # for people to read
ls -ln "$HOME_A/.duress" | indent

# ---------------------------------------------------------------------------
# How many action runs have finished writing their evidence.
runs() {
	if [ -f "$EVIDENCE" ]; then
		grep -c '^--- end ---$' "$EVIDENCE"
	else
		echo 0
	fi
}

# What sshd or login would set: they reach the action as PAM_RHOST, PAM_RUSER, PAM_TTY.
ITEMS="-I rhost=203.0.113.7 -I ruser=coercer -I tty=pts/7"

# login LABEL PASSWORD EXPECT_PAM(success|failure) EXPECT_ACTION(yes|no)
login() {
	local label=$1 password=$2 want_pam=$3 want_action=$4
	local before after out rc pam action i limit verdict=ok

	heading "Login $label"
	before=$(runs)
	echo "\$ echo '$password' | pamtester $ITEMS $SERVICE $USER_A authenticate"
	# shellcheck disable=SC2086 # ITEMS is a list of options
	out=$(printf '%s\n' "$password" |
		LD_PRELOAD=$PRELOAD pamtester $ITEMS "$SERVICE" "$USER_A" authenticate 2>&1)
	rc=$?
	tidy <<<"$out" | indent
	if [ $rc -eq 0 ]; then pam=success; else pam=failure; fi

	# An action that should run gets a while to show up; one that should not
	# gets a short watch, so a late start would still be caught.
	if [ "$want_action" = yes ]; then limit=$WAIT_TENTHS; else limit=$QUIET_TENTHS; fi
	for ((i = 0; i < limit; i++)); do
		[ "$(runs)" -gt "$before" ] && break
		sleep 0.1
	done
	after=$(runs)
	if [ "$after" -gt "$before" ]; then action=yes; else action=no; fi

	echo "PAM result:  $pam (pamtester exit $rc)   expected: $want_pam"
	echo "action ran:  $action   expected: $want_action"
	if [ "$action" = yes ]; then
		echo "evidence written by this run:"
		awk -v n="$after" -v b="$before" '/^--- action ran/ { k++ } k > b && k <= n && !/^--- end/' \
			"$EVIDENCE" | indent
	else
		echo "evidence: nothing new ($after action run(s) so far)"
	fi
	if [ "$pam" != "$want_pam" ] || [ "$action" != "$want_action" ]; then
		verdict=UNEXPECTED
		failures=$((failures + 1))
	fi
	echo "=> $verdict"
	summary+=("$(printf '%-22s %-26s %s' "$label" "PAM $pam, action $action" "$verdict")")
}

login "1: real password" "$REAL_PW" success no
login "2: duress password" "$DURESS_PW" success yes
login "3: wrong password" "$WRONG_PW" failure no

# ---------------------------------------------------------------------------
heading "Summary"
for line in "${summary[@]}"; do
	echo "  $line"
done
if [ $failures -eq 0 ]; then
	echo "demo: OK: real password logs in quietly, duress password logs in and runs the action, wrong password is refused"
	exit 0
fi
echo "demo: FAILED: $failures of 4 checks did not behave as expected"
exit 1
