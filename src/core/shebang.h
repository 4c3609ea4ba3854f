/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* The kernel reads no more of a #! line than this (BINPRM_BUF_SIZE). */
#define DURESS_SHEBANG_MAX 256

struct duress_shebang {
	char line[DURESS_SHEBANG_MAX + 1]; /* a copy of the #! line, split in place */
	char *interp;                      /* the interpreter, or NULL: no usable #! line */
	char *arg;                         /* its optional single argument, or NULL */
};

/*
 * Splits the #! line at the start of buf (len bytes, of which at most
 * DURESS_SHEBANG_MAX are looked at) as the kernel does: blanks are spaces and
 * tabs, the interpreter ends at the first blank, everything after it up to
 * the newline, trailing blanks removed, is one argument.  A line without a
 * newline in reach is left to the kernel (interp NULL), as is one without
 * "#!" or without an interpreter.  A NUL ends the line early, as for the
 * kernel.  Pure: buf is user-controlled bytes, read by root.
 */
void duress_shebang_parse(const char *buf, size_t len, struct duress_shebang *ret);
