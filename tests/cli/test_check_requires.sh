#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What an action needs installed: its "# Requires:" lines (docs/actions.md,
# What an action needs), looked up in the PATH the action will get, not the
# caller's.  As root, in a private mount namespace where curl and wget are
# hidden (a minimal Debian) and /usr/local/bin is a tmpfs to put them back:
# duress add warns before it asks for the password and duress check says
# WILL FAIL with the fix for the alert example; ARMED once either is there,
# or when its config asks for no HTTP transport.  Then, as any user, the
# forms of the line on actions made here.  TAP output.
# Usage: test_check_requires.sh DURESS EXAMPLES_DIR
set -u
DURESS=$1
EXAMPLES=$2
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# The directories an action run as root looks in (duress_action_path(), and
# the examples' /usr/sbin and /sbin).
ACTION_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "$(id -u)" -eq 0 ] && [ -z "${DURESS_PRIVATE_MOUNTS:-}" ] && command -v unshare >/dev/null; then
	unshare -m --propagation private true 2>/dev/null ||
		skip_all "no private mount namespace here (unshare -m --propagation private)"
	rmdir "$T"
	DURESS_PRIVATE_MOUNTS=1 exec unshare -m --propagation private -- "$0" "$@"
fi
# hide_http: in this namespace, curl and wget are gone from every directory
# of ACTION_PATH (an empty file that is not executable in their place), and
# /usr/local/bin is an empty tmpfs.
hide_http() {
	local d p
	: >"$T/not-installed"
	IFS=: read -ra dirs <<<"$ACTION_PATH"
	for d in "${dirs[@]}"; do
		for p in curl wget; do
			[ ! -e "$d/$p" ] || mount --bind "$T/not-installed" "$d/$p" || return 1
		done
	done
	mount -t tmpfs -o mode=755 no-http /usr/local/bin
}
# install_http NAME|none: NAME (a stand-in) alone in /usr/local/bin.
install_http() {
	rm -f /usr/local/bin/curl /usr/local/bin/wget
	[ "$1" = none ] || { printf '#!/bin/sh\nexit 0\n' >"/usr/local/bin/$1" && chmod 755 "/usr/local/bin/$1"; }
}
# The fix names apt-get where the system has it.
if [ -x /usr/bin/apt-get ]; then FIX="sudo apt-get install curl"; else FIX="install curl or wget"; fi
NEEDS="a program it needs is missing: curl or wget; fix: $FIX"

PW=Requires-pw-1
U=$(id -un)
TD=$T/$U # user_dir=$T/%u
mkdir "$T/pam"
echo "auth sufficient pam_duress.so user_dir=$T/%u" >"$T/pam/common-auth"
echo "@include common-auth" >"$T/pam/login"
add() { duress add --pam-dir "$T/pam" --examples-dir "$EXAMPLES" --memlimit 8K --opslimit 1 --allow-weak-cost "$@"; }
# check_in [DIR]: duress check of the per-user directory; $out, $rc.
check_in() {
	out=$("$DURESS" check --pam-dir "" --user-dir "${1:-$TD}" --global-dir "" --boot-dir "" 2>&1)
	rc=$?
}
# has DESCRIPTION EXIT LINE: the exit status was EXIT and $out has the whole LINE.
has() {
	if [ "$rc" -eq "$2" ] && grep -qxF -- "$3" <<<"$out"; then
		ok "$1"
	else
		not_ok "$1"
		printf 'expected (exit %s): %s\ngot (exit %s):\n%s\n' "$2" "$3" "$rc" "$out" | diag
	fi
}

# --- the alert example on a machine without an HTTP client -----------------------------------
ALERT_TESTS=("add alert, no curl nor wget: WILL FAIL" "add alert: the warning before the password"
	"add alert: still installed" "the alert itself, no curl nor wget: exit 1, says so" "check: WILL FAIL" "check: not every action is armed"
	"check: the config is its companion" "check: curl in the caller's PATH alone does not count"
	"check: curl" "check: wget" "add alert for mail alone: ARMED" "... and no warning")
if [ -z "${DURESS_PRIVATE_MOUNTS:-}" ]; then
	for t in "${ALERT_TESTS[@]}"; do skip "$t (needs root: curl and wget hidden in a private mount namespace)"; done
elif ! hide_http; then
	setup_failed "curl and wget hidden in a private mount namespace"
