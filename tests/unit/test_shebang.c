/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The #! line parser: what the runner starts a script with, split as the kernel does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/shebang.h"

struct shebang_case {
	const char *what;
	const char *in;
	size_t len;         /* 0: strlen(in) */
	const char *interp; /* NULL: no interpreter (the memfd runs as it is) */
	const char *arg;
};

static const struct shebang_case cases[] = {
	{ "empty", "", 0, NULL, NULL },
	{ "one byte", "#", 0, NULL, NULL },
	{ "no #!", "echo hi\n", 0, NULL, NULL },
	{ "#! not at the start", " #!/bin/sh\n", 0, NULL, NULL },
	{ "#! only", "#!\n", 0, NULL, NULL },
	{ "#! and blanks only", "#! \t  \t\n", 0, NULL, NULL },
	{ "interpreter", "#!/bin/sh\necho hi\n", 0, "/bin/sh", NULL },
	{ "blanks before the interpreter", "#! \t/bin/sh\n", 0, "/bin/sh", NULL },
	{ "one argument", "#!/usr/bin/env python3\n", 0, "/usr/bin/env", "python3" },
	{ "the rest is one argument", "#!/bin/sh -e -x\n", 0, "/bin/sh", "-e -x" },
	{ "blanks around the argument", "#!/bin/sh \t -e \t \n", 0, "/bin/sh", "-e" },
	{ "trailing blanks, no argument", "#!/bin/sh \t \n", 0, "/bin/sh", NULL },
	{ "no newline at all", "#!/bin/sh", 0, NULL, NULL },
	{ "newline past len", "#!/bin/sh\n", 5, NULL, NULL },
	{ "CR at the end stays, as for the kernel", "#!/bin/sh\r\n", 0, "/bin/sh\r", NULL },
	{ "CR after the argument", "#!/bin/sh -e\r\n", 0, "/bin/sh", "-e\r" },
	{ "NUL ends the line", "#!/bin/sh\0 -x\n", 14, "/bin/sh", NULL },
	{ "NUL right after #!", "#!\0/bin/sh\n", 11, NULL, NULL },
};

static void table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct shebang_case *c = &cases[i];
		struct duress_shebang sb;

		print_message("%s\n", c->what);
		duress_shebang_parse(c->in, c->len ? c->len : strlen(c->in), &sb);
		if (c->interp)
			assert_string_equal(sb.interp, c->interp);
		else
			assert_null(sb.interp);
		if (c->arg)
			assert_string_equal(sb.arg, c->arg);
		else
			assert_null(sb.arg);
	}
}

/* "#!" + interpreter of `len` bytes + newline, in a buffer of `size` bytes. */
static size_t long_line(char *buf, size_t size, size_t len)
{
	assert_true(len + 3 <= size);
	memset(buf, 'x', size);
	memcpy(buf, "#!/", 3);
	buf[2 + len] = '\n';
	return size;
}

/* The kernel looks at 256 bytes: a newline at index 255 is in reach, at 256 not. */
static void newline_within_256_bytes(void **state)
{
	char buf[600];
	struct duress_shebang sb;

	(void)state;
	duress_shebang_parse(buf, long_line(buf, sizeof(buf), DURESS_SHEBANG_MAX - 3), &sb);
	assert_non_null(sb.interp);
	assert_int_equal(strlen(sb.interp), DURESS_SHEBANG_MAX - 3);
	assert_null(sb.arg);
	duress_shebang_parse(buf, long_line(buf, sizeof(buf), DURESS_SHEBANG_MAX - 2), &sb);
	assert_null(sb.interp);
	duress_shebang_parse(buf, long_line(buf, sizeof(buf), 400), &sb);
	assert_null(sb.interp);
	assert_null(sb.arg);
}

/* Nothing past the first line is looked at; the input is left as it was. */
static void input_untouched(void **state)
{
	const char in[] = "#!/bin/sh -e\n#!/bin/bash\n";
	char copy[sizeof(in)];
	struct duress_shebang sb;

	(void)state;
	memcpy(copy, in, sizeof(in));
	duress_shebang_parse(copy, sizeof(copy) - 1, &sb);
	assert_string_equal(sb.interp, "/bin/sh");
	assert_string_equal(sb.arg, "-e");
	assert_memory_equal(copy, in, sizeof(in));
	assert_true(sb.interp >= sb.line && sb.interp < sb.line + sizeof(sb.line));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(newline_within_256_bytes),
		cmocka_unit_test(input_untouched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
