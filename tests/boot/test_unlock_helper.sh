#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Duress at the disk-unlock prompt without a VM: unlock-helper with the real
# runner (a before-unlock action has run when it returns; an after-boot one
# only from the record, once, by hash), unlock-keyscript (the passphrase
# handed on byte for byte whatever becomes of the helper), and the
# initramfs-tools hook into a fake DESTDIR (failing loudly when the helper
# is missing).  Root only: in a private mount namespace with a tmpfs on
# /run and overlays of /etc, /usr and /var (tests/lib/root.sh), so that the
# machine's /run, /etc/crypttab and initramfs-tools are untouched.
#
#   test_unlock_helper.sh HELPER DURESS SRCDIR BUILDDIR
# HELPER is the test build of unlock-helper, which starts BUILDDIR's runner.
set -u
HELPER=$1 DURESS=$2 SRC=$3 BUILD=$4
. "$SRC/tests/lib/tap.sh"
. "$SRC/tests/lib/root.sh"

require_root "needs root (a private mount namespace, root's boot directory)"
if [ -z "${UNLOCK_TEST_NS:-}" ]; then
	system_overlay_or_skip
	rm -rf "$T"
	UNLOCK_TEST_NS=1 exec unshare -m --propagation private -- "$0" "$@"
fi
mount -t tmpfs -o mode=755 unlock-run /run || setup_failed "a tmpfs on /run"
mkdir "$T/ov" || setup_failed "mkdir"
overlay_system "$T/ov" unlock-test || setup_failed "overlays of /etc, /usr, /var"

PW='duress boot pass'
B=$T/boot.d
OUT=$T/out
mkdir -m 700 "$B" "$OUT" || setup_failed "boot directory"
# An after-boot action and a before-unlock one that takes a second: its
# mark is there when the helper returns only if the helper waited.
printf '#!/bin/sh\necho ran >>%s/after\n' "$OUT" >"$B/alert"
printf '#!/bin/sh\nsleep 1\necho ran >>%s/before\n' "$OUT" >"$B/initramfs-nuke"
chmod 700 "$B/alert" "$B/initramfs-nuke"
# Signed at the cheapest cost with one salt; later signatures reuse the
# directory's salt and cost (duress sign's default): one set, as the prompt requires.
sign() { printf '%s\n' "$PW" | "$DURESS" sign --stdin "$@" >"$T/sign.log" 2>&1; }
sign --memlimit 8K --opslimit 1 --allow-weak-cost "$B/alert" "$B/initramfs-nuke" || setup_failed "duress sign" "$T/sign.log"

try() { printf '%s' "$1" | "$HELPER" "$B" >"$T/stdout" 2>"$T/stderr"; }
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
record_is() {
	local want=$T/record.want
	{
		printf '%s alert' "$(sha256sum <"$B/alert" | cut -d' ' -f1)"
		printf '\0'
	} >"$want"
	cmp -s "$want" /run/unlock-helper/record
}
modes_are() { [ "$(stat -c %a /run/unlock-helper)" = 700 ] && [ "$(stat -c %a /run/unlock-helper/record)" = 600 ]; }

# --- the helper at the prompt -------------------------------------------------
check "a wrong passphrase: exit 0" try 'wrong passphrase'
check "... nothing on stdout" test ! -s "$T/stdout"
check "... no record" test ! -e /run/unlock-helper
check "... nothing ran" test ! -e "$OUT/before" -a ! -e "$OUT/after"

check "the duress passphrase: exit 0" try "$PW"
check "... nothing on stdout" test ! -s "$T/stdout"
check_diag "... nothing on stderr (a match says nothing)" "$T/stderr" test ! -s "$T/stderr"
check "... the before-unlock action ran before the helper returned" test "$(lines "$OUT/before")" = 1
check "... the after-boot action has not run" test ! -e "$OUT/after"
check "... the record is exactly 'SHA256 alert\\0'" record_is
check "... root's 0700 directory, 0600 record" modes_are

# --- after boot -----------------------------------------------------------------
"$HELPER" --after-boot "$B" >"$T/after.log" 2>&1
check_diag "--after-boot: the recorded action ran" "$T/after.log" wait_for 5 test -e "$OUT/after"
check "... the record's directory is gone" test ! -e /run/unlock-helper
"$HELPER" --after-boot "$B" >>"$T/after.log" 2>&1
sleep 0.5
check "... a second --after-boot runs nothing" test "$(lines "$OUT/after")" = 1
check "... the before-unlock action never ran again" test "$(lines "$OUT/before")" = 1

