/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The work a login costs: the scopes' Argon2id keys, and pam_unix's hash when it was skipped. */
#include "kdf.h"
#include "account.h"

#include <errno.h>
#include <shadow.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>
#if HAVE_CRYPT
#include <crypt.h>
#endif

/* Whether p costs at least libsodium's INTERACTIVE, the cost `duress sign` uses by default. */
static bool default_cost(const struct duress_params *p)
{
	return (uint64_t)p->mem_kib * 1024U >= crypto_pwhash_MEMLIMIT_INTERACTIVE &&
	       p->ops >= crypto_pwhash_OPSLIMIT_INTERACTIVE;
}

/* Argon2id at the default cost on the typed password; the key is wiped unused. */
static int dummy_derivation(const char *password, size_t len)
{
	struct duress_params p;
	unsigned char *key = sodium_malloc(DURESS_KEY_LEN);
	int r;

	if (!key)
		return -ENOMEM;
	duress_params_new(&p, crypto_pwhash_MEMLIMIT_INTERACTIVE,
			  crypto_pwhash_OPSLIMIT_INTERACTIVE);
	r = duress_derive_key(password, len, &p, key);
	sodium_free(key); /* wipes it */
	return r;
}

static int derive_scope(struct duress_kdf_scope *s, const char *password, size_t len)
{
	bool paid = false;

	if (s->n_params > 0) {
		s->keys = sodium_allocarray(s->n_params, DURESS_KEY_LEN);
		if (!s->keys)
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_params; i++) {
		int r = duress_derive_key(password, len, &s->params[i], s->keys[i]);

		if (r < 0)
			return r;
		paid = paid || default_cost(&s->params[i]);
	}
	return paid || !s->stand_in ? 0 : dummy_derivation(password, len);
}

bool duress_kdf_has_work(const struct duress_kdf_scope *scopes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (scopes[i].n_params > 0 || scopes[i].stand_in)
			return true;
	return false;
}

int duress_kdf_derive(struct duress_kdf_scope *scopes, size_t n, const char *password, size_t len)
{
	int r = 0;

	for (size_t i = 0; i < n; i++)
		scopes[i].keys = NULL;
	/* One after the other: one derivation's memory at a time, whatever the scopes hold. */
	for (size_t i = 0; i < n && r == 0; i++)
		r = derive_scope(&scopes[i], password, len);
	return r;
}

void duress_kdf_free(struct duress_kdf_scope *scopes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sodium_free(scopes[i].keys); /* wipes them */
		scopes[i].keys = NULL;
	}
}

#if HAVE_CRYPT
/* pam_unix's verify_pwd_hash() hashes nothing for a locked, disabled or empty hash. */
static bool hashable(const char *hash)
{
	return hash && hash[0] != '!' && hash[0] != '*' && hash[0] != '\0';
}

/*
 * What pam_unix's verify_pwd_hash() spends: its MD5 and bigcrypt code hashes
 * once; for every other hash it calls x_strdup(crypt_r(...)), and x_strdup()
 * is a macro ((s) ? strdup(s) : NULL) that evaluates crypt_r() a second time
 * when the first returned anything (Linux-PAM 1.5.2 to at least 1.7).
 */
static void unix_crypt(const char *password, const char *hash, struct crypt_data *cd)
{
	const char *out = crypt_r(password, hash, cd);

	if (out && hash[0] == '$' && strncmp(hash, "$1$", 3) != 0)
		(void)crypt_r(password, hash, cd);
}

struct shadow_crypt {
	const char *user;
	const char *password;
	struct crypt_data *cd;
};

/* unix_crypt() against the account's shadow hash, if there is one to hash. */
static int crypt_against_shadow(void *ctx, char *buf, size_t size)
{
	struct shadow_crypt *q = ctx;
	struct spwd sp, *found = NULL;
	int r = getspnam_r(q->user, &sp, buf, size, &found);

	if (r == 0 && found && hashable(found->sp_pwdp))
		unix_crypt(q->password, found->sp_pwdp, q->cd);
	return r;
}

/* pam_unix's is_pwd_shadowed(): the hash is in the shadow file. */
static bool shadowed(const struct passwd *pw)
{
	return strcmp(pw->pw_passwd, "x") == 0 || (strncmp(pw->pw_passwd, "##", 2) == 0 &&
						   strcmp(pw->pw_passwd + 2, pw->pw_name) == 0);
}

void duress_mirror_unix_hash(const struct passwd *pw, const char *password)
{
	struct crypt_data *cd;
	bool in_shadow;

	if (!pw->pw_passwd)
		return;
	in_shadow = shadowed(pw);
	/* Only root reads the shadow file; anyone else's pam_unix asks unix_chkpwd. */
	if (in_shadow ? geteuid() != 0 : !hashable(pw->pw_passwd))
		return;
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return;
	if (in_shadow) {
		struct shadow_crypt q = { .user = pw->pw_name, .password = password, .cd = cd };

		(void)duress_with_scratch(crypt_against_shadow, &q);
	} else {
		unix_crypt(password, pw->pw_passwd, cd);
	}
	sodium_memzero(cd, sizeof(*cd));
	free(cd);
}
#else
void duress_mirror_unix_hash(const struct passwd *pw, const char *password)
{
	(void)pw;
	(void)password;
}
#endif
