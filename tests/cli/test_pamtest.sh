#!/bin/bash
# duress test through the real libpam (pam_wrapper) and pam_unix, with a fake
# user (nss_wrapper): it must report real, duress and wrong passwords as a
# login would see them.  TAP output.  Usage: test_pamtest.sh DURESS MODULE
set -u
DURESS=$1
MODULE=$2
# The action runner of the same build tree, next to the module (src/meson.build).
RUNNER=$(readlink -f "$(dirname "$MODULE")/session-helper")
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

if [ "$(id -u)" -eq 0 ]; then uid=20001 gid=20001; else uid=$(id -u) gid=$(id -g); fi
hash=$(openssl passwd -6 'Real-pw-1')
mkdir -p "$T/pam.d" "$T/home/alice" "$T/out" "$T/global"
chmod 1777 "$T/out"
chmod 700 "$T/global"
printf 'root:x:0:0:root:/root:/bin/sh\nalice:%s:%s:%s:Alice:%s:/bin/sh\n' "$hash" "$uid" "$gid" "$T/home/alice" >"$T/passwd"
printf 'root:x:0:\nalice:x:%s:\n' "$gid" >"$T/group"
printf 'auth [success=2 default=ignore] pam_unix.so nodelay\nauth [success=1 default=ignore] %s global_dir=%s runner=%s\nauth requisite pam_deny.so\nauth required pam_permit.so\naccount required pam_permit.so\n' "$MODULE" "$T/global" "$RUNNER" >"$T/pam.d/duress-test"
printf 'auth required pam_deny.so\naccount required pam_deny.so\n' >"$T/pam.d/other"
mkdir -m 700 "$T/home/alice/.duress"
printf '#!/bin/sh\nid -u >> %s/out/ran\n' "$T" >"$T/home/alice/.duress/mark"
chmod 700 "$T/home/alice/.duress/mark"
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 "$T/home/alice/.duress/mark" <<<"Duress-pw-2" >/dev/null 2>&1
chown -R "$uid:$gid" "$T/home/alice"

pam_env() {
	env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" \
		PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$T/pam.d" \
		NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group" "$@"
}
run_test() { # run_test PASSWORD [SERVICE]: sets out, rc
	# shellcheck disable=SC2086 # $WRAP is a command prefix
	out=$(pam_env $WRAP "$DURESS" test --stdin --service "${2:-duress-test}" alice <<<"$1" 2>&1)
	rc=$?
}
# ran_as UID: the action wrote UID (waited for up to 5 s).
ran_as() { wait_for 5 test -s "$T/out/ran" && [ "$(cat "$T/out/ran")" = "$1" ]; }
# nothing_ran: once what the login started has ended (root.sh), an action
# that ran would have written.
nothing_ran() { actions_settled 15 "$RUNNER" && test ! -e "$T/out/ran"; }

run_test 'Real-pw-1'
check "real password: exit 0" test $rc -eq 0
check "real password: says the login would succeed" grep -qx "result: the login would succeed" <<<"$out"
check "real password: authenticate and account reported" test "$(grep -c '^authenticate: Success$\|^account: Success$' <<<"$out")" -eq 2
check "real password: no action ran" nothing_ran

run_test 'Duress-pw-2'
check "duress password: exit 0" test $rc -eq 0
check "duress password: says the login would succeed" grep -qx "result: the login would succeed" <<<"$out"
check "duress password: the action ran as alice" ran_as "$uid"

rm -f "$T/out/ran"
run_test 'Wrong-pw-3'
check "wrong password: exit 1" test $rc -eq 1
check "wrong password: says the login would be refused" grep -qx "result: the login would be refused" <<<"$out"
check "wrong password: authentication failure reported" grep -qx "authenticate: Authentication failure" <<<"$out"
check "wrong password: no action ran" nothing_ran

run_test 'Real-pw-1' other
check "another service (pam_deny): refused" test $rc -eq 1

# Issue 18, item 5: a misspelt option makes the line inert, and duress test says so.
sed 's/pam_duress.so /pam_duress.so servces=duress-test /' "$T/pam.d/duress-test" >"$T/pam.d/misspelt"
rm -f "$T/out/ran"
# shellcheck disable=SC2086 # $WRAP is a command prefix
out=$(pam_env $WRAP "$DURESS" test --stdin --pam-dir "$T/pam.d" --service misspelt alice <<<'Duress-pw-2' 2>&1)
rc=$?
check "misspelt option: the duress password is refused" test $rc -eq 1
echo "$out" | sed "s/^/# /"
check "misspelt option: the bad option is named" grep -qF 'warning: misspelt:2: pam_duress.so: unknown option "servces=duress-test": the line is inert' <<<"$out"
check "misspelt option: says a duress password will not work there" grep -qF "warning: a duress password will not work on service misspelt: its pam_duress.so line is inert" <<<"$out"
check "misspelt option: no action ran" nothing_ran
# shellcheck disable=SC2086 # $WRAP is a command prefix
out=$(pam_env $WRAP "$DURESS" test --stdin --pam-dir "$T/pam.d" --service misspelt alice <<<'Real-pw-1' 2>&1)
check "misspelt option: the real password still logs in" test $? -eq 0
# shellcheck disable=SC2086 # $WRAP is a command prefix
out=$(pam_env $WRAP "$DURESS" test --stdin --pam-dir "$T/pam.d" alice --service duress-test <<<'Real-pw-1' 2>&1)
check "a valid line: no inert warning" test "$(grep -c 'inert' <<<"$out")" -eq 0

out=$("$DURESS" test 2>&1)
check "no USER: exit 2" test $? -eq 2
out=$("$DURESS" test --help 2>&1)
check "test --help" grep -q "Usage: duress test" <<<"$out"

tap_end