# An action re-signed with other bytes after the prompt: not what was verified there.
try "$PW"
printf '#!/bin/sh\necho changed >>%s/after\n' "$OUT" >"$B/alert"
sign "$B/alert"
"$HELPER" --after-boot "$B" >"$T/after.log" 2>&1
sleep 0.5
check "an action changed since the prompt does not run" test "$(lines "$OUT/after")" = 1
check_diag "... and says so" "$T/after.log" grep -q 'changed since it was verified' "$T/after.log"
check "... the record's directory is gone" test ! -e /run/unlock-helper

# Unsigned, edited and oversized before-unlock actions: skipped, exit 0.
printf '#!/bin/sh\necho ran >>%s/unsigned\n' "$OUT" >"$B/initramfs-unsigned"
printf '#!/bin/sh\necho ran >>%s/edited\n' "$OUT" >"$B/initramfs-edited"
chmod 700 "$B/initramfs-unsigned" "$B/initramfs-edited"
sign "$B/initramfs-edited"
echo '# edited' >>"$B/initramfs-edited"
check "unsigned and edited actions: exit 0" try "$PW"
check "... neither ran" test ! -e "$OUT/unsigned" -a ! -e "$OUT/edited"
check "... the signed one still did" test "$(lines "$OUT/before")" = 2
rm -f "$B/initramfs-unsigned" "$B/initramfs-edited" "$B/initramfs-edited.sig"
truncate -s 17M "$B/initramfs-nuke"
check "an oversized action: exit 0" try "$PW"
check "... it did not run" test "$(lines "$OUT/before")" = 2
rm -rf /run/unlock-helper
check "a missing directory: exit 0" sh -c "printf x | '$HELPER' '$T/none' >'$T/stdout'"
check "usage error: exit 2" sh -c "'$HELPER' --bogus </dev/null 2>/dev/null; [ \$? = 2 ]"

# --- the keyscript ------------------------------------------------------------------
# A copy with stub paths: the installed one has no knob.
K=$T/keyscript
sed -e "s|^ASKPASS=.*|ASKPASS=$T/askpass|" -e "s|^HELPER=.*|HELPER=$T/helper|" \
	"$BUILD/initramfs-tools/unlock-keyscript" >"$K"
chmod 755 "$K"
# shellcheck disable=SC2016 # $1 is the stub's
printf '#!/bin/sh\nprintf %%s "$1" >%s/prompt\ncat %s/typed\n' "$T" "$T" >"$T/askpass"
chmod 755 "$T/askpass"
helper_stub() {
	rm -f "$T/helper"
	case $1 in
	missing) ;;
	fails) printf '#!/bin/sh\ncat >%s/helper-in\nexit 1\n' "$T" >"$T/helper" ;;
	killed) printf '#!/bin/sh\nkill -9 $$\n' >"$T/helper" ;;
	reads-nothing) printf '#!/bin/sh\nexit 0\n' >"$T/helper" ;;
	noisy) printf '#!/bin/sh\ncat >%s/helper-in\necho noise\n' "$T" >"$T/helper" ;;
	esac
	[ ! -e "$T/helper" ] || chmod 755 "$T/helper"
}
handed_on() { # SHELL: the keyscript's stdout is the typed bytes
	CRYPTTAB_NAME=sda3_crypt CRYPTTAB_TRIED=0 $1 "$K" none >"$T/key" 2>/dev/null </dev/null &&
		cmp -s "$T/typed" "$T/key"
}
shells="dash"
! command -v busybox >/dev/null || shells="$shells busybox_sh"
busybox_sh() { busybox sh "$@"; }
for sh in $shells; do
	for typed in 'plain' $'trailing newline\n\n' $'  spaces, \\ backslash, %s, -n\n'; do
		printf '%s' "$typed" >"$T/typed"
		for h in missing fails killed reads-nothing noisy; do
			helper_stub "$h"
			check "keyscript ($sh), helper $h: $(printf '%q' "$typed") handed on byte for byte" handed_on "$sh"
		done
		helper_stub noisy
		handed_on "$sh"
		check "... ($sh) the helper read exactly it on stdin" cmp -s "$T/typed" "$T/helper-in"
	done
	check "... ($sh) the stock prompt" test "$(cat "$T/prompt")" = "Please unlock disk sda3_crypt: "
done
printf '' >"$T/typed"
printf '#!/bin/sh\nexit 1\n' >"$T/askpass"
check "keyscript: askpass fails, it fails with nothing on stdout" \
	sh -c "! CRYPTTAB_NAME=x '$K' none >'$T/key' 2>/dev/null && test ! -s '$T/key'"

