/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

#include "cli/password.h"

/*
 * Prints a warning when libpwquality, with the system's pwquality.conf,
 * finds the password weak for the owner's account; nothing without it.
 */
void duress_warn_weak_password(uid_t owner, const struct duress_password *pw);
