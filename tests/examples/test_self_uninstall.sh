#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# examples/self-uninstall (root only), in a private root (private_etc_or_rerun,
# tests/lib/root.sh: mount and PID namespaces of its own, gone with it
# however it ends) and each case in a mount namespace of its own inside it:
# /etc is an overlay with a tmpfs upper layer (overlay_on), /usr/share/pam-configs
# and /var/lib/pam are bind-mounted copies, two throwaway accounts are added
# to the overlay's /etc/passwd.  The script runs as the module runs it: from
# an open descriptor (/dev/fd/3), clean environment, cwd /.
#   a. the Debian profile enabled with pam-auth-update: disabled again,
#      common-auth byte for byte as before enabling; the directories deleted
#   b. a stack edited by hand: restored byte for byte from the saved copies,
#      by rename (new inode, same mode, no temporary file left), user_dir=
#      read from the stack, ALL_USERS=yes, ALSO_REMOVE=
#   c-e. a missing, unsafe or unclean saved copy: refused, nothing changed
#   f-g. a rehearsal (DURESS_REHEARSE=1) of a. and b.: says each step,
#      changes nothing
# and the machine's own files are byte for byte the same afterwards.
#
#   test_self_uninstall.sh EXAMPLES_DIR/self-uninstall DEBIAN_PAM_CONFIGS_DIR
set -u
SCRIPT=$(realpath "$1")
PROFILE_DIR=$(realpath "$2")
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
# shellcheck source=tests/lib/root.sh
. "$(dirname "$0")/../lib/root.sh"

require_root "needs root (mount namespaces)"
command -v pam-auth-update >/dev/null || skip_all "pam-auth-update not installed (Debian: libpam-runtime)"
private_etc_or_rerun "$@"

# The machine's own files that a mistake could touch (its /etc where the
# private root shows it, read-only).  Files that name pam_duress are left
# out: on a shared machine they may belong to older builds' tests that come
# and go (and the namespaces below leave them out too).
real_state() {
	(cd "$MACHINE_ETC" && find pam.d -xdev -type f ! -exec grep -q pam_duress {} \; -print0 |
		sort -z | xargs -0 sha256sum)
	find /var/lib/pam /usr/share/pam-configs -xdev -type f \
		! -exec grep -q pam_duress {} \; -print0 | sort -z | xargs -0 sha256sum
	sha256sum "$MACHINE_ETC/passwd" "$MACHINE_ETC/group"
	ls -d "$MACHINE_ETC/duress.d" 2>&1
	ls -d "$MACHINE_ETC"/pam.d/.[!.]* 2>&1
}
real_state >"$T/real.before"

R=$T/r
mkdir -p "$R"
export T R SCRIPT PROFILE_DIR

