/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The signature line: format, parsing, caps and the tag. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/sig.h"

/* A fixed signature, so that the text is known in advance. */
static void fixed_sig(struct duress_sig *s)
{
	memset(s, 0, sizeof(*s));
	s->params.mem_kib = 65536;
	s->params.ops = 2;
	memset(s->params.salt, 0x11, sizeof(s->params.salt));
	memset(s->content_hash, 0x22, sizeof(s->content_hash));
	memset(s->tag, 0x33, sizeof(s->tag));
}

#define SALT "EREREREREREREREREREREQ"
#define HASH "IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiI"
#define TAG "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM"
#define LINE(head, salt, hash, tag) head "$" salt "$" hash "$" tag
#define HEAD "$duress$v=1$m=65536,t=2,p=1"

static const char fixed_line[] = LINE(HEAD, SALT, HASH, TAG) "\n";

static void format_known_answer(void **state)
{
	struct duress_sig s;
	char buf[DURESS_SIG_MAX + 1];
	int n;

	(void)state;
	fixed_sig(&s);
	n = duress_sig_format(&s, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(fixed_line));
	assert_string_equal(buf, fixed_line);
}

static void parse_round_trip(void **state)
{
	struct duress_sig s, back;

	(void)state;
	fixed_sig(&s);
	assert_int_equal(duress_sig_parse(fixed_line, strlen(fixed_line), &back), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	/* The trailing newline is optional. */
	assert_int_equal(duress_sig_parse(fixed_line, strlen(fixed_line) - 1, &back), 0);
	assert_memory_equal(&s, &back, sizeof(s));
}

static void format_too_small_buffer(void **state)
{
	struct duress_sig s;
	char buf[40];

	(void)state;
	fixed_sig(&s);
	assert_int_equal(duress_sig_format(&s, buf, sizeof(buf)), -ENOSPC);
}

/* Each line differs from the good one in exactly one way and must be refused. */
static void parse_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		LINE("$duress$v=2$m=65536,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=65536,t=2,p=2", SALT, HASH, TAG),
		LINE("$duress$v=1$m=065536,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=99999999999,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=4294967296,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=-1,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=+1,t=2,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$t=2,m=65536,p=1", SALT, HASH, TAG),
		LINE("$duress$v=1$m=65536,t=2", SALT, HASH, TAG),
		LINE("$duress$v=1$m=65536,t=2,p=1,x=1", SALT, HASH, TAG),
		LINE("$dures$v=1$m=65536,t=2,p=1", SALT, HASH, TAG),
		/* salt one character short, one too many, padded, bad alphabet */
		LINE(HEAD, "ERERERERERERERERERERE", HASH, TAG),
		LINE(HEAD, SALT "A", HASH, TAG),
		LINE(HEAD, SALT "==", HASH, TAG),
		LINE(HEAD, "EREREREREREREREREREREQ-", HASH, TAG),
		LINE(HEAD, "ERERERERERERERERERER_Q", HASH, TAG),
		/* libsodium 1.0.18 would decode this byte as a letter */
		LINE(HEAD, "EREREREREREREREREREE\xdeQ", HASH, TAG),
		/* non-canonical: unused low bits set in the last character */
		LINE(HEAD, "EREREREREREREREREREERR", HASH, TAG),
		LINE(HEAD, SALT, "IiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiIiJ", TAG),
		/* empty fields, missing tag, extra field */
		LINE(HEAD, "", HASH, TAG),
		LINE(HEAD, SALT, HASH, ""),
		HEAD "$" SALT "$" HASH,
		LINE(HEAD, SALT, HASH, TAG) "$",
		LINE(HEAD, SALT, HASH, TAG) "$" TAG,
		/* two lines, CR, leading space, trailing space */
		LINE(HEAD, SALT, HASH, TAG) "\n\n",
		LINE(HEAD, SALT, HASH, TAG) "\r\n",
		" " LINE(HEAD, SALT, HASH, TAG),
		LINE(HEAD, SALT, HASH, TAG) " ",
	};
	struct duress_sig s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (duress_sig_parse(bad[i], strlen(bad[i]), &s) != -EINVAL)
			fail_msg("accepted bad line %zu: %s", i, bad[i]);
	}
}

static void parse_rejects_embedded_nul_and_overlong(void **state)
{
	char buf[DURESS_SIG_MAX + 2];
	struct duress_sig s;

	(void)state;
	memcpy(buf, fixed_line, sizeof(fixed_line));
	buf[20] = '\0';
	assert_int_equal(duress_sig_parse(buf, strlen(fixed_line), &s), -EINVAL);
	memset(buf, 'A', sizeof(buf)); /* one byte over DURESS_SIG_MAX */
	assert_int_equal(duress_sig_parse(buf, sizeof(buf), &s), -EINVAL);
}

