#!/bin/bash
# duress test through the real libpam (pam_wrapper) and pam_unix, with a fake
# user (nss_wrapper): it must report real, duress and wrong passwords as a
# login would see them, and for a duress password what matched, what was
# skipped and how each action ended (issue 18, item 1: the rehearsal).
# TAP output.  Usage: test_pamtest.sh DURESS MODULE
set -u
DURESS=$1
MODULE=$2
# The action runner of the same build tree, next to the module (src/meson.build).
RUNNER=$(readlink -f "$(dirname "$MODULE")/session-helper")
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"
own_shadow_or_rerun "$@"

if [ "$(id -u)" -eq 0 ]; then uid=20001 gid=20001; else uid=$(id -u) gid=$(id -g); fi
hash=$(openssl passwd -6 'Real-pw-1')
mkdir -p "$T/pam.d" "$T/home/alice" "$T/out" "$T/global"
chmod 1777 "$T/out"
chmod 700 "$T/global"
printf 'root:x:0:0:root:/root:/bin/sh\nalice:%s:%s:%s:Alice:%s:/bin/sh\n' "$hash" "$uid" "$gid" "$T/home/alice" >"$T/passwd"
printf 'root:x:0:\nalice:x:%s:\n' "$gid" >"$T/group"
printf 'auth [success=2 default=ignore] pam_unix.so nodelay\nauth [success=1 default=ignore] %s global_dir=%s runner=%s state_dir=%s\nauth requisite pam_deny.so\nauth required pam_permit.so\naccount required pam_permit.so\n' "$MODULE" "$T/global" "$RUNNER" "$T/state" >"$T/pam.d/duress-test"
printf 'auth required pam_deny.so\naccount required pam_deny.so\n' >"$T/pam.d/other"
mkdir -m 700 "$T/home/alice/.duress"
D=$T/home/alice/.duress
# mark: the side effect counted (once per run) and the variable it saw, on
# its output and in a file (the module's runs have no output to read).
# shellcheck disable=SC2016 # the action expands it, not this script
printf '#!/bin/sh\nid -u >> %s/out/ran\necho "${DURESS_REHEARSE-unset}" >> %s/out/env\necho "mark says DURESS_REHEARSE=${DURESS_REHEARSE-unset}"\n' "$T" "$T" >"$D/mark"
# fail3 also counts the pipes it holds beyond stdout and stderr: the report pipe is not one.
# shellcheck disable=SC2016 # the action expands it, not this script
# The listing goes to a file, not through a pipe of the shell's own (a command
# substitution or a pipeline would be counted, or reuse a listed number); the
# shell's saved copy of stdout (dash keeps one above 9) is the output pipe.
printf '#!/bin/sh\necho fail3 says hello\nf=/tmp/fail3-fds.$$\nls -l /proc/$$/fd/ >"$f"\nn=$(awk '"'"'$9 == 2 { out = $11 } $9 > 2 && $11 ~ /^pipe:/ { p[$11] = 1 } END { n = 0; for (k in p) if (k != out) n++; print n }'"'"' "$f")\nrm -f "$f"\necho "fail3 holds $n other pipes"\nexit 3\n' >"$D/fail3"
printf '#!/bin/sh\ntouch %s/out/edited\n' "$T" >"$D/edited"
printf '#!/bin/sh\ntouch %s/out/other\n' "$T" >"$D/other"
# slow: writes after duress test's bound, then leaves a mark (SIGPIPE would stop it first).
printf '#!/bin/sh\nsleep 3\necho slow says late\ntouch %s/out/slow\n' "$T" >"$D/slow"
# once1: signed --once (issue 26); it records its runs as mark does.
printf '#!/bin/sh\nid -u >> %s/out/ran\n' "$T" >"$D/once1"
# A hostile name: a newline and an escape sequence must reach no terminal raw.
evil=$'evil\n\e[31mname'
printf '#!/bin/sh\nprintf "evil prints \\033[2J\\n"\n' >"$D/$evil"
chmod 700 "$D"/*
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$D/mark" "$D/fail3" "$D/edited" "$D/$evil" <<<"Duress-pw-2" >/dev/null 2>&1
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$D/other" <<<"Other-pw-4" >/dev/null 2>&1
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$D/slow" <<<"Slow-pw-5" >/dev/null 2>&1
"$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost --once "$D/once1" <<<"Once-pw-6" >/dev/null 2>&1
echo 'echo changed' >>"$D/edited"
chown -R "$uid:$gid" "$T/home/alice"

pam_env() {
	env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libpam_wrapper.so libnss_wrapper.so" \
		PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$T/pam.d" \
		NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group" "$@"
}
run_test() { # run_test PASSWORD [SERVICE]: sets out, rc
	# shellcheck disable=SC2086 # $WRAP is a command prefix
	out=$(pam_env $WRAP "$DURESS" test --stdin --pam-dir "$T/pam.d" --service "${2:-duress-test}" ${3:-} alice <<<"$1" 2>&1)
	rc=$?
}
# ran_as UID: the action wrote UID (waited for up to 5 s).
ran_as() { wait_for 5 test -s "$T/out/ran" && [ "$(cat "$T/out/ran")" = "$1" ]; }
# nothing_ran: once what the login started has ended (root.sh), an action
# that ran would have written.
nothing_ran() { actions_settled 15 "$RUNNER" && test ! -e "$T/out/ran"; }

# As root, the machine's shadow entries are out of sight (own_shadow_or_rerun).
[ "$(id -u)" -ne 0 ] || check "root: the machine's shadow file is hidden" test ! -s /etc/shadow

run_test 'Real-pw-1'
check "real password: exit 0" test $rc -eq 0
check "real password: says the login would succeed" grep -qx "result: the login would succeed" <<<"$out"
check "real password: authenticate and account reported" test "$(grep -c '^authenticate: Success$\|^account: Success$' <<<"$out")" -eq 2
check "real password: no action ran" nothing_ran

run_test 'Duress-pw-2'
echo "$out" | sed "s/^/# /"
check "duress password: exit 0" test $rc -eq 0
check "duress password: says the login would succeed" grep -qx "result: the login would succeed" <<<"$out"
check "duress password: the action ran as alice" ran_as "$uid"
check "duress password: the directory is named" grep -qx "$D:" <<<"$out"
check "duress password: mark matches" grep -qx "  mark: matches" <<<"$out"
check "duress password: fail3 matches" grep -qx "  fail3: matches" <<<"$out"
check "duress password: other is armed for another password" grep -qx "  other: armed, another password" <<<"$out"
check "duress password: the edited action is skipped, with the reason" grep -qx "  edited: skipped: content changed since signing" <<<"$out"
check "duress password: the skip is said once, on its action's line (not the module's log line too)" \
	test "$(grep -c 'content changed since signing' <<<"$out")" -eq 1
check "duress password: the global directory is named" grep -qx "$T/global:" <<<"$out"
check "duress password: says what runs, for real" grep -qx "running 3 actions for real" <<<"$out"
check "duress password: fail3's exit status and time" grep -qE '^  fail3 \(as alice\): exit 3 after [0-9]+\.[0-9]{2} s$' <<<"$out"
check "duress password: mark's exit status and time" grep -qE '^  mark \(as alice\): exit 0 after [0-9]+\.[0-9]{2} s$' <<<"$out"
check "duress password: the actions' output is shown" grep -qx "fail3 says hello" <<<"$out"
check "duress password: no action holds the report pipe" grep -qx "fail3 holds 0 other pipes" <<<"$out"
check "duress password: without --rehearse no DURESS_REHEARSE" grep -qx "mark says DURESS_REHEARSE=unset" <<<"$out"
check "duress password: the hostile name is escaped" grep -qF '  evil\x0a\x1b[31mname: matches' <<<"$out"
check "duress password: the hostile name's end is escaped" grep -qE '^  evil\\x0a\\x1b\[31mname \(as alice\): exit 0 after' <<<"$out"
check "duress password: an action's escape sequence is shown escaped" grep -qxF 'evil prints \x1b[2J' <<<"$out"
check "duress password: no escape byte reaches the output" test "$(grep -c $'\e' <<<"$out")" -eq 0
check "duress password: the action ran exactly once (no second run by the module)" \
	eval 'actions_settled 15 "$RUNNER" && test "$(wc -l <"$T/out/ran")" -eq 1'
check "duress password: the authentication is judged, not run again" grep -qx "authenticate: pam_duress.so succeeds (judged from the stack, not run twice)" <<<"$out"
check "duress password: the account check ran" grep -qx "account: Success" <<<"$out"
check "duress password: the skipped action did not run" test ! -e "$T/out/edited"
check "duress password: the action for another password did not run" test ! -e "$T/out/other"

rm -f "$T/out/ran" "$T/out/env"
run_test 'Duress-pw-2' duress-test --rehearse
echo "$out" | sed "s/^/# /"
check "rehearse: exit 0" test $rc -eq 0
check "rehearse: says it rehearses" grep -qx "rehearsing 3 actions (DURESS_REHEARSE=1)" <<<"$out"
check "rehearse: the action sees DURESS_REHEARSE=1, its output shown" grep -qx "mark says DURESS_REHEARSE=1" <<<"$out"
check "rehearse: fail3's exit status" grep -qE '^  fail3 \(as alice\): exit 3 after ' <<<"$out"
check "rehearse: says the login would succeed" grep -qx "result: the login would succeed" <<<"$out"

# The module's path never rehearses, whatever the caller's environment: a
# stack the CLI cannot read (--pam-dir elsewhere) makes duress test run the
# real stack, and so the module itself, with DURESS_REHEARSE=1 in its environment.
rm -f "$T/out/ran" "$T/out/env"
mkdir -p "$T/no-pam.d"
# shellcheck disable=SC2086 # $WRAP is a command prefix
out=$(DURESS_REHEARSE=1 pam_env $WRAP "$DURESS" test --stdin --pam-dir "$T/no-pam.d" --service duress-test alice <<<'Duress-pw-2' 2>&1)
rc=$?
echo "$out" | sed "s/^/# /"
check "through the module: the login succeeds" test $rc -eq 0
check "through the module: pam_authenticate ran" grep -qx "authenticate: Success" <<<"$out"
check "through the module: the action ran" ran_as "$uid"
check "through the module: the action did not see DURESS_REHEARSE" eval 'actions_settled 15 "$RUNNER" && test "$(cat "$T/out/env")" = unset'

rm -f "$T/out/ran"
# Past --timeout, what still runs is named, and goes on.
run_test 'Slow-pw-5' duress-test '--timeout 1'
check "timeout: the slow action is still running" grep -qx "  slow (as alice): still running after 1 s (it goes on, detached)" <<<"$out"
check "timeout: the login would still succeed" test $rc -eq 0
# no_copy_left PASSWORD: no process of this CLI (the reader left behind to
# drain the actions' output) holds the password in its memory.
no_copy_left() {
	python3 - "$(readlink -f "$DURESS")" "$1" <<'PY'
import os, re, sys
exe, secret = sys.argv[1], sys.argv[2].encode()
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if os.readlink(f"/proc/{pid}/exe") != exe:
            continue
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
            for line in maps:
                m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
                start, end = (int(m.group(1), 16), int(m.group(2), 16)) if m else (0, 0)
                # A sanitizer's shadow is terabytes of nothing: not read.
                if end - start > 1 << 30:
                    continue
                # In chunks, overlapping by the secret's length; unmapped ones fail alone.
                for at in range(start, end, 1 << 20):
                    try:
                        mem.seek(at)
                        chunk = mem.read(min((1 << 20) + len(secret), end - at))
                    except OSError:
                        continue
                    if secret in chunk:
                        sys.exit(f"process {pid} holds it")
    except OSError:
        pass
PY
}
if [ "$(id -u)" -eq 0 ]; then
	check "timeout: the reader left behind holds no copy of the password" no_copy_left 'Slow-pw-5'
else
	skip "timeout: the reader left behind holds no copy of the password (needs root to read its memory)"
fi
check "timeout: the slow action went on, writing after duress test ended" wait_for 10 test -e "$T/out/slow"

# An elevation service: the actions run, the login is refused, and why is said.
cp "$T/pam.d/duress-test" "$T/pam.d/sudo"
rm -f "$T/out/ran"
run_test 'Duress-pw-2' sudo
check "elevation: exit 1" test $rc -eq 1
check "elevation: refused, with the reason" grep -qx "authenticate: refused, as for a wrong password: the service is an elevation (sudo, pkexec...), which a duress password never passes without allow_root" <<<"$out"
check "elevation: says the login would be refused" grep -qx "result: the login would be refused" <<<"$out"
check "elevation: the actions still ran, once" eval 'actions_settled 15 "$RUNNER" && test "$(wc -l <"$T/out/ran")" -eq 1'

# Not root, for another user: neither directory is checked, and each says why
# as the core sees it (the CLI runs as nobody; the stack must be readable).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	actions_settled 15 "$RUNNER"
	rm -f "$T/out/ran"
	chmod 755 "$T" "$T/pam.d"
	chmod 644 "$T/pam.d"/* "$T/passwd" "$T/group"
	# shellcheck disable=SC2086 # $WRAP is a command prefix
	out=$(pam_env setpriv --reuid=65534 --regid=65534 --clear-groups $WRAP "$DURESS" test --stdin --pam-dir "$T/pam.d" --service duress-test alice <<<'Duress-pw-2' 2>&1)
	echo "$out" | sed "s/^/# /"
	check "not root: the user's actions are not checked, and why" grep -qx "per-user actions: not checked: only root or the user can run them (sudo duress test)" <<<"$out"
	check "not root: the global actions are not checked, and why" grep -qx "$T/global: not checked: only root can run global actions (sudo duress test)" <<<"$out"
	check "not root: nothing matches" grep -qx "no action matches this password" <<<"$out"
	check "not root: no action ran" nothing_ran
else
	for i in 1 2 3 4; do skip "not root: needs root and setpriv"; done
fi

rm -f "$T/out/ran"
run_test 'Wrong-pw-3'
check "wrong password: exit 1" test $rc -eq 1
check "wrong password: says nothing matches" grep -qx "no action matches this password" <<<"$out"
check "wrong password: the other action is still armed" grep -qx "  other: armed, another password" <<<"$out"
check "wrong password: says the login would be refused" grep -qx "result: the login would be refused" <<<"$out"
check "wrong password: authentication failure reported" grep -qx "authenticate: Authentication failure" <<<"$out"
check "wrong password: no action ran" nothing_ran

run_test 'Real-pw-1' other
check "another service (pam_deny): refused" test $rc -eq 1

# Issue 26: a once action.  A rehearsal runs it and leaves no record; the
# first real run records it; the next says it does not run, and logs in.
# Not as root the module cannot keep a record: it never runs.
spent_line="  once1: matches, but it is once and does not run (it ran before, or its record cannot be made)"
rm -f "$T/out/ran"
if [ "$(id -u)" -eq 0 ]; then
	run_test 'Once-pw-6' duress-test --rehearse
	check "once, rehearsed: it runs, and no record is made" \
		test -n "$(grep -x "  once1: matches" <<<"$out")" -a -n "$(grep -x "rehearsing 1 action (DURESS_REHEARSE=1)" <<<"$out")" -a -z "$(ls -A "$T/state/once" 2>/dev/null)"
	actions_settled 15 "$RUNNER"
	rm -f "$T/out/ran"
	run_test 'Once-pw-6'
	check "once, first run: it runs for real, and its record is made" \
		test -n "$(grep -x "running 1 action for real" <<<"$out")" -a "$(ls -A "$T/state/once" | wc -l)" -eq 1
	check "once, first run: it ran" ran_as "$uid"
	actions_settled 15 "$RUNNER"
	rm -f "$T/out/ran"
else
	skip "once, rehearsed: it runs, and no record is made (needs root)"
	skip "once, first run: it runs for real, and its record is made (needs root)"
	skip "once, first run: it ran (needs root)"
fi
run_test 'Once-pw-6'
echo "$out" | sed "s/^/# /"
check "once, spent: the login would succeed" test $rc -eq 0 -a -n "$(grep -x "result: the login would succeed" <<<"$out")"
check "once, spent: says that it does not run, and that nothing runs" \
	test -n "$(grep -xF "$spent_line" <<<"$out")" -a -n "$(grep -x "no action runs: each one that matches is once, and does not run" <<<"$out")"
check "once, spent: nothing ran" nothing_ran

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
