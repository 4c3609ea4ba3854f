/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "identity.h"
#include "skip.h"

enum duress_scope {
	DURESS_SCOPE_USER,   /* ~/.duress: owned by the user or root, run as the user */
	DURESS_SCOPE_GLOBAL, /* /etc/duress.d: owned by root, run as root */
};

/* What a file is to the module: each kind has its row of trust rules. */
enum duress_file_kind {
	DURESS_FILE_DIR,       /* an action directory */
	DURESS_FILE_ACTION,    /* NAME */
	DURESS_FILE_SIG,       /* NAME.sig or NAME.sha256 */
	DURESS_FILE_COMPANION, /* a file bound with --also, by absolute path */
	DURESS_FILE_INPUT,     /* what the CLI reads for its caller: a regular file, any owner */
};

/* Whose files a directory trusts, how large they may be, whose rights open them. */
struct duress_trust {
	enum duress_scope scope;
	uid_t owner;                      /* the user whose directory it is; 0 for global */
	uint64_t max_size;                /* action, companion, input; a signature has its own */
	const struct duress_identity *as; /* NULL: the process's own rights */
};

/* What duress_open_file() found. */
struct duress_file {
	int fd;                /* open for reading when asked and judged fit, else -1 */
	struct stat st;        /* what was judged (when error is 0) */
	int error;             /* errno of the open that failed (ENOENT, EACCES...), or 0 */
	enum duress_skip skip; /* DURESS_SKIP_NONE: fit */
	struct duress_saved_identity held; /* while fd is open: the rights t->as replaced */
};

/*
 * The trust rules but one: the verdict on a file of kind `kind` whose
 * fstat() is st.  Type (directory or regular; a symlink has its own reason),
 * owner (root, or for the per-user scope also the user), not writable by
 * group or others, the action's owner-execute bit, the size cap.  The one
 * that needs the descriptor is duress_open_file()'s: no kind but
 * DURESS_FILE_INPUT may be on a pseudo-filesystem (procfs, sysfs, debugfs,
 * cgroup, bpf, configfs...: by fstatfs()'s f_type), judged before the others.
 */
enum duress_skip duress_judge_file(enum duress_file_kind kind, const struct stat *st,
				   const struct duress_trust *t);

/*
 * Opens path (relative to dir_fd, or absolute) with t->as's rights:
 * O_PATH|O_NOFOLLOW first, which opens nothing for reading (no FIFO writer is
 * woken, no device is touched), fstat(), fstatfs(), judge; and only for a fit
 * file, with for_reading, the same inode again for reading (a directory
 * through ".", anything else through /proc/self/fd: without /proc a file
 * counts as unreadable), checked to be the same inode and judged again.
 *
 * A file returned open (ret->fd >= 0) comes with t->as's rights still held
 * on this thread: it is read with them, since a read may be judged when it
 * happens, not at the open (FUSE and network filesystems see who reads; a
 * pseudo-filesystem missing from the list makes up content for the reader).
 * Read it, then duress_file_close() (or, to keep a directory's descriptor,
 * duress_file_release()) before opening anything else or doing other work:
 * rights cannot be taken twice, and nothing but the reading may run with them.
 *
 * Returns 0 (ret says what was found) or -errno if the rights could not be
 * taken: an internal error, to fail closed on.  Rights that cannot be given
 * back end the process (duress_identity_leave()).
 */
int duress_open_file(int dir_fd, const char *path, enum duress_file_kind kind,
		     const struct duress_trust *t, bool for_reading, struct duress_file *ret);

/*
 * Closes f->fd and gives back the rights it was opened with (or ends the
 * process: duress_identity_leave()).  Fine on any f that duress_open_file()
 * filled, whatever it returned, and on one closed already.
 */
void duress_file_close(struct duress_file *f);

/* The same, but f->fd stays open (the caller owns it now). */
void duress_file_release(struct duress_file *f);
