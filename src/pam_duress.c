/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pam_duress: the PAM glue.  Everything that decides anything lives in
 * src/core, shared with the duress CLI and the tests.
 */
#include <string.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <sodium.h>

#include "core/auth.h"
#include "core/log.h"
#include "core/opts.h"

static const char *item(pam_handle_t *pamh, int type)
{
	const void *v = NULL;

	if (pam_get_item(pamh, type, &v) != PAM_SUCCESS)
		return NULL;
	return v;
}

static int to_pam(enum duress_outcome out)
{
	switch (out) {
	case DURESS_NO_MATCH:
		return PAM_IGNORE;
	case DURESS_MATCH:
		return PAM_SUCCESS;
	case DURESS_MATCH_DENIED:
		return PAM_AUTH_ERR;
	case DURESS_UNKNOWN_USER:
		return PAM_USER_UNKNOWN;
	case DURESS_ERROR:
	default:
		return PAM_AUTHINFO_UNAVAIL;
	}
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct duress_log lg = duress_log_for(pamh, argc, argv);
	struct duress_opts o;
	struct duress_request req = { 0 };
	const char *service = item(pamh, PAM_SERVICE);
	const char *password = NULL;
	int r;

	(void)flags;
	duress_opts_default(&o);
	/*
	 * A misspelled or malformed option (servces=sshd) makes the line inert:
	 * the admin meant something this line does not do, so no duress password
	 * works through it (no derivation, no action) rather than one running
	 * without the restriction meant.  PAM_IGNORE: pam_unix alone decides.
	 */
	if (duress_opts_parse(&o, argc, argv, &lg) > 0)
		return PAM_IGNORE;
	if (!duress_service_allowed(&o, service)) {
		duress_debug(&lg, "service %s is not in services=, ignoring",
			     service ? service : "?");
		return PAM_IGNORE;
	}
	if (sodium_init() < 0) {
		duress_log(&lg, LOG_ERR, "libsodium cannot be initialised");
		return PAM_AUTHINFO_UNAVAIL;
	}
	r = pam_get_user(pamh, &req.user, NULL);
	if (r != PAM_SUCCESS || !req.user || !*req.user)
		return r == PAM_SUCCESS ? PAM_USER_UNKNOWN : r;
	/*
	 * No token yet: no module before this one read the password, so pam_unix
	 * comes after it (the before-pam_unix placement) and a match skips its hash.
	 */
	req.unix_follows = item(pamh, PAM_AUTHTOK) == NULL;
	/* Reuses the token pam_unix read; prompts only if there is none. */
	r = pam_get_authtok(pamh, PAM_AUTHTOK, &password, NULL);
	if (r != PAM_SUCCESS)
		return r;
	if (!password || !*password)
		return PAM_IGNORE;
	req.password = password;
	req.password_len = strlen(password);
	req.items = (struct duress_pam_items){
		.user = req.user,
		.service = service,
		.rhost = item(pamh, PAM_RHOST),
		.ruser = item(pamh, PAM_RUSER),
		.tty = item(pamh, PAM_TTY),
	};
	return to_pam(duress_authenticate(&o, &req, &lg));
}

/*
 * Nothing to establish.  PAM_IGNORE rather than PAM_SUCCESS, so that a
 * "success=done" placement never cuts short the setcred of later modules.
 */
PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh;
	(void)flags;
	(void)argc;
	(void)argv;
	return PAM_IGNORE;
}
