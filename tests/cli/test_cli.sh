#!/bin/bash
# The duress CLI, driven as a user would: exit statuses, files written,
# messages.  TAP output for meson.  Usage: test_cli.sh PATH/TO/duress
set -u
DURESS=$1
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# Cheap cost keeps the suite fast; the default cost is tested once.
# Its PAM stack's module line reads $T/d: sign warns about any other directory.
sign() { duress sign --pam-dir "$T/pam" --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$@"; }
new_action() { # new_action PATH [CONTENT]
	printf '%s\n' "${2:-#!/bin/sh
echo hello}" >"$1"
	chmod 700 "$1"
}
sig_field() { cut -d'$' -f"$2" "$1.sig"; }
b64_decode() { # unpadded base64, as in signatures
	local s=$1
	while [ $((${#s} % 4)) -ne 0 ]; do s+="="; done
	base64 -d <<<"$s"
}

mkdir -m 700 "$T/d" "$T/pam"
echo "auth sufficient pam_duress.so user_dir=$T/d" >"$T/pam/common-auth"
echo "@include common-auth" >"$T/pam/login"
A=$T/d/alert
new_action "$A"

# --- sign and verify -------------------------------------------------------
out=$(echo 'Duress-pw-1' | sign "$A" 2>&1)
check "sign exits 0" test $? -eq 0
check "sign says what it did" grep -q "alert: signed" <<<"$out"
check "signature is written" test -f "$A.sig"
check "signature mode is 0600" test "$(stat -c %a "$A.sig")" = 600
check "signature owned like the action" test "$(stat -c %u:%g "$A.sig")" = "$(stat -c %u:%g "$A")"
check "signature is one line" test "$(wc -l <"$A.sig")" -eq 1
check "signature has the v1 format" grep -Eq '^\$duress\$v=1\$m=8,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}\$[A-Za-z0-9+/]{43}$' "$A.sig"
check "signature records SHA-256 of the content" test "$(sig_field "$A" 6)" = "$(sha256sum "$A" | cut -c1-64 | xxd -r -p | base64 | tr -d '=')"
check "no temporary file left behind" test "$(ls -A "$T/d" | wc -l)" -eq 2

echo 'Duress-pw-1' | duress verify --stdin "$A" >/dev/null
check "verify: right password exits 0" test $? -eq 0
echo 'Duress-pw-2' | duress verify --stdin "$A" >/dev/null
check "verify: wrong password exits 1" test $? -eq 1
printf 'Duress-pw-1' | duress verify --stdin "$A" >/dev/null
check "verify: --stdin without a newline works" test $? -eq 0
printf 'Duress-pw-1\nsomething else\n' | duress verify --stdin "$A" >/dev/null
check "verify: --stdin reads exactly one line" test $? -eq 0
printf 'Duress-pw-1\r\n' | duress verify --stdin "$A" >/dev/null
check "verify: a carriage return is part of the password" test $? -eq 1

# --- salt and cost reuse ---------------------------------------------------
B=$T/d/bravo
new_action "$B" '#!/bin/sh
echo other'
echo 'Another-pw-9' | sign "$B" >/dev/null 2>&1
check "second action in a directory reuses salt and cost" test "$(sig_field "$A" 4)$(sig_field "$A" 5)" = "$(sig_field "$B" 4)$(sig_field "$B" 5)"
C=$T/d/charlie
new_action "$C"
echo 'Another-pw-9' | duress sign --stdin --memlimit 16K --opslimit 2 --allow-weak-cost "$C" >/dev/null 2>&1
check "explicit cost gets a new salt and that cost" test "$(sig_field "$C" 4)" = "m=16,t=2,p=1" -a "$(sig_field "$C" 5)" != "$(sig_field "$A" 5)"
rm -f "$C" "$C.sig"

mkdir -m 700 "$T/fresh"
new_action "$T/fresh/x"
echo 'Default-cost-7' | duress sign --stdin "$T/fresh/x" >/dev/null 2>&1
check "default cost is libsodium INTERACTIVE (64 MiB, 2 passes)" test "$(sig_field "$T/fresh/x" 4)" = "m=65536,t=2,p=1"
echo 'Default-cost-7' | duress verify --stdin "$T/fresh/x" >/dev/null
check "default-cost signature verifies" test $? -eq 0

# --- never inherit a weak cost (issue 7) --------------------------------------
# sign_apart DIR NAME: NAME.sig for a throwaway action at the cheap cost, signed
# elsewhere: an orphan signature, or a set of its own, without duress sign.
sign_apart() {
	mkdir -m 700 "$T/apart"
	new_action "$T/apart/$2"
	echo 'Apart-pw-8' | sign "$T/apart/$2" >/dev/null 2>&1
	mv "$T/apart/$2.sig" "$1/"
	rm -rf "$T/apart"
}
mkdir -m 700 "$T/orphan"
sign_apart "$T/orphan" 0
new_action "$T/orphan/x"
out=$(echo 'Default-cost-7' | duress sign --stdin "$T/orphan/x" 2>&1)
check "an orphan m=8,t=1 signature is not inherited: the default cost" test "$(sig_field "$T/orphan/x" 4)" = "m=65536,t=2,p=1"
check "an orphan: a fresh salt, not the orphan's" test "$(sig_field "$T/orphan/x" 5)" != "$(sig_field "$T/orphan/0" 5)"
check "an orphan: the note says a fresh salt at the default cost" grep -q "note: a fresh salt at the default cost" <<<"$out"
# An orphan first in name order, then a real action at the default cost: its salt is shared.
mv "$T/orphan/x" "$T/orphan/y" && mv "$T/orphan/x.sig" "$T/orphan/y.sig"
new_action "$T/orphan/z"
echo 'Default-cost-7' | duress sign --stdin "$T/orphan/z" >/dev/null 2>&1
check "a real action's default-cost signature is reused, not the orphan's" test "$(sig_field "$T/orphan/z" 4)" = "m=65536,t=2,p=1" -a "$(sig_field "$T/orphan/z" 5)" = "$(sig_field "$T/orphan/y" 5)"
# A real action with a weak cost is not inherited either, unless asked for.
mkdir -m 700 "$T/weak"
new_action "$T/weak/a"
echo 'Weak-pw-1' | sign "$T/weak/a" >/dev/null 2>&1
new_action "$T/weak/b"
echo 'Weak-pw-1' | duress sign --stdin "$T/weak/b" >/dev/null 2>&1
check "a real action's weak cost is not inherited by default" test "$(sig_field "$T/weak/b" 4)" = "m=65536,t=2,p=1"
new_action "$T/weak/c"
echo 'Weak-pw-1' | sign "$T/weak/c" >/dev/null 2>&1
check "the same explicit cheap cost shares that action's salt" test "$(sig_field "$T/weak/c" 5)" = "$(sig_field "$T/weak/a" 5)"

# --- the floor: no new signature below the default cost (issue 24, item 8) -----
# refused_cost DESCRIPTION LINE ARGS...: exit 2, stderr exactly LINE, no signature.
refused_cost() {
	local what=$1 line=$2 rc
	shift 2
	new_action "$T/floor/x"
	err=$(echo 'Floor-pw-3' | duress sign --stdin "$@" "$T/floor/x" 2>&1 >/dev/null)
	rc=$?
	check "$what: exit 2, one line, nothing written" \
		test "$rc" -eq 2 -a "$err" = "$line" -a ! -e "$T/floor/x.sig"
}
mkdir -m 700 "$T/floor"
FLOOR_WHY="is below the floor, libsodium's interactive cost (64M, 2 passes): wrong passwords for the account would take less time than for an account without actions; leave it out, or give at least"
refused_cost "--memlimit 32M --opslimit 2 (the issue's)" "duress: --memlimit 32M $FLOOR_WHY 64M" --memlimit 32M --opslimit 2
refused_cost "--opslimit 1" "duress: --opslimit 1 $FLOOR_WHY 2" --opslimit 1
refused_cost "--memlimit in bytes, one byte short" "duress: --memlimit 67108863 $FLOOR_WHY 64M" --memlimit 67108863
err=$(echo 'Floor-pw-3' | duress sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$T/floor/x" 2>&1 >/dev/null)
check "--allow-weak-cost: signed below the floor (the test suites' cost)" test $? -eq 0 -a "$(sig_field "$T/floor/x" 4)" = "m=8,t=1,p=1"
out=$(duress check --pam-dir "" --user-dir "$T/floor" --global-dir "" --boot-dir "" 2>&1)
check "a signature below the floor stays armed (upgrades keep actions armed)" grep -qx "$T/floor/x: ARMED" <<<"$out"

# --- what the module would skip is refused (per-user caps) ---------------------
mkdir -m 700 "$T/caps"
new_action "$T/caps/big"
err=$(echo 'Caps-pw-2' | duress sign --stdin --memlimit 128M --opslimit 1 --allow-weak-cost "$T/caps/big" 2>&1)
check "per-user: memory over 64 MiB refused" test $? -ne 0 -a ! -e "$T/caps/big.sig"
check "per-user: the refusal is one line that says why" test "$(wc -l <<<"$err")" -eq 1 -a -n "$(grep "over the module's caps for a per-user directory" <<<"$err")"
echo 'Caps-pw-2' | duress sign --stdin --memlimit 8K --opslimit 3 --allow-weak-cost "$T/caps/big" >/dev/null 2>&1
check "per-user: 3 passes refused" test $? -ne 0 -a ! -e "$T/caps/big.sig"
sign_apart "$T/caps" one
new_action "$T/caps/one"
sign_apart "$T/caps" two
new_action "$T/caps/two"
new_action "$T/caps/three"
err=$(echo 'Caps-pw-2' | duress sign --stdin --memlimit 16K --opslimit 1 --allow-weak-cost "$T/caps/three" 2>&1)
check "per-user: a third salt and cost refused, nothing written" test $? -ne 0 -a ! -e "$T/caps/three.sig"
check "per-user: the third set's refusal is one line that says why" test "$(wc -l <<<"$err")" -eq 1 -a -n "$(grep "sets the module computes" <<<"$err")"
echo 'Caps-pw-2' | sign "$T/caps/two" >/dev/null 2>&1
check "per-user: re-signing an action keeps its directory at two sets" test $? -eq 0
echo 'Caps-pw-2' | sign "$T/caps/three" >/dev/null 2>&1
check "per-user: the cheap cost of the tests shares an existing set" test $? -eq 0 -a "$(sig_field "$T/caps/three" 5)" = "$(sig_field "$T/caps/one" 5)"

# --- names are data -------------------------------------------------------------
N=$T/d/$'n\nsshd[1]: Accepted password for root'
new_action "$N"
out=$(echo 'Name-pw-3' | sign "$N" 2>&1)
check "sign: a newline in the name is shown escaped, on one line" test "$(wc -l <<<"$out")" -eq 1 -a -n "$(grep -F 'n\x0asshd[1]: Accepted password for root: signed' <<<"$out")"
rm -f "$N" "$N.sig"

# --- content changes ---------------------------------------------------------
echo '# changed' >>"$A"
err=$(echo 'Duress-pw-1' | duress verify --stdin "$A" 2>&1 >/dev/null)
check "verify after a change exits 1" test $? -eq 1
check "verify says the content changed" grep -q "content changed since signing" <<<"$err"
echo 'Duress-pw-1' | sign "$A" >/dev/null 2>&1
echo 'Duress-pw-1' | duress verify --stdin "$A" >/dev/null
check "re-signing replaces the signature atomically" test $? -eq 0 -a "$(ls -A "$T/d" | wc -l)" -eq 4

# --- refusals -----------------------------------------------------------------
before=$(cat "$A.sig")
err=$(echo '' | sign "$A" 2>&1)
check "empty password refused" test $? -ne 0
check "empty password: one-line error" test "$(wc -l <<<"$err")" -eq 1 -a -n "$err"
check "refused sign leaves the old signature" test "$(cat "$A.sig")" = "$before"
head -c 600 /dev/zero | tr '\0' a | { cat; echo; } | sign "$A" >/dev/null 2>&1
check "password over 512 bytes refused" test $? -ne 0
for bad in .hidden x.sig x.sha256 x~ x.swp x.bak '#x#' x.dpkg-old; do
	new_action "$T/d/$bad"
	err=$(echo 'Duress-pw-1' | sign "$T/d/$bad" 2>&1)
	check "refuses to sign non-action name '$bad'" test $? -ne 0 -a ! -e "$T/d/$bad.sig"
	rm -f "$T/d/$bad"
done
ln -s "$A" "$T/d/link"
echo 'Duress-pw-1' | sign "$T/d/link" >/dev/null 2>&1
check "refuses a symlink" test $? -ne 0 -a ! -e "$T/d/link.sig"
rm -f "$T/d/link"
mkfifo "$T/d/fifo"
echo 'Duress-pw-1' | timeout "$(bound 10)" $WRAP "$DURESS" sign --stdin "$T/d/fifo" >/dev/null 2>&1
rc=$?
check "refuses a FIFO without hanging" test $rc -ne 0 -a $rc -ne 124
rm -f "$T/d/fifo"
echo 'Duress-pw-1' | sign "$T/d/missing" >/dev/null 2>&1
check "missing file: non-zero exit" test $? -ne 0
duress verify --stdin "$T/d/missing" </dev/null >/dev/null 2>&1
check "verify of a missing file exits 2" test $? -eq 2
new_action "$T/d/nosig"
echo 'x' | duress verify --stdin "$T/d/nosig" >/dev/null 2>&1
check "verify without a signature exits 2" test $? -eq 2
echo 'garbage' >"$T/d/nosig.sig"
echo 'x' | duress verify --stdin "$T/d/nosig" >/dev/null 2>&1
check "verify of a malformed signature exits 2" test $? -eq 2
rm -f "$T/d/nosig" "$T/d/nosig.sig"
err=$(duress sign </dev/null 2>&1)
check "sign with no FILE: error and exit 2" test $? -eq 2 -a "$(wc -l <<<"$err")" -eq 1
err=$(setsid -w $WRAP "$DURESS" sign "$A" </dev/null 2>&1)
check "no terminal and no --stdin: clear error" test $? -ne 0 -a -n "$(grep -- --stdin <<<"$err")"

# --- what still needs fixing is reported -------------------------------------
D=$T/d/delta
new_action "$D"
chmod 600 "$D"
err=$(echo 'Duress-pw-1' | sign "$D" 2>&1)
check "warns that the action is not executable" grep -q "not executable" <<<"$err"
chmod 770 "$D"
err=$(echo 'Duress-pw-1' | sign "$D" 2>&1)
check "warns that the action is group-writable" grep -q "writable by group or others" <<<"$err"
chmod 700 "$D"
chmod 777 "$T/d"
err=$(echo 'Duress-pw-1' | sign "$D" 2>&1)
check "warns that the directory is world-writable" grep -q "will skip this directory" <<<"$err"
chmod 700 "$T/d"
err=$(echo 'Duress-pw-1' | sign "$D" 2>&1)
check "no warning once everything is right" test -z "$(grep -i warning <<<"$err")"

# --- legacy signatures ----------------------------------------------------------
L=$T/d/legacy
new_action "$L"
{ sha256sum "$L" | cut -c1-64 | xxd -r -p; printf 'Old-pw'; } | sha256sum | cut -c1-64 | xxd -r -p >"$L.sha256"
echo 'Old-pw' | duress verify --stdin "$L" >/dev/null 2>&1
check "verify understands a legacy .sha256 signature" test $? -eq 0
echo 'Old-pW' | duress verify --stdin "$L" >/dev/null 2>&1
check "legacy signature: wrong password exits 1" test $? -eq 1

# --- companion files (--also) ----------------------------------------------------
F=$T/d/foxtrot
new_action "$F" '#!/bin/sh
. "$HOME/alert.conf"'
mkdir -m 700 "$T/conf"
printf 'URL=https://example.invalid/hook\n' >"$T/conf/alert.conf"
chmod 600 "$T/conf/alert.conf"
(cd "$T/conf" && echo 'Also-pw-6' | sign --also alert.conf "$F" >/dev/null 2>&1)
check "sign --also exits 0" test $? -eq 0
also=$(sig_field "$F" 5)
check "the companion is recorded by absolute path" test "$(b64_decode "${also#also=}" | tr '\0' '\n')" = "$T/conf/alert.conf"
echo 'Also-pw-6' | duress verify --stdin "$F" >/dev/null 2>&1
check "verify with an unchanged companion exits 0" test $? -eq 0
printf 'URL=https://attacker.invalid/\n' >"$T/conf/alert.conf"
err=$(echo 'Also-pw-6' | duress verify --stdin "$F" 2>&1 >/dev/null)
check "a changed companion: verify exits 1" test $? -eq 1
check "a changed companion: says the content changed" grep -q "content changed since signing" <<<"$err"
mv "$T/conf/alert.conf" "$T/conf/moved"
err=$(echo 'Also-pw-6' | duress verify --stdin "$F" 2>&1 >/dev/null)
check "a missing companion: verify exits 2 (an error, not a wrong password) and says so" test $? -eq 2 -a -n "$(grep -i "companion" <<<"$err")"
mv "$T/conf/moved" "$T/conf/alert.conf"
chmod 620 "$T/conf/alert.conf"
echo 'Also-pw-6' | sign --also "$T/conf/alert.conf" "$F" >/dev/null 2>&1
check "a group-writable companion is refused" test $? -ne 0
chmod 600 "$T/conf/alert.conf"
args=()
for i in 1 2 3 4 5 6 7 8 9; do args+=(--also "$T/conf/alert.conf"); done
echo 'Also-pw-6' | sign "${args[@]}" "$F" >/dev/null 2>&1
check "more than 8 --also files are refused" test $? -eq 2
echo 'Also-pw-6' | sign --also "$T/conf/nonexistent" "$F" >/dev/null 2>&1
check "a nonexistent companion is refused" test $? -ne 0
# Issue 17 item 6: /proc makes its content up for each reader; no companion there.
err=$(echo 'Also-pw-6' | sign --also /proc/self/status "$F" 2>&1 >/dev/null)
check "a companion on /proc is refused, and why is said" test $? -ne 0 -a -n "$(grep "pseudo-filesystem" <<<"$err")"
# Issue 25, item 11: signed again without --also (after an edit), the action stays bound to
# what its old signature binds, and one warning says so; --no-also unbinds it.
echo 'Also-pw-6' | sign --also "$T/conf/alert.conf" "$F" >/dev/null 2>&1
err=$(echo 'Also-pw-6' | sign "$F" 2>&1 >/dev/null)
check "signed again without --also: exit 0" test $? -eq 0
check "signed again without --also: one warning naming what stays bound, and --no-also" \
	test "$(grep -c warning <<<"$err")" -eq 1 -a "$err" = "duress: $F: warning: no --also given: still bound to what its old signature binds (--also $T/conf/alert.conf); --no-also binds nothing"
also=$(sig_field "$F" 5)
check "signed again without --also: the companion is still bound" test "$(b64_decode "${also#also=}" | tr '\0' '\n')" = "$T/conf/alert.conf"
printf 'URL=https://attacker.invalid/again\n' >"$T/conf/alert.conf"
echo 'Also-pw-6' | duress verify --stdin "$F" >/dev/null 2>&1
check "signed again without --also: a change to the companion still disarms it" test $? -eq 1
err=$(echo 'Also-pw-6' | sign --no-also "$F" 2>&1 >/dev/null)
check "--no-also: exit 0, no warning" test $? -eq 0 -a -z "$(grep warning <<<"$err")"
check "--no-also: no companion in the signature" test "$(sig_field "$F" 5 | cut -c1-5)" != "also="
echo 'Also-pw-6' | sign --no-also --also "$T/conf/alert.conf" "$F" >/dev/null 2>&1
check "--no-also with --also: a usage error, exit 2" test $? -eq 2
rm -f "$F" "$F.sig"

# --- once (issue 26, item 2) ------------------------------------------------------
# once_record SIG [SCOPE UID]: the record's name duress check and the module use,
# computed apart: BLAKE2b-256 of the context, the scope, the uid and the once id.
once_record() {
	python3 - "$1" "${2:-u}" "${3:-$(id -u)}" <<'PY'
import base64, hashlib, sys
line = open(sys.argv[1]).read()
oid = line.split("$once=")[1].split("$")[0]
oid = base64.b64decode(oid + "=" * (-len(oid) % 4))
who = sys.argv[2].encode() + int(sys.argv[3]).to_bytes(4, "little")
print(hashlib.blake2b(b"pam_duress once record v1\0" + who + oid, digest_size=32).hexdigest())
PY
}
O=$T/d/once
new_action "$O"
out=$(echo 'Once-pw-2' | sign --once "$O" 2>/dev/null)
check "sign --once: exit 0, and it says once" test $? -eq 0 -a -n "$(grep -F "signed (once.sig, once:" <<<"$out")"
check "sign --once: the once= field, 16 bytes, before the salt" grep -Eq '^\$duress\$v=1\$m=8,t=1,p=1\$once=[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}\$[A-Za-z0-9+/]{43}$' "$O.sig"
check "sign without --once: no once= field" test "$(sig_field "$A" 5 | cut -c1-5)" != "once="
out=$(echo 'Once-pw-2' | duress verify --stdin --state-dir "$T/state" "$O" 2>&1)
check "verify: a once action's match says it has not run" test $? -eq 0 -a -n "$(grep -F "$O: once: it has not run" <<<"$out")"
out=$(duress check --pam-dir "" --user-dir "$T/d" --global-dir "" --boot-dir "" --state-dir "$T/state" 2>&1)
check "check: once, and not run" grep -qF "$O: ARMED (once: it has not run" <<<"$out"
if [ "$(id -u)" -ne 0 ]; then
	skip "check and verify as root say that a once action ran (needs root)"
	skip "check as root: a spent once action is NOT ARMED, and the command re-arms it (needs root)"
	skip "check as a user cannot tell whether a once action ran (needs root to set up)"
else
	mkdir -m 700 "$T/state" "$T/state/once"
	rec=$T/state/once/$(once_record "$O.sig")
	touch "$rec"
	out=$(echo 'Once-pw-2' | duress verify --stdin --state-dir "$T/state" "$O" 2>&1)
	check "check and verify as root say that a once action ran" grep -qF "$O: once: it ran (" <<<"$out"
	out=$(duress check --pam-dir "" --user-dir "$T/d" --global-dir "" --boot-dir "" --state-dir "$T/state" 2>&1)
	check "check as root: a spent once action is NOT ARMED, and the command re-arms it" \
		test -n "$(grep -F "$O: NOT ARMED: once: it ran (" <<<"$out")" -a -n "$(grep -F "re-arm: sudo rm $rec, or sign it again" <<<"$out")"
	# nobody's copy of it: a record for nobody's uid, which nobody cannot look up.
	mkdir -m 700 "$T/nb"
	cp "$O" "$O.sig" "$T/nb/"
	chown -R 65534:65534 "$T/nb"
	touch "$T/state/once/$(once_record "$O.sig" u 65534)"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" check --pam-dir "" --user-dir "$T/nb" --global-dir "" --boot-dir "" --state-dir "$T/state" 2>&1)
	check "check as a user cannot tell whether a once action ran" grep -qF "$T/nb/once: ARMED (once: whether it has run, only root can tell" <<<"$out"
	rm -rf "$rec" "$T/nb"
fi
# Signed again without --once, it stays once, with a new id (armed again); --no-once drops it.
old_id=$(sig_field "$O" 5)
err=$(echo 'Once-pw-2' | sign "$O" 2>&1 >/dev/null)
check "signed again without --once: still once, a new id, one warning" \
	test "$(sig_field "$O" 5 | cut -c1-5)" = "once=" -a "$(sig_field "$O" 5)" != "$old_id" -a -n "$(grep -F "warning: no --once given: still once" <<<"$err")"
err=$(echo 'Once-pw-2' | sign --no-once "$O" 2>&1 >/dev/null)
check "--no-once: no once= field, no once warning" test "$(sig_field "$O" 5 | cut -c1-5)" != "once=" -a -z "$(grep -F "once" <<<"$err")"
echo 'Once-pw-2' | sign --once --no-once "$O" >/dev/null 2>&1
check "--once with --no-once: a usage error, exit 2" test $? -eq 2
# The flag is under the tag: added or stripped by hand, the password no longer matches.
echo 'Once-pw-2' | sign "$O" >/dev/null 2>&1
sed -i 's/p=1\$/p=1$once=AAAAAAAAAAAAAAAAAAAAAA$/' "$O.sig"
echo 'Once-pw-2' | duress verify --stdin "$O" >/dev/null 2>&1
check "a once= field added by hand disarms it" test $? -eq 1
echo 'Once-pw-2' | sign --once "$O" >/dev/null 2>&1
sed -i 's/\$once=[A-Za-z0-9+/]*\$/$/' "$O.sig"
echo 'Once-pw-2' | duress verify --stdin "$O" >/dev/null 2>&1
check "a once= field stripped by hand disarms it" test $? -eq 1
out=$(duress check --pam-dir "" --user-dir "$T/d" --global-dir "" --boot-dir "" 2>&1)
check "check cannot tell a stripped flag (no password): it lists the action as plain" grep -qx "$O: ARMED" <<<"$out"
rm -f "$O" "$O.sig"

# --- help, version, alias --------------------------------------------------------
# The exit status and the text, each its own assertion (a grep at the end of
# a pipeline whose status is the first command's would be checked by nobody).
out=$(duress --help)
check "--help: exit 0" test $? -eq 0
check "--help: the general usage" grep -qx "Usage: duress COMMAND \[OPTION\]... ARG..." <<<"$out"
check "--help: lists sign" grep -q "^  sign \[--stdin\]" <<<"$out"
out=$(duress sign --help)
check "sign --help: exit 0" test $? -eq 0
check "sign --help: sign's usage" grep -q "^Usage: duress sign \[--stdin\] \[--also FILE\]" <<<"$out"
out=$(duress --version)
check "--version: exit 0" test $? -eq 0
check "--version: one line, 'duress' and the version" grep -Eqx 'duress [0-9]+\.[0-9]+[.0-9A-Za-z~+-]*' <<<"$out"
check "--version: nothing else" test "$(grep -c '' <<<"$out")" -eq 1
err=$(duress frobnicate 2>&1)
check "unknown command: exit 2, one line" test $? -eq 2 -a "$(wc -l <<<"$err")" -eq 1
err=$(duress sign --bogus "$A" </dev/null 2>&1)
check "unknown option: exit 2" test $? -eq 2
ln -s "$DURESS" "$T/duress_sign"
E=$T/d/echo
new_action "$E"
echo 'Alias-pw-3' | $WRAP "$T/duress_sign" --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$E" >/dev/null 2>&1
echo 'Alias-pw-3' | duress verify --stdin "$E" >/dev/null
check "duress_sign is an alias of duress sign" test $? -eq 0

# --- root: ownership and someone else's files -------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	skip "ownership of signatures written by root (needs root)"
	skip "a user cannot sign someone else's action (needs root to set up)"
	skip "real password refused (needs root)"
else
	mkdir -m 755 "$T/u"
	chown 65534:65534 "$T/u"
	new_action "$T/u/act"
	chown 65534:65534 "$T/u/act"
	echo 'Root-signs-4' | sign "$T/u/act" >/dev/null 2>&1
	check "root signing a user's action: signature owned by the user" test "$(stat -c %u:%g:%a "$T/u/act.sig")" = "65534:65534:600"
	new_action "$T/u/roots"
	echo 'Root-signs-4' | setpriv --reuid=65534 --regid=65534 --clear-groups "$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$T/u/roots" >/dev/null 2>&1
	check "a user cannot sign someone else's action" test $? -ne 0 -a ! -e "$T/u/roots.sig"
	# The owner's real password is looked up through NSS: fake it with nss_wrapper.
	hash=$(python3 -c 'import crypt; print(crypt.crypt("Real-pw-5", crypt.mksalt(crypt.METHOD_SHA512)))' 2>/dev/null)
	printf 'nobody:x:65534:65534:n:/nonexistent:/bin/sh\n' >"$T/passwd"
	printf 'nobody::\n' >"$T/group"
	printf 'nobody:%s:19000:0:99999:7:::\n' "$hash" >"$T/shadow"
	new_action "$T/u/real"
	chown 65534:65534 "$T/u/real"
	err=$(echo 'Real-pw-5' | LD_PRELOAD=${DURESS_PRELOAD_ASAN:+$DURESS_PRELOAD_ASAN:}libnss_wrapper.so NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group NSS_WRAPPER_SHADOW=$T/shadow "$DURESS" sign --stdin --memlimit 8K --opslimit 1 --allow-weak-cost "$T/u/real" 2>&1)
	check "the account's real password is refused" test $? -ne 0 -a ! -e "$T/u/real.sig"
	check "real password: the message says why" grep -q "real password" <<<"$err"
fi

tap_end
