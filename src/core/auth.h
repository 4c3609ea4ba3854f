/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "log.h"
#include "opts.h"
#include "policy.h"
#include "runner.h"

enum duress_outcome {
	DURESS_NO_MATCH,     /* PAM_IGNORE: as if the module were not there */
	DURESS_MATCH,        /* actions started; authenticate */
	DURESS_MATCH_DENIED, /* actions started; fail as a wrong password would */
	DURESS_UNKNOWN_USER,
	DURESS_ERROR, /* internal error: never authenticates */
};

struct duress_dir;

/* What one directory's check found, for `duress test`. */
struct duress_scope_report {
	const char *path;        /* the directory, or NULL when none is configured */
	const char *not_checked; /* why it was not checked at all, or NULL */
	bool needs_root;         /* ...because whoever asked is not root */
	int load;                /* duress_dir_load()'s result when checked (duress_dir_problem) */
	const struct duress_dir *dir; /* loaded and verified (actions[i].matched), or NULL */
};

/* What the check found, handed over before any action starts. */
struct duress_trace_report {
	struct duress_scope_report user, global;
	enum duress_outcome outcome; /* DURESS_NO_MATCH, DURESS_MATCH or DURESS_MATCH_DENIED */
	enum duress_deny deny;       /* why DURESS_MATCH_DENIED */
};

/*
 * Only `duress test` calls the core with one: the module never does, and
 * takes nothing from its caller that could make one (a coercer who could
 * make a real login rehearse would disarm every action).  With a trace the
 * core does not wait for the actions (wait= is ignored): the caller reads
 * report_fd.
 */
struct duress_trace {
	bool rehearse; /* DURESS_REHEARSE=1 in the actions' environment */
	int output_fd; /* the actions' stdout and stderr (-1: /dev/null) */
	int report_fd; /* write end of a pipe: one record per job as it ends (manifest.h) */
	/* Called once the directories are checked, before any action starts (may be NULL). */
	void (*checked)(const struct duress_trace_report *r, void *data);
	void *data;
};

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
	const struct duress_trace *trace; /* NULL, always, from the module */
};

/*
 * Checks the password against the user's and the global actions, starts the
 * matching ones, and says what the module must answer.
 */
enum duress_outcome duress_authenticate(const struct duress_opts *o,
					const struct duress_request *req,
					const struct duress_log *lg);

/*
 * Whether the password matches an action the user's or the global
 * directory holds, as a login would check it (the same directories, rights
 * and caps, derivation slots included), starting nothing: for the password
 * stack, which must not let a real password become a duress one.  1 taken,
 * 0 not (or no such account), -errno (-ETIMEDOUT: no derivation slot).
 */
int duress_password_taken(const struct duress_opts *o, const struct duress_request *req,
			  const struct duress_log *lg);
