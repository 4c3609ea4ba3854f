#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Wall time of an ssh login (sshpass + ssh running `true`) to a real sshd on
# 127.0.0.1 with the real password and with the duress password, N of each
# interleaved in one run; prints the medians and their ratio:
#
#   ssh login median: real 0.231 s, duress 0.378 s, ratio 1.64 (10 each, interleaved)
#
# The duress login pays pam_unix's failed check, then one Argon2id per
# directory (the user's and the global one) at the default cost; the real
# login never reaches pam_duress.  Root only: it uses the e2e suite's setup
# (temporary users, PAM service and sshd, all removed at the end).  Not run
# by make check (the e2e suite does the same timing once per run).
#
#   sudo bench/ssh_login.sh [N]     (N: 10; needs `make` first)
#   BUILDDIR=build-x bench/ssh_login.sh
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILDDIR:-$ROOT/build}
E2E_BENCH_N=${1:-10} exec "$ROOT/tests/e2e/test_e2e.sh" --bench-only \
	"$B/src/pam_duress.so" "$B/src/duress"
