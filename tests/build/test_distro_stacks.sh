#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Fedora and Arch auth stacks of docs/install-fedora.md and
# docs/install-arch.md, run through the real libpam (pam_wrapper), the real
# pam_unix, pam_faillock, pam_usertype and pam_localuser, fake accounts
# (nss_wrapper) and this build's module.  The stacks are read from the docs
# (the fenced block after "<!-- stack: NAME -->"); the Fedora ones must also be
# what dist/fedora/authselect-duress.sh makes of the stock authselect stacks
# written below.  For each: real, duress and wrong passwords, what faillock
# counts after each, a locked account; for the sssd stack, an account that is
# not local must not reach pam_duress.  TAP output.
#
#   test_distro_stacks.sh SRCDIR DURESS MODULE RUNNER
#
# Changed for the test only: faillock's files go to a private directory with
# deny=3, pam_localuser reads a private passwd file, and the failure delays
# (pam_faildelay, pam_unix's and pam_faillock's own) are off, which changes
# no result.

set -u
SRC=$1 DURESS=$2 MODULE=$3 RUNNER=$4
# shellcheck source=tests/lib/tap.sh
. "$SRC/tests/lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$SRC/tests/lib/root.sh"
own_shadow_or_rerun "$@"

REAL='Real-pw-1' DURESS_PW='Duress-pw-2' WRONG='Wrong-pw-3'
if [ "$(id -u)" -eq 0 ]; then
	uid_a=20001 uid_b=20002 gid=20001
	chmod 711 "$T"
else
	uid_a=$(id -u) uid_b=$(id -u) gid=$(id -g)
fi
hash=$(openssl passwd -6 "$REAL")
mkdir -p "$T/pam.d" "$T/out" "$T/tally" "$T/profile"
mkdir -m 700 "$T/global"
chmod 1777 "$T/out"
{
	printf 'root:x:0:0:root:/root:/bin/sh\n'
	printf 'alice:%s:%s:%s:Alice:%s:/bin/sh\n' "$hash" "$uid_a" "$gid" "$T/home/alice"
	printf 'bob:%s:%s:%s:Bob:%s:/bin/sh\n' "$hash" "$uid_b" "$gid" "$T/home/bob"
} >"$T/passwd"
printf 'root:x:0:\nusers:x:%s:\n' "$gid" >"$T/group"
# pam_localuser's file: alice is local, bob (an SSSD account, say) is not.
grep '^alice:' "$T/passwd" >"$T/local-passwd"
printf 'auth required pam_deny.so\naccount required pam_deny.so\n' >"$T/pam.d/other"
for u in alice bob; do
	mkdir -p "$T/home/$u/.duress"
	chmod 700 "$T/home/$u" "$T/home/$u/.duress"
	printf '#!/bin/sh\necho ran >> %s/out/%s\n' "$T" "$u" >"$T/home/$u/.duress/mark"
	chmod 700 "$T/home/$u/.duress/mark"
	"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$T/home/$u/.duress/mark" <<<"$DURESS_PW" >/dev/null 2>&1
done
if [ "$(id -u)" -eq 0 ]; then
	chown -R "$uid_a:$gid" "$T/home/alice"
	chown -R "$uid_b:$gid" "$T/home/bob"
fi

# The stacks authselect 1.5 renders for the local and sssd profiles with
# with-faillock (auth, account and password sections).
stock_fedora_local() {
	cat <<'STACK'
auth required pam_env.so
auth required pam_faildelay.so delay=2000000
auth required pam_faillock.so preauth silent
auth sufficient pam_unix.so nullok
auth required pam_faillock.so authfail
auth required pam_deny.so
account required pam_faillock.so
account required pam_unix.so
password requisite pam_pwquality.so local_users_only
password sufficient pam_unix.so yescrypt shadow nullok use_authtok
password required pam_deny.so
STACK
}
stock_fedora_sssd() {
	cat <<'STACK'
auth required pam_env.so
auth required pam_faildelay.so delay=2000000
auth required pam_faillock.so preauth silent
auth [default=1 ignore=ignore success=ok] pam_usertype.so isregular
auth [default=1 ignore=ignore success=ok] pam_localuser.so
auth sufficient pam_unix.so nullok
auth [default=1 ignore=ignore success=ok] pam_usertype.so isregular
auth sufficient pam_sss.so forward_pass
auth required pam_faillock.so authfail
auth required pam_deny.so
account required pam_faillock.so
account required pam_unix.so
password requisite pam_pwquality.so local_users_only
password [default=1 ignore=ignore success=ok] pam_localuser.so
password sufficient pam_unix.so yescrypt shadow nullok use_authtok
password [success=1 default=ignore] pam_sss.so use_authtok
password required pam_deny.so
password sufficient pam_permit.so
STACK
}

