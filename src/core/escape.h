/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * Names are data.  A file name is any bytes but '/' and NUL: printed as they
 * are, a newline forges a second syslog line, an ESC sequence reaches root's
 * terminal, a bidi override reorders what is read.  duress_escape() copies s
 * into buf (size bytes), writing as \xNN, one per byte:
 *
 *   - bytes below 0x20, 0x7f, and the backslash itself (so the output is
 *     unambiguous);
 *   - anything that is not valid UTF-8 (stray continuation bytes, overlong
 *     forms, surrogates, code points above U+10FFFF, truncated sequences);
 *   - the C1 controls U+0080..U+009F, the bidi embeddings and overrides
 *     U+202A..U+202E and isolates U+2066..U+2069, and the line and paragraph
 *     separators U+2028, U+2029.
 *
 * Everything else is copied.  The result is always NUL-terminated (if size
 * > 0); what does not fit is cut between two whole characters and marked
 * "...".  Returns buf, for use as a printf argument.
 */
const char *duress_escape(const char *s, char *buf, size_t size);

/* A buffer this large holds any string of n bytes escaped, uncut. */
#define DURESS_ESCAPED_SIZE(n) (4 * (size_t)(n) + 1)
