/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#define B64 sodium_base64_VARIANT_ORIGINAL_NO_PADDING
#define B64_ALPHABET "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
/* Domain separation: a tag of this format is never valid for anything else. */
static const char tag_context[] = "pam_duress signature v1";
static const char bound_context[] = "pam_duress bound files v1";
/* A once signature's tag: never valid for the same action without the flag, nor the reverse. */
static const char once_context[] = "pam_duress once signature v1";

/* A decimal number without sign or leading zero, ending at `end`. */
static int parse_u32(const char **pp, char end, uint32_t *ret)
{
	const char *p = *pp;
	uint64_t v = 0;
	size_t digits = 0;

	while (*p >= '0' && *p <= '9') {
		if (digits == 0 && *p == '0' && p[1] >= '0' && p[1] <= '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		if (++digits > 10 || v > UINT32_MAX)
			return -EINVAL;
		p++;
	}
	if (digits == 0 || *p != end)
		return -EINVAL;
	*ret = (uint32_t)v;
	*pp = p + 1;
	return 0;
}

/*
 * Decodes one base64 field of exactly `len` bytes: '$'-terminated, or, for
 * the last field, running to `end` with no '$' in it.
 */
static int parse_b64(const char **pp, const char *end, bool last, unsigned char *out, size_t len)
{
	const char *field = *pp;
	const char *stop = memchr(field, '$', (size_t)(end - field));
	size_t bin_len = 0;
	const char *b64_end = NULL;

	if (last ? stop != NULL : stop == NULL)
		return -EINVAL;
	if (last)
		stop = end;
	/* libsodium 1.0.18 decodes some bytes >= 0x80 as if they were letters. */
	if (strspn(field, B64_ALPHABET) != (size_t)(stop - field))
		return -EINVAL;
	if (sodium_base642bin(out, len, field, (size_t)(stop - field), NULL, &bin_len, &b64_end,
			      B64) != 0 ||
	    bin_len != len || b64_end != stop)
		return -EINVAL;
	*pp = last ? end : stop + 1;
	return 0;
}

/* Whether buf holds 1..DURESS_ALSO_MAX_FILES NUL-terminated absolute paths. */
static bool valid_also(const char *buf, size_t len)
{
	size_t files = 0;

	if (len == 0 || buf[len - 1] != '\0')
		return false;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
		size_t n = strlen(buf + i);

		if (n == 0 || buf[i] != '/' || n >= PATH_MAX || ++files > DURESS_ALSO_MAX_FILES)
			return false;
	}
	return true;
}

/* The optional "also=" field: companion paths, base64 of the NUL-terminated list. */
static int parse_also(const char **pp, const char *end, struct duress_sig *sig)
{
	const char *field = *pp + 5;
	const char *stop;
	const char *b64_end = NULL;

	if ((size_t)(end - *pp) < 5 || strncmp(*pp, "also=", 5) != 0)
		return 0;
	stop = memchr(field, '$', (size_t)(end - field));
	if (!stop || strspn(field, B64_ALPHABET) != (size_t)(stop - field) ||
	    sodium_base642bin((unsigned char *)sig->also, sizeof(sig->also), field,
			      (size_t)(stop - field), NULL, &sig->also_len, &b64_end, B64) != 0 ||
	    b64_end != stop || !valid_also(sig->also, sig->also_len))
		return -EINVAL;
	*pp = stop + 1;
	return 0;
}

/* The optional "once=" field: the flag and its id. */
static int parse_once(const char **pp, const char *end, struct duress_sig *sig)
{
	const char *p = *pp + 5;

	if ((size_t)(end - *pp) < 5 || strncmp(*pp, "once=", 5) != 0)
		return 0;
	if (parse_b64(&p, end, false, sig->once_id, sizeof(sig->once_id)) < 0)
		return -EINVAL;
	sig->once = true;
	*pp = p;
	return 0;
}