static void params_caps(void **state)
{
	struct duress_caps caps;
	struct duress_params p = { .mem_kib = 65536, .ops = 2 };

	(void)state;
	duress_caps_default(&caps);
	assert_int_equal(duress_params_check(&p, &caps), 0);
	p.mem_kib = (uint32_t)(caps.max_memory / 1024 + 1);
	assert_int_equal(duress_params_check(&p, &caps), -E2BIG);
	p.mem_kib = 65536;
	p.ops = (uint32_t)caps.max_ops + 1;
	assert_int_equal(duress_params_check(&p, &caps), -E2BIG);
	p.ops = 0;
	assert_int_equal(duress_params_check(&p, &caps), -EINVAL);
	p.ops = 1;
	p.mem_kib = 1;
	assert_int_equal(duress_params_check(&p, &caps), -EINVAL);
	/* The caps are the module's; signatures cannot raise them. */
	p.mem_kib = UINT32_MAX;
	assert_int_equal(duress_params_check(&p, &caps), -E2BIG);
}

static void tag_binds_password_and_content(void **state)
{
	struct duress_params p;
	struct duress_sig s;
	unsigned char k1[DURESS_KEY_LEN], k2[DURESS_KEY_LEN];
	unsigned char h1[DURESS_HASH_LEN], h2[DURESS_HASH_LEN];

	(void)state;
	fixed_sig(&s);
	duress_params_new(&p, crypto_pwhash_MEMLIMIT_MIN, crypto_pwhash_OPSLIMIT_MIN);
	assert_int_equal(duress_derive_key("duress", 6, &p, k1), 0);
	assert_int_equal(duress_derive_key("duresS", 6, &p, k2), 0);
	crypto_hash_sha256(h1, (const unsigned char *)"#!/bin/sh\n", 10);
	crypto_hash_sha256(h2, (const unsigned char *)"#!/bin/sh \n", 11);
	duress_tag(k1, &s, h1, s.tag);
	assert_true(duress_tag_matches(k1, &s, h1));
	assert_false(duress_tag_matches(k2, &s, h1));
	assert_false(duress_tag_matches(k1, &s, h2));
	s.tag[DURESS_TAG_LEN - 1] ^= 1;
	assert_false(duress_tag_matches(k1, &s, h1));
}

/* A signature without once keeps the v1 tag: HMAC(key, context || hash), as before. */
static void tag_without_once_unchanged(void **state)
{
	static const char context[] = "pam_duress signature v1";
	crypto_auth_hmacsha256_state st;
	unsigned char key[DURESS_KEY_LEN], hash[DURESS_HASH_LEN], want[DURESS_TAG_LEN];
	struct duress_sig s;

	(void)state;
	fixed_sig(&s);
	memset(key, 0x44, sizeof(key));
	memset(hash, 0x55, sizeof(hash));
	crypto_auth_hmacsha256_init(&st, key, sizeof(key));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)context, sizeof(context));
	crypto_auth_hmacsha256_update(&st, hash, sizeof(hash));
	crypto_auth_hmacsha256_final(&st, want);
	duress_tag(key, &s, hash, s.tag);
	assert_memory_equal(s.tag, want, sizeof(want));
}

