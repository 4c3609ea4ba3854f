#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What a coercer or a remote prober can compare by the clock (issue 8): wall
# time of ssh logins (sshpass + ssh running `true`) to a real sshd on
# 127.0.0.1, N interleaved pairs of each kind in one run, and the ratio of
# the medians with the medians beside it:
#
#   duress / real, module after pam_unix (the usual stack)
#   duress / real, module before pam_unix (success=done + try_first_pass)
#   wrong password, account with per-user actions / without (its ~/.duress
#   moved away; the same global directory; pam_unix nodelay)
#
# It ends with a Markdown table of the three (lines starting "# |").  Root
# only: it uses the e2e suite's setup (temporary users, PAM service and
# sshd, all removed at the end).  Not run by make check: timing is judged
# only as ratios within one run, never as a timed test.
#
#   sudo bench/ssh_login.sh [N]     (N: 15; needs `make` first)
#   BUILDDIR=build-x bench/ssh_login.sh
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILDDIR:-$ROOT/build}
E2E_BENCH_N=${1:-15} exec "$ROOT/tests/e2e/test_e2e.sh" --bench-only \
	"$B/src/pam_duress.so" "$B/src/duress"