int duress_sig_parse(const char *text, size_t len, struct duress_sig *ret)
{
	const size_t plen = strlen(DURESS_SIG_PREFIX);
	char line[DURESS_SIG_MAX + 1];
	const char *p = line;
	const char *end;
	uint32_t par;
	struct duress_sig sig;

	/* Work on a NUL-terminated copy so that no look-ahead leaves the buffer. */
	if (len > DURESS_SIG_MAX || memchr(text, '\0', len))
		return -EINVAL;
	memcpy(line, text, len);
	line[len] = '\0';
	end = line + len;
	if (len > 0 && end[-1] == '\n')
		end--;
	if (memchr(line, '\n', (size_t)(end - line)) || strncmp(p, DURESS_SIG_PREFIX, plen) != 0)
		return -EINVAL;
	memset(&sig, 0, sizeof(sig));
	p += plen;
	if (strncmp(p, "m=", 2) != 0)
		return -EINVAL;
	p += 2;
	if (parse_u32(&p, ',', &sig.params.mem_kib) < 0 || strncmp(p, "t=", 2) != 0)
		return -EINVAL;
	p += 2;
	if (parse_u32(&p, ',', &sig.params.ops) < 0 || strncmp(p, "p=", 2) != 0)
		return -EINVAL;
	p += 2;
	if (parse_u32(&p, '$', &par) < 0 || par != 1 || parse_once(&p, end, &sig) < 0 ||
	    parse_also(&p, end, &sig) < 0)
		return -EINVAL;
	if (parse_b64(&p, end, false, sig.params.salt, sizeof(sig.params.salt)) < 0 ||
	    parse_b64(&p, end, false, sig.content_hash, sizeof(sig.content_hash)) < 0 ||
	    parse_b64(&p, end, true, sig.tag, sizeof(sig.tag)) < 0)
		return -EINVAL;
	*ret = sig;
	return 0;
}

const char *duress_sig_next_also(const struct duress_sig *sig, const char *prev)
{
	const char *next = prev ? prev + strlen(prev) + 1 : sig->also;

	return next < sig->also + sig->also_len ? next : NULL;
}

int duress_sig_add_also(struct duress_sig *sig, const char *path)
{
	size_t n = strlen(path) + 1;
	size_t files = 0;

	for (const char *p = NULL; (p = duress_sig_next_also(sig, p));)
		files++;
	if (path[0] != '/' || n > PATH_MAX)
		return -EINVAL;
	if (files >= DURESS_ALSO_MAX_FILES || n > sizeof(sig->also) - sig->also_len)
		return -E2BIG;
	memcpy(sig->also + sig->also_len, path, n);
	sig->also_len += n;
	return 0;
}

void duress_bound_hash(const struct duress_sig *sig,
		       const unsigned char action_hash[DURESS_HASH_LEN],
		       const unsigned char (*also_hashes)[DURESS_HASH_LEN],
		       unsigned char out[DURESS_HASH_LEN])
{
	crypto_hash_sha256_state h;
	size_t i = 0;

	if (sig->also_len == 0) {
		memmove(out, action_hash, DURESS_HASH_LEN);
		return;
	}
	crypto_hash_sha256_init(&h);
	crypto_hash_sha256_update(&h, (const unsigned char *)bound_context, sizeof(bound_context));
	crypto_hash_sha256_update(&h, action_hash, DURESS_HASH_LEN);
	for (const char *p = NULL; (p = duress_sig_next_also(sig, p)); i++) {
		crypto_hash_sha256_update(&h, (const unsigned char *)p, strlen(p) + 1);
		crypto_hash_sha256_update(&h, also_hashes[i], DURESS_HASH_LEN);
	}
	crypto_hash_sha256_final(&h, out);
}

int duress_sig_format(const struct duress_sig *sig, char *buf, size_t buflen)
{
	char salt[sodium_base64_ENCODED_LEN(DURESS_SALT_LEN, B64)];
	char hash[sodium_base64_ENCODED_LEN(DURESS_HASH_LEN, B64)];
	char tag[sodium_base64_ENCODED_LEN(DURESS_TAG_LEN, B64)];
	char also_b64[sodium_base64_ENCODED_LEN(DURESS_ALSO_MAX_BYTES, B64)] = "";
	char once[sodium_base64_ENCODED_LEN(DURESS_ONCE_ID_LEN, B64)] = "";
	int n;

	if (sig->once)
		sodium_bin2base64(once, sizeof(once), sig->once_id, sizeof(sig->once_id), B64);
	if (sig->also_len > 0)
		sodium_bin2base64(also_b64, sizeof(also_b64), (const unsigned char *)sig->also,
				  sig->also_len, B64);
	sodium_bin2base64(salt, sizeof(salt), sig->params.salt, sizeof(sig->params.salt), B64);
	sodium_bin2base64(hash, sizeof(hash), sig->content_hash, sizeof(sig->content_hash), B64);
	sodium_bin2base64(tag, sizeof(tag), sig->tag, sizeof(sig->tag), B64);
	n = snprintf(buf, buflen, DURESS_SIG_PREFIX "m=%u,t=%u,p=1$%s%s%s%s%s%s%s$%s$%s\n",
		     (unsigned)sig->params.mem_kib, (unsigned)sig->params.ops,
		     sig->once ? "once=" : "", once, sig->once ? "$" : "",
		     sig->also_len ? "also=" : "", also_b64, sig->also_len ? "$" : "", salt, hash,
		     tag);
	if (n < 0 || (size_t)n >= buflen)
		return -ENOSPC;
	return n;
}

