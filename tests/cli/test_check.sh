#!/bin/bash
# duress check against a fixture with one problem per action: each line must
# name the exact reason the module would skip it.  TAP output for meson.
# Usage: test_check.sh PATH/TO/duress
set -u
DURESS=$1
# shellcheck source=tests/cli/tap.sh
. "$(dirname "$0")/tap.sh"
sign() { duress sign --stdin --memlimit 8K --opslimit 1 "$@" >/dev/null 2>&1 <<<"Check-pw-1"; }
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
new_action companion && duress sign --stdin --memlimit 8K --opslimit 1 --also "$T/companion.conf" "$D/companion" >/dev/null 2>&1 <<<"Check-pw-1"
rm "$T/companion.conf"
printf 'notes\n' >"$D/notes.txt" && chmod 600 "$D/notes.txt"

out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
expect armed "ARMED"
expect nosig "SKIPPED: no signature (run: duress sign)"
expect changed "SKIPPED: content changed since signing"
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
		duress sign --stdin --memlimit $((8 * i))K --opslimit 1 "$D/s$i" >/dev/null 2>&1 <<<"Check-pw-1"
		continue
	fi
	mv "$D/s$i" "$T/apart/"
	duress sign --stdin --memlimit $((8 * i))K --opslimit 1 "$T/apart/s$i" >/dev/null 2>&1 <<<"Check-pw-1"
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
D=$T/worldw
mkdir -m 777 "$D"
out=$(duress check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
rc=$?
if grep -qx "$D: SKIPPED (whole directory): bad owner, or writable by group or others" <<<"$out" && [ $rc -eq 1 ]; then
	ok "world-writable directory: whole directory skipped, exit 1"
else
	not_ok "world-writable directory: got '$out' (exit $rc)"
fi
out=$(duress check --pam-dir "" --user-dir "$T/missing" --global-dir "" 2>&1)
rc=$?
if grep -qx "$T/missing: no such directory (no per-user actions)" <<<"$out" && grep -qx "no actions found" <<<"$out" && [ $rc -eq 0 ]; then
	ok "missing directory: said, exit 0"
else
	not_ok "missing directory: got '$out' (exit $rc)"
fi
if [ "$(id -u)" -eq 0 ]; then
	D=$T/private
	mkdir -m 700 "$D"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "$D" --global-dir "" 2>&1)
	rc=$?
	if grep -qx "$D: SKIPPED (whole directory): Permission denied" <<<"$out" && [ $rc -eq 1 ]; then
		ok "unreadable directory: said, exit 1"
	else
		not_ok "unreadable directory: got '$out' (exit $rc)"
	fi
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
	if grep -qx "$D: not readable by you (run duress check as root to see global actions)" <<<"$out" && [ $rc -eq 0 ]; then
		ok "global directory unreadable by a user: said, not a failure"
	else
		not_ok "global directory unreadable by a user: got '$out' (exit $rc)"
	fi
else
	skip "unreadable directory (needs root to run as another user)"
	skip "bad owner (needs root to chown)"
	skip "global directory owned by root (needs root)"
	skip "global directory unreadable by a user (needs root)"
fi

# Usage errors.
duress check --bogus >/dev/null 2>&1
if [ $? -eq 2 ]; then ok "unknown option: exit 2"; else not_ok "unknown option: exit not 2"; fi
duress check --user no-such-user-xyz --user-dir "" --global-dir "" >/dev/null 2>&1
if [ $? -eq 2 ]; then ok "unknown user: exit 2"; else not_ok "unknown user: exit not 2"; fi
duress check --help | grep -q "Usage: duress check"
if [ "${PIPESTATUS[0]}" -eq 0 ]; then ok "check --help"; else not_ok "check --help"; fi

tap_end
