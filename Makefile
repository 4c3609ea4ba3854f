# SPDX-License-Identifier: GPL-2.0-or-later
#
# Convenience front end to Meson; see docs/install.md ("Build and install").
#
#   make                  build the module, the CLI and the man pages in build/; the
#                         tests too when their dependencies are there (-Dtests=auto)
#   make install          install (DESTDIR and PREFIX are honoured); as root only,
#                         unless DESTDIR stages it; refuses to overwrite files a
#                         Debian package owns, such as libpam-duress's module
#                         (tools/install-guard.py; remove the package first)
#   make uninstall        remove what `make install` with the same PREFIX and
#                         DESTDIR installs (whatever was installed last)
#   make demo             self-contained demo: pam_wrapper + nss_wrapper, no root needed
#   make check            the whole test suite (tools/run-checks.sh)
#   make deb              Debian packages in DEBDIR (tools/build-deb.sh; docs/debian.md),
#                         after installing its missing build dependencies (as demo
#                         and check do theirs: tools/deps.sh deb)
#   make deps             install missing Debian packages for all of these (tools/deps.sh)
#   make clean            remove the build directories
#
# Variables: PREFIX (/usr/local), DESTDIR, BUILDDIR (build), DEBDIR (build-deb),
# MESON_OPTS (extra options for the first `meson setup`, e.g.
# MESON_OPTS="-Dbuildtype=debug -Dtests=disabled").
# The PAM module goes to the distribution's PAM module directory whatever
# PREFIX is (libpam's libdir + /security, or -Dpam_moduledir=DIR).

PREFIX ?= /usr/local
DESTDIR ?=
BUILDDIR ?= build
DEBDIR ?= build-deb
MESON ?= meson
NINJA ?= ninja
MESON_OPTS ?=

# Options this Makefile owns, as NAME=VALUE (the names Meson introspection
# uses); the others (MESON_OPTS) are left as the first setup made them.
OPTIONS := prefix=$(PREFIX)

# Succeeds when $(BUILDDIR) is configured with $(OPTIONS).
options_match = python3 tools/options-match.py $(BUILDDIR) $(OPTIONS)

.PHONY: all configure install uninstall deb deps demo check clean help

all: configure
	$(NINJA) -C $(BUILDDIR)

# Configure once; afterwards only when PREFIX changed.  A directory left
# half-configured is wiped and set up again.
configure:
	@if [ ! -f $(BUILDDIR)/build.ninja ]; then \
		wipe=; [ -f $(BUILDDIR)/meson-private/coredata.dat ] && wipe=--wipe; \
		echo "$(MESON) setup $$wipe $(BUILDDIR) $(addprefix -D,$(OPTIONS)) $(MESON_OPTS)"; \
		$(MESON) setup $$wipe $(BUILDDIR) $(addprefix -D,$(OPTIONS)) $(MESON_OPTS); \
	elif ! $(options_match); then \
		echo "$(MESON) configure $(BUILDDIR) $(addprefix -D,$(OPTIONS))"; \
		$(MESON) configure $(BUILDDIR) $(addprefix -D,$(OPTIONS)); \
	fi

# Without root and without DESTDIR, one line before anything is built (not
# meson's traceback at the first file it cannot write): the module goes to the
# distribution's PAM module directory whatever PREFIX is.
ifneq ($(filter install,$(MAKECMDGOALS)),)
ifeq ($(DESTDIR),)
ifneq ($(shell id -u),0)
$(error make install writes into the system: run it as root (sudo make install), or stage it with make install DESTDIR=DIR)
endif
endif
endif

install: all
	@python3 tools/install-guard.py $(BUILDDIR)
	DESTDIR="$(DESTDIR)" $(MESON) install -C $(BUILDDIR) --no-rebuild

# Not `ninja uninstall`: that replays the log of the last `meson install` only.
uninstall: configure
	DESTDIR="$(DESTDIR)" $(NINJA) -C $(BUILDDIR) uninstall-files

deb:
	@./tools/deps.sh deb
	@./tools/build-deb.sh $(DEBDIR)

deps:
	@./tools/deps.sh check

demo:
	@./tools/deps.sh demo
	@$(MAKE) --no-print-directory all
	./tests/demo/demo.sh "$(abspath $(BUILDDIR))"

check: deps
	@./tools/run-checks.sh

clean:
	rm -rf $(BUILDDIR) build-asan build-valgrind build-fuzz build-clang build-deb

help:
	@awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' $(firstword $(MAKEFILE_LIST))
