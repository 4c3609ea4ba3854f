/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/quality.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_PWQUALITY
#include <pwquality.h>
#endif

#include "core/account.h"

#if HAVE_PWQUALITY
void duress_warn_weak_password(uid_t owner, const struct duress_password *pw)
{
	pwquality_settings_t *pwq = pwquality_default_settings();
	struct duress_account *p = NULL;
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
