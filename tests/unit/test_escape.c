/* SPDX-License-Identifier: GPL-2.0-or-later */
/* duress_escape(): names from a directory are shown as data, never as controls;
 * duress_shell_word(): each path of a printed fix is pasted as one word. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/escape.h"

struct escape_case {
	const char *in;
	const char *out;
};

static const struct escape_case cases[] = {
	{ "", "" },
	{ "alert", "alert" },
	{ "with space & 'quotes'", "with space & 'quotes'" },
	/* The log forgery of issue 7: one line, the newline visible. */
	{ "x\nsshd[1]: Accepted password for root", "x\\x0asshd[1]: Accepted password for root" },
	{ "a\rb\tc", "a\\x0db\\x09c" },
	{ "\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07" },
	{ "\x01\x1f\x7f", "\\x01\\x1f\\x7f" },
	/* The escape character itself, or "\x0a" in a name would read as a newline. */
	{ "back\\slash", "back\\x5cslash" },
	{ "\\x0a", "\\x5cx0a" },
	/* Valid UTF-8 is shown as it is, up to four bytes. */
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
	{ "\xe2\x82\xac\xf0\x9f\x94\x91", "\xe2\x82\xac\xf0\x9f\x94\x91" },
	{ "\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf", "\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf" },
	/* C1 controls: U+0085 (NEL) ends a line for some viewers, U+009B is CSI. */
	{ "a\xc2\x85z", "a\\xc2\\x85z" },
	{ "\xc2\x80\xc2\x9b\xc2\x9f", "\\xc2\\x80\\xc2\\x9b\\xc2\\x9f" },
	/* Bidi embeddings, overrides and isolates; line and paragraph separators. */
	{ "\xe2\x80\xaegnp.exe", "\\xe2\\x80\\xaegnp.exe" },
	{ "\xe2\x80\xaa\xe2\x80\xad", "\\xe2\\x80\\xaa\\xe2\\x80\\xad" },
	{ "\xe2\x81\xa6\xe2\x81\xa9", "\\xe2\\x81\\xa6\\xe2\\x81\\xa9" },
	{ "\xe2\x80\xa8\xe2\x80\xa9", "\\xe2\\x80\\xa8\\xe2\\x80\\xa9" },
	/* Neighbours of those ranges are ordinary characters. */
	{ "\xc2\xa1\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa",
	  "\xc2\xa1\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa" },
	/* Not UTF-8: each byte escaped, what follows judged again. */
	{ "\xff", "\\xff" },
	{ "\x80z", "\\x80z" },
	{ "\xc0\xaf", "\\xc0\\xaf" },                   /* overlong '/' */
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },          /* overlong, three bytes */
	{ "\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf" }, /* overlong, four bytes */
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },          /* surrogate U+D800 */
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* above U+10FFFF */
	{ "\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80" },
	{ "ab\xc3", "ab\\xc3" }, /* truncated at the end */
	{ "\xe2\x82", "\\xe2\\x82" },
	{ "\xe2\x82z", "\\xe2\\x82z" },      /* truncated before a letter */
	{ "\xc3\xc3\xa9", "\\xc3\xc3\xa9" }, /* a lead byte, then a whole one */
};

static void table(void **state)
{
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = duress_escape(cases[i].in, buf, sizeof(buf));

		if (strcmp(got, cases[i].out) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, got, cases[i].out);
	}
}

struct cut_case {
	const char *in;
	size_t size;
	const char *out;
};

/* Output is bounded by size, NUL-terminated, and cut only between characters. */
static const struct cut_case cuts[] = {
	{ "abcdef", 7, "abcdef" },
	{ "abcdefg", 7, "abc..." },
	{ "\n\n", 9, "\\x0a\\x0a" },
	{ "\n\n", 8, "\\x0a..." },
	{ "a\n", 5, "a..." },                       /* never half an escape */
	{ "\xc3\xa9\xc3\xa9xy", 6, "\xc3\xa9..." }, /* never half a character */
	{ "\xc3\xa9\xc3\xa9x", 6, "\xc3\xa9\xc3\xa9x" },
	{ "abc", 4, "abc" },
	{ "abcd", 4, "..." },
	{ "abcd", 3, "" }, /* no room even for the mark */
	{ "abcd", 1, "" },
};

