/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pam_duress: the PAM glue.  Everything that decides anything lives in
 * src/core, shared with the duress CLI and the tests.
 */
#include <stdbool.h>
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

/*
 * The line's options; false when a misspelled or malformed one (servces=sshd)
 * makes the line inert: the admin meant something this line does not do, so
 * it does nothing (no derivation, no action, no refusal) rather than act
 * without the restriction meant.  The caller answers PAM_IGNORE.
 */
static bool line_active(struct duress_opts *o, int argc, const char **argv,
			const struct duress_log *lg)
{
	duress_opts_default(o);
	return duress_opts_parse(o, argc, argv, lg) == 0;
}

/* The user the application named, for req->user; PAM_SUCCESS or what to answer. */
static int get_user(pam_handle_t *pamh, struct duress_request *req, const struct duress_log *lg)
{
	int r;

	if (sodium_init() < 0) {
		duress_log(lg, LOG_ERR, "libsodium cannot be initialised");
		return PAM_AUTHINFO_UNAVAIL;
	}
	r = pam_get_user(pamh, &req->user, NULL);
	if (r != PAM_SUCCESS || !req->user || !*req->user)
		return r == PAM_SUCCESS ? PAM_USER_UNKNOWN : r;
	return PAM_SUCCESS;
}

/*
 * PAM_AUTHTOK (in the password stack, the new password) into req with the
 * other items: PAM_SUCCESS, PAM_IGNORE when it is empty, or libpam's error.
 */
static int get_password(pam_handle_t *pamh, struct duress_request *req)
{
	const char *password = NULL;
	int r = pam_get_authtok(pamh, PAM_AUTHTOK, &password, NULL);

	if (r != PAM_SUCCESS)
		return r;
	if (!password || !*password)
		return PAM_IGNORE;
	req->password = password;
	req->password_len = strlen(password);
	req->items = (struct duress_pam_items){
		.user = req->user,
		.service = item(pamh, PAM_SERVICE),
		.rhost = item(pamh, PAM_RHOST),
		.ruser = item(pamh, PAM_RUSER),
		.tty = item(pamh, PAM_TTY),
	};
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct duress_log lg = duress_log_for(pamh, argc, argv);
	struct duress_opts o;
	struct duress_request req = { 0 };
	const char *service = item(pamh, PAM_SERVICE);
	int r;

	(void)flags;
	/* PAM_IGNORE for an inert line: pam_unix alone decides. */
	if (!line_active(&o, argc, argv, &lg))
		return PAM_IGNORE;
	if (!duress_service_allowed(&o, service)) {
		duress_debug(&lg, "service %s is not in services=, ignoring",
			     service ? service : "?");
		return PAM_IGNORE;
	}
	r = get_user(pamh, &req, &lg);
	if (r != PAM_SUCCESS)
		return r;
	/*
	 * No token yet: no module before this one read the password, so pam_unix
	 * comes after it (the before-pam_unix placement) and a match skips its hash.
	 */
	req.unix_follows = item(pamh, PAM_AUTHTOK) == NULL;
	/* Reuses the token pam_unix read; prompts only if there is none. */
	r = get_password(pamh, &req);
	if (r != PAM_SUCCESS)
		return r;
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

/*
 * The password stack: a new password that is a duress password of the
 * account, or a global one, is refused.  Set as the real password it would
 * never fire again after pam_unix, and before pam_unix it would make every
 * real login a duress login (a wipe included).  Checked as a login would
 * check it (services= aside: the password works wherever a duress one
 * does), starting nothing.  The message is the one pam_pwquality gives for
 * a weak password: nothing on the screen names the module or says that
 * the password means anything.
 */
PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	struct duress_log lg = duress_log_for(pamh, argc, argv);
	struct duress_opts o;
	struct duress_request req = { 0 };
	int r;

	/* The new password exists only in the update pass. */
	if (!(flags & PAM_UPDATE_AUTHTOK) || !line_active(&o, argc, argv, &lg))
		return PAM_IGNORE;
	r = get_user(pamh, &req, &lg);
	if (r != PAM_SUCCESS)
		return r == PAM_USER_UNKNOWN ? PAM_IGNORE : r;
	/* Reuses the token a module before this one read; asks twice if there is none. */
	r = get_password(pamh, &req);
	if (r != PAM_SUCCESS)
		return r;
	r = duress_password_taken(&o, &req, &lg);
	if (r == 0)
		return PAM_SUCCESS;
	/* Taken, or not known not to be (an error): pam_unix never sees it. */
	pam_set_item(pamh, PAM_AUTHTOK, NULL);
	if (r > 0)
		pam_error(pamh, "BAD PASSWORD: %s", "The password fails the dictionary check");
	return PAM_AUTHTOK_ERR;
}
