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

/*
 * s as one word a shell reads back as s, for a command printed for the
 * user to run: as it is when every byte is one of [A-Za-z0-9_./@%+=:,-] (and
 * s is not empty), otherwise in single quotes, each ' written '\''.
 * NULL when s holds a byte duress_escape() would escape other than the
 * backslash (a control, a bidi override, not UTF-8: pasted, it would not be
 * what it shows) or when the word does not fit in size bytes; the caller
 * then says the fix in words.
 */
const char *duress_shell_word(const char *s, char *buf, size_t size);

/* A buffer this large holds the shell word of any string of n bytes. */
#define DURESS_SHELL_WORD_SIZE(n) (4 * (size_t)(n) + 3)