static void bounded(void **state)
{
	char buf[16];

	(void)state;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		memset(buf, 'Z', sizeof(buf));
		duress_escape(cuts[i].in, buf, cuts[i].size);
		if (strcmp(buf, cuts[i].out) != 0)
			fail_msg("cut %zu: got \"%s\", want \"%s\"", i, buf, cuts[i].out);
		for (size_t j = cuts[i].size; j < sizeof(buf); j++)
			assert_int_equal(buf[j], 'Z');
	}
}

/* Every byte value of a name, escaped, fits DURESS_ESCAPED_SIZE and is one clean line. */
static void worst_case_fits(void **state)
{
	char name[NAME_MAX + 1], buf[DURESS_ESCAPED_SIZE(NAME_MAX)];

	(void)state;
	for (size_t i = 0; i < NAME_MAX; i++)
		name[i] = (char)(1 + i % 255);
	name[NAME_MAX] = '\0';
	duress_escape(name, buf, sizeof(buf));
	assert_null(strstr(buf, "..."));
	for (const unsigned char *p = (const unsigned char *)buf; *p; p++)
		assert_true(*p >= 0x20 && *p != 0x7f);
	assert_int_equal(duress_escape(NULL, buf, sizeof(buf))[0], '\0');
}

/* duress_shell_word(): a word the shell reads back as the string, or NULL. */
static const struct escape_case words[] = {
	{ "/home/alice/.duress/alert", "/home/alice/.duress/alert" },
	{ "a-b_c.d@e%f+g=h:i,j", "a-b_c.d@e%f+g=h:i,j" },
	{ "", "''" },
	{ "with space", "'with space'" },
	{ "it's", "'it'\\''s'" },
	{ "'", "''\\'''" },
	{ "$(reboot);`id`|&<>*?~#!\"", "'$(reboot);`id`|&<>*?~#!\"'" },
	{ "back\\slash", "'back\\slash'" },
	{ "caf\xc3\xa9", "'caf\xc3\xa9'" },
	/* What the terminal would not show as it is: no word. */
	{ "tab\tbed", NULL },
	{ "line\nbreak", NULL },
	{ "\xe2\x80\xaegnp", NULL },
	{ "\xff", NULL },
};

static void shell_words(void **state)
{
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const char *got = duress_shell_word(words[i].in, buf, sizeof(buf));

		if (!words[i].out ? got != NULL : !got || strcmp(got, words[i].out) != 0)
			fail_msg("word %zu: got \"%s\", want \"%s\"", i, got ? got : "(null)",
				 words[i].out ? words[i].out : "(null)");
	}
}

/* A word that does not fit is refused, never cut; the worst case fits its macro. */
static void shell_word_bounded(void **state)
{
	char quotes[NAME_MAX + 1], buf[DURESS_SHELL_WORD_SIZE(NAME_MAX)];

	(void)state;
	assert_string_equal(duress_shell_word("abc", buf, 4), "abc");
	assert_null(duress_shell_word("abcd", buf, 4));
	assert_string_equal(duress_shell_word("a b", buf, 6), "'a b'");
	assert_null(duress_shell_word("a b", buf, 5));
	assert_null(duress_shell_word("'", buf, 6));
	memset(quotes, '\'', NAME_MAX);
	quotes[NAME_MAX] = '\0';
	assert_non_null(duress_shell_word(quotes, buf, sizeof(buf)));
	assert_int_equal(strlen(buf), 4 * NAME_MAX + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(bounded),
		cmocka_unit_test(worst_case_fits),
		cmocka_unit_test(shell_words),
		cmocka_unit_test(shell_word_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
