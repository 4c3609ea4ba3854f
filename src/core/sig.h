/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opts.h"

/*
 * A signature is one line of text:
 *
 *   $duress$v=1$m=<KiB>,t=<passes>,p=1[$once=<id>][$also=<paths>]$<salt>$<content-hash>$<tag>
 *
 * fields in unpadded standard base64 (as PHC strings).  key = Argon2id(password,
 * salt, m, t); tag = HMAC-SHA256(key, context || content-hash), or with once,
 * HMAC-SHA256(key, once-context || id || content-hash): the flag and its id
 * (random, naming the action's record: once.h) cannot be added, removed or
 * changed without the password, and a v1 line without them is unchanged.  The content
 * hash is the SHA-256 of the action, or, when companion files are bound
 * (`also`: their absolute paths, each NUL-terminated), the SHA-256 of a
 * context string, the action's SHA-256, and each companion's path and
 * SHA-256.  It lets `duress check` tell "changed since signing" without the
 * password; the tag binds the password to that content.
 */
#define DURESS_SIG_PREFIX "$duress$v=1$"
#define DURESS_SALT_LEN 16
#define DURESS_HASH_LEN 32
#define DURESS_KEY_LEN 32
#define DURESS_TAG_LEN 32
/* A once signature's id: random, names its record (once.h). */
#define DURESS_ONCE_ID_LEN 16
/* A signature file larger than this is not a signature. */
#define DURESS_SIG_MAX 2048
/* Companion files: at most this many, their paths at most this many bytes together. */
#define DURESS_ALSO_MAX_FILES 8
#define DURESS_ALSO_MAX_BYTES 1024
#define DURESS_LEGACY_SUFFIX ".sha256"
#define DURESS_SIG_SUFFIX ".sig"

struct duress_params {
	uint32_t mem_kib;
	uint32_t ops;
	unsigned char salt[DURESS_SALT_LEN];
};

struct duress_sig {
	struct duress_params params;
	char also[DURESS_ALSO_MAX_BYTES]; /* NUL-terminated absolute paths, back to back */
	size_t also_len;                  /* 0: no companion files */
	bool once;                        /* runs at its first match only (once.h) */
	unsigned char once_id[DURESS_ONCE_ID_LEN];
	unsigned char content_hash[DURESS_HASH_LEN];
	unsigned char tag[DURESS_TAG_LEN];
};

/* 0, or -EINVAL for anything that is not exactly one well-formed v1 line. */
int duress_sig_parse(const char *text, size_t len, struct duress_sig *ret);

/* Writes the line with its trailing newline; returns its length or -ENOSPC. */
int duress_sig_format(const struct duress_sig *sig, char *buf, size_t buflen);

/*
 * Iterates over the companion paths: pass NULL first, then the previous
 * result; NULL at the end.
 */
const char *duress_sig_next_also(const struct duress_sig *sig, const char *prev);

/*
 * Adds a companion path (absolute, at most DURESS_ALSO_MAX_FILES in all).
 * Returns 0, -EINVAL or -E2BIG.
 */
int duress_sig_add_also(struct duress_sig *sig, const char *path);

/*
 * The content hash a signature records: action_hash itself without companion
 * files, otherwise the hash over it and each companion's path and hash (in
 * the order of sig->also).
 */
void duress_bound_hash(const struct duress_sig *sig,
		       const unsigned char action_hash[DURESS_HASH_LEN],
		       const unsigned char (*also_hashes)[DURESS_HASH_LEN],
		       unsigned char out[DURESS_HASH_LEN]);

/* 0; -E2BIG above the caps; -EINVAL below libsodium's minimums. */
int duress_params_check(const struct duress_params *p, const struct duress_caps *caps);

/* libsodium's INTERACTIVE cost and a fresh random salt. */
void duress_params_new(struct duress_params *p, uint64_t mem_bytes, uint64_t ops);

bool duress_params_equal(const struct duress_params *a, const struct duress_params *b);

/* 0, and the caller wipes key after use; or -ENOMEM, with key wiped already. */
int duress_derive_key(const char *password, size_t len, const struct duress_params *p,
		      unsigned char key[DURESS_KEY_LEN]);

/* The tag of content_hash under key, with sig's once flag and id (the format above). */
void duress_tag(const unsigned char key[DURESS_KEY_LEN], const struct duress_sig *sig,
		const unsigned char content_hash[DURESS_HASH_LEN],
		unsigned char tag[DURESS_TAG_LEN]);

/* Whether sig->tag is the tag of content_hash under key; constant time. */
bool duress_tag_matches(const unsigned char key[DURESS_KEY_LEN], const struct duress_sig *sig,
			const unsigned char content_hash[DURESS_HASH_LEN]);

/*
 * nuvious/pam-duress NAME.sha256: SHA-256(SHA-256(content) || password),
 * compared in constant time.
 */
bool duress_legacy_matches(const unsigned char content_hash[DURESS_HASH_LEN], const char *password,
			   size_t len, const unsigned char expected[DURESS_HASH_LEN]);
