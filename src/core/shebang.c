/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "shebang.h"

#include <string.h>

#define BLANKS " \t"

void duress_shebang_parse(const char *buf, size_t len, struct duress_shebang *ret)
{
	size_t n = len < DURESS_SHEBANG_MAX ? len : DURESS_SHEBANG_MAX;
	char *p, *end;

	ret->interp = ret->arg = NULL;
	ret->line[0] = '\0';
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return;
	memcpy(ret->line, buf, n);
	ret->line[n] = '\0';
	end = memchr(ret->line, '\n', n);
	/* A line the kernel would truncate is left to the kernel. */
	if (!end)
		return;
	*end = '\0';
	p = ret->line + 2 + strspn(ret->line + 2, BLANKS);
	if (!*p)
		return;
	ret->interp = p;
	p += strcspn(p, BLANKS);
	if (!*p)
		return;
	*p++ = '\0';
	p += strspn(p, BLANKS);
	/* As the kernel does: one argument, trailing blanks removed. */
	for (end = p + strlen(p); end > p && (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	ret->arg = *p ? p : NULL;
}