/* Issue 26: the once flag and its id are covered by the tag, and written in the line. */
static void once_bound_and_round_trip(void **state)
{
	struct duress_sig s, back;
	unsigned char key[DURESS_KEY_LEN], hash[DURESS_HASH_LEN];
	char line[DURESS_SIG_MAX + 1];
	int n;

	(void)state;
	fixed_sig(&s);
	memset(key, 0x44, sizeof(key));
	memset(hash, 0x55, sizeof(hash));
	s.once = true;
	memset(s.once_id, 0x66, sizeof(s.once_id));
	duress_tag(key, &s, hash, s.tag);
	assert_true(duress_tag_matches(key, &s, hash));
	n = duress_sig_format(&s, line, sizeof(line));
	assert_true(n > 0);
	assert_non_null(strstr(line, "p=1$once=ZmZmZmZmZmZmZmZmZmZmZg$EREREREREREREREREREREQ$"));
	assert_int_equal(duress_sig_parse(line, (size_t)n, &back), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	/* Stripped, or with another id: the password no longer matches. */
	back.once = false;
	assert_false(duress_tag_matches(key, &back, hash));
	back.once = true;
	back.once_id[0] ^= 1;
	assert_false(duress_tag_matches(key, &back, hash));
	/* And the reverse: a tag made without once is no once tag. */
	s.once = false;
	duress_tag(key, &s, hash, s.tag);
	s.once = true;
	assert_false(duress_tag_matches(key, &s, hash));
	/* With companions, once comes first; a bad id is no signature. */
	assert_int_equal(duress_sig_add_also(&s, "/etc/a.conf"), 0);
	n = duress_sig_format(&s, line, sizeof(line));
	assert_int_equal(duress_sig_parse(line, (size_t)n, &back), 0);
	assert_true(back.once && back.also_len == s.also_len);
	snprintf(line, sizeof(line), HEAD "$once=ZmZm$" SALT "$" HASH "$" TAG);
	assert_int_equal(duress_sig_parse(line, strlen(line), &back), -EINVAL);
}

/*
 * Argon2id known answer, computed with the reference implementation's CLI
 * (Debian's argon2: echo -n 'correct horse' | argon2 ZZZZZZZZZZZZZZZZ -id -t 1
 * -k 8 -p 1 -l 32 -r), so signatures stay valid across libsodium versions.
 */
static void derive_key_known_answer(void **state)
{
	static const unsigned char expected[DURESS_KEY_LEN] = {
		0xf9, 0x7d, 0x83, 0xba, 0x91, 0xfc, 0x33, 0xf6, 0x4a, 0x36, 0x17,
		0xa7, 0xef, 0x15, 0xc7, 0x2d, 0x99, 0xb7, 0x04, 0xe0, 0xc6, 0x7d,
		0x7a, 0x5a, 0x3b, 0x14, 0x63, 0xe8, 0x6f, 0xf7, 0x96, 0xbf,
	};
	struct duress_params p = { .mem_kib = 8, .ops = 1 };
	unsigned char key[DURESS_KEY_LEN];

	(void)state;
	memset(p.salt, 0x5a, sizeof(p.salt));
	assert_int_equal(duress_derive_key("correct horse", 13, &p, key), 0);
	assert_memory_equal(key, expected, sizeof(key));
}

static void params_new_is_random(void **state)
{
	struct duress_params a, b;

	(void)state;
	duress_params_new(&a, crypto_pwhash_MEMLIMIT_INTERACTIVE,
			  crypto_pwhash_OPSLIMIT_INTERACTIVE);
	duress_params_new(&b, crypto_pwhash_MEMLIMIT_INTERACTIVE,
			  crypto_pwhash_OPSLIMIT_INTERACTIVE);
	assert_int_equal(a.mem_kib, crypto_pwhash_MEMLIMIT_INTERACTIVE / 1024);
	assert_int_equal(a.ops, crypto_pwhash_OPSLIMIT_INTERACTIVE);
	assert_false(duress_params_equal(&a, &b));
	b = a;
	assert_true(duress_params_equal(&a, &b));
	b.ops++;
	assert_false(duress_params_equal(&a, &b));
}

/* nuvious/pam-duress: SHA-256(SHA-256(content) || password). */
static void legacy_known_answer(void **state)
{
	unsigned char content_hash[DURESS_HASH_LEN], expected[DURESS_HASH_LEN];
	unsigned char both[DURESS_HASH_LEN + 6];

	(void)state;
	crypto_hash_sha256(content_hash, (const unsigned char *)"echo hi\n", 8);
	memcpy(both, content_hash, DURESS_HASH_LEN);
	memcpy(both + DURESS_HASH_LEN, "secret", 6);
	crypto_hash_sha256(expected, both, sizeof(both));
	assert_true(duress_legacy_matches(content_hash, "secret", 6, expected));
	assert_false(duress_legacy_matches(content_hash, "secreT", 6, expected));
	assert_false(duress_legacy_matches(content_hash, "secret", 5, expected));
}

/* Companion files: recorded by path, canonical, and bound into the hash. */
static void also_round_trip(void **state)
{
	struct duress_sig s, back;
	char line[DURESS_SIG_MAX + 1];
	const char *p;
	int n;

	(void)state;
	fixed_sig(&s);
	assert_int_equal(duress_sig_add_also(&s, "/etc/duress/alert.conf"), 0);
	assert_int_equal(duress_sig_add_also(&s, "/home/a/$odd,name"), 0);
	n = duress_sig_format(&s, line, sizeof(line));
	assert_true(n > 0);
	assert_non_null(strstr(line, "p=1$also="));
	assert_int_equal(duress_sig_parse(line, (size_t)n, &back), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	p = duress_sig_next_also(&back, NULL);
	assert_string_equal(p, "/etc/duress/alert.conf");
	p = duress_sig_next_also(&back, p);
	assert_string_equal(p, "/home/a/$odd,name");
	assert_null(duress_sig_next_also(&back, p));
}

static void also_limits(void **state)
{
	struct duress_sig s;
	char long_path[DURESS_ALSO_MAX_BYTES];

	(void)state;
	fixed_sig(&s);
	assert_int_equal(duress_sig_add_also(&s, "relative/path"), -EINVAL);
	for (int i = 0; i < DURESS_ALSO_MAX_FILES; i++)
		assert_int_equal(duress_sig_add_also(&s, "/f"), 0);
	assert_int_equal(duress_sig_add_also(&s, "/f"), -E2BIG);
	fixed_sig(&s);
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	assert_int_equal(duress_sig_add_also(&s, long_path), 0);
	assert_int_equal(duress_sig_add_also(&s, "/f"), -E2BIG);
}

/* base64 of a path list that must be refused: relative, empty, unterminated, nine files. */
static void also_parse_rejects(void **state)
{
	static const char *const lists[] = { "rel\0", "\0", "/a", "/a\0\0" };
	static const size_t lens[] = { 4, 1, 2, 4 };
	char b64[256], line[DURESS_SIG_MAX + 1];
	char nine[18];
	struct duress_sig s;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		const char *list = i < 4 ? lists[i] : nine;
		size_t len = i < 4 ? lens[i] : sizeof(nine);

		if (i == 4)
			for (size_t j = 0; j < sizeof(nine); j += 2)
				memcpy(nine + j, "/\0", 2);
		sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)list, len,
				  sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
		snprintf(line, sizeof(line), HEAD "$also=%s$" SALT "$" HASH "$" TAG, b64);
		if (duress_sig_parse(line, strlen(line), &s) != -EINVAL)
			fail_msg("accepted path list %zu", i);
	}
	/* The same line with a valid list parses: the refusals above are about the list. */
	sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)"/a\0", 3,
			  sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
	snprintf(line, sizeof(line), HEAD "$also=%s$" SALT "$" HASH "$" TAG, b64);
	assert_int_equal(duress_sig_parse(line, strlen(line), &s), 0);
}

