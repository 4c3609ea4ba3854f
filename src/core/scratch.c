/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "scratch.h"

#include <errno.h>
#include <stdlib.h>

#include <sodium.h>

#define SCRATCH_MAX (1U << 20)

int duress_with_scratch(int (*fn)(void *ctx, char *buf, size_t size), void *ctx)
{
	for (size_t size = 4096;; size *= 2) {
		char *buf = malloc(size);
		int r;

		if (!buf)
			return ENOMEM;
		r = fn(ctx, buf, size);
		sodium_memzero(buf, size);
		free(buf);
		if (r != ERANGE || size >= SCRATCH_MAX)
			return r;
	}
}
