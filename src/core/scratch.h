/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * Calls fn(ctx, buf, size) with a scratch buffer for a *_r lookup, growing
 * it while fn says ERANGE, up to 1 MiB.  The buffer is wiped before it is
 * freed (a shadow entry holds the password hash).  Returns fn's errno-style
 * result, or ENOMEM.
 */
int duress_with_scratch(int (*fn)(void *ctx, char *buf, size_t size), void *ctx);