# The real helper behind the keyscript: the duress passphrase unlocks and records.
printf '#!/bin/sh\necho ran >>%s/before\n' "$OUT" >"$B/initramfs-nuke"
sign "$B/initramfs-nuke"
printf '#!/bin/sh\ncat %s/typed\n' "$T" >"$T/askpass"
# The keyscript calls it without DIR (DURESS_BOOT_DIR): this one checks $B.
printf '#!/bin/sh\nexec %s %s\n' "$HELPER" "$B" >"$T/helper"
printf '%s' "$PW" >"$T/typed"
check "keyscript with the real helper: the duress passphrase handed on" handed_on dash
check "... the before-unlock action ran" test "$(lines "$OUT/before")" = 3
check "... the record is there" test -s /run/unlock-helper/record

# --- the initramfs hook ---------------------------------------------------------------
D=$T/dest
HOOK=$T/hook
KS=$(sed -n 's/^KEYSCRIPT=//p' "$BUILD/initramfs-tools/pam_duress")
mkdir -p /usr/share/initramfs-tools /usr/lib/cryptsetup
[ -e /usr/share/initramfs-tools/hook-functions ] || cat >/usr/share/initramfs-tools/hook-functions <<'EOF'
# A stand-in for initramfs-tools' hook-functions: copy_exec as it behaves
# (2 from copy_file for a missing file, 1 from copy_exec), libraries by ldd.
copy_exec() {
	[ -f "$1" ] || return 1
	t=${2:-$1}
	mkdir -p "$DESTDIR${t%/*}" && cp -pL "$1" "$DESTDIR$t" || return 1
	for x in $(ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p'); do
		mkdir -p "$DESTDIR${x%/*}" && cp -pL "$x" "$DESTDIR$x" || return 1
	done
}
EOF
[ -e /usr/lib/cryptsetup/askpass ] || { printf '#!/bin/sh\n' >/usr/lib/cryptsetup/askpass && chmod 755 /usr/lib/cryptsetup/askpass; }
# This build's helper and runner where the hook looks for them.
sed -e "s|^HELPER=.*|HELPER=$BUILD/src/unlock-helper|" -e "s|^RUNNER=.*|RUNNER=$BUILD/src/session-helper|" \
	"$BUILD/initramfs-tools/pam_duress" >"$HOOK"
chmod 755 "$HOOK"
rm -rf /etc/duress-boot.d
printf 'cryptroot UUID=0 none luks\n' >/etc/crypttab
run_hook() { rm -rf "$D" && mkdir "$D" && (umask 022 && DESTDIR=$D verbose=n "$HOOK") >"$T/hook.log" 2>&1; }
check "hook: no boot directory: exit 0" run_hook
check "... nothing copied" test -z "$(ls -A "$D")"
mkdir -m 700 /etc/duress-boot.d
cp -p "$B/alert" "$B/alert.sig" "$B/initramfs-nuke" "$B/initramfs-nuke.sig" /etc/duress-boot.d/
printf 'notes\n' >/etc/duress-boot.d/README
printf '#!/usr/bin/nonexistent-interp\n' >/etc/duress-boot.d/initramfs-odd
chmod 700 /etc/duress-boot.d/initramfs-odd
# Companions: alert's beside it, initramfs-nuke's elsewhere; an unsigned program.
mkdir -p /etc/unlock-test
printf 'K=1\n' >/etc/duress-boot.d/alert.conf
printf 'N=1\n' >/etc/unlock-test/nuke.conf
chmod 600 /etc/duress-boot.d/alert.conf /etc/unlock-test/nuke.conf
printf '#!/bin/sh\n' >/etc/duress-boot.d/unsigned
chmod 700 /etc/duress-boot.d/unsigned
sign --also /etc/duress-boot.d/alert.conf /etc/duress-boot.d/alert || setup_failed "sign alert --also" "$T/sign.log"
sign --also /etc/unlock-test/nuke.conf /etc/duress-boot.d/initramfs-nuke || setup_failed "sign nuke --also" "$T/sign.log"
# Bound to alert's config too: listed once.
sign --also /etc/duress-boot.d/alert.conf /etc/duress-boot.d/initramfs-odd || setup_failed "sign initramfs-odd" "$T/sign.log"
list_files() { "$BUILD/src/unlock-helper" --list-files "$@" >"$T/list" 2>"$T/list.err"; }
check_diag "--list-files: exit 0" "$T/list.err" list_files /etc/duress-boot.d
check "... NUL-terminated: each action, its signature, its companions (at their paths, each once), in name order" \
	cmp -s "$T/list" <(printf '%s\0' /etc/duress-boot.d/alert /etc/duress-boot.d/alert.sig \
		/etc/duress-boot.d/alert.conf /etc/duress-boot.d/initramfs-nuke \
		/etc/duress-boot.d/initramfs-nuke.sig /etc/unlock-test/nuke.conf \
		/etc/duress-boot.d/initramfs-odd /etc/duress-boot.d/initramfs-odd.sig)
check "... not the unsigned program nor the notes" fails grep -qa -e unsigned -e README "$T/list"
printf 'K=2\n' >/etc/duress-boot.d/alert.conf
list_files /etc/duress-boot.d
check "... an action whose companion changed since signing is left out, as the prompt skips it" \
	fails grep -qa alert "$T/list"
printf 'K=1\n' >/etc/duress-boot.d/alert.conf
list_files "$T/no-such-dir"
check "--list-files: a missing directory lists nothing, exit 0" test "$?" -eq 0 -a ! -s "$T/list"
chmod 770 /etc/duress-boot.d
list_files /etc/duress-boot.d
check "--list-files: an untrusted directory lists nothing, and says why" \
	grep -q "writable by group or others: the prompt skips it" "$T/list.err"
chmod 700 /etc/duress-boot.d
check "--list-files: a relative DIR is a usage error" fails list_files relative
check "hook: no crypttab line with the keyscript: exit 0" run_hook
check "... nothing copied" test -z "$(ls -A "$D")"
printf '# cryptroot UUID=0 none luks,keyscript=%s\ncryptroot UUID=0 none luks,discard,keyscript=%s\n' "$KS" "$KS" >/etc/crypttab
check_diag "hook: boot directory and keyscript: exit 0" "$T/hook.log" run_hook
check "... the helper, the runner and askpass copied" \
	test -x "$D$BUILD/src/unlock-helper" -a -x "$D$BUILD/src/session-helper" -a -x "$D/usr/lib/cryptsetup/askpass"
check "... the helper's libraries (libsodium) copied" sh -c "ls '$D'/usr/lib/*/libsodium.so.* '$D'/lib/*/libsodium.so.* 2>/dev/null | grep -q ."
check "... the actions and signatures, modes kept" sh -c "cd '$D/etc/duress-boot.d' &&
	[ \"\$(stat -c %a alert initramfs-nuke alert.sig)\" = \"\$(cd /etc/duress-boot.d && stat -c %a alert initramfs-nuke alert.sig)\" ] &&
	cmp -s alert /etc/duress-boot.d/alert && test -f initramfs-nuke.sig"
check "... not the other files (notes, an unsigned program)" \
	test ! -e "$D/etc/duress-boot.d/README" -a ! -e "$D/etc/duress-boot.d/unsigned"
check "... the companions at their own paths, modes kept" sh -c "
	cmp -s '$D/etc/duress-boot.d/alert.conf' /etc/duress-boot.d/alert.conf &&
	cmp -s '$D/etc/unlock-test/nuke.conf' /etc/unlock-test/nuke.conf &&
	[ \"\$(stat -c %a '$D/etc/unlock-test/nuke.conf' '$D/etc/duress-boot.d/alert.conf')\" = \"600
600\" ]"
check "... the directory is root's 0700" test "$(stat -c %a:%u "$D/etc/duress-boot.d")" = 700:0
check_diag "... a warning for a missing interpreter" "$T/hook.log" grep -q 'nonexistent-interp' "$T/hook.log"
check_diag "... a warning for a world-readable image (umask 022)" "$T/hook.log" grep -q 'umask 0*22' "$T/hook.log"
rm -rf "$D" && mkdir "$D" && DESTDIR=$D UMASK=0077 verbose=n "$HOOK" >"$T/hook.log" 2>&1
check_diag "... none with UMASK=0077" "$T/hook.log" fails grep -q umask "$T/hook.log"
# shellcheck source=/dev/null
check "the conf hook sets UMASK=0077 when there is a boot directory" \
	sh -c "unset UMASK; . '$SRC/initramfs-tools/conf-hooks.d/pam_duress'; [ \"\$UMASK\" = 0077 ]"
check "... and keeps the admin's" \
	sh -c "UMASK=0027; . '$SRC/initramfs-tools/conf-hooks.d/pam_duress'; [ \"\$UMASK\" = 0027 ]"
# A companion that cannot be copied (a file where its directory goes): update-initramfs fails.
rm -rf "$D" && mkdir -p "$D/etc" && : >"$D/etc/unlock-test"
(DESTDIR=$D UMASK=0077 verbose=n "$HOOK") >"$T/hook.log" 2>&1
check "hook: a companion that cannot be copied fails update-initramfs" test "$?" -ne 0
check_diag "... saying which" "$T/hook.log" grep -q "E: pam_duress: .*etc/unlock-test" "$T/hook.log"
sed -i "s|^HELPER=.*|HELPER=$T/no-such-helper|" "$HOOK"
check "hook: a missing helper fails update-initramfs" fails run_hook
check_diag "... saying why" "$T/hook.log" grep -q "no-such-helper is missing" "$T/hook.log"

tap_end
