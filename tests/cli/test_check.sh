#!/bin/bash
# duress check against a fixture with one problem per action: each line must
# name the exact reason the module would skip it.  TAP output for meson.
# Usage: test_check.sh PATH/TO/duress
set -u
DURESS=$1
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
sign() { duress sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$@" >/dev/null 2>&1 <<<"Check-pw-1"; }
new_action() { printf '#!/bin/sh\necho %s\n' "$1" >"$D/$1"; chmod 700 "$D/$1"; }
# expect NAME TEXT: the line for action NAME is exactly TEXT.
expect() {
	local line
	line=$(grep -F "$D/$1: " <<<"$out")
	if [ "$line" = "$D/$1: $2" ]; then
		ok "$1: $2"
	else
		not_ok "$1: expected '$2', got '${line#"$D/$1: "}'"
	fi
}

D=$T/user
mkdir -m 700 "$D"

new_action armed && sign "$D/armed"
new_action nosig
new_action changed && sign "$D/changed" && echo '# edited' >>"$D/changed"
new_action groupw && sign "$D/groupw" && chmod 770 "$D/groupw"
new_action noexec && sign "$D/noexec" && chmod 600 "$D/noexec"
ln -s "$D/armed" "$D/link"
mkfifo "$D/fifo"
mkdir "$D/subdir"
truncate -s 17M "$D/huge" && chmod 700 "$D/huge"
new_action costly
printf '$duress$v=1$m=4194304,t=1,p=1$EREREREREREREREREREREQ$IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI$MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM\n' >"$D/costly.sig"
chmod 600 "$D/costly.sig"
new_action malformed && printf 'not a signature\n' >"$D/malformed.sig" && chmod 600 "$D/malformed.sig"
new_action legacy && head -c 32 /dev/urandom >"$D/legacy.sha256" && chmod 600 "$D/legacy.sha256"
new_action sigw && sign "$D/sigw" && chmod 622 "$D/sigw.sig"
new_action siglink && ln -s "$D/armed.sig" "$D/siglink.sig"
new_action readable && sign "$D/readable" && chmod 705 "$D/readable"
printf 'KEY=1\n' >"$T/companion.conf" && chmod 600 "$T/companion.conf"
new_action companion && duress sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost --also "$T/companion.conf" "$D/companion" >/dev/null 2>&1 <<<"Check-pw-1"
rm "$T/companion.conf"
printf 'notes\n' >"$D/notes.txt" && chmod 600 "$D/notes.txt"
printf 'KEY=1\n' >"$T/bound.conf" && chmod 600 "$T/bound.conf"
new_action bound && sign --also "$T/bound.conf" "$D/bound" && echo 'KEY=2' >>"$T/bound.conf"

out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
expect armed "ARMED"
expect nosig "SKIPPED: no signature (run: duress sign)"
expect changed "SKIPPED: content changed since signing; fix: if the change is yours, sign it again: duress sign $D/changed"
expect bound "SKIPPED: content changed since signing; fix: if the change is yours, sign it again: duress sign --also $T/bound.conf $D/bound"
expect groupw "SKIPPED: writable by group or others"
expect noexec "SKIPPED: not executable"
expect link "SKIPPED: symlink"
expect fifo "SKIPPED: not a regular file"
expect subdir "SKIPPED: not a regular file"
expect huge "SKIPPED: too large (max_size=)"
expect costly "SKIPPED: signature cost is over the module's cap"
expect malformed "SKIPPED: signature is malformed"
expect legacy "SKIPPED unless legacy_sha256: weak legacy .sha256 signature (re-sign with duress sign)"
expect sigw "SKIPPED: signature is writable by group or others"
expect siglink "SKIPPED: signature is not a regular file"
expect readable "ARMED (warning: readable by others)"
chmod 644 "$D/armed.sig"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
expect armed "ARMED (warning: signature readable by others, who can guess offline)"
chmod 600 "$D/armed.sig"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
expect companion "SKIPPED: a companion file (--also) is missing or unreadable"
expect notes.txt "ignored: not an action (neither executable nor signed)"
if [ $rc -eq 1 ]; then ok "exit 1 when an action is not armed"; else not_ok "exit $rc, expected 1"; fi
if grep -q "^not every action is armed$" <<<"$out"; then ok "summary line"; else not_ok "summary line"; fi

# The fix of a changed action, run as printed (the password on standard input), arms it again.
fix=$(grep -F "$D/bound: " <<<"$out")
fix=${fix#*sign it again: duress sign }
read -r -a fix_args <<<"$fix"
sign "${fix_args[@]}"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
expect bound "ARMED"

# The same fix where the directory, the name and the companion need quoting: pasted as
# printed, it signs that action; a name with a control byte gets the fix in words.
D="$T/odd dir's"
mkdir -m 700 "$D"
printf 'K=1\n' >"$D/a b.conf" && chmod 600 "$D/a b.conf"
new_action "it's" && sign --also "$D/a b.conf" "$D/it's" && echo 'K=2' >>"$D/a b.conf"
new_action $'tab\tbed' && sign "$D/"$'tab\tbed' && echo 'echo 2' >>"$D/"$'tab\tbed'
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
echo "$out" | diag
CHANGED="SKIPPED: content changed since signing; fix: if the change is yours, sign it again"
check "a changed action whose paths need quoting: each path one shell word" grep -qxF \
	"$D/it's: $CHANGED: duress sign --also '$T/odd dir'\\''s/a b.conf' '$T/odd dir'\\''s/it'\\''s'" <<<"$out"
check "a changed action with a control byte in its name: the fix in words" grep -qxF \
	"$D/tab\\x09bed: $CHANGED with duress sign (its name cannot be pasted as it shows: rename it first)" <<<"$out"
fix=$(grep -F "$D/it's: " <<<"$out")
# As a shell reads a pasted line: the words of the fix, quotes and all.
eval "sign ${fix#*sign it again: duress sign}"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
expect "it's" "ARMED"

# A directory with only armed actions (and a data file) exits 0.
D=$T/clean
mkdir -m 700 "$D"
new_action one && sign "$D/one"
new_action two && sign "$D/two"
printf 'data\n' >"$D/data" && chmod 600 "$D/data"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
rc=$?
expect one "ARMED"
if [ $rc -eq 0 ]; then ok "exit 0 when every action is armed"; else not_ok "exit $rc on a clean directory"; fi

# Too many different salts: a per-user directory computes two sets, the global
# one four.  duress sign refuses a third set here, so s3..s5 are signed apart.
D=$T/salts
mkdir -m 700 "$D" "$T/apart"
for i in 1 2 3 4 5; do
	new_action "s$i"
	if [ "$i" -le 2 ]; then
		duress sign --stdin --memlimit $((8 * i))K --opslimit 1 --allow-weak-cost "$D/s$i" >/dev/null 2>&1 <<<"Check-pw-1"
		continue
	fi
	mv "$D/s$i" "$T/apart/"
	duress sign --stdin --memlimit $((8 * i))K --opslimit 1 --allow-weak-cost "$T/apart/s$i" >/dev/null 2>&1 <<<"Check-pw-1"
	mv "$T/apart/s$i" "$T/apart/s$i.sig" "$D/"
done
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
expect s2 "ARMED"
expect s3 "SKIPPED: too many different salts or costs in the directory"
if [ "$(id -u)" -eq 0 ]; then
	out=$(duress check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	expect s4 "ARMED"
	expect s5 "SKIPPED: too many different salts or costs in the directory"
else
	skip "global directory: four salts (needs root to own it)"
	skip "global directory: the fifth salt skipped (needs root)"
fi

# Per-user directories have the tighter default caps: 64 MiB and 2 passes.
D=$T/ucost
mkdir -m 700 "$D"
new_action heavy && printf '$duress$v=1$m=65537,t=1,p=1$EREREREREREREREREREREQ$IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI$MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM\n' >"$D/heavy.sig" && chmod 600 "$D/heavy.sig"
new_action passes && printf '$duress$v=1$m=8,t=3,p=1$EREREREREREREREREREREQ$IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI$MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM\n' >"$D/passes.sig" && chmod 600 "$D/passes.sig"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
expect heavy "SKIPPED: signature cost is over the module's cap"
expect passes "SKIPPED: signature cost is over the module's cap"

# Names are data: a newline or an ESC in a file name must not forge output.
D=$T/names
mkdir -m 700 "$D"
forged=$'x\nsshd[1]: Accepted password for root from 1.2.3.4'
printf '#!/bin/sh\n' >"$D/$forged" && chmod 700 "$D/$forged"
printf '#!/bin/sh\n' >"$D/"$'red\e[31m' && chmod 700 "$D/"$'red\e[31m'
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
echo "$out" | sed 's/^/# /' | cat -v
check "a newline in a name: one line, escaped" test "$(grep -c 'sshd\[1\]' <<<"$out")" -eq 1 -a "$(grep -cF "$D/x\\x0asshd[1]: Accepted password for root from 1.2.3.4: SKIPPED: no signature" <<<"$out")" -eq 1
check "an ESC in a name never reaches the terminal" test -z "$(tr -d -c '\033' <<<"$out")" -a -n "$(grep -F 'red\x1b[31m: SKIPPED' <<<"$out")"

# Whole-directory problems.
# said WANT LINE...: the exit status $rc is WANT and $out has each whole LINE.
said() {
	local want=$1 l
	shift
	[ "$rc" -eq "$want" ] || return 1
	for l; do grep -qxF -- "$l" <<<"$out" || return 1; done
}
D=$T/worldw
mkdir -m 777 "$D"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
rc=$?
check_why "world-writable directory: whole directory skipped, exit 1" "got '$out' (exit $rc)" \
	said 1 "$D: SKIPPED (whole directory): bad owner, or writable by group or others"
out=$(duress check --pam-dir "" --user-dir "$T/missing" --global-dir "" 2>&1)
rc=$?
check_why "missing directory: said, exit 0" "got '$out' (exit $rc)" \
	said 0 "$T/missing: no such directory (no per-user actions)" "no actions found"
if [ "$(id -u)" -eq 0 ]; then
	D=$T/private
	mkdir -m 700 "$D"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
	rc=$?
	check_why "unreadable directory: said, exit 1" "got '$out' (exit $rc)" \
		said 1 "$D: SKIPPED (whole directory): Permission denied"
	D=$T/owner
	mkdir -m 755 "$D"
	new_action theirs && sign "$D/theirs" && chown 65534 "$D/theirs"
	out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
	expect theirs "SKIPPED: bad owner"
	mkdir -m 700 "$T/global"
	D=$T/global
	new_action g && sign "$D/g"
	out=$(duress check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	expect g "ARMED"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	rc=$?
	check_why "global directory unreadable by a user: said, not a failure" "got '$out' (exit $rc)" \
		said 0 "$D: not readable by you (run duress check as root to see global actions)"
	# Issue 25, item 8: what duress add --global makes (the directory 0755, the
	# action 0700, its config and signature 0600), checked without sudo.
	D=$T/global-add
	mkdir -m 755 "$D"
	new_action net && printf 'K=1\n' >"$D/net.conf" && chmod 600 "$D/net.conf" && sign --also "$D/net.conf" "$D/net"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	rc=$?
	check_why "a global action only root reads, checked as a user: said, not a failure (exit 0)" "got '$out' (exit $rc)" \
		said 0 "$D/net: not readable by you (run duress check as root to see it)" \
		"$D/net.conf: not readable by you (run duress check as root to see it)" \
		"no action you can read (run duress check as root to see the others)"
	new_action open && sign "$D/open" && chmod 755 "$D/open" && chmod 644 "$D/open.sig"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	rc=$?
	check_why "... beside one the user can read, ARMED: every action you can read is armed" "got '$out' (exit $rc)" \
		said 0 "$D/open: ARMED (warning: readable by others) (warning: signature readable by others, who can guess offline)" \
		"every action you can read is armed (run duress check as root to see the others)"
	chmod 600 "$D/open.sig"
	rm "$D/open.sig"
	new_action open
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	rc=$?
	check_why "... an unsigned one the user can read is still a failure" "got '$out' (exit $rc)" \
		said 1 "$D/open: SKIPPED: no signature (run: duress sign)" "not every action is armed"
	out=$(duress check --pam-dir "" --user-dir "" --global-dir "$D" 2>&1)
	rc=$?
	check_why "as root: the action ARMED, its config its companion" "got '$out' (exit $rc)" \
		said 1 "$D/net: ARMED" "$D/net.conf: companion of net (bound by its signature)"
else
	skip "unreadable directory (needs root to run as another user)"
	skip "bad owner (needs root to chown)"
	skip "global directory owned by root (needs root)"
	skip "global directory unreadable by a user (needs root)"
	for t in "a global action only root reads" "beside one the user can read" "an unsigned one" "as root"; do
		skip "$t (needs root)"
	done
fi

# --- the PAM stack ----------------------------------------------------------------
# stack NAME COMMON-AUTH: a PAM directory whose sshd, sudo and login include
# that common-auth (printf %b: \n and \t), and whose other denies.
stack() {
	P=$T/pam-$1
	mkdir -p "$P"
	printf '%b' "$2" >"$P/common-auth"
	for s in sshd sudo login; do echo "@include common-auth" >"$P/$s"; done
	printf 'auth required pam_deny.so\n' >"$P/other"
}
run_check() { out=$(duress check --pam-dir "$P" "$@" 2>&1); rc=$?; echo "$out" | sed 's/^/# /'; }
# has DESCRIPTION EXIT LINE: the output has exactly LINE, and the exit status is EXIT.
has() {
	if grep -qxF -- "$3" <<<"$out" && [ "$rc" -eq "$2" ]; then
		ok "$1"
	else
		not_ok "$1: expected '$3' and exit $2, got exit $rc"
	fi
}
NODIRS=(--user-dir "" --global-dir "" --pam-configs-dir "$T/no-pam-configs")
FAILS="fails the stack, and nothing after it can undo that; fix: correct that line (a control PAM cannot read, such as success=end, fails every result), or move it"
TYPICAL='auth\t[success=2 default=ignore]\tpam_unix.so nullok\nauth\t[success=1 default=ignore]\tpam_duress.so\nauth\trequisite\tpam_deny.so\nauth\trequired\tpam_permit.so\n'

stack typical "$TYPICAL"
run_check "${NODIRS[@]}"
has "typical stack: services found through common-auth" 0 "PAM stack $P: checking the services whose auth includes common-auth: login sshd sudo"
has "typical stack: sshd reaches the module" 0 "service sshd: OK: common-auth:2 (pam_duress.so) is reached when the real password fails, and a duress password logs in"
has "typical stack: sudo refuses by design" 0 "service sudo: OK: common-auth:2 (pam_duress.so) is reached; duress password refused here by design (allow_root off): the actions run, the answer is a wrong password's"
check "typical stack, no passwd service file: no password stack line" test -z "$(grep '^service passwd' <<<"$out")"
# Issue 26, item 1: passwd's password stack, where the machine has one.
printf '@include common-password\n' >"$P/passwd"
printf 'password [success=1 default=ignore] pam_unix.so obscure yescrypt\npassword requisite pam_deny.so\npassword required pam_permit.so\n' >"$P/common-password"
run_check "${NODIRS[@]}"
has "passwd without the module before pam_unix: a WARN with the fix, exit unchanged" 0 "service passwd: WARN: no pam_duress.so password line before pam_unix: passwd can set a duress password as the real one (then every login before pam_unix runs the actions); fix: add 'password requisite pam_duress.so' before pam_unix (docs/configuration.md, Changing a password)"
sed -i '1i password requisite pam_duress.so' "$P/common-password"
run_check "${NODIRS[@]}"
check "passwd with the module before pam_unix: no password stack line" test "$rc" -eq 0 -a -z "$(grep '^service passwd' <<<"$out")"
rm "$P/passwd" "$P/common-password"
printf 'account required pam_permit.so\n' >"$P/chfn"
run_check --service sshd --service nowhere --service chfn "${NODIRS[@]}"
NOFIX="fix: add a pam_duress.so auth line next to pam_unix.so (docs/configuration.md; Fedora: docs/install-fedora.md, Arch: docs/install-arch.md)"
has "a service without auth lines gets other's" 1 "service chfn (no auth lines of its own: other's): ERROR: no pam_duress.so auth line (auth lines from: other); $NOFIX"
has "a service without a file gets other's stack" 1 "service nowhere (no file of its own: other's stack): ERROR: no pam_duress.so auth line (auth lines from: other); $NOFIX"
check "--service: only the services named" test "$(grep -c '^service ' <<<"$out")" -eq 3

stack missing 'auth\t[success=1 default=ignore]\tpam_unix.so nullok\nauth\trequisite\tpam_deny.so\nauth\trequired\tpam_permit.so\n'
run_check "${NODIRS[@]}"
has "module missing: the fix outside Debian's package" 1 "service sshd: ERROR: no pam_duress.so auth line (auth lines from: common-auth); $NOFIX"
# Issue 18, item 4: with the Debian package's profile there, the fix is pam-auth-update.
mkdir -p "$T/pam-configs" && printf 'Name: Duress passwords\n' >"$T/pam-configs/duress"
run_check "${NODIRS[@]}" --pam-configs-dir "$T/pam-configs"
has "module missing, Debian package installed: the fix is pam-auth-update" 1 "service sshd: ERROR: no pam_duress.so auth line (auth lines from: common-auth); fix: sudo pam-auth-update --enable duress (a server; duress-laptop for a laptop)"
has "module missing: the summary says so" 1 "the PAM stack needs fixing (see the service lines above)"
stack debian-password "$TYPICAL"
printf '@include common-password\n' >"$P/passwd"
printf 'password [success=1 default=ignore] pam_unix.so obscure yescrypt\npassword requisite pam_deny.so\npassword required pam_permit.so\n' >"$P/common-password"
run_check "${NODIRS[@]}" --pam-configs-dir "$T/pam-configs"
has "the duress profile without duress-password: the WARN's fix is pam-auth-update" 0 "service passwd: WARN: no pam_duress.so password line before pam_unix: passwd can set a duress password as the real one (then every login before pam_unix runs the actions); fix: sudo pam-auth-update --enable duress-password (docs/configuration.md, Changing a password)"

stack die 'auth [success=1 default=die] pam_unix.so\nauth sufficient pam_duress.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "pam_unix default=die: never reached" 1 "service sshd: ERROR: common-auth:2 (pam_duress.so) is never reached when the real password fails: common-auth:1 (pam_unix.so) ends the stack before it; fix: make that line default=ignore, or move it after pam_duress.so"

stack deny 'auth [success=2 default=ignore] pam_unix.so\nauth requisite pam_deny.so\nauth sufficient pam_duress.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "requisite pam_deny before it: never reached" 1 "service sshd: ERROR: common-auth:3 (pam_duress.so) is never reached when the real password fails: common-auth:2 (pam_deny.so) ends the stack before it; fix: make that line default=ignore, or move it after pam_duress.so"

stack jump 'auth [success=3 default=2] pam_unix.so\nauth [success=2 default=ignore] pam_duress.so\nauth requisite pam_deny.so\nauth required pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "a jump over it" 1 "service sshd: ERROR: common-auth:2 (pam_duress.so) is never reached when the real password fails: common-auth:1 (pam_unix.so) jumps over it; fix: count that line's success= and default= jumps again"

stack account 'auth [success=1 default=ignore] pam_unix.so\nauth requisite pam_deny.so\nauth required pam_permit.so\naccount required pam_duress.so\n'
run_check "${NODIRS[@]}"
has "only on a non-auth line" 1 "service sshd: ERROR: pam_duress.so is only on a non-auth line, common-auth:4 (pam_duress.so): the module works only as auth; fix: make that line an auth line"

stack optional 'auth [success=2 default=ignore] pam_unix.so\nauth optional pam_duress.so\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "optional, then requisite pam_deny: never a login" 1 "service sshd: ERROR: common-auth:2 (pam_duress.so) is reached, but its success never ends in a login: common-auth:3 (pam_deny.so) $FAILS"

stack landing 'auth [success=3 default=ignore] pam_unix.so\nauth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "success=1 lands on pam_deny" 1 "service sshd: ERROR: common-auth:2 (pam_duress.so) is reached, but its success never ends in a login: common-auth:4 (pam_deny.so) $FAILS"

stack nogrant 'auth [success=2 default=ignore] pam_unix.so\nauth [success=2 default=ignore] pam_duress.so\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "a jump to the end is no login" 1 "service sshd: ERROR: common-auth:2 (pam_duress.so) is reached, but its success never ends in a login: nothing after it grants one (a jump is no success); fix: end the stack on auth required pam_permit.so"

stack anyone 'auth [success=2 default=2] pam_unix.so\nauth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "a stack that lets any password in" 1 "service sshd: ERROR: a wrong password logs in: the stack lets any password through; fix: count the success= and default= jumps again"

stack before 'auth [success=done default=ignore] pam_duress.so\nauth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
# Issue 18, item 4: before pam_unix, every password passes it; not "when the real password fails".
has "before pam_unix is valid, in words that fit it" 0 "service sshd: OK: common-auth:1 (pam_duress.so) is reached before pam_unix: every password passes it, and a duress password logs in"

# Issue 18, item 4: the real password's path.  A stack that locks everyone out is an
# ERROR naming the line, with the fix, even where a duress password would log in.
stack lockout 'auth [success=done default=ignore] pam_duress.so\nauth [success=end default=die] pam_unix.so try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
for s in login sshd sudo; do
	has "[success=end default=die] pam_unix: $s: the real password cannot log in" 1 "service $s: ERROR: the real password cannot log in: common-auth:2 (pam_unix.so) $FAILS"
done
check "lockout: no service says OK" test "$(grep -c 'OK:' <<<"$out")" -eq 0
stack denyfirst 'auth requisite pam_deny.so\nauth [success=2 default=ignore] pam_unix.so\nauth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}"
has "requisite pam_deny before pam_unix: the real password cannot log in" 1 "service sshd: ERROR: the real password cannot log in: common-auth:1 (pam_deny.so) $FAILS"
stack nopermit 'auth [success=2 default=ignore] pam_unix.so\nauth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\n'
run_check "${NODIRS[@]}"
has "no pam_permit after pam_unix's jump: the real password cannot log in" 1 "service sshd: ERROR: the real password cannot log in: the stack grants nothing (a jump is no success); fix: end the stack on auth required pam_permit.so"

stack misspelt "${TYPICAL/pam_duress.so/pam_duress.so servces=sshd wait=900}"
run_check "${NODIRS[@]}"
# Issue 18, item 5: a misspelt or malformed option makes the line inert: an ERROR with its fix.
has "misspelt servces=: an ERROR naming it and the fix, exit 1" 1 'ERROR: common-auth:2: pam_duress.so: unknown option "servces=sshd": the line is inert, no duress password works through it; fix: correct its spelling or remove it (pam_duress(8) lists the options)'
has "malformed wait=900: an ERROR naming it and the fix" 1 'ERROR: common-auth:2: pam_duress.so: bad value in option "wait=900": the line is inert, no duress password works through it; fix: give it a value pam_duress(8) allows, or remove it'
check "an option problem is said once, not per service" test "$(grep -c 'servces=' <<<"$out")" -eq 1
for s in login sshd sudo; do
	has "inert line: service $s is an ERROR, not OK" 1 "service $s: ERROR: common-auth:2 (pam_duress.so) is reached, but an option it does not know or cannot read makes it inert (the ERROR above names it): a duress password does not work here; fix: the option named above"
done
check "inert line: no service says a duress password logs in" test "$(grep -c 'OK:' <<<"$out")" -eq 0
check "inert line: the stack needs fixing" grep -qx "the PAM stack needs fixing (see the service lines above)" <<<"$out"
stack escaped "${TYPICAL/pam_duress.so/pam_duress.so servces=\\033[31m}"
run_check "${NODIRS[@]}"
check "a bad option is shown escaped" grep -qF 'unknown option "servces=\x1b[31m": the line is inert' <<<"$out"

stack services "${TYPICAL/pam_duress.so/pam_duress.so services=login}"
run_check "${NODIRS[@]}"
has "services= leaving sshd out by choice: a note, exit 0" 0 "service sshd: OFF: common-auth:2 (pam_duress.so) is reached, but its services= leaves sshd out: the module ignores every password here"
run_check --service sshd "${NODIRS[@]}"
has "services= leaving out a service named with --service: an error" 1 "service sshd: ERROR: common-auth:2 (pam_duress.so) is reached, but its services= leaves sshd out: the module ignores every password here; fix: add sshd to that line's services="
run_check --service login "${NODIRS[@]}"
has "services= that names the service" 0 "service login: OK: common-auth:2 (pam_duress.so) is reached when the real password fails, and a duress password logs in"

stack allowroot "${TYPICAL/pam_duress.so/pam_duress.so allow_root}"
run_check --service sudo "${NODIRS[@]}"
has "allow_root: sudo passes" 0 "service sudo: OK: common-auth:2 (pam_duress.so) is reached when the real password fails, and a duress password logs in"

stack broken "${TYPICAL}auth optional pam_cap.so \\\\\n"
run_check --service sshd "${NODIRS[@]}"
has "a trailing backslash: PAM cannot load it" 1 "service sshd: ERROR: Linux-PAM cannot load this stack, every login fails: common-auth:5: its file ends inside a continued line (a trailing backslash); fix: correct that line now, from a root shell you kept open"
stack atinclude 'auth required pam_permit.so\n@include common-nothere\n'
run_check --service sshd "${NODIRS[@]}"
has "@include of a missing file" 1 "service sshd: ERROR: Linux-PAM cannot load this stack, every login fails: common-auth:2: @include common-nothere: its file cannot be opened; fix: correct that line now, from a root shell you kept open"
stack include "$TYPICAL"
printf 'auth include common-gone\n@include common-auth\n' >"$P/sshd"
run_check --service sshd "${NODIRS[@]}"
has "a missing include fails the stack, the real password's too" 1 "service sshd: ERROR: the real password cannot log in: sshd:1 (a line PAM fails: its file cannot be opened) $FAILS"
head -c 70000 /dev/zero | tr '\0' '#' >"$P/sshd"
run_check --service sshd "${NODIRS[@]}"
has "a file over 64 KiB: one line" 1 "service sshd: cannot check: sshd: larger than 64 KiB"

out=$(duress check --pam-dir "$T/no-such-dir" 2>&1)
rc=$?
check "--pam-dir that does not exist: one line, exit 2" test $rc -eq 2 -a "$(wc -l <<<"$out")" -eq 1 -a -n "$(grep -F "duress check: --pam-dir $T/no-such-dir: No such file or directory" <<<"$out")"

# The module line's options choose the directories, caps and legacy_sha256.
SD=$T/stackdir
mkdir -m 700 "$SD"
D=$SD
new_action mine && sign "$SD/mine"
printf '#!/bin/sh\n# a long script, over a tiny cap\n' >"$SD/long" && chmod 700 "$SD/long" && sign "$SD/long"
new_action old && head -c 32 /dev/urandom >"$SD/old.sha256" && chmod 600 "$SD/old.sha256"
stack dirs "${TYPICAL/pam_duress.so/pam_duress.so user_dir=$SD global_dir=$T/g user_max_size=40 legacy_sha256}"
mkdir -m 700 "$T/g"
run_check --service sshd
expect_in() { if grep -qxF -- "$2" <<<"$out"; then ok "$1"; else not_ok "$1: no line '$2'"; fi; }
expect_in "user_dir= of the module line is checked" "$SD/mine: ARMED"
expect_in "user_max_size= of the module line applies" "$SD/long: SKIPPED: too large (max_size=)"
expect_in "legacy_sha256 of the module line arms a legacy signature" "$SD/old: ARMED (warning: weak legacy .sha256 signature, accepted by legacy_sha256: re-sign with duress sign)"
check "global_dir= of the module line is checked" grep -q "^$T/g: " <<<"$out"
run_check --service sshd --user-dir "$T/nouser" --global-dir ""
expect_in "--user-dir wins over the module line" "$T/nouser: no such directory (no per-user actions)"
check "--global-dir \"\" wins over the module line" test -z "$(grep "^$T/g" <<<"$out")"

# An armed script whose #! line cannot start it.
D=$T/shebang
mkdir -m 700 "$D"
printf '#!/nonexistent/sh\necho x\n' >"$D/nointerp" && chmod 700 "$D/nointerp" && sign "$D/nointerp"
printf '#!/bin/sh\r\necho x\r\n' >"$D/crlf" && chmod 700 "$D/crlf" && sign "$D/crlf"
printf 'echo x\n' >"$T/notexec" && chmod 644 "$T/notexec"
printf '#!%s\necho x\n' "$T/notexec" >"$D/noexec" && chmod 700 "$D/noexec" && sign "$D/noexec"
new_action fine && sign "$D/fine"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
rc=$?
expect nointerp "WILL FAIL: its #! interpreter /nonexistent/sh does not exist"
expect crlf "WILL FAIL: its #! line ends with a CR (Windows line ends): remove it and sign again"
expect noexec "WILL FAIL: its #! interpreter $T/notexec is not executable"
expect fine "ARMED"
check "a script that will not start: exit 1" test $rc -eq 1

# duress sign warns when the file is in no directory the module reads.
stack signdirs "${TYPICAL/pam_duress.so/pam_duress.so user_dir=$SD}"
mkdir -m 700 "$T/elsewhere"
D=$T/elsewhere
new_action lost
err=$(duress sign --pam-dir "$P" --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$D/lost" 2>&1 >/dev/null <<<"Check-pw-1")
rc=$?
check "sign outside user_dir=: one warning line naming the module line, still signed" test $rc -eq 0 -a -e "$D/lost.sig" -a "$err" = "duress: $D/lost: warning: not in a directory the module reads (user_dir=$SD, global_dir=/etc/duress.d, from common-auth:2 in $P)"
err=$(duress sign --pam-dir "$P" --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$SD/mine" 2>&1 >/dev/null <<<"Check-pw-1")
check "sign in the module line's user_dir=: no warning" test -z "$err"
stack signdefaults 'auth required pam_unix.so\n'
err=$(duress sign --pam-dir "$P" --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$D/lost" 2>&1 >/dev/null <<<"Check-pw-1")
check "sign with no module line: the defaults, said" test "$err" = "duress: $D/lost: warning: not in a directory the module reads (user_dir=%h/.duress, global_dir=/etc/duress.d: the module's defaults, no pam_duress.so line in $P)"

# --- Issue 18, item 3: the tells duress check can see ---------------------------------------
# lacks DESCRIPTION EXIT PATTERN LINE: exit EXIT, the output has the whole LINE (the
# part that runs), and no line matches PATTERN (what must not be said).
lacks() {
	if [ "$rc" -eq "$2" ] && grep -qxF -- "$4" <<<"$out" && ! grep -q -- "$3" <<<"$out"; then
		ok "$1"
	else
		not_ok "$1: expected exit $2, the line '$4' and none like '$3', got exit $rc"
	fi
}
LAPTOP_FIX="fix: sudo pam-auth-update --enable duress-laptop (or duress-before)"
AFTER_WARN="WARN: common-auth:2 (pam_duress.so) is after pam_unix on a laptop: a duress login leaves a pam_unix failure line and takes longer"
stack typical "$TYPICAL"
run_check "${NODIRS[@]}" --pam-configs-dir "$T/pam-configs" --machine laptop
has "laptop, after pam_unix: a WARN naming the log line and the time, fix: the laptop profile" 0 "$AFTER_WARN; $LAPTOP_FIX"
run_check "${NODIRS[@]}" --machine laptop
has "laptop, after pam_unix, no Debian profile: the fix is moving the line" 0 "$AFTER_WARN; fix: put the pam_duress.so line before pam_unix.so (docs/configuration.md, Before pam_unix instead)"
check "laptop, after pam_unix: one WARN for the one module line of three services" test "$(grep -c '^WARN: ' <<<"$out")" -eq 1
run_check "${NODIRS[@]}" --pam-configs-dir "$T/pam-configs" --machine server
lacks "server, after pam_unix: no WARN" 0 "WARN" "service sshd: OK: common-auth:2 (pam_duress.so) is reached when the real password fails, and a duress password logs in"
stack before 'auth [success=done default=ignore] pam_duress.so\nauth [success=1 default=ignore] pam_unix.so nullok try_first_pass\nauth requisite pam_deny.so\nauth required pam_permit.so\n'
run_check "${NODIRS[@]}" --pam-configs-dir "$T/pam-configs" --machine laptop
lacks "laptop, before pam_unix: no WARN" 0 "WARN" "service sshd: OK: common-auth:1 (pam_duress.so) is reached before pam_unix: every password passes it, and a duress password logs in"
out=$(duress check --pam-dir "" "${NODIRS[@]}" --machine desktop 2>&1)
rc=$?
check "--machine desktop: one line, exit 2" test "$rc" -eq 2 -a "$out" = "duress check: --machine: laptop, server or auto"

# The home a coercer browses: an account of nss_wrapper's whose home is in $T.
H=$T/tells/home
mkdir -p "$H/.duress" "$T/tells/outside" && chmod 700 "$H/.duress" "$T/tells/outside"
printf 'me:x:%s:%s:me:%s:/bin/sh\n' "$(id -u)" "$(id -g)" "$H" >"$T/tells/passwd"
printf 'me:x:%s:\n' "$(id -g)" >"$T/tells/group"
as_me() {
	LD_PRELOAD=${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN:}libnss_wrapper.so \
		NSS_WRAPPER_PASSWD=$T/tells/passwd NSS_WRAPPER_GROUP=$T/tells/group "$DURESS" "$@"
}
D=$H/.duress
# An action whose body names DURESS_REHEARSE: bodies are not scanned.
printf '#!/bin/sh\n[ -n "${DURESS_REHEARSE:-}" ] && exit 0\necho hi\n' >"$D/duress-alert" && chmod 700 "$D/duress-alert"
printf '# settings\nTITLE=Duress login\nURL=https://example.org/x\n' >"$D/alert.conf" && chmod 600 "$D/alert.conf"
sign --also "$D/alert.conf" "$D/duress-alert"
new_action calm
printf 'TITLE=Login\n' >"$D/calm.conf" && chmod 600 "$D/calm.conf"
sign --also "$D/calm.conf" "$D/calm"
out=$(as_me check --pam-dir "" --global-dir "" 2>&1)
rc=$?
echo "$out" | diag
HOME_WARN="$D: WARN: inside me's home, where whoever browses the home finds it; fix: keep the actions outside the home: sudo pam-auth-update --enable duress-laptop (or user_dir=/var/lib/duress/%u on the module line), then move them there"
has "the default user_dir= (~/.duress): a WARN naming the directory, fix: the laptop profile" 0 "$HOME_WARN"
has "\"duress\" in an action's name: a WARN naming the file" 0 "$D/duress-alert: WARN: \"duress\" in the file name, which whoever lists the directory sees; fix: rename it (an action with its .sig; a companion file, then sign its action again with --also)"
has "TITLE=Duress login in a bound config: a WARN naming the file and the key" 0 "$D/alert.conf: WARN: TITLE= names the project, which whoever reads this file, or what the action sends, sees; fix: choose a neutral value, then sign the action again"
# (The fixture's cheap signatures have a WARN of their own, the cost's: not counted here.)
COST_WARN="WARN: signed at a cost other than the default"
check "no WARN for a neutral action and config, nor for an action's body" test "$(grep -v "$COST_WARN" <<<"$out" | grep -c 'WARN')" -eq 3
printf '# the duress alert\nTITLE=Login\n' >"$D/calm.conf"
sign --also "$D/calm.conf" "$D/calm"
out=$(as_me check --pam-dir "" --global-dir "" 2>&1)
rc=$?
has "the project's name in a comment: one WARN naming the file and the line" 0 "$D/calm.conf: WARN: line 1 names the project, which whoever reads this file sees; fix: reword or delete the lines that do, then sign the action again"
# The same, outside the home: no home WARN, but a config left in the home is one.
D=$T/tells/outside
printf 'TITLE=Login\n' >"$H/notes.conf" && chmod 600 "$H/notes.conf"
new_action duress-wipe && sign --also "$H/notes.conf" "$D/duress-wipe"
out=$(as_me check --pam-dir "" --global-dir "" --user-dir "$D" 2>&1)
rc=$?
echo "$out" | diag
lacks "user_dir= outside the home: no home WARN for it (the name WARN still)" 0 "^$D: WARN: inside" "$D/duress-wipe: WARN: \"duress\" in the file name, which whoever lists the directory sees; fix: rename it (an action with its .sig; a companion file, then sign its action again with --also)"
has "a bound config inside the home, the directory outside: a WARN naming the config" 0 "$H/notes.conf: WARN: a companion file inside me's home, where whoever browses the home finds it; fix: move it next to its action, then sign the action again with --also naming the new place"

# --- Issue 24, item 8: what makes a login's time depend on the actions ------------------
# fake_sig FILE MEM_KIB OPS SALT_BYTE: FILE.sig for FILE's content at that cost and salt.
# duress check reads no tag (it has no password), so a made-up one is fine, and no
# Argon2id at the default cost is run for it.
fake_sig() {
	python3 - "$@" <<'PY'
import base64, hashlib, sys
path, mem, ops, salt = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
b64 = lambda b: base64.b64encode(b).decode().rstrip("=")
digest = hashlib.sha256(open(path, "rb").read()).digest()
with open(path + ".sig", "w") as f:
    f.write(f"$duress$v=1$m={mem},t={ops},p=1${b64(bytes([salt]) * 16)}${b64(digest)}${b64(bytes(32))}\n")
PY
	chmod 600 "$1.sig"
}
D=$T/costs/default && mkdir -p -m 700 "$D"
new_action big && head -c $((2 << 20)) /dev/zero | tr '\0' '#' >>"$D/big" && fake_sig "$D/big" 65536 2 1
new_action small && fake_sig "$D/small" 65536 2 1
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" --boot-dir "" 2>&1)
rc=$?
echo "$out" | diag
SIZE_WARN="WARN: 2.0 MiB to copy and hash when its password matches, which a real login and a wrong password do not wait for: a duress login takes longer; fix: keep it and its companions under 1 MiB, e.g. a short script that runs a program installed elsewhere"
has "an action of 2 MiB: a WARN for what a match copies and hashes" 0 "$D/big: $SIZE_WARN"
check "one salt at the default cost, one small action: no other WARN" test "$(grep -c WARN <<<"$out")" -eq 1
D=$T/costs/companion && mkdir -p -m 700 "$D"
head -c $((1 << 20)) /dev/zero >"$T/costs/big.conf" && chmod 600 "$T/costs/big.conf"
new_action alert && sign --also "$T/costs/big.conf" "$D/alert"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" --boot-dir "" 2>&1)
rc=$?
echo "$out" | diag
has "a small action bound to a 1 MiB companion: the WARN counts the companion" 0 "$D/alert: ${SIZE_WARN/2.0 MiB/1.0 MiB}"
has "a signature at 8K and 1 pass: a WARN, fix: sign again at the default" 0 "$D: WARN: signed at a cost other than the default (8K, 1 passes instead of 64M, 2 passes), so a wrong password for $(id -un) takes another time than for an account without actions; fix: sign its actions again without --memlimit and --opslimit"
D=$T/costs/two && mkdir -p -m 700 "$D"
new_action one && fake_sig "$D/one" 65536 2 1
new_action two && fake_sig "$D/two" 65536 2 2
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" --boot-dir "" 2>&1)
rc=$?
echo "$out" | diag
lacks "two salts at the default cost: a WARN for two derivations (and none for the cost)" 0 "other than the default" "$D: WARN: 2 different salts or costs, so a wrong password for $(id -un) costs 2 Argon2id derivations, and for an account without actions one; fix: sign its actions again without --memlimit and --opslimit (duress sign then shares one salt)"

# Issue 25, item 11: actions left in the per-user directory of the other placement (here
# ~/.duress, the module line reading another user_dir=, as the laptop profile's
# /var/lib/duress/%u does) are named, each with the commands that move it.  nss_wrapper
# gives the caller a home under $T and a name no /var/lib/duress holds.
NAME=dleft$$
# A home whose path a shell must be given quoted (a space, a quote, a regex's dot): the fix
# is pasted as printed, so every path in it is one shell word and the sed script matches
# the path and nothing like it.
H="$T/left home's.x" && mkdir -p -m 700 "$H/.duress" && mkdir -p -m 755 "$T/lib" "$T/leftpam"
printf '%s:x:%s:%s::%s:/bin/sh\n' "$NAME" "$(id -u)" "$(id -g)" "$H" >"$T/left.passwd"
printf '%s:x:%s:\n' "$NAME" "$(id -g)" >"$T/left.group"
printf "${TYPICAL/pam_duress.so/pam_duress.so user_dir=$T/lib/%%u}" >"$T/leftpam/common-auth"
echo "@include common-auth" >"$T/leftpam/login"
as_left() {
	env LD_PRELOAD="${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN }libnss_wrapper.so" \
		NSS_WRAPPER_PASSWD="$T/left.passwd" NSS_WRAPPER_GROUP="$T/left.group" "$@"
}
# word PATH: PATH as the fix writes it, one shell word: as it is when plain, else in single
# quotes with ' as '\''.
word() {
	if [[ $1 =~ ^[A-Za-z0-9_./@%+=:,-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
O=$H/.duress N=$T/lib/$NAME
D=$O
new_action plain && sign "$D/plain"
printf 'URL=x\n' >"$O/alert.conf" && chmod 600 "$O/alert.conf"
printf '#!/bin/sh\nCONFIG="%s/alert.conf"\n. "$CONFIG"\n' "$O" >"$O/alert" && chmod 700 "$O/alert"
sign --also "$O/alert.conf" "$O/alert"
# A name with a control byte cannot be pasted as it shows: the fix says it in words.
TABBED=$'tab\tbed'
printf '#!/bin/sh\n' >"$O/$TABBED" && chmod 700 "$O/$TABBED" && sign "$O/$TABBED"
out=$(as_left $WRAP "$DURESS" check --pam-dir "$T/leftpam" --global-dir "" --boot-dir "" 2>&1)
rc=$?
echo "$out" | diag
NOT_READ="SKIPPED: not in the per-user directory the module reads (user_dir=$T/lib/%u: $N); fix: install -d -m 700 $(word "$N") && mv"
OLD_RE=$(sed 's/[].[\*^$|]/\\&/g' <<<"$O")
has "left in ~/.duress, no companion: moved with its signature" 1 "$O/plain: $NOT_READ $(word "$O/plain") $(word "$O/plain.sig") $(word "$N/")"
has "left in ~/.duress, a companion beside it: moved too, the action pointed at it and signed again" 1 \
	"$O/alert: $NOT_READ $(word "$O/alert") $(word "$O/alert.sig") $(word "$O/alert.conf") $(word "$N/") && sed -i $(word "s|$OLD_RE/|$N/|g") $(word "$N/alert") && duress sign --also $(word "$N/alert.conf") $(word "$N/alert")"
has "left in ~/.duress, a name with a control byte: the fix in words" 1 \
	"$O/tab\\x09bed: SKIPPED: not in the per-user directory the module reads (user_dir=$T/lib/%u: $N); fix: move it, its .sig and the companions beside it to $N, then sign it again there"
check "left in ~/.duress: not every action is armed" grep -qx "not every action is armed" <<<"$out"
# Run as printed (duress sign with the password on standard input), both arm where the module reads.
for name in plain alert; do
	fix=$(grep -F "$O/$name: " <<<"$out")
	fix=${fix#*; fix: }
	bash -c "${fix//duress sign/$WRAP $DURESS sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost}" >/dev/null 2>&1 <<<"Check-pw-1"
done
rm -f "$O/$TABBED" "$O/$TABBED.sig"
out=$(as_left $WRAP "$DURESS" check --pam-dir "$T/leftpam" --global-dir "" --boot-dir "" 2>&1)
rc=$?
echo "$out" | diag
has "the fixes run: the moved action is ARMED where the module reads" 0 "$N/plain: ARMED"
has "the fixes run: the action with its companion is ARMED there" 0 "$N/alert: ARMED"
check "the fixes run: the action reads its config at the new place" grep -qxF "CONFIG=\"$N/alert.conf\"" "$N/alert"
check "the fixes run: nothing named in the old directory" test -z "$(grep -F "$O/" <<<"$out")"

# Usage errors.
duress check --bogus >/dev/null 2>&1
if [ $? -eq 2 ]; then ok "unknown option: exit 2"; else not_ok "unknown option: exit not 2"; fi
duress check --user no-such-user-xyz --user-dir "" --global-dir "" >/dev/null 2>&1
if [ $? -eq 2 ]; then ok "unknown user: exit 2"; else not_ok "unknown user: exit not 2"; fi
out=$(duress check --help)
check "check --help: exit 0" test $? -eq 0
check "check --help: its own usage line" grep -q "^Usage: duress check \[--user USER\]" <<<"$out"
for o in --user --service --pam-dir --global-dir --user-dir --machine; do
	check "check --help: describes $o" grep -Eq -- "^  $o [A-Z]+ +[a-z]" <<<"$out"
done

tap_end
