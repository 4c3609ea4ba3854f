#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Secret comparisons in constant time: a static check of make check.
#
#   tools/secret-compare.sh [DIR...]      (default: src)
#
# A comparison that stops at the first differing byte (memcmp, bcmp,
# strcmp, strncmp, strcasecmp, strncasecmp) leaks through its timing how
# much of a secret matched.  The rule: no such call in DIR may have an
# argument that names a secret: a tag, hash, key, digest, password (pw,
# passw, pwd, authtok), secret or expected value.  Those go through
# sodium_memcmp() or crypto_verify_*() (or crypto_pwhash_str_verify()).
#
# A call may match the rule and still compare nothing secret (a content
# hash `duress check` computes without a password, an option's key): it is
# listed below with its reason, one line per occurrence allowed, its text
# as the rule sees it (whitespace squeezed).  One more occurrence of the
# same text than listed fails too, so a listed line cannot cover a copy of
# itself in a secret place.  An entry no longer found is reported (remove
# it) but does not fail.
#
# Prints each finding as FILE: CALL and exits 1 if there is one; 0 otherwise.

set -u
set -o pipefail

ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cd "$ROOT" || exit 2
[ $# -gt 0 ] || set -- src

# A call with its whole argument list (parentheses balanced, across lines).
CALL='\b(memcmp|bcmp|strn?cmp|strn?casecmp)\s*(\((?:[^()]++|(?2))*\))'
# What names a secret, in the call (the function names match none of it).
SECRET='\btag|tags?\b|hash|keys?\b|digest|passw|pwd|\bpw\b|authtok|secret|expected'

# FILE<TAB>CALL<TAB>why it is no secret comparison.
ALLOWED=$(
	cat <<'EOF'
src/core/verify.c	memcmp(a->content_hash, a->sig.content_hash, DURESS_HASH_LEN)	duress_dir_hash(), duress check without a password: the file's hash against the one its .sig states, both public
src/core/kdf.c	strncmp(hash, "$1$", 3)	the method prefix of the account's hash, a fixed public string, not the hash
src/core/kdf.c	strcmp(pw->pw_passwd, "x")	"x": the passwd field says the hash is in shadow; no hash compared
src/core/kdf.c	strncmp(pw->pw_passwd, "##", 2)	"##": the old pwdadj marker; no hash compared
src/core/kdf.c	strcmp(pw->pw_passwd + 2, pw->pw_name)	"##name": the marker names the account; no hash compared
src/core/opts.c	strncmp(key, so->name, n)	a module option's name, not a key
src/core/opts.c	strncmp(arg, key, n)	a module option's name, not a key
src/core/policy.c	strncmp(p, key, n)	a login.defs(5) key (UID_MIN), not a key
EOF
)

# FILE<TAB>CALL for every comparison call in the given directories.
calls()
{
	grep -rHoPz --include='*.c' --include='*.h' "$CALL" "$@" |
		tr '\0\n\t' '\n  ' | sed -E 's/ +/ /g; s/\( /(/g; s/ \)/)/g; s/:/\t/'
}

status=0
findings=$(calls "$@" | grep -P "\t[^\t]*(?:$SECRET)")
unused=$(printf '%s\n' "$ALLOWED" | cut -f1,2)
while IFS=$'\t' read -r file call; do
	[ -n "$file" ] || continue
	entry=$(printf '%s\t%s' "$file" "$call")
	# Each allowance covers one occurrence.
	if grep -qxF -- "$entry" <<<"$unused"; then
		unused=$(awk -v e="$entry" '!done && $0 == e { done = 1; next } { print }' <<<"$unused")
		continue
	fi
	echo "$file: $call: a secret compared with a non-constant-time function (use sodium_memcmp)"
	status=1
done <<<"$findings"
while IFS=$'\t' read -r file call; do
	[ -n "$file" ] || continue
	echo "note: allowed but no longer found, remove it from $0: $file: $call" >&2
done <<<"$unused"
[ "$status" -eq 0 ] && echo "secret comparisons: none outside sodium_memcmp/crypto_verify_* in $*"
exit "$status"
