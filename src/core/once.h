/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Actions signed with `duress sign --once` run at their first match only
 * (issue 26, the iteration attack).  Each one that ran leaves a record: an
 * empty file STATE/once/NAME, root's, in directories of mode 0700 that only
 * root may read.  NAME is a hash of the action's scope, the uid its
 * directory is judged for and its signature's random once id (sig.h):
 * nothing of the password, nothing the signature does not show, and no
 * user's action can name another user's record.  The record is made before
 * the action starts, with O_EXCL, so that two logins at once run it once.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "actions.h"
#include "log.h"

/* The records' directory under the state directory, which users cannot even stat. */
#define DURESS_ONCE_SUBDIR "once"
/* A record's name: 64 hexadecimal digits and the NUL. */
#define DURESS_ONCE_NAME_SIZE 65

/* The record's name of a once signature in a directory of scope judged for owner. */
void duress_once_name(enum duress_scope scope, uid_t owner, const struct duress_sig *sig,
		      char name[DURESS_ONCE_NAME_SIZE]);

/*
 * Opens state_dir's records directory, with create making what is missing
 * (mode 0700).  Both must be directories of root's that nobody else may
 * read, write or search, reached without following a symlink at the last
 * step.  Returns its descriptor, or -errno: -EPERM when one is not root's
 * alone, -ENOENT when missing (without create), -EACCES for a user.
 */
int duress_once_open(const char *state_dir, bool create);

/* Whether the record name is in the directory at fd: 1 (*st its stat), 0, or -errno. */
int duress_once_spent(int fd, const char *name, struct stat *st);

/* What `duress check` and `duress verify` say of a once signature. */
enum duress_once_state {
	DURESS_ONCE_ARMED,   /* no record: it runs at its next match */
	DURESS_ONCE_SPENT,   /* it ran: it does not run again */
	DURESS_ONCE_UNKNOWN, /* only root can read the records */
	DURESS_ONCE_BROKEN,  /* root cannot use the state directory: it will not run */
};

/*
 * The state of sig's record under state_dir, for an action in a directory of
 * scope judged for owner; ret_name its name, *when (SPENT) its stat.
 */
enum duress_once_state duress_once_state(const char *state_dir, enum duress_scope scope,
					 uid_t owner, const struct duress_sig *sig,
					 char ret_name[DURESS_ONCE_NAME_SIZE], struct stat *when);

/*
 * For each matched once action of dirs (a NULL or zeroed one is skipped),
 * whether it may run: its record is made now (with dry, that of a
 * rehearsal, none is made and none must be there).  One that may not (run
 * before, or its record cannot be made, or we are not root: a user could
 * read, forge or remove a record of their own) gets a->spent: it stays a
 * match, for the answer, and does not run.  At most once, never twice: an
 * owner who signs once would rather have no second run than a guaranteed
 * one.  Logged with debug alone: it is learnt on a match only.
 */
void duress_once_settle(struct duress_dir *const *dirs, size_t n, const char *state_dir, bool dry,
			const struct duress_log *lg);

/*
 * Takes back the records duress_once_settle() made (not with dry, which
 * made none): the runner that was to run those actions did not start, so
 * they did not run, and stay armed.
 */
void duress_once_unsettle(struct duress_dir *const *dirs, size_t n, const char *state_dir,
			  bool dry);
