/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/realpw.h"

#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#if HAVE_CRYPT
#include <crypt.h>
#endif
#if HAVE_PWQUALITY
#include <pwquality.h>
#endif

#include "core/auth.h"

#if HAVE_CRYPT
/* The CLI is single-threaded, so getspnam() will do (and nss_wrapper wraps it). */
static int matches_account(const char *user, const struct duress_password *pw)
{
	const struct spwd *found;
	struct crypt_data *data;
	const char *hash;
	int r = -1;

	if (!user || !(found = getspnam(user)))
		return -1;
	/* A locked or password-less account has no password to collide with. */
	if (!found->sp_pwdp[0] || found->sp_pwdp[0] == '!' || found->sp_pwdp[0] == '*')
		return 0;
	data = calloc(1, sizeof(*data));
	if (!data)
		return -1;
	hash = crypt_r(pw->text, found->sp_pwdp, data);
	if (hash && hash[0] != '*') {
		size_t len = strlen(hash);

		r = len == strlen(found->sp_pwdp) &&
		    sodium_memcmp(hash, found->sp_pwdp, len) == 0;
	}
	sodium_memzero(data, sizeof(*data));
	free(data);
	return r;
}

int duress_is_real_password(uid_t owner, const struct duress_password *pw)
{
	struct duress_passwd *p = NULL;
	int r = -1;

	if (duress_getpw(NULL, owner, &p) == 0) {
		r = matches_account(p->pw.pw_name, pw);
		free(p);
	}
	/* root signing for the whole machine: the admin's own password counts too. */
	if (r != 1 && owner == 0 && getenv("SUDO_USER")) {
		int s = matches_account(getenv("SUDO_USER"), pw);

		r = s > r ? s : r;
	}
	return r;
}
#else
int duress_is_real_password(uid_t owner, const struct duress_password *pw)
{
	(void)owner;
	(void)pw;
	return -1;
}
#endif

#if HAVE_PWQUALITY
void duress_warn_weak_password(uid_t owner, const struct duress_password *pw)
{
	pwquality_settings_t *pwq = pwquality_default_settings();
	struct duress_passwd *p = NULL;
	void *aux = NULL;
	char msg[PWQ_MAX_ERROR_MESSAGE_LEN];
	int r;

	if (!pwq)
		return;
	(void)pwquality_read_config(pwq, NULL, NULL);
	(void)duress_getpw(NULL, owner, &p);
	r = pwquality_check(pwq, pw->text, NULL, p ? p->pw.pw_name : NULL, &aux);
	if (r < 0) {
		const char *why = pwquality_strerror(msg, sizeof(msg), r, aux);

		/* No cracklib dictionary installed is not the password's fault. */
		if (r != PWQ_ERROR_CRACKLIB_CHECK || !strstr(why, "error loading dictionary"))
			fprintf(stderr, "duress: warning: weak password: %s\n", why);
	}
	free(p);
	pwquality_free_settings(pwq);
}
#else
void duress_warn_weak_password(uid_t owner, const struct duress_password *pw)
{
	(void)owner;
	(void)pw;
}
#endif
