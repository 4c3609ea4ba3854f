/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

#include "cli/password.h"

/*
 * Whether pw is the real password of the action owner's account (and, when
 * root signs, of the account that ran sudo): 1 yes, 0 no, -1 cannot tell,
 * with *why saying what stood in the way.  Root reads the shadow file; any
 * other user, who can only sign their own files, asks unix_chkpwd (with a
 * timeout), which logs "password check failed" to the auth log on a 0.
 */
int duress_is_real_password(uid_t owner, const struct duress_password *pw, const char **why);
