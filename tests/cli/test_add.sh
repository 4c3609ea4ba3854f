#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# duress add: listing the examples (a fake set and the tree's real ones),
# installing one where the module line's user_dir= points (a temporary
# directory), its files, modes, owner, rewritten CONFIG= line, --set values,
# signature and check line; refusals; the editor through a pseudo-terminal.
# Runs as any user; the --global install only as root (SKIP otherwise).
# Usage: test_add.sh DURESS EXAMPLES_DIR
set -u
DURESS=$1
REAL_EXAMPLES=$2
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

PW=Duress-add-pw-7
EX=$T/ex
U=$(id -un)
TD=$T/$U # the per-user directory, user_dir=$T/%u
# Cheap cost keeps the suite fast (and valgrind bearable).
add() { duress add --pam-dir "$T/pam" --examples-dir "$EX" --memlimit 8K --opslimit 1 --allow-weak-cost "$@"; }
example() { # example NAME CONTENT [CONFIG]
	printf '%s\n' "$2" >"$EX/$1"
	chmod 755 "$EX/$1"
	if [ $# -gt 2 ]; then printf '%s\n' "$3" >"$EX/$1.conf"; fi
}

mkdir -p "$EX" "$T/pam"
echo "auth sufficient pam_duress.so user_dir=$T/%u state_dir=$T/state" >"$T/pam/common-auth"
echo "@include common-auth" >"$T/pam/login"
DEMO='#!/bin/sh
# Summary: a demo action for the tests
set -eu
CONFIG=/etc/duress.d/demo.conf
# CONFIG=/etc/duress.d/demo.conf in a comment is not the line
echo "$CONFIG"'
example demo "$DEMO" '# GREETING=commented out
GREETING=hello
TARGET=first
TARGET=second'
example plain '#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Summary: no config at all
true'
example noconfig '#!/bin/sh
# Summary: has a config but no CONFIG= line
true' 'KEY=1'
example notexec '#!/bin/sh'
chmod 644 "$EX/notexec"
example with.dot '#!/bin/sh'
ln -s demo "$EX/link"

# --- --list -------------------------------------------------------------------------
out=$(duress add --list --examples-dir "$EX" 2>"$T/err")
check "--list: exit 0" test $? -eq 0
check "--list: nothing on stderr" test ! -s "$T/err"
check "--list: a name and its summary" grep -Eqx "demo +a demo action for the tests" <<<"$out"
check "--list: the summary on the third line" grep -Eqx "plain +no config at all" <<<"$out"
check "--list: one line per example, in name order" test "$(cut -d' ' -f1 <<<"$out" | tr '\n' ' ')" = "demo noconfig plain "
out=$(duress add --list --examples-dir "$REAL_EXAMPLES")
check "--list of the tree's examples: exit 0" test $? -eq 0
check "--list of the tree's examples: six" test "$(wc -l <<<"$out")" -eq 6
for name in alert decoy-keyring hide luks-wipe net-down self-uninstall; do
	summary=$(sed -n '2,3s/^# Summary: //p' "$REAL_EXAMPLES/$name")
	check "--list: $name with its summary" grep -Fqx "$(printf '%-15s %s' "$name" "$summary")" <<<"$out"
done
err=$(duress add --list --examples-dir "$T/missing" 2>&1 >/dev/null)
check "--list, no examples directory: exit 2" test $? -eq 2
check "--list, no examples directory: one line naming it" test "$(wc -l <<<"$err")" -eq 1 -a -n "$(grep -F "$T/missing" <<<"$err")"

# --- add with --set and --stdin -----------------------------------------------------
out=$(echo "$PW" | add demo --stdin --set "GREETING=hi there" --set TARGET=third 2>"$T/err")
check "add: exit 0" test $? -eq 0
check "add: the check line says ARMED" grep -qx "$TD/demo: ARMED" <<<"$out"
check "add: the per-user directory is created 0700" test "$(stat -c %a "$TD")" = 700
check "add: the action is 0700" test "$(stat -c %a "$TD/demo")" = 700
check "add: the config is 0600" test "$(stat -c %a "$TD/demo.conf")" = 600
check "add: the signature is 0600" test "$(stat -c %a "$TD/demo.sig")" = 600
check "add: owned by the caller" test "$(stat -c %u "$TD/demo" "$TD/demo.conf" "$TD/demo.sig" "$TD" | sort -u)" = "$(id -u)"
check "add: CONFIG= points at the installed config" test "$(grep -c "^CONFIG=$TD/demo.conf\$" "$TD/demo")" -eq 1
check "add: only that line changed" test "$(diff <(sed "s|^CONFIG=$TD/demo.conf\$|CONFIG=/etc/duress.d/demo.conf|" "$TD/demo") "$EX/demo" && echo same)" = same
check "add: --set replaced the key's line" grep -qx "GREETING=hi there" "$TD/demo.conf"
check "add: --set left the comment alone" grep -qx "# GREETING=commented out" "$TD/demo.conf"
check "add: --set replaced the last of two lines" test "$(grep '^TARGET=' "$TD/demo.conf" | tr '\n' ' ')" = "TARGET=first TARGET=third "
check "add: no temporary file left" test "$(ls -A "$TD" | tr '\n' ' ')" = "demo demo.conf demo.sig "
out=$(echo "$PW" | duress verify --stdin "$TD/demo")
check "add: duress verify matches the password" test $? -eq 0
echo "GREETING=changed" >>"$TD/demo.conf"
out=$(duress check --pam-dir "$T/pam" --global-dir "")
check "config edited afterwards: check exits 1" test $? -eq 1
check "config edited afterwards: content changed since signing, and the command that signs it again bound to its config" \
	grep -qxF "$TD/demo: SKIPPED: content changed since signing; fix: if the change is yours, sign it again: duress sign --also $TD/demo.conf $TD/demo" <<<"$out"

# --- refusals -------------------------------------------------------------------------
before=$(cat "$TD/demo" "$TD/demo.conf" "$TD/demo.sig" | sha256sum)
err=$(echo "$PW" | add demo --stdin --set GREETING=x 2>&1 >/dev/null)
check "already there: exit 1" test $? -eq 1
check "already there: says so and names --force" grep -q "$TD/demo.* already exists (--force replaces it)" <<<"$err"
err=$(echo "$PW" | add demo --stdin --force --set NOPE=1 2>&1 >/dev/null)
check "unknown key: exit 1" test $? -eq 1
check "unknown key: one line naming the keys the example knows" test "$err" = "duress add: --set NOPE: demo.conf has no such key; it knows GREETING, TARGET"
err=$(echo "$PW" | add demo --stdin --force --set "GREETING=a
b" 2>&1 >/dev/null)
check "value with a newline: exit 1" test $? -eq 1
check "value with a newline: must be one line" grep -q "one line" <<<"$err"
err=$(echo "$PW" | add demo --stdin --force --set "#GREETING=x" 2>&1 >/dev/null)
check "not a KEY=VALUE: exit 1" test $? -eq 1
check "refusals changed nothing" test "$(cat "$TD/demo" "$TD/demo.conf" "$TD/demo.sig" | sha256sum)" = "$before"
out=$(echo "$PW" | add demo --stdin --force --set GREETING=forced 2>/dev/null)
check "--force: exit 0 and ARMED" test $? -eq 0 -a -n "$(grep -x "$TD/demo: ARMED" <<<"$out")"
check "--force: the new config replaced the edited one" test "$(grep -c '^GREETING=' "$TD/demo.conf")" -eq 1
# Issue 26: --once goes to sign; the check line says it has not run.
out=$(echo "$PW" | add plain --stdin --once 2>/dev/null)
check "add --once: exit 0, and the check line says once, not run" \
	test $? -eq 0 -a -n "$(grep -xF "$TD/plain: ARMED (once: it has not run; it runs at its next match, then no more)" <<<"$out")"
check "add --once: the signature has the once= field" grep -q 'p=1\$once=' "$TD/plain.sig"
rm -f "$TD/plain" "$TD/plain.sig"
err=$(echo "$PW" | add plain --stdin --once --boot --boot-dir "$T/boot" 2>&1 >/dev/null)
check "add --once --boot: a usage error, exit 2, nothing installed" \
	test $? -eq 2 -a -n "$(grep -F "not for a boot action" <<<"$err")" -a ! -e "$T/boot/plain"

err=$(echo "$PW" | add noconfig --stdin 2>&1 >/dev/null)
check "no CONFIG= line: exit 1" test $? -eq 1
check "no CONFIG= line: not an example" grep -q "not an example" <<<"$err"
check "no CONFIG= line: nothing installed" test ! -e "$TD/noconfig" -a ! -e "$TD/noconfig.conf"
for bad in ../demo demo.conf .demo "demo/x" $'de\033mo' ""; do
	add "$bad" --stdin </dev/null >/dev/null 2>&1
	rc=$?
	check "name $(printf %q "$bad"): exit 2" test $rc -eq 2
done
echo "$PW" | add notexec --stdin >/dev/null 2>&1
check "a file that is not executable is no example: exit 1" test $? -eq 1

chmod 770 "$TD"
err=$(echo "$PW" | add plain --stdin 2>&1 >/dev/null)
check "group-writable directory: exit 1" test $? -eq 1
check "group-writable directory: the module's reason" grep -q "writable by group or others" <<<"$err"
check "group-writable directory: nothing installed" test ! -e "$TD/plain"
chmod 700 "$TD"

# --- a symlink planted at the target name -------------------------------------------------
echo precious >"$T/victim"
echo precious >"$T/victim.conf"
rm -f "$TD"/demo*
ln -s "$T/victim" "$TD/demo"
ln -s "$T/victim.conf" "$TD/demo.conf"
echo "$PW" | add demo --stdin --set GREETING=x >/dev/null 2>&1
check "symlink there: refused without --force" test $? -eq 1
out=$(echo "$PW" | add demo --stdin --force --set GREETING=x 2>/dev/null)
check "symlink there, --force: exit 0" test $? -eq 0
check "symlink there, --force: replaced by regular files" test -f "$TD/demo" -a ! -L "$TD/demo" -a -f "$TD/demo.conf" -a ! -L "$TD/demo.conf"
check "symlink there, --force: its target untouched" test "$(cat "$T/victim" "$T/victim.conf")" = "precious
precious"

# --- a real example of the tree ------------------------------------------------------------
out=$(echo "$PW" | duress add alert --stdin --set NTFY_URL=http://127.0.0.1:9/t --examples-dir "$REAL_EXAMPLES" --pam-dir "$T/pam" --memlimit 8K --opslimit 1 --allow-weak-cost 2>/dev/null)
check "the tree's alert: ARMED" grep -qx "$TD/alert: ARMED" <<<"$out"
check "the tree's alert: reads its installed config" grep -qx "CONFIG=$TD/alert.conf" "$TD/alert"
check "the tree's alert: the value set" grep -qx "NTFY_URL=http://127.0.0.1:9/t" "$TD/alert.conf"

# --- no config: the script is copied as it is ------------------------------------------------
out=$(echo "$PW" | add plain --stdin 2>/dev/null)
check "example without config: ARMED" grep -qx "$TD/plain: ARMED" <<<"$out"
check "example without config: the same bytes" cmp -s "$EX/plain" "$TD/plain"
# Replaced with --force, it is signed bound to nothing, whatever the old signature bound:
# duress sign's keeping of an old binding is for an action signed again, not for a new one.
printf 'K=1\n' >"$T/other.conf" && chmod 600 "$T/other.conf"
duress sign --stdin --pam-dir "$T/pam" --memlimit 8K --opslimit 1 --allow-weak-cost --also "$T/other.conf" "$TD/plain" >/dev/null 2>&1 <<<"$PW"
err=$(echo "$PW" | add plain --stdin --force 2>&1 >/dev/null)
check "--force over an action bound to a companion: no companion kept, none said" \
	test -z "$(grep -e "--also" <<<"$err")" -a "$(cut -d'$' -f5 "$TD/plain.sig" | cut -c1-5)" != "also="

# --- all or nothing ---------------------------------------------------------------------------
# listing DIR: its entries, hidden ones too, each with its content's hash.
listing() { (shopt -s dotglob nullglob && cd "$1" 2>/dev/null && for f in *; do echo "$f $(sha256sum <"$f")"; done); }
rm -rf "$TD"
err=$(setsid -w $WRAP "$DURESS" add demo --set GREETING=x --pam-dir "$T/pam" --examples-dir "$EX" </dev/null 2>&1 >/dev/null)
check "no terminal, no --stdin: exit 1" test $? -eq 1
check "no terminal, no --stdin: one line, naming --stdin" test "$(wc -l <<<"$err")" -eq 1 -a -n "$(grep -e --stdin <<<"$err")"
check "no terminal, no --stdin: nothing written, not even the directory" test ! -e "$TD"
out=$(echo "$PW" | add demo --stdin --set GREETING=x 2>/dev/null)
check "no terminal: the next run needs no --force" grep -qx "$TD/demo: ARMED" <<<"$out"
rm -f "$TD"/demo*
before=$(listing "$TD")
err=$(printf '' | add demo --stdin --set GREETING=x 2>&1 >/dev/null)
check "no password on stdin: exit 1" test $? -eq 1
check "no password on stdin: nothing written" test "$(listing "$TD")" = "$before"
# A cost over the per-user caps: refused by signing, after the files are written.
err=$(echo "$PW" | add demo --stdin --set GREETING=x --memlimit 1G 2>&1 >/dev/null)
check "signing fails: exit 1" test $? -eq 1
check "signing fails: says why" grep -q "over the module's caps" <<<"$err"
check "signing fails: nothing left" test "$(listing "$TD")" = "$before"
# Below the floor (issue 24, item 8): a usage error, before anything is read or written.
err=$(echo "$PW" | duress add demo --stdin --set GREETING=x --pam-dir "$T/pam" --examples-dir "$EX" --memlimit 32M 2>&1 >/dev/null)
check "--memlimit 32M: exit 2, the floor's one line, nothing written" test $? -eq 2 -a "$err" = "duress: --memlimit 32M is below the floor, libsodium's interactive cost (64M, 2 passes): wrong passwords for the account would take less time than for an account without actions; leave it out, or give at least 64M" -a "$(listing "$TD")" = "$before"
echo "$PW" | add demo --stdin --set GREETING=old >/dev/null 2>&1
before=$(listing "$TD")
err=$(echo "$PW" | add demo --stdin --force --set GREETING=new --memlimit 1G 2>&1 >/dev/null)
check "--force, signing fails: exit 1" test $? -eq 1
check "--force, signing fails: the old files intact, nothing more" test "$(listing "$TD")" = "$before"
check "--force, signing fails: the old action still ARMED" test "$(duress check --pam-dir "$T/pam" --global-dir "" | grep "^$TD/demo:")" = "$TD/demo: ARMED"

# --- --set: commented keys, list keys ------------------------------------------------------
HIDE_OPTS=(--stdin --examples-dir "$REAL_EXAMPLES" --pam-dir "$T/pam" --memlimit 8K --opslimit 1 --allow-weak-cost)
out=$(echo "$PW" | duress add hide "${HIDE_OPTS[@]}" --set "MOVE=$T/a b" --set "REMOVE=$T/c" --set "MOVE=$T/d" 2>"$T/err")
check "hide, MOVE twice: exit 0 and ARMED" test $? -eq 0 -a -n "$(grep -x "$TD/hide: ARMED" <<<"$out")"
check "hide, MOVE twice: both lines, in order, after the commented example" \
	test "$(grep -A2 -x '#MOVE=~/Documents/project notes' "$TD/hide.conf")" = "#MOVE=~/Documents/project notes
MOVE=$T/a b
MOVE=$T/d"
check "hide, REMOVE: after the last commented REMOVE= line" \
	test "$(grep -A1 -x '#REMOVE=~/private' "$TD/hide.conf")" = "#REMOVE=~/private
REMOVE=$T/c"
check "hide: no other line changed" test "$(diff <(grep -v "^MOVE=\|^REMOVE=\|^CONFIG=" "$TD/hide.conf") <(grep -v "^CONFIG=" "$REAL_EXAMPLES/hide.conf") && echo same)" = same
err=$(echo "$PW" | duress add hide "${HIDE_OPTS[@]}" --force --set MOVED=x 2>&1 >/dev/null)
check "hide, unknown key: exit 1" test $? -eq 1
check "hide, unknown key: one line naming the keys" test "$err" = "duress add: --set MOVED: hide.conf has no such key; it knows HIDE_DIR, SHRED, UNMOUNT_TIMEOUT, BUSY, LUKS, VERACRYPT, UNMOUNT, MOVE, REMOVE"
out=$(echo "$PW" | add demo --stdin --force --set TARGET=x --set GREETING=y --set TARGET=z 2>/dev/null)
check "a live key twice: ARMED" grep -qx "$TD/demo: ARMED" <<<"$out"
check "a live key twice: the last line becomes both, in order" test "$(grep '^TARGET=' "$TD/demo.conf" | tr '\n' ' ')" = "TARGET=first TARGET=x TARGET=z "
out=$(echo "$PW" | duress add self-uninstall "${HIDE_OPTS[@]}" --set "SAVED_PAM_DIR=$T/saved" --set "USER_DIR=$T/u1" --set "USER_DIR=$T/u2" 2>/dev/null)
check "self-uninstall, commented keys: ARMED" grep -qx "$TD/self-uninstall: ARMED" <<<"$out"
check "self-uninstall: the values uncommented" test "$(grep -c "^SAVED_PAM_DIR=$T/saved\$\|^USER_DIR=$T/u[12]\$" "$TD/self-uninstall.conf")" -eq 3

# --- --global ---------------------------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
	asnobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
	asnobody=()
fi
err=$(echo "$PW" | "${asnobody[@]}" $WRAP "$DURESS" add demo --global --stdin --pam-dir "$T/pam" --examples-dir "$EX" 2>&1 >/dev/null)
check "--global as non-root: exit 1" test $? -eq 1
check "--global as non-root: says root is needed" grep -q "run it as root" <<<"$err"
if [ "$(id -u)" -eq 0 ]; then
	mkdir "$T/gpam"
	echo "auth sufficient pam_duress.so global_dir=$T/g user_dir=$T/%u" >"$T/gpam/common-auth"
	echo "@include common-auth" >"$T/gpam/login"
	# Never the machine's own global directory: only once check reads $T/g.
	if duress check --pam-dir "$T/gpam" --user-dir "" | grep -qx "$T/g: no such directory (no global actions)"; then
		out=$(umask 077; echo "$PW" | duress add demo --global --stdin --set GREETING=all --pam-dir "$T/gpam" --examples-dir "$EX" --memlimit 8K --opslimit 1 --allow-weak-cost 2>"$T/gerr")
	else
		out="the test stack does not name $T/g: not run"
	fi
	check "--global: ARMED" grep -qx "$T/g/demo: ARMED" <<<"$out"
	check "--global: warns that the password logs in every ordinary account" \
		grep -q "logs in EVERY ordinary account.*add global_group=GROUP" "$T/gerr"
	echo "auth sufficient pam_duress.so global_dir=$T/g user_dir=$T/%u global_group=staff" >"$T/gpam/common-auth"
	echo "$PW" | duress add demo --global --force --stdin --pam-dir "$T/gpam" --examples-dir "$EX" --memlimit 8K --opslimit 1 --allow-weak-cost >/dev/null 2>"$T/gerr"
	check "--global with global_group=: names the group, no warning" \
		sh -c 'grep -q "logs in only members of group staff" "$1" && ! grep -q EVERY "$1"' sh "$T/gerr"
	check "--global: the directory is created 0755 root:root" test "$(stat -c %a:%u:%g "$T/g")" = 755:0:0
	check "--global: files owned by root" test "$(stat -c %u:%g "$T/g/demo" "$T/g/demo.conf" | sort -u)" = 0:0
	check "--global: CONFIG= points at the global copy" grep -qx "CONFIG=$T/g/demo.conf" "$T/g/demo"
else
	skip "--global install: needs root"
fi

# --- --boot: the disk-unlock prompt's directory -------------------------------------------
BOOT_OPTS=(--stdin --examples-dir "$REAL_EXAMPLES" --pam-dir "$T/pam" --memlimit 8K --opslimit 1 --allow-weak-cost)
WIPE_SETS=(--set DEVICE=/dev/vda --set ACTION=erase --set ARMED=yes)
REMINDER="next: sudo update-initramfs -u (the initramfs holds a copy of the boot actions and their configs)"
err=$(echo "$PW" | "${asnobody[@]}" $WRAP "$DURESS" add luks-wipe --boot --before-unlock --boot-dir "$T/bd" "${BOOT_OPTS[@]}" 2>&1 >/dev/null)
check "--boot as non-root: exit 1" test $? -eq 1
check "--boot as non-root: says root is needed" grep -q "^duress add: --boot .*run it as root" <<<"$err"
err=$(echo "$PW" | duress add demo --before-unlock --stdin --pam-dir "$T/pam" --examples-dir "$EX" 2>&1 >/dev/null)
check "--before-unlock without --boot: exit 2, saying it goes with --boot" \
	test $? -eq 2 -a "$err" = "duress add: --before-unlock, --boot-dir, --crypttab and --dracut-conf go with --boot"
err=$(echo "$PW" | duress add demo --boot --global --stdin --pam-dir "$T/pam" --examples-dir "$EX" 2>&1 >/dev/null)
check "--boot with --global: exit 2" test $? -eq 2 -a -n "$(grep -e '--boot and --global' <<<"$err")"
if [ "$(id -u)" -eq 0 ]; then
	BD=$T/bd
	err=$(echo "$PW" | duress add luks-wipe --boot --boot-dir "$BD" "${BOOT_OPTS[@]}" "${WIPE_SETS[@]}" 2>&1 >/dev/null)
	rc=$?
	check "luks-wipe --boot without --before-unlock: refused, exit 2, one line saying why" \
		test "$rc" -eq 2 -a "$err" = "duress add: luks-wipe --boot needs --before-unlock: after boot the disk is already open, its volume key in the kernel, and the wipe comes too late"
	check "... nothing written, not even the directory" test ! -e "$BD"
	err=$(echo "$PW" | duress add luks-wipe --boot --before-unlock --boot-dir "$BD" "${BOOT_OPTS[@]}" "${WIPE_SETS[@]}" --memlimit 1G 2>&1 >/dev/null)
	check "--boot, signing fails (a cost over the caps): exit 1, nothing left" test $? -eq 1 -a ! -e "$BD"
	printf 'cryptroot UUID=1 none luks\n' >"$T/crypttab.plain"
	out=$(umask 022; echo "$PW" | duress add luks-wipe --boot --before-unlock --boot-dir "$BD" --crypttab "$T/crypttab.plain" "${BOOT_OPTS[@]}" "${WIPE_SETS[@]}" 2>"$T/berr")
	rc=$?
	first=$out
	check_why "--boot --before-unlock: exit 0" "exit $rc: $out $(cat "$T/berr")" test "$rc" -eq 0
	check "... the directory made root's 0700 (umask 022)" test "$(stat -c %a:%u:%g "$BD")" = 700:0:0
	check "... exactly the action under the initramfs- prefix, its config and signature" \
		test "$(ls -A "$BD" | tr '\n' ' ')" = "initramfs-luks-wipe initramfs-luks-wipe.conf initramfs-luks-wipe.sig "
	check "... modes: action 0700, config 0600, signature 0600, all root's" \
		test "$(stat -c %a:%u "$BD/initramfs-luks-wipe" "$BD/initramfs-luks-wipe.conf" "$BD/initramfs-luks-wipe.sig" | tr '\n' ' ')" = "700:0 600:0 600:0 "
	check "... CONFIG= points at the installed config" grep -qx "CONFIG=$BD/initramfs-luks-wipe.conf" "$BD/initramfs-luks-wipe"
	check "... the --set values in the config" \
		test "$(grep -c -x -e DEVICE=/dev/vda -e ACTION=erase -e ARMED=yes "$BD/initramfs-luks-wipe.conf")" -eq 3
	also=$(cut -d'$' -f5 "$BD/initramfs-luks-wipe.sig")
	also=${also#also=}
	while [ $((${#also} % 4)) -ne 0 ]; do also=$also=; done
	check "... the signature binds the config by its path (also=)" \
		test "$(base64 -d <<<"$also" | tr '\0' '\n')" = "$BD/initramfs-luks-wipe.conf"
	check "... prints check's line, with the kind" grep -qx "$BD/initramfs-luks-wipe: before unlock: ARMED" <<<"$out"
	check "... and the crypttab WARN with the keyscript= fix, no line using it" \
		grep -q "^crypttab $T/crypttab.plain: WARN: no line uses the keyscript, .*fix: add keyscript=/" <<<"$out"
	check "... and the update-initramfs reminder, last" test "$(tail -n 1 <<<"$out")" = "$REMINDER"
	out=$(duress check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$BD" --crypttab "$T/crypttab.plain" --initramfs "$T/none" 2>&1)
	check "duress check: the installed action ARMED, before unlock" grep -qx "$BD/initramfs-luks-wipe: before unlock: ARMED" <<<"$out"
	cp -p "$BD/initramfs-luks-wipe.conf" "$T/wipe.conf.saved"
	echo 'SLOT=2' >>"$BD/initramfs-luks-wipe.conf"
	out=$(duress check --pam-dir "" --user-dir "" --global-dir "" --boot-dir "$BD" --crypttab "$T/crypttab.plain" --initramfs "$T/none" 2>&1)
	line=$(grep "^$BD/initramfs-luks-wipe: " <<<"$out")
	check_why "duress check: the config changed, the action is not ARMED (bound to it)" "got: $line" \
		test -n "$line" -a "$line" != "$BD/initramfs-luks-wipe: before unlock: ARMED"
	cp -p "$T/wipe.conf.saved" "$BD/initramfs-luks-wipe.conf"
	KS=$(sed -n 's/.*fix: add keyscript=\([^ ]*\) to the options.*/\1/p' <<<"$first")
	printf 'cryptroot UUID=1 none luks,keyscript=%s\n' "$KS" >"$T/crypttab.ks"
	out=$(echo "$PW" | duress add alert --boot --boot-dir "$BD" --crypttab "$T/crypttab.ks" --no-edit "${BOOT_OPTS[@]}" 2>/dev/null)
	check "--boot without --before-unlock: an after-boot action, under its own name" \
		test -x "$BD/alert" -a -f "$BD/alert.conf" -a -f "$BD/alert.sig" -a ! -e "$BD/initramfs-alert"
	check "... its check line says after boot" grep -q "^$BD/alert: after boot: " <<<"$out"
	check "... crypttab using the keyscript: no crypttab line, the reminder" \
		test -z "$(grep '^crypttab' <<<"$out")" -a "$(tail -n 1 <<<"$out")" = "$REMINDER"
	check "... the directory's salt and cost reused (one derivation per try)" \
		test "$(cut -d'$' -f4,6 "$BD/alert.sig")" = "$(cut -d'$' -f4,6 "$BD/initramfs-luks-wipe.sig")"
	# dracut: its config adds the module, or the machine builds with dracut.
	mkdir "$T/dracut.on" "$T/dbin"
	printf 'add_dracutmodules+=" pam-duress "\n' >"$T/dracut.on/pam-duress.conf"
	printf '#!/bin/sh\nexit 1\n' >"$T/dbin/dracut" && chmod 755 "$T/dbin/dracut"
	# PATH is $T/dbin alone: the valgrind step's wrapper must be found there too
	# (a script that runs it by its full path: Debian's valgrind is one that runs $0.bin).
	[ -z "$WRAP" ] || { printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "${WRAP%% *}")" >"$T/dbin/${WRAP%% *}" &&
		chmod 755 "$T/dbin/${WRAP%% *}"; }
	DREMINDER="next: sudo dracut -f (the initramfs holds a copy of the boot actions and their configs)"
	out=$(echo "$PW" | duress add alert --boot --force --boot-dir "$BD" --crypttab "$T/crypttab.plain" \
		--dracut-conf "$T/dracut.on" --no-edit "${BOOT_OPTS[@]}" 2>"$T/berr")
	check_why "--boot, dracut's config adds the module: no crypttab line, the dracut -f reminder" "got: $out" \
		test -z "$(grep -e '^crypttab' -e '^dracut' -e keyscript <<<"$out")" -a "$(tail -n 1 <<<"$out")" = "$DREMINDER"
	check_why "... and signing's reminder says dracut -f too" "got: $(cat "$T/berr")" \
		grep -q "a boot action: run sudo dracut -f so that" "$T/berr"
	out=$(echo "$PW" | PATH=$T/dbin $WRAP "$DURESS" add alert --boot --force --boot-dir "$BD" \
		--crypttab "$T/crypttab.plain" --dracut-conf "$T/dracut.none" --no-edit "${BOOT_OPTS[@]}" 2>/dev/null)
	check_why "--boot on a dracut machine without the config: dracut's line to add, no keyscript=" "got: $out" \
		test -n "$(grep -xF "dracut $T/dracut.none: WARN: no config adds the pam-duress module, so the disk-unlock prompt never checks a boot passphrase; fix: add add_dracutmodules+=\" pam-duress \" to $T/dracut.none/pam-duress.conf, then sudo dracut -f" <<<"$out")" \
		-a -z "$(grep -e '^crypttab' -e keyscript <<<"$out")"
	check_why "... and the dracut -f reminder, last" "got: $out" test "$(tail -n 1 <<<"$out")" = "$DREMINDER"
else
	for t in refusal nothing-written signing-fails install dir files modes config sets also \
		check-line crypttab reminder check changed after-boot kind no-crypttab salt \
		dracut-on dracut-sign dracut-machine dracut-reminder; do
		skip "--boot $t: needs root"
	done
fi

# --- the editor, through a pseudo-terminal ---------------------------------------------------
cat >"$T/ed" <<'EOF'
#!/bin/sh
# Stands in for an editor: appends a line naming its argument count.
eval "last=\${$#}"
echo "EDITED=$#" >>"$last"
EOF
chmod 755 "$T/ed"
# pty_add VAR=VALUE: duress add demo --force at a terminal with that editor variable.
pty_add() {
	env -u VISUAL -u EDITOR "$1" python3 -c "$PTY_PY" "$PW" $WRAP "$DURESS" add demo --force --pam-dir "$T/pam" --examples-dir "$EX" --memlimit 8K --opslimit 1 --allow-weak-cost
}
# PTY_PY PASSWORD COMMAND...: runs COMMAND on a new terminal, answering the
# password prompts; with PTY_STDIN=FILE, its standard input is FILE (the
# terminal stays its controlling one, where the password is asked).
PTY_PY=$(cat <<'EOF'
import os, pty, select, sys, time
pw, argv = sys.argv[1].encode(), sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    if os.environ.get("PTY_STDIN"):
        os.dup2(os.open(os.environ["PTY_STDIN"], os.O_RDONLY), 0)
    os.execvp(argv[0], argv)
seen, answered, end = b"", 0, time.monotonic() + 60
while time.monotonic() < end:
    if not select.select([fd], [], [], 1)[0]:
        continue
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    for prompt in (b"Duress password: ", b"Again: ")[answered:]:
        if seen.endswith(prompt):
            os.write(fd, pw + b"\n")
            answered += 1
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
EOF
)
out=$(pty_add EDITOR="$T/ed")
check "editor: exit 0" test $? -eq 0
check "editor: \$EDITOR ran on the config, with one argument" test "$(tail -n1 "$TD/demo.conf")" = "EDITED=1"
check "editor: the edited config is what is signed" grep -q "$TD/demo: ARMED" <<<"$out"
out=$(pty_add VISUAL="$T/ed --wait")
check "editor: \$VISUAL with a space runs through sh, split" test "$(tail -n1 "$TD/demo.conf")" = "EDITED=2"
check "editor: ARMED after \$VISUAL" grep -q "$TD/demo: ARMED" <<<"$out"
cat >"$T/badeditor" <<'EOF'
#!/bin/sh
exit 3
EOF
chmod 755 "$T/badeditor"
before=$(listing "$TD")
out=$(pty_add EDITOR="$T/badeditor")
check "editor fails: exit 1, nothing signed" test $? -eq 1 -a -z "$(grep ": signed (" <<<"$out")"
check "editor fails: what was there is as it was" test "$(listing "$TD")" = "$before"

# --- --set-file: a value that stays out of argv and the shell's history (issue 18, item 3) --
printf 'https://ntfy.example/secret-topic\nnot this line\n' >"$T/value"
out=$(echo "$PW" | add demo --stdin --force --set-file "GREETING=$T/value" 2>"$T/err")
check "--set-file: exit 0, ARMED" test $? -eq 0 -a -n "$(grep -x "$TD/demo: ARMED" <<<"$out")"
check "--set-file: the first line of the file, without its newline, is the value" \
	test "$(grep '^GREETING=' "$TD/demo.conf")" = "GREETING=https://ntfy.example/secret-topic"
printf 'one\n' >"$T/t1" && printf 'two' >"$T/t2"
echo "$PW" | add demo --stdin --force --set-file "TARGET=$T/t1" --set TARGET=mid --set-file "TARGET=$T/t2" >/dev/null 2>&1
check "--set-file repeated with --set: one line each, in order (a list key); no newline needed" \
	test "$(grep '^TARGET=' "$TD/demo.conf" | tr '\n' ' ')" = "TARGET=first TARGET=one TARGET=mid TARGET=two "
printf 'from standard input\n' >"$T/stdin-value"
out=$(PTY_STDIN=$T/stdin-value python3 -c "$PTY_PY" "$PW" $WRAP "$DURESS" add demo --force --set-file GREETING=- \
	--pam-dir "$T/pam" --examples-dir "$EX" --memlimit 8K --opslimit 1 --allow-weak-cost)
check "--set-file KEY=-: the value from standard input, the password at the terminal: ARMED" \
	test $? -eq 0 -a -n "$(grep "$TD/demo: ARMED" <<<"$out")"
check "--set-file KEY=-: the value set" grep -qx "GREETING=from standard input" "$TD/demo.conf"
before=$(listing "$TD")
# refused DESCRIPTION EXIT LINE ARGS...: exit EXIT, stderr exactly LINE, nothing written.
refused() {
	local what=$1 want=$2 line=$3 rc
	shift 3
	err=$(echo "$PW" | add demo --force "$@" 2>&1 >/dev/null)
	rc=$?
	check "$what: exit $want, one line, nothing written" \
		test "$rc" -eq "$want" -a "$err" = "$line" -a "$(listing "$TD")" = "$before"
}
head -c 4097 /dev/zero | tr '\0' x >"$T/long"
refused "--set-file, a first line over 4096 bytes" 1 \
	"duress add: --set-file GREETING=$T/long: its first line is longer than 4096 bytes" \
	--stdin --set-file "GREETING=$T/long"
printf 'a\0b\n' >"$T/nul"
refused "--set-file, a NUL byte" 1 "duress add: --set-file GREETING=$T/nul: its first line holds a NUL byte" \
	--stdin --set-file "GREETING=$T/nul"
refused "--set-file, a missing file" 1 "duress add: --set-file GREETING=$T/missing: No such file or directory" \
	--stdin --set-file "GREETING=$T/missing"
# Issue 24, item 10: FILE is a regular file, its name no symlink; nothing else is opened.
ln -s "$T/value" "$T/value-link"
refused "--set-file, a symlink to a regular file" 1 \
	"duress add: --set-file GREETING=$T/value-link: a symlink, not a regular file (a command's output: KEY=- and standard input)" \
	--stdin --set-file "GREETING=$T/value-link"
mkdir "$T/value-dir"
refused "--set-file, a directory" 1 "duress add: --set-file GREETING=$T/value-dir: a directory, not a regular file" \
	--stdin --set-file "GREETING=$T/value-dir"
refused "--set-file, a device" 1 "duress add: --set-file GREETING=/dev/null: a device, not a regular file" \
	--stdin --set-file "GREETING=/dev/null"
head -c $((64 * 1024 + 1)) /dev/zero | tr '\0' 'z' >"$T/value-big"
refused "--set-file, a file over 64 KiB" 1 "duress add: --set-file GREETING=$T/value-big: larger than 64 KiB: not a file of one value" \
	--stdin --set-file "GREETING=$T/value-big"
# A FIFO without a writer: opening it to read would wait for ever (the timeout says so: 124).
mkfifo "$T/value-fifo"
err=$(echo "$PW" | timeout "$(bound 30)" $WRAP "$DURESS" add demo --force --pam-dir "$T/pam" --examples-dir "$EX" \
	--memlimit 8K --opslimit 1 --allow-weak-cost --stdin --set-file "GREETING=$T/value-fifo" 2>&1 >/dev/null)
rc=$?
check "--set-file, a FIFO: no wait, exit 1, one line, nothing written" test "$rc" -eq 1 -a \
	"$err" = "duress add: --set-file GREETING=$T/value-fifo: a FIFO, not a regular file (a command's output: KEY=- and standard input)" -a \
	"$(listing "$TD")" = "$before"
refused "--set-file KEY=- with --stdin" 2 \
	"duress add: --set-file KEY=- and --stdin both read standard input: give the value in a file" \
	--stdin --set-file GREETING=-
refused "two --set-file KEY=-" 2 \
	"duress add: two --set-file KEY=- both read standard input: give the value in a file" \
	--set-file GREETING=- --set-file TARGET=-
refused "--set-file without =FILE" 2 "duress add: --set-file GREETING: not KEY=FILE" --stdin --set-file GREETING
# Issue 25, item 6: a value from standard input leaves the terminal as the only place for the
# password; without one, that is said before anything is read.
err=$(echo "https://x.invalid/t" | setsid -w $WRAP "$DURESS" add demo --force --set-file GREETING=- --pam-dir "$T/pam" \
	--examples-dir "$EX" --memlimit 8K --opslimit 1 --allow-weak-cost 2>&1 >/dev/null)
rc=$?
check "--set-file KEY=- without a terminal: exit 2, one line, nothing written" test "$rc" -eq 2 -a \
	"$err" = "duress add: --set-file KEY=- reads standard input, so the password is asked at the terminal, and there is none: give the value in a file (--set-file KEY=FILE) and the password with --stdin" -a \
	"$(listing "$TD")" = "$before"
printf 'x\r\n' >"$T/cr"
refused "--set-file, a carriage return: the same check as --set" 1 \
	"duress add: --set GREETING: the value must be one line" --stdin --set-file "GREETING=$T/cr"
head -c 4096 /dev/zero | tr '\0' y >"$T/max"
echo "$PW" | add demo --stdin --force --set-file "GREETING=$T/max" >/dev/null 2>&1
check "--set-file, exactly 4096 bytes: taken" test "$(grep -c "^GREETING=y\{4096\}\$" "$TD/demo.conf")" -eq 1

# --- no cracklib dictionary (issue 25, item 11) -------------------------------------------------
# cracklib says a missing dictionary with perror() ("...cracklib_dict.pwd: No such file or
# directory"); add says it in one line of its own.  Root only: the dictionary's directory is
# hidden under a tmpfs in a mount namespace of this command alone.
DICT=/var/cache/cracklib
weak=$(echo password | add demo --stdin --force --no-edit 2>&1 >/dev/null)
if [ "$(id -u)" -ne 0 ]; then
	skip "no cracklib dictionary: needs root (a mount namespace)"
elif [ ! -e "$DICT/cracklib_dict.pwd" ] || ! grep -q "weak password" <<<"$weak"; then
	skip "no cracklib dictionary: no libpwquality, or no dictionary in $DICT to hide"
else
	err=$(echo password | unshare -m sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$DICT" \
		$WRAP "$DURESS" add demo --stdin --force --no-edit --pam-dir "$T/pam" --examples-dir "$EX" \
		--memlimit 8K --opslimit 1 --allow-weak-cost 2>&1 >/dev/null)
	echo "$err" | diag
	check "no cracklib dictionary: cracklib's own line is not shown, one line of add's says it" \
		test -z "$(grep -i "no such file" <<<"$err")" -a "$(grep -c "not checked against a dictionary" <<<"$err")" -eq 1
fi

# --- a per-user directory the user cannot make (user_dir=/var/lib/duress/%u) -----------------
# A root-owned 0711 parent, as the package makes /var/lib/duress.
mkdir -m 711 "$T/locked" && mkdir "$T/lpam"
echo "auth sufficient pam_duress.so user_dir=$T/locked/%u" >"$T/lpam/common-auth"
echo "@include common-auth" >"$T/lpam/login"
if [ "$(id -u)" -eq 0 ]; then
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	who=$(id -nu 65534) group=$(getent group 65534 | cut -d: -f1)
else
	as=() who=$(id -un) group=$(id -gn)
	chmod 555 "$T/locked"
fi
err=$(echo "$PW" | "${as[@]}" $WRAP "$DURESS" add demo --stdin --pam-dir "$T/lpam" --examples-dir "$EX" 2>&1 >/dev/null)
rc=$?
check "user_dir= under a parent the user cannot write: exit 1, one line naming the install -d that makes it" \
	test "$rc" -eq 1 -a "$err" = "duress add: $T/locked/$who does not exist and you cannot create it; fix: sudo install -d -o $who -g $group -m 700 $T/locked/$who"
check "user_dir= under a parent the user cannot write: nothing written" test -z "$(ls -A "$T/locked")"

tap_end
