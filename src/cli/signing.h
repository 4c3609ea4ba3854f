/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "cli/password.h"

/*
 * Signs the action at path where it lies, writing path.sig atomically
 * (mode 0600, owned like the action).  memlimit/opslimit 0: reuse the
 * directory's salt and cost, or libsodium's INTERACTIVE cost.  Prints what
 * is done and what still needs fixing; returns 0 or -1 after a one-line error.
 */
int duress_sign_file(const char *path, const struct duress_password *pw, uint64_t memlimit,
		     uint64_t opslimit);

/* 0: the password matches; 1: it does not; 2: error (reported). */
int duress_verify_file(const char *path, const struct duress_password *pw);
