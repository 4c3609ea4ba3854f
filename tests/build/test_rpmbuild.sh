#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# rpmbuild -bb --nodeps of dist/fedora/pam_duress.spec from a tarball of this
# source tree, in a private topdir; then what the package holds.  Off Fedora
# (Debian's rpm) there are no %meson macros: a few lines below stand in for
# them, with the same directory options as Fedora's and its compiler flags
# (those that do not need redhat-rpm-config).  SKIP without rpmbuild.
#
#   test_rpmbuild.sh SRCDIR

set -u
SRC=$1
# shellcheck source=tests/lib/tap.sh
. "$SRC/tests/lib/tap.sh"

command -v rpmbuild >/dev/null || skip_all "rpmbuild not installed (Debian: apt-get install rpm)"

SPEC=$SRC/dist/fedora/pam_duress.spec
version=$(rpmspec -q --qf '%{version}\n' --srpm "$SPEC" 2>/dev/null ||
	sed -n 's/^Version: *//p' "$SPEC")
mkdir -p "$T/SOURCES"
tar -C "$SRC" --exclude-vcs --exclude=./build --exclude='./build-*' --exclude=./builddir \
	--transform "s,^\.,pam_duress-$version," -czf "$T/SOURCES/pam_duress-$version.tar.gz" .

if ! rpm --eval '%{?meson}' | grep -q .; then
	cat >"$T/macros" <<'MACROS'
%_pkgdocdir %{_docdir}/%{name}
%_vpath_srcdir .
%_vpath_builddir %{_target_platform}
%meson CFLAGS='-O2 -flto=auto -ffat-lto-objects -fexceptions -g -grecord-gcc-switches -pipe -Wall -Werror=format-security -Wp,-U_FORTIFY_SOURCE,-D_FORTIFY_SOURCE=3 -Wp,-D_GLIBCXX_ASSERTIONS -fstack-protector-strong -fasynchronous-unwind-tables -fstack-clash-protection -fcf-protection' LDFLAGS='-Wl,-z,relro -Wl,--as-needed -Wl,-z,now -flto=auto' meson setup --buildtype=plain --prefix=%{_prefix} --libdir=%{_libdir} --libexecdir=%{_libexecdir} --bindir=%{_bindir} --datadir=%{_datadir} --mandir=%{_mandir} --sysconfdir=%{_sysconfdir} --wrap-mode=nodownload %{_vpath_srcdir} %{_vpath_builddir}
%meson_build meson compile -C %{_vpath_builddir}
%meson_install DESTDIR=%{buildroot} meson install -C %{_vpath_builddir} --no-rebuild
%meson_test meson test -C %{_vpath_builddir}
MACROS
	load=(--load "$T/macros")
fi

if rpmbuild -bb --nodeps --define "_topdir $T" "${load[@]}" "$SPEC" >"$T/rpmbuild.log" 2>&1; then
	ok "rpmbuild -bb"
else
	not_ok "rpmbuild -bb"
	tail -30 "$T/rpmbuild.log" >&2
fi
rpm_file=$(find "$T/RPMS" -name "pam_duress-$version-*.rpm" 2>/dev/null | head -1)
check "binary package written" test -n "$rpm_file"

libdir=$(rpm --eval '%{_libdir}')
files=$(rpm -qlp "$rpm_file" 2>/dev/null)
for f in "$libdir/security/pam_duress.so" /usr/bin/duress /usr/bin/duress_sign \
	/usr/libexec/pam_duress/session-helper /usr/share/man/man1/duress.1 \
	/usr/share/man/man1/duress_sign.1 /usr/share/man/man8/pam_duress.8 \
	/usr/share/doc/pam_duress/README.md /usr/share/doc/pam_duress/SECURITY.md \
	/usr/share/doc/pam_duress/docs/install-fedora.md /usr/share/pam_duress/authselect-duress.sh \
	/usr/share/pam_duress/examples/alert /usr/share/pam_duress/examples/alert.conf "/usr/share/licenses/pam_duress-$version/COPYING" \
	/usr/libexec/pam_duress/unlock-helper /usr/libexec/pam_duress/unlock-relay \
	/usr/lib/dracut/modules.d/91pam-duress/module-setup.sh /usr/lib/dracut/modules.d/91pam-duress/relay.conf \
	/usr/lib/dracut/modules.d/91pam-duress/unlock-relay.service /usr/lib/systemd/system/unlock-finish.service; do
	# Fedora compresses man pages: duress.1.gz.
	if grep -qx -e "$f" -e "$f.gz" <<<"$files"; then ok "packaged: $f"; else not_ok "not packaged: $f"; fi
done
requires=$(rpm -qp --requires "$rpm_file" 2>/dev/null)
for r in 'libpam.so.0()(64bit)' 'libsodium.so.23()(64bit)'; do
	check "requires $r" grep -qxF "$r" <<<"$requires"
done
check "not packaged: Debian's keyscript and initramfs-tools hooks" \
	fails grep -q -e unlock-keyscript -e initramfs-tools <<<"$files"
check "license tag GPL-2.0-or-later" test "$(rpm -qp --qf '%{license}' "$rpm_file" 2>/dev/null)" = GPL-2.0-or-later

# The packaged module is a PAM module.
mkdir -p "$T/x"
rpm2archive - <"$rpm_file" 2>/dev/null | tar -xz -C "$T/x" 2>/dev/null
check "packaged module exports pam_sm_authenticate" \
	sh -c "nm -D --defined-only '$T/x$libdir/security/pam_duress.so' | grep -qw pam_sm_authenticate"

tap_end
