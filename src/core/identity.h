/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Whose filesystem rights a file is opened with.  The module runs as root,
 * but a user's directory, actions, signatures and companion files must be
 * opened with that user's rights: root must never open what only root may
 * read because a user named it.  The switch is of the calling thread's
 * fsuid, fsgid and groups only, for one open at a time.
 */
struct duress_identity {
	bool switched; /* false: open with the process's own rights */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
};

/*
 * The identity that opens pw's files: pw's own when the process is root and
 * pw is not (with pw's groups), else the process's (nothing to switch).
 * Returns 0 or -errno.  duress_identity_free() accepts a zeroed identity.
 */
int duress_identity_init(struct duress_identity *id, const struct passwd *pw);
void duress_identity_free(struct duress_identity *id);

/* What duress_identity_enter() replaced. */
struct duress_saved_identity {
	bool switched;
	uid_t fsuid;
	gid_t fsgid;
	gid_t *groups;
	int n_groups;
};

/*
 * Takes id's rights on this thread (id NULL or not switched: nothing to do),
 * each change checked.  Returns 0; -ENOMEM; or -ENOTRECOVERABLE if a change
 * did not take (the old rights are put back as far as they can be).  Either
 * is an internal error: the caller fails closed.
 */
int duress_identity_enter(const struct duress_identity *id, struct duress_saved_identity *saved);

/*
 * Gives back the saved rights, fsuid first so that the filesystem
 * capabilities return.  Returns 0, or -ENOTRECOVERABLE if a change did not
 * take: the caller must fail closed.
 */
int duress_identity_leave(struct duress_saved_identity *saved);
