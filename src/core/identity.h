/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "log.h"

/*
 * Whose filesystem rights a file is opened with.  The module runs as root,
 * but a user's directory, actions, signatures and companion files must be
 * opened and read with that user's rights: root must never open or read what
 * only root may because a user named it.  The switch is of the calling
 * thread's fsuid, fsgid and groups, and it empties the thread's effective
 * capabilities: the fsuid alone leaves CAP_SYS_PTRACE and the like in force,
 * and /proc judges a read by them, when it happens.  Held for one file at a
 * time, from its open to its close (safe_open.h).
 */
struct duress_identity {
	bool switched; /* false: open with the process's own rights */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	const struct duress_log *lg; /* where the line goes if the rights cannot be given back */
};

/*
 * The identity that opens pw's files: pw's own when the process is root and
 * pw is not (with pw's groups), else the process's (nothing to switch).
 * Returns 0 or -errno.  duress_identity_free() accepts a zeroed identity.
 */
int duress_identity_init(struct duress_identity *id, const struct passwd *pw,
			 const struct duress_log *lg);
void duress_identity_free(struct duress_identity *id);

/* What duress_identity_enter() replaced. */
struct duress_saved_identity {
	bool switched;
	uid_t fsuid;
	gid_t fsgid;
	gid_t *groups; /* n_groups saved ones, then as many for reading them back */
	int n_groups;
	const struct duress_log *lg;
	uint32_t effective[2]; /* the thread's effective capabilities (capget's two words) */
};

/*
 * Takes id's rights on this thread (id NULL or not switched: nothing to do),
 * each change checked, and with them no effective capability.  Other threads
 * keep theirs.  Not nested: with rights taken, the next enter fails.  Returns
 * 0; -ENOMEM; or -ENOTRECOVERABLE if a change did not take (the old rights
 * are put back as duress_identity_leave() does).  Either is an internal
 * error: the caller fails closed.
 */
int duress_identity_enter(const struct duress_identity *id, struct duress_saved_identity *saved);

/*
 * Gives back the saved rights and exactly the saved effective capabilities:
 * every part that differs is changed back, each whatever the others did,
 * twice if need be, and the result read back.  If the thread's rights
 * still differ, it logs a line (LOG_CRIT) and ends the process with
 * _exit(EXIT_FAILURE): it never returns to the caller in a state it did not
 * have.  A zeroed saved identity has nothing to give back.
 */
void duress_identity_leave(struct duress_saved_identity *saved);
