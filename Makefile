# SPDX-License-Identifier: GPL-2.0-or-later
#
# Convenience front end to Meson; see README.md.
#
#   make                  build the module and the CLI in build/ (no sanitizers)
#   make install          install (DESTDIR and PREFIX are honoured)
#   make demo             self-contained demo: pam_wrapper + nss_wrapper, no root needed
#   make check            the whole test suite (tools/run-checks.sh)
#   make deb              Debian packages in build-deb/ (tools/build-deb.sh; docs/debian.md)
#   make deps             install missing Debian build dependencies (tools/deps.sh)
#   make clean            remove the build directories
#
# Variables: PREFIX (/usr/local), DESTDIR, BUILDDIR (build), MESON_OPTS (extra options
# for `meson setup`, e.g. MESON_OPTS=-Dbuildtype=debug).
# The PAM module goes to the distribution's PAM module directory whatever
# PREFIX is (libpam's libdir + /security, or -Dpam_moduledir=DIR).

PREFIX ?= /usr/local
DESTDIR ?=
BUILDDIR ?= build
MESON ?= meson
NINJA ?= ninja
MESON_OPTS ?=

# Without tests/meson.build and fuzz/meson.build (e.g. in a source tree
# stripped of tests) build only the module, the CLI and the man pages.
TESTS := $(if $(and $(wildcard tests/meson.build),$(wildcard fuzz/meson.build)),true,false)

# Options this Makefile owns, as NAME=VALUE (the names Meson introspection uses).
OPTIONS := prefix=$(PREFIX) tests=$(TESTS)

# Succeeds when $(BUILDDIR) is configured with $(OPTIONS).
options_match = { test -f $(BUILDDIR)/meson-info/intro-buildoptions.json && \
	python3 -c 'import json, sys; \
	have = {o["name"]: str(o["value"]).lower() for o in json.load(open(sys.argv[1]))}; \
	want = dict(a.split("=", 1) for a in sys.argv[2:]); \
	sys.exit(any(have.get(k) != v.lower() for k, v in want.items()))' \
	$(BUILDDIR)/meson-info/intro-buildoptions.json $(OPTIONS); }

.PHONY: all configure install uninstall deb deps demo check clean help

all: configure
	$(NINJA) -C $(BUILDDIR)

# Configure once; afterwards only when PREFIX or the presence of
# tests/ changed.  A directory left half-configured is wiped and set up again.
configure:
	@if [ ! -f $(BUILDDIR)/build.ninja ]; then \
		wipe=; [ -f $(BUILDDIR)/meson-private/coredata.dat ] && wipe=--wipe; \
		echo "$(MESON) setup $$wipe $(BUILDDIR) $(addprefix -D,$(OPTIONS)) $(MESON_OPTS)"; \
		$(MESON) setup $$wipe $(BUILDDIR) $(addprefix -D,$(OPTIONS)) $(MESON_OPTS); \
	elif ! $(options_match); then \
		echo "$(MESON) configure $(BUILDDIR) $(addprefix -D,$(OPTIONS))"; \
		$(MESON) configure $(BUILDDIR) $(addprefix -D,$(OPTIONS)); \
	fi

install: all
	DESTDIR="$(DESTDIR)" $(MESON) install -C $(BUILDDIR) --no-rebuild

uninstall:
	cd $(BUILDDIR) && DESTDIR="$(DESTDIR)" $(NINJA) uninstall

deb:
	@./tools/build-deb.sh build-deb

deps:
	@./tools/deps.sh

demo: deps
	@$(MAKE) --no-print-directory all
	./tests/demo/demo.sh "$(abspath $(BUILDDIR))"

check: deps
	@./tools/run-checks.sh

clean:
	rm -rf $(BUILDDIR) build-asan build-valgrind build-fuzz build-clang

help:
	@sed -n '3,16s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))