else
	install_http none
	out=$(echo "$PW" | add alert --stdin --set NTFY_URL=https://ntfy.example/topic 2>"$T/err")
	rc=$?
	has "add alert, no curl nor wget: the check line says WILL FAIL, with the apt-get fix; exit 1" 1 \
		"$TD/alert: WILL FAIL: $NEEDS"
	check_why "add alert, no curl nor wget: its first line on stderr, before the password, says so" \
		"got: $(cat "$T/err")" test "$(head -n 1 "$T/err")" = "duress add: warning: alert will not work: $NEEDS"
	check "add alert: still installed and signed (the tools may come later)" test -s "$TD/alert.sig"
	out=$(cd / && env -i PATH="$ACTION_PATH" /bin/sh "$TD/alert" 2>&1 </dev/null)
	rc=$?
	check_why "the alert itself, no curl nor wget: exit 1, says so (its Requires: line tells the truth)" \
		"got (exit $rc): $out" test "$rc" -eq 1 -a "$out" = "alert: wget is not installed (curl or wget is needed)"
	check_in
	has "check, no curl nor wget: WILL FAIL with the fix" 1 "$TD/alert: WILL FAIL: $NEEDS"
	has "check, no curl nor wget: not every action is armed" 1 "not every action is armed"
	has "check: the config add installed is its companion, not a stray file" 1 \
		"$TD/alert.conf: companion of alert (bound by its signature)"
	mkdir "$T/bin" && cp /bin/true "$T/bin/curl"
	out=$(PATH=$T/bin:$PATH "$DURESS" check --pam-dir "" --user-dir "$TD" --global-dir "" --boot-dir "" 2>&1)
	rc=$?
	has "check: a curl in the caller's PATH alone does not count (the action's PATH has none): WILL FAIL" 1 \
		"$TD/alert: WILL FAIL: $NEEDS"
	install_http curl
	check_in
	has "check, curl installed: ARMED" 0 "$TD/alert: ARMED"
	install_http wget
	check_in
	has "check, wget alone installed: ARMED (either one)" 0 "$TD/alert: ARMED"
	install_http none
	out=$(echo "$PW" | add alert --stdin --force --set TRANSPORTS=mail --set MAIL_TO=me@example.org 2>"$T/err")
	rc=$?
	has "add alert for mail alone, no curl nor wget: ARMED (no HTTP transport, no need)" 0 "$TD/alert: ARMED"
	check_why "... and no warning" "got: $(cat "$T/err")" fails grep -q "will not work" "$T/err"
fi

# --- the forms of the line ------------------------------------------------------------------
D=$T/forms
mkdir -m 700 "$D"
# action NAME HEADER-LINES [CONFIG-TEXT]: a signed action whose opening comment
# block holds HEADER-LINES (printf's format), reading $D/NAME.conf when given.
action() {
	# shellcheck disable=SC2059 # the header is a format, for its \n
	{ printf '#!/bin/sh\n'"$2"; printf 'set -eu\n'; [ $# -lt 3 ] || printf 'CONFIG=%s/%s.conf\n' "$D" "$1"; } >"$D/$1"
	[ $# -lt 3 ] || { printf '%s\n' "$3" >"$D/$1.conf" && chmod 600 "$D/$1.conf"; }
	chmod 700 "$D/$1"
	duress sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$D/$1" >/dev/null 2>&1 <<<"$PW"
}
# fix PACKAGES PROGRAMS: the fix this system gets.
fix() { if [ -x /usr/bin/apt-get ]; then echo "sudo apt-get install $1"; else echo "install $2"; fi; }
action multi '# Requires: nosuchprog-a|nosuchprog-b:pkg-b\n# Requires: sh\n# Requires: nosuchprog-c:pkg-c\n'
action absolute '# Requires: /nonexistent/tool:tool-pkg|/bin/sh\n'
action abs-missing '# Requires: /nonexistent/tool:tool-pkg\n'
action after-block '# a comment\n#\n\n# Requires: nosuchprog-f\n'
action malformed '# Requires: nosuch$prog\n# Requires: nosuchprog-g if\n# Requires: nosuchprog-h unless X\n'
action word-hit '# Requires: nosuchprog-d if MODE=fast,slow\n' 'MODE=slow, other'
action word-miss '# Requires: nosuchprog-d if MODE=fast,slow\n' $'#MODE=fast\nMODE=quick'
action word-far '# Requires: nosuchprog-d if MODE=fast,slow\n' "MODE=$(printf 'x%.0s,' {1..400})slow"
action key-empty '# Requires: nosuchprog-e if KEY\n' 'KEY='
action key-blank '# Requires: nosuchprog-e if KEY\n' 'KEY=   '
action key-set '# Requires: nosuchprog-e if KEY\n' 'KEY=1'
action config-gone '# Requires: nosuchprog-e if KEY\n' 'KEY='
rm "$D/config-gone.conf"
action no-config '# Requires: nosuchprog-e if KEY\n'
check_in "$D"
has "two needs missing, the second first among alternatives: both named, the first program's package each" 1 \
	"$D/multi: WILL FAIL: programs it needs are missing: nosuchprog-a or nosuchprog-b, nosuchprog-c; fix: $(fix 'nosuchprog-a pkg-c' 'nosuchprog-a or nosuchprog-b, nosuchprog-c')"
has "an absolute path that exists meets the need" 1 "$D/absolute: ARMED"
has "an absolute path that does not: its package" 1 \
	"$D/abs-missing: WILL FAIL: a program it needs is missing: /nonexistent/tool; fix: $(fix tool-pkg /nonexistent/tool)"
has "a Requires: line after the opening comment block is not read" 1 "$D/after-block: ARMED"
has "lines not of the form are ignored" 1 "$D/malformed: ARMED"
has "if KEY=WORDS: a word of the value among them (commas and blanks split it): counts" 1 \
	"$D/word-hit: WILL FAIL: a program it needs is missing: nosuchprog-d; fix: $(fix nosuchprog-d nosuchprog-d)"
has "if KEY=WORDS: no word among them (a commented line does not count): ARMED" 1 "$D/word-miss: ARMED"
has "if KEY=WORDS: the word after 800 bytes of the value still counts" 1 \
	"$D/word-far: WILL FAIL: a program it needs is missing: nosuchprog-d; fix: $(fix nosuchprog-d nosuchprog-d)"
has "if KEY: an empty value does not count" 1 "$D/key-empty: ARMED"
has "if KEY: blanks are no value" 1 "$D/key-blank: ARMED"
has "if KEY: a value counts" 1 "$D/key-set: WILL FAIL: a program it needs is missing: nosuchprog-e; fix: $(fix nosuchprog-e nosuchprog-e)"
has "a config that cannot be read meets every condition" 1 \
	"$D/config-gone: WILL FAIL: a program it needs is missing: nosuchprog-e; fix: $(fix nosuchprog-e nosuchprog-e)"
has "no CONFIG= line: no key is set, no condition holds" 1 "$D/no-config: ARMED"

tap_end
