/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <sys/types.h>

#include "log.h"
#include "opts.h"

#ifndef DURESS_LOGIN_DEFS
#define DURESS_LOGIN_DEFS "/etc/login.defs"
#endif

/* shadow's defaults for ordinary (human) accounts, used when login.defs says nothing. */
#define DURESS_UID_MIN_DEFAULT 1000U
#define DURESS_UID_MAX_DEFAULT 60000U

struct duress_uid_range {
	uid_t min;
	uid_t max;
};

/*
 * UID_MIN and UID_MAX from a login.defs(5) file.  A missing file, a missing
 * key or a value that is not a plain decimal number keeps the default;
 * min > max counts as neither being set.  Returns 0, or -errno when the
 * file is there but cannot be read (*ret then holds the defaults, and the
 * caller refuses: an error is never a wider range).
 */
int duress_uid_range_read(const char *path, struct duress_uid_range *ret);

/* Membership by primary group or supplementary groups; any failure is "no". */
bool duress_in_group(const struct passwd *pw, const char *group);

/* Which directories had a matching action. */
struct duress_match {
	bool user;
	bool global;
};

/*
 * Whether a duress match may log pw in on service, or must answer as a wrong
 * password would (the actions run either way).  A duress password never
 * gives more than the account already has: never an elevation service
 * (sudo, pkexec...), never root, never a locked account, and a global
 * password only ordinary accounts (UID_MIN..UID_MAX, global_group=), unless
 * allow_root lifts the first two.
 */
bool duress_login_allowed(const struct duress_opts *o, const struct passwd *pw, const char *service,
			  struct duress_match m, const struct duress_log *lg);

/*
 * The same with UID_MIN and UID_MAX read from login_defs instead of
 * DURESS_LOGIN_DEFS: the tests' own file, so that they reach the exact
 * boundaries whatever the machine's says.  Only code linked with the core
 * can name another file; no module option does.
 */
bool duress_login_allowed_defs(const struct duress_opts *o, const struct passwd *pw,
			       const char *service, struct duress_match m, const char *login_defs,
			       const struct duress_log *lg);

/* Why a duress match does not log in (duress_login_allowed() is false), for `duress test`. */
enum duress_deny {
	DURESS_DENY_NONE,
	DURESS_DENY_OPTION,       /* deny */
	DURESS_DENY_ELEVATION,    /* sudo, pkexec... without allow_root */
	DURESS_DENY_ROOT,         /* uid 0 without allow_root */
	DURESS_DENY_LOCKED,       /* passwd -l */
	DURESS_DENY_NOT_ORDINARY, /* a global password, uid outside UID_MIN..UID_MAX */
	DURESS_DENY_GLOBAL_GROUP, /* a global password, not in global_group= */
};

/* duress_login_allowed() and its _defs twin, saying why not. */
enum duress_deny duress_login_denied(const struct duress_opts *o, const struct passwd *pw,
				     const char *service, struct duress_match m,
				     const struct duress_log *lg);
enum duress_deny duress_login_denied_defs(const struct duress_opts *o, const struct passwd *pw,
					  const char *service, struct duress_match m,
					  const char *login_defs, const struct duress_log *lg);

/* The reason in plain words. */
const char *duress_deny_words(enum duress_deny d);