# Sourced by the shell inside each namespace.
cat >"$T/ns-lib.sh" <<'LIB'
set -e
setup_namespace() {
	mkdir -p "$T/ns"
	overlay_on "$T/ns" duress-su /etc
	# A stack without pam_duress to start from, whatever else runs here.
	for f in /etc/pam.d/*; do
		if grep -q pam_duress "$f"; then rm -f "$f"; fi
	done
	for d in /usr/share/pam-configs /var/lib/pam; do
		c=$T/ns/copy${d//\//_}
		mkdir "$c"
		cp -a "$d/." "$c/"
		mount --bind "$c" "$d"
	done
	rm -rf "$T/home"
	for u in exdu:4242 exdv:4243; do
		echo "${u%:*}:x:${u#*:}:${u#*:}::$T/home/${u%:*}:/bin/sh" >>/etc/passwd
		mkdir -p "$T/home/${u%:*}/.duress"
		echo action >"$T/home/${u%:*}/.duress/alert"
		echo mine >"$T/home/${u%:*}/keep"
	done
}
# install_actions CONFIG-LINES...: /etc/duress.d with this example (its
# CONFIG line pointing at its config there) and another action.
install_actions() {
	mkdir -m 700 /etc/duress.d
	sed 's|^CONFIG=.*|CONFIG=/etc/duress.d/self-uninstall.conf|' "$SCRIPT" \
		>/etc/duress.d/self-uninstall
	printf '%s\n' "$@" >/etc/duress.d/self-uninstall.conf
	echo sig >/etc/duress.d/self-uninstall.sig
	echo other >/etc/duress.d/alert
}
run_self() { # CASE [VAR=VALUE]: VAR=VALUE (DURESS_REHEARSE) added to the environment
	(cd / && exec 3</etc/duress.d/self-uninstall && env -i PATH=/usr/bin:/bin \
		HOME=/root USER=root LOGNAME=root PAM_USER=exdu PAMUSER=exdu \
		PAM_SERVICE=login PAM_TYPE=auth ${2:+"$2"} sh /dev/fd/3 </dev/null \
		>"$R/$1.out" 2>"$R/$1.err") && echo 0 >"$R/$1.rc" || echo $? >"$R/$1.rc"
}
record_dirs() { # CASE
	for p in /etc/duress.d "$T/home/exdu/.duress" "$T/home/exdv/.duress" \
		"$T/home/exdu/keep" "$T/udirs/exdu" "$T/udirs/exdv" "$T/ns/extra"; do
		[ -e "$p" ] && echo "$p"
	done >"$R/$1.exists" || true
}
add_duress_line() { # FILE [OPTIONS]: pam_duress first in FILE, as by hand
	{ printf 'auth\t[success=end default=ignore]\tpam_duress.so %s\n' "${2:-}"; cat "$1"; } >"$1.new"
	cat "$1.new" >"$1"
	rm "$1.new"
}
# hand_edited_stack: saved copies of common-auth and su (the admin's, before
# enabling), then pam_duress added to both.
hand_edited_stack() {
	mkdir -m 700 "$T/ns/saved"
	cp -p /etc/pam.d/common-auth /etc/pam.d/su "$T/ns/saved/"
	add_duress_line /etc/pam.d/common-auth "user_dir=$T/udirs/%u"
	add_duress_line /etc/pam.d/su
	mkdir -p "$T/udirs/exdu" "$T/udirs/exdv"
}
pam_sums() { sha256sum /etc/pam.d/*; }
LIB
declare -f overlay_on >>"$T/ns-lib.sh"

in_namespace() { # SHELL-CODE
	timeout "$(bound 120)" unshare -m --propagation private bash -c ". \"\$T/ns-lib.sh\"; setup_namespace; $1"
}
exists() { grep -qxF "$2" "$R/$1.exists"; }

# --- a. the Debian profile, through pam-auth-update ---
# shellcheck disable=SC2016 # expanded by the inner shell
in_namespace '
	cp /etc/pam.d/common-auth "$R/a.pre"
	cp "$PROFILE_DIR/duress" "$PROFILE_DIR/duress-before" /usr/share/pam-configs/
	pam-auth-update --enable duress
	cp /etc/pam.d/common-auth "$R/a.enabled"
	install_actions METHOD=auto
	run_self a
	cp /etc/pam.d/common-auth "$R/a.post"
	record_dirs a'
check "a: the profile was enabled for the test" grep -q pam_duress "$R/a.enabled"
check "a: exit 0" [ "$(cat "$R/a.rc")" = 0 ]
check "a: common-auth names pam_duress no more" fails grep -q pam_duress "$R/a.post"
check "a: common-auth byte for byte as before enabling" cmp -s "$R/a.pre" "$R/a.post"
check "a: /etc/duress.d deleted (the script, its config and signature)" fails exists a /etc/duress.d
check "a: the user's ~/.duress deleted" fails exists a "$T/home/exdu/.duress"
check "a: the rest of the user's home kept" exists a "$T/home/exdu/keep"
check "a: another user's ~/.duress kept (ALL_USERS=no)" exists a "$T/home/exdv/.duress"

# --- b. a hand-edited stack, restored from the saved copies ---
# shellcheck disable=SC2016 # expanded by the inner shell
in_namespace '
	hand_edited_stack
	mkdir "$T/ns/extra"
	install_actions "SAVED_PAM_DIR=$T/ns/saved" ALL_USERS=yes "ALSO_REMOVE=$T/ns/extra"
	stat -c "%i %a %U" /etc/pam.d/common-auth >"$R/b.stat-before"
	ls -A /etc/pam.d >"$R/b.ls-before"
	run_self b
	stat -c "%i %a %U" /etc/pam.d/common-auth >"$R/b.stat-after"
	ls -A /etc/pam.d >"$R/b.ls-after"
	cmp -s "$T/ns/saved/common-auth" /etc/pam.d/common-auth && touch "$R/b.same-auth"
	cmp -s "$T/ns/saved/su" /etc/pam.d/su && touch "$R/b.same-su"
	record_dirs b'
check "b: exit 0" [ "$(cat "$R/b.rc")" = 0 ]
check "b: common-auth restored byte for byte" [ -e "$R/b.same-auth" ]
check "b: su restored byte for byte" [ -e "$R/b.same-su" ]
read -r ino_before mode_before owner_before <"$R/b.stat-before"
read -r ino_after mode_after owner_after <"$R/b.stat-after"
check "b: replaced by a rename (a new inode), not rewritten in place" \
	[ "$ino_before" != "$ino_after" ]
check "b: mode and owner kept ($mode_after $owner_after)" \
	[ "$mode_before $owner_before" = "$mode_after $owner_after" ]
check "b: no temporary file left in /etc/pam.d" cmp -s "$R/b.ls-before" "$R/b.ls-after"
check "b: says what it restored" grep -q "restored /etc/pam.d/su from" "$R/b.out"
check "b: /etc/duress.d deleted" fails exists b /etc/duress.d
check "b: the user dir named by user_dir= deleted" fails exists b "$T/udirs/exdu"
check "b: ALL_USERS=yes: the other user's too" fails exists b "$T/udirs/exdv"
check "b: ~/.duress kept (not the module's user_dir here)" exists b "$T/home/exdu/.duress"
check "b: ALSO_REMOVE= deleted" fails exists b "$T/ns/extra"

# --- f. a rehearsal (DURESS_REHEARSE=1) with the Debian profile: says, changes nothing ---
# shellcheck disable=SC2016 # expanded by the inner shell
in_namespace '
	cp "$PROFILE_DIR/duress" "$PROFILE_DIR/duress-before" /usr/share/pam-configs/
	pam-auth-update --enable duress
	cp /etc/pam.d/common-auth "$R/f.enabled"
	install_actions METHOD=auto
	pam_sums >"$R/f.sums-before"
	run_self f DURESS_REHEARSE=1
	pam_sums >"$R/f.sums-after"
	record_dirs f'
check_diag "f (rehearsal, profile): exit 0, says the command and each path it would remove" "$R/f.out" \
	[ "$(cat "$R/f.rc") $(cat "$R/f.out")" = "0 self-uninstall: would run: pam-auth-update --disable duress duress-before
self-uninstall: would then restore from SAVED_PAM_DIR any of common-auth common-account common-password common-session common-session-noninteractive that still names the module
self-uninstall: would remove $T/home/exdu/.duress (rm -rf --one-file-system)
self-uninstall: would remove /etc/duress.d (rm -rf --one-file-system)" ]
check "f (rehearsal, profile): /etc/pam.d unchanged, common-auth still names the module" \
	sh -c "cmp -s '$R/f.sums-before' '$R/f.sums-after' && grep -q pam_duress '$R/f.enabled'"
check "f (rehearsal, profile): /etc/duress.d and ~/.duress still there" \
	sh -c "grep -qxF /etc/duress.d '$R/f.exists' && grep -qxF '$T/home/exdu/.duress' '$R/f.exists'"

# --- g. a rehearsal with a hand-edited stack, ALL_USERS=yes and ALSO_REMOVE= ---
# shellcheck disable=SC2016 # expanded by the inner shell
in_namespace '
	hand_edited_stack
	mkdir "$T/ns/extra"
	install_actions "SAVED_PAM_DIR=$T/ns/saved" ALL_USERS=yes "ALSO_REMOVE=$T/ns/extra"
	pam_sums >"$R/g.sums-before"
	run_self g DURESS_REHEARSE=1
	pam_sums >"$R/g.sums-after"
	record_dirs g'
check_diag "g (rehearsal, restore): exit 0, says each file it would restore and each path it would remove" "$R/g.out" \
	[ "$(cat "$R/g.rc") $(cat "$R/g.out")" = "0 self-uninstall: would restore /etc/pam.d/common-auth from $T/ns/saved/common-auth (a copy renamed over it)
self-uninstall: would restore /etc/pam.d/su from $T/ns/saved/su (a copy renamed over it)
self-uninstall: would remove $T/udirs/exdu (rm -rf --one-file-system)
self-uninstall: would remove $T/udirs/exdv (rm -rf --one-file-system)
self-uninstall: would remove $T/ns/extra (rm -rf --one-file-system)
self-uninstall: would remove /etc/duress.d (rm -rf --one-file-system)" ]
check "g (rehearsal, restore): /etc/pam.d unchanged" cmp -s "$R/g.sums-before" "$R/g.sums-after"
check "g (rehearsal, restore): every directory still there" [ "$(wc -l <"$R/g.exists")" -eq 7 ]

# --- c-e. refused, nothing changed ---
# refusal CASE PREPARE EXPECTED-MESSAGE
refusal() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_namespace '
		hand_edited_stack
		'"$2"'
		install_actions "SAVED_PAM_DIR=$T/ns/saved"
		pam_sums >"$R/'"$1"'.sums-before"
		run_self '"$1"'
		pam_sums >"$R/'"$1"'.sums-after"
		record_dirs '"$1"
	check "$1: refused (exit non-zero)" [ "$(cat "$R/$1.rc")" != 0 ]
	check "$1: says why" grep -qF "$3" "$R/$1.err"
	check "$1: /etc/pam.d unchanged" cmp -s "$R/$1.sums-before" "$R/$1.sums-after"
	check "$1: /etc/duress.d kept" exists "$1" /etc/duress.d
	check "$1: the user dir kept" exists "$1" "$T/udirs/exdu"
}
# shellcheck disable=SC2016 # expanded by the inner shell
refusal c 'rm "$T/ns/saved/su"' \
	"refused: /etc/pam.d/su names pam_duress and no saved copy $T/ns/saved/su; nothing changed"
# shellcheck disable=SC2016
refusal d 'chmod 664 "$T/ns/saved/su"' "$T/ns/saved/su is not root's or is writable by others"
# shellcheck disable=SC2016
refusal e 'cp /etc/pam.d/su "$T/ns/saved/su"' "$T/ns/saved/su names pam_duress itself"

# Not root: refused before anything.
printf 'GLOBAL_DIR=%s\n' "$T/nobody-dir" >"$T/nobody.conf"
mkdir -p "$T/nobody-dir"
sed "s|^CONFIG=.*|CONFIG=$T/nobody.conf|" "$SCRIPT" >"$T/nobody-script"
chmod 644 "$T/nobody.conf" "$T/nobody-script"
(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups sh "$T/nobody-script" \
	</dev/null >/dev/null 2>"$T/nobody.err")
check "not root: refused" grep -q "must run as root" "$T/nobody.err"
check "not root: nothing deleted" [ -d "$T/nobody-dir" ]

if [ "$failed" -ne 0 ]; then
	for f in "$R"/*.err; do sed "s|^|# ${f##*/}: |" "$f"; done
fi

real_state >"$T/real.after"
check "the machine's PAM files, passwd and /etc/duress.d are unchanged" \
	cmp -s "$T/real.before" "$T/real.after"

tap_end
