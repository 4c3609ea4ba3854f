#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The module's interface to libpam, and nothing else: its dynamic symbol
# table defines exactly pam_sm_authenticate, pam_sm_setcred and
# pam_sm_chauthtok (src/pam_duress.map), so no core function can be called from, or clash
# with, another module or the login program; and it loads with every
# symbol resolved at once (RTLD_NOW), as libpam loads it.
#
#   test_exports.sh SRCDIR MODULE
set -u
SRC=$1
MODULE=$2
# shellcheck source=tests/lib/tap.sh
. "$SRC/tests/lib/tap.sh"

defined=$(nm -D --defined-only "$MODULE" | awk '{ print $3 }' | sort | tr '\n' ' ')
check "defines exactly pam_sm_authenticate, pam_sm_chauthtok and pam_sm_setcred (got: $defined)" \
	test "$defined" = "pam_sm_authenticate pam_sm_chauthtok pam_sm_setcred "
check "loads with RTLD_NOW and the three entry points resolve" python3 -c '
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW | os.RTLD_LOCAL)
lib.pam_sm_authenticate, lib.pam_sm_setcred, lib.pam_sm_chauthtok' "$MODULE"
check "no executable stack, no text relocations" sh -c \
	'! readelf -d "$1" | grep -q TEXTREL && readelf -lW "$1" | grep GNU_STACK | grep -qv RWE' sh "$MODULE"
tap_end