doc_stack() { # doc_stack FILE NAME: the fenced block after <!-- stack: NAME -->
	awk -v name="$2" '
		$0 == "<!-- stack: " name " -->" { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$SRC/docs/$1"
}
squeeze() { # one space between fields, auth lines only
	awk '$1 == "auth" || $1 == "-auth" { $1 = $1; print }'
}
# runnable STACK: the test's options added (see the header).
runnable() {
	sed -E -e "s|pam_duress\.so|$MODULE global_dir=$T/global runner=$RUNNER|" \
		-e "s|pam_faillock\.so|pam_faillock.so dir=$T/tally deny=3 nodelay|" \
		-e "s|pam_localuser\.so|pam_localuser.so file=$T/local-passwd|" \
		-e "s|delay=2000000|delay=0|" \
		-e "s|pam_unix\.so|pam_unix.so nodelay|"
}

pam_env() {
	env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" \
		PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$T/pam.d" \
		NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group" "$@"
}
login() { # login SERVICE USER PASSWORD: prints success or refused
	# shellcheck disable=SC2086 # WRAP is a command prefix, or nothing
	if pam_env $WRAP "$DURESS" test --stdin --service "$1" "$2" <<<"$3" >"$T/login.log" 2>&1; then
		echo success
	else
		echo refused
	fi
}
action_ran() { # action_ran USER: whether USER's action ran since the last call
	local i limit=${2:-50}
	for ((i = 0; i < limit; i++)); do
		if [ -s "$T/out/$1" ]; then
			rm -f "$T/out/$1"
			return 0
		fi
		sleep 0.1
	done
	return 1
}
failures() { # failures USER: the failures faillock holds for USER
	faillock --dir "$T/tally" --user "$1" | grep -c '^[0-9]\{4\}-' || true
}
expect() { # expect SERVICE USER PASSWORD RESULT ACTION(yes|no) FAILURES DESCRIPTION
	local got ran=no quiet=3
	got=$(login "$1" "$2" "$3")
	[ "$5" = yes ] && quiet=50
	action_ran "$2" "$quiet" && ran=yes
	if [ "$got" = "$4" ] && [ "$ran" = "$5" ] && [ "$(failures "$2")" = "$6" ]; then
		ok "$1: $7"
	else
		not_ok "$1: $7 (login $got, action $ran, faillock $(failures "$2"); want $4, $5, $6)"
		cat "$T/login.log" >&2
	fi
}

# The faillock behaviour the docs describe, for one stack.
run_stack() { # run_stack SERVICE
	local s=$1
	rm -f "$T/tally/alice" "$T/out/alice"
	expect "$s" alice "$REAL" success no 0 "real password logs in, no action"
	expect "$s" alice "$DURESS_PW" success yes 0 "duress password logs in, runs the action, not counted"
	expect "$s" alice "$WRONG" refused no 1 "wrong password refused, counted once"
	expect "$s" alice "$DURESS_PW" success yes 0 "duress login clears the count like a real one"
	expect "$s" alice "$WRONG" refused no 1 "wrong password 1 of 3"
	expect "$s" alice "$WRONG" refused no 2 "wrong password 2 of 3"
	expect "$s" alice "$WRONG" refused no 3 "wrong password 3 of 3: locked"
	expect "$s" alice "$REAL" refused no 3 "locked: real password refused"
	expect "$s" alice "$DURESS_PW" refused yes 3 "locked: duress password refused, the action runs"
}

# Fedora: the script on the stock stacks gives the documented stack.
fedora() { # fedora NAME STOCK [SCRIPT OPTIONS]
	local name=$1 stock=$2 want
	shift 2
	$stock >"$T/profile/system-auth"
	$stock >"$T/profile/password-auth"
	if ! sh "$SRC/dist/fedora/authselect-duress.sh" "$@" "$T/profile" >/dev/null; then
		not_ok "$name: authselect-duress.sh failed"
		return
	fi
	want=$(doc_stack install-fedora.md "$name" | squeeze)
	check "$name: documented stack found" test -n "$want"
	check "$name: authselect-duress.sh gives the documented stack" \
		test "$(squeeze <"$T/profile/system-auth")" = "$want"
	check "$name: password-auth gets the same" \
		test "$(squeeze <"$T/profile/password-auth")" = "$want"
	# The password stack refuses a duress password as the new one: the
	# module right after pam_pwquality, before pam_localuser's jump.
	check "$name: the password section gets pam_duress right after pam_pwquality" \
		test "$(awk '$1 == "password" { $1 = $1; print }' "$T/profile/system-auth" | sed -n 2p)" = \
		"password requisite pam_duress.so"
	runnable <"$T/profile/system-auth" >"$T/pam.d/$name"
	run_stack "$name"
}

arch() { # arch NAME
	local name=$1 stack
	stack=$(doc_stack install-arch.md "$name")
	check "$name: documented stack found" test -n "$stack"
	{
		runnable <<<"$stack"
		echo "account required pam_unix.so"
	} >"$T/pam.d/$name"
	run_stack "$name"
}

fedora fedora-local-after stock_fedora_local
fedora fedora-local-before stock_fedora_local --before
fedora fedora-sssd-after stock_fedora_sssd
arch arch-after
arch arch-before

# An account that is not local skips pam_duress in the sssd stack (its
# pam_sss, absent here, refuses); without the raised pam_localuser jump it
# would reach pam_duress: the control shows that the check can fail.
# pam_usertype must see bob as a regular account (a uid from UID_MIN, not the
# overflow uid): as root he is 20002, otherwise he has the caller's uid.
printf 'auth required pam_usertype.so isregular\nauth required pam_permit.so\naccount required pam_permit.so\n' \
	>"$T/pam.d/is-regular"
if [ "$(login is-regular bob "$REAL")" != success ]; then
	skip "sssd stack, account not local: pam_usertype does not see uid $uid_b as regular (run as root)"
	skip "sssd stack, control without the raised jump"
else
	rm -f "$T/tally/bob"
	expect fedora-sssd-after bob "$DURESS_PW" refused no 1 "not a local account: pam_duress skipped"
	sed 's/\(pam_localuser.so.*\)default=2/\1default=1/; s/default=2\( ignore=ignore success=ok\] *pam_localuser\)/default=1\1/' \
		"$T/pam.d/fedora-sssd-after" >"$T/pam.d/sssd-control"
	rm -f "$T/tally/bob"
	expect sssd-control bob "$DURESS_PW" success yes 0 "control: with the old jump, pam_duress runs for him"
fi

tap_end
