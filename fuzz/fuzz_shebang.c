/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The #! parser reads the first bytes of actions that users write, in the
 * runner, as root: whatever the bytes, it must stay inside its buffer, and
 * what it returns must be what the kernel would take from the same line.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/shebang.h"
#include "fuzz/fuzz.h"

static bool blank_or_newline(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* s is a non-empty piece of the line, at the same place as in data, without newline. */
static void check_piece(const struct duress_shebang *sb, const char *s, const uint8_t *data)
{
	size_t off = (size_t)(s - sb->line), n = strlen(s);

	if (s < sb->line || off + n > DURESS_SHEBANG_MAX || n == 0 || memchr(s, '\n', n) ||
	    memcmp(data + off, s, n) != 0 || blank_or_newline(s[0]) || blank_or_newline(s[n - 1]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct duress_shebang sb;
	size_t reach = size < DURESS_SHEBANG_MAX ? size : DURESS_SHEBANG_MAX;

	duress_shebang_parse((const char *)data, size, &sb);
	if (!sb.interp) {
		if (sb.arg)
			abort();
		return 0;
	}
	if (size < 3 || data[0] != '#' || data[1] != '!' || !memchr(data, '\n', reach))
		abort();
	check_piece(&sb, sb.interp, data);
	if (strpbrk(sb.interp, " \t"))
		abort();
	if (sb.arg) {
		check_piece(&sb, sb.arg, data);
		if (sb.arg <= sb.interp + strlen(sb.interp))
			abort();
	}
	return 0;
}