int duress_params_check(const struct duress_params *p, const struct duress_caps *caps)
{
	uint64_t mem = (uint64_t)p->mem_kib * 1024U;

	if (mem < crypto_pwhash_MEMLIMIT_MIN || p->ops < crypto_pwhash_OPSLIMIT_MIN)
		return -EINVAL;
	if (mem > caps->max_memory || p->ops > caps->max_ops || mem > crypto_pwhash_MEMLIMIT_MAX)
		return -E2BIG;
	return 0;
}

void duress_params_new(struct duress_params *p, uint64_t mem_bytes, uint64_t ops)
{
	p->mem_kib = (uint32_t)(mem_bytes / 1024U);
	p->ops = (uint32_t)ops;
	randombytes_buf(p->salt, sizeof(p->salt));
}

bool duress_params_equal(const struct duress_params *a, const struct duress_params *b)
{
	return a->mem_kib == b->mem_kib && a->ops == b->ops &&
	       memcmp(a->salt, b->salt, sizeof(a->salt)) == 0;
}

int duress_derive_key(const char *password, size_t len, const struct duress_params *p,
		      unsigned char key[DURESS_KEY_LEN])
{
	if (crypto_pwhash(key, DURESS_KEY_LEN, password, len, p->salt, p->ops,
			  (size_t)p->mem_kib * 1024U, crypto_pwhash_ALG_ARGON2ID13) != 0) {
		sodium_memzero(key, DURESS_KEY_LEN);
		return -ENOMEM;
	}
	return 0;
}

void duress_tag(const unsigned char key[DURESS_KEY_LEN], const struct duress_sig *sig,
		const unsigned char content_hash[DURESS_HASH_LEN],
		unsigned char tag[DURESS_TAG_LEN])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, key, DURESS_KEY_LEN);
	if (sig->once) {
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)once_context,
					      sizeof(once_context));
		crypto_auth_hmacsha256_update(&st, sig->once_id, sizeof(sig->once_id));
	} else {
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)tag_context,
					      sizeof(tag_context));
	}
	crypto_auth_hmacsha256_update(&st, content_hash, DURESS_HASH_LEN);
	crypto_auth_hmacsha256_final(&st, tag);
	sodium_memzero(&st, sizeof(st));
}

bool duress_tag_matches(const unsigned char key[DURESS_KEY_LEN], const struct duress_sig *sig,
			const unsigned char content_hash[DURESS_HASH_LEN])
{
	unsigned char tag[DURESS_TAG_LEN];
	bool match;

	duress_tag(key, sig, content_hash, tag);
	match = sodium_memcmp(tag, sig->tag, sizeof(tag)) == 0;
	sodium_memzero(tag, sizeof(tag));
	return match;
}

bool duress_legacy_matches(const unsigned char content_hash[DURESS_HASH_LEN], const char *password,
			   size_t len, const unsigned char expected[DURESS_HASH_LEN])
{
	crypto_hash_sha256_state st;
	unsigned char h[DURESS_HASH_LEN];
	bool match;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, content_hash, DURESS_HASH_LEN);
	crypto_hash_sha256_update(&st, (const unsigned char *)password, len);
	crypto_hash_sha256_final(&st, h);
	match = sodium_memcmp(h, expected, sizeof(h)) == 0;
	sodium_memzero(&st, sizeof(st));
	sodium_memzero(h, sizeof(h));
	return match;
}