static void bound_hash_covers_paths_and_contents(void **state)
{
	struct duress_sig s;
	unsigned char action[DURESS_HASH_LEN], h0[DURESS_HASH_LEN], h1[DURESS_HASH_LEN];
	unsigned char h2[DURESS_HASH_LEN], h3[DURESS_HASH_LEN];
	unsigned char also[1][DURESS_HASH_LEN];

	(void)state;
	memset(action, 1, sizeof(action));
	memset(also[0], 2, sizeof(also[0]));
	fixed_sig(&s);
	duress_bound_hash(&s, action, also, h0);
	assert_memory_equal(h0, action, sizeof(action)); /* no companions: the plain SHA-256 */
	assert_int_equal(duress_sig_add_also(&s, "/etc/a.conf"), 0);
	duress_bound_hash(&s, action, also, h1);
	assert_memory_not_equal(h1, action, sizeof(action));
	also[0][0] ^= 1;
	duress_bound_hash(&s, action, also, h2);
	assert_memory_not_equal(h1, h2, sizeof(h1));
	also[0][0] ^= 1;
	fixed_sig(&s);
	assert_int_equal(duress_sig_add_also(&s, "/etc/b.conf"), 0);
	duress_bound_hash(&s, action, also, h3);
	assert_memory_not_equal(h1, h3, sizeof(h1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_known_answer),
		cmocka_unit_test(parse_round_trip),
		cmocka_unit_test(format_too_small_buffer),
		cmocka_unit_test(parse_rejects),
		cmocka_unit_test(parse_rejects_embedded_nul_and_overlong),
		cmocka_unit_test(params_caps),
		cmocka_unit_test(tag_binds_password_and_content),
		cmocka_unit_test(tag_without_once_unchanged),
		cmocka_unit_test(once_bound_and_round_trip),
		cmocka_unit_test(derive_key_known_answer),
		cmocka_unit_test(params_new_is_random),
		cmocka_unit_test(legacy_known_answer),
		cmocka_unit_test(also_round_trip),
		cmocka_unit_test(also_limits),
		cmocka_unit_test(also_parse_rejects),
		cmocka_unit_test(bound_hash_covers_paths_and_contents),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
