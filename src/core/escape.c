/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CUT_MARK "..."
#define CUT_MARK_LEN (sizeof(CUT_MARK) - 1)

static bool continuation(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/*
 * The length (1..4) of the well-formed UTF-8 sequence at s, with its code
 * point in *cp, or 0 if s does not start one.  The ranges of the second byte
 * are those of RFC 3629's table: they exclude overlong forms, surrogates and
 * code points above U+10FFFF.  A NUL ends a sequence early, as any other
 * non-continuation byte does.
 */
static size_t utf8_sequence(const unsigned char *s, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	if (s[1] < lo || s[1] > hi)
		return 0;
	*cp = s[0] & (0x7FU >> n);
	for (size_t i = 1; i < n; i++) {
		if (!continuation(s[i]))
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3FU);
	}
	return n;
}

/* Code points that control a terminal or a log viewer rather than show. */
static bool is_control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7F || cp == '\\' || (cp >= 0x80 && cp <= 0x9F) ||
	       (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

static void put_escaped(char *out, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[4 * i] = '\\';
		out[4 * i + 1] = 'x';
		out[4 * i + 2] = hex[s[i] >> 4];
		out[4 * i + 3] = hex[s[i] & 0x0F];
	}
}

/* Ends the output at mark with CUT_MARK; empty if not even that fits. */
static size_t cut_at(char *buf, size_t size, size_t mark)
{
	if (size <= CUT_MARK_LEN)
		return 0;
	memcpy(buf + mark, CUT_MARK, CUT_MARK_LEN);
	return mark + CUT_MARK_LEN;
}

const char *duress_escape(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t used = 0;
	size_t mark = 0; /* the last character boundary with room after it for CUT_MARK */

	if (size == 0)
		return buf;
	while (*p) {
		uint32_t cp = 0;
		size_t n = utf8_sequence(p, &cp);
		bool escaped = n == 0 || is_control(cp);
		size_t len, out;

		len = n ? n : 1;
		out = escaped ? 4 * len : len;
		if (out >= size - used) {
			used = cut_at(buf, size, mark);
			break;
		}
		if (escaped)
			put_escaped(buf + used, p, len);
		else
			memcpy(buf + used, p, len);
		used += out;
		if (used + CUT_MARK_LEN < size)
			mark = used;
		p += len;
	}
	buf[used] = '\0';
	return buf;
}

/* Bytes a shell takes as themselves in an unquoted word, wherever they stand. */
static bool shell_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("_./@%+=:,-", c));
}

/* Whether duress_escape() would show s as it is, the backslash aside. */
static bool shown_as_is(const unsigned char *p)
{
	while (*p) {
		uint32_t cp = 0;
		size_t n = utf8_sequence(p, &cp);

		if (n == 0 || (is_control(cp) && cp != '\\'))
			return false;
		p += n;
	}
	return true;
}

const char *duress_shell_word(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	bool plain = *p != '\0';
	size_t used = 0;

	for (; *p && plain; p++)
		plain = shell_plain(*p);
	if (!shown_as_is((const unsigned char *)s))
		return NULL;
	if (plain) {
		if (strlen(s) >= size)
			return NULL;
		memcpy(buf, s, strlen(s) + 1);
		return buf;
	}
	if (size < 3)
		return NULL;
	buf[used++] = '\'';
	for (p = (const unsigned char *)s; *p; p++) {
		const char *put = *p == '\'' ? "'\\''" : NULL;
		size_t len = put ? 4 : 1;

		if (used + len + 2 > size)
			return NULL;
		if (put)
			memcpy(buf + used, put, len);
		else
			buf[used] = (char)*p;
		used += len;
	}
	buf[used++] = '\'';
	buf[used] = '\0';
	return buf;
}
