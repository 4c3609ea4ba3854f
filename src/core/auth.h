/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "log.h"
#include "opts.h"
#include "runner.h"

struct duress_request {
	const char *user;
	const char *password;
	size_t password_len;
	struct duress_pam_items items;
	/*
	 * pam_unix comes after the module and a match skips it (the
	 * before-pam_unix placement): a match then also pays for its hash.
	 */
	bool unix_follows;
};

enum duress_outcome {
	DURESS_NO_MATCH,     /* PAM_IGNORE: as if the module were not there */
	DURESS_MATCH,        /* actions started; authenticate */
	DURESS_MATCH_DENIED, /* actions started; fail as a wrong password would */
	DURESS_UNKNOWN_USER,
	DURESS_ERROR, /* internal error: never authenticates */
};

/*
 * Checks the password against the user's and the global actions, starts the
 * matching ones, and says what the module must answer.
 */
enum duress_outcome duress_authenticate(const struct duress_opts *o,
					const struct duress_request *req,
					const struct duress_log *lg);
