/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/quality.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if HAVE_PWQUALITY
#include <pwquality.h>
#endif

#include "core/account.h"

#if HAVE_PWQUALITY
/*
 * Standard error sent to /dev/null; returns a copy of the old one to give
 * back (-1: left as it was).  cracklib says a missing dictionary itself,
 * with perror(): "/var/cache/cracklib/cracklib_dict.pwd: No such file or
 * directory", a line that names neither this command nor what it means.
 */
static int quiet_stderr(void)
{
	int saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	bool quiet = saved >= 0 && null >= 0 && dup2(null, STDERR_FILENO) >= 0;

	if (null >= 0)
		close(null);
	if (!quiet && saved >= 0) {
		close(saved);
		saved = -1;
	}
	return saved;
}

static void restore_stderr(int saved)
{
	if (saved < 0)
		return;
	fflush(stderr);
	(void)dup2(saved, STDERR_FILENO);
	close(saved);
}

/* The check's result, said in one line: a weakness, or that no dictionary was there to check. */
static void say_quality(int r, void *aux)
{
	char msg[PWQ_MAX_ERROR_MESSAGE_LEN];
	const char *why;

	if (r >= 0)
		return;
	why = pwquality_strerror(msg, sizeof(msg), r, aux);
	if (r == PWQ_ERROR_CRACKLIB_CHECK && strstr(why, "error loading dictionary"))
		fputs("duress: note: the password was not checked against a dictionary of common "
		      "passwords: cracklib has none installed (Debian: sudo apt install "
		      "cracklib-runtime; Fedora: cracklib-dicts)\n",
		      stderr);
	else
		fprintf(stderr, "duress: warning: weak password: %s\n", why);
}

void duress_warn_weak_password(uid_t owner, const struct duress_password *pw)
{
	pwquality_settings_t *pwq = pwquality_default_settings();
	struct duress_account *p = NULL;
	void *aux = NULL;
	int saved, r;

	if (!pwq)
		return;
	(void)pwquality_read_config(pwq, NULL, NULL);
	(void)duress_getpw(NULL, owner, &p);
	saved = quiet_stderr();
	r = pwquality_check(pwq, pw->text, NULL, p ? p->pw.pw_name : NULL, &aux);
	restore_stderr(saved);
	say_quality(r, aux);
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
