/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "sig.h"

/*
 * The trust rules, one row per kind.  duress_judge_file() applies them in
 * this order: symlink, type, owner, group/other-writable, owner-execute bit,
 * size; each row says which reason a failure reports.
 */
static const struct rules {
	mode_t type;         /* S_IFDIR or S_IFREG */
	bool trusted_owner;  /* owner and group/other-write rules apply */
	bool owner_executes; /* S_IXUSR is required */
	uint64_t cap;        /* size cap; 0: the trust's max_size */
	enum duress_skip symlink, wrong_type, owner, writable, too_large;
	enum duress_skip unreadable; /* it cannot be opened (or reopened for reading) */
} rules[] = {
	[DURESS_FILE_DIR] = {
		.type = S_IFDIR, .trusted_owner = true, .cap = UINT64_MAX,
		.symlink = DURESS_SKIP_NOT_REGULAR, .wrong_type = DURESS_SKIP_NOT_REGULAR,
		.owner = DURESS_SKIP_OWNER, .writable = DURESS_SKIP_WRITABLE,
		.unreadable = DURESS_SKIP_UNREADABLE,
	},
	[DURESS_FILE_ACTION] = {
		.type = S_IFREG, .trusted_owner = true, .owner_executes = true,
		.symlink = DURESS_SKIP_SYMLINK, .wrong_type = DURESS_SKIP_NOT_REGULAR,
		.owner = DURESS_SKIP_OWNER, .writable = DURESS_SKIP_WRITABLE,
		.too_large = DURESS_SKIP_TOO_LARGE, .unreadable = DURESS_SKIP_UNREADABLE,
	},
	[DURESS_FILE_SIG] = {
		.type = S_IFREG, .trusted_owner = true, .cap = DURESS_SIG_MAX,
		.symlink = DURESS_SKIP_SIG_NOT_REGULAR, .wrong_type = DURESS_SKIP_SIG_NOT_REGULAR,
		.owner = DURESS_SKIP_SIG_OWNER, .writable = DURESS_SKIP_SIG_WRITABLE,
		.too_large = DURESS_SKIP_SIG_MALFORMED, .unreadable = DURESS_SKIP_UNREADABLE,
	},
	[DURESS_FILE_COMPANION] = {
		.type = S_IFREG, .trusted_owner = true,
		.symlink = DURESS_SKIP_ALSO_UNSAFE, .wrong_type = DURESS_SKIP_ALSO_UNSAFE,
		.owner = DURESS_SKIP_ALSO_UNSAFE, .writable = DURESS_SKIP_ALSO_UNSAFE,
		.too_large = DURESS_SKIP_ALSO_UNSAFE, .unreadable = DURESS_SKIP_ALSO_MISSING,
	},
	[DURESS_FILE_INPUT] = {
		.type = S_IFREG,
		.symlink = DURESS_SKIP_SYMLINK, .wrong_type = DURESS_SKIP_NOT_REGULAR,
		.too_large = DURESS_SKIP_TOO_LARGE, .unreadable = DURESS_SKIP_UNREADABLE,
	},
};

static bool owner_trusted(const struct duress_trust *t, uid_t uid)
{
	return uid == 0 || (t->scope == DURESS_SCOPE_USER && uid == t->owner);
}

enum duress_skip duress_judge_file(enum duress_file_kind kind, const struct stat *st,
				   const struct duress_trust *t)
{
	const struct rules *r = &rules[kind];
	uint64_t cap = r->cap ? r->cap : t->max_size;

	if (S_ISLNK(st->st_mode))
		return r->symlink;
	if ((st->st_mode & S_IFMT) != r->type)
		return r->wrong_type;
	if (r->trusted_owner && !owner_trusted(t, st->st_uid))
		return r->owner;
	if (r->trusted_owner && (st->st_mode & (S_IWGRP | S_IWOTH)))
		return r->writable;
	if (r->owner_executes && !(st->st_mode & S_IXUSR))
		return DURESS_SKIP_NOT_EXECUTABLE;
	if ((uint64_t)st->st_size > cap)
		return r->too_large;
	return DURESS_SKIP_NONE;
}

/* A new descriptor for reading the inode path_fd stands for, opened by inode, not by name. */
static int reopen_for_reading(int path_fd, enum duress_file_kind kind)
{
	char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];

	if (kind == DURESS_FILE_DIR)
		return openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path_fd);
	return open(proc, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
}

static void open_judged(int path_fd, enum duress_file_kind kind, const struct duress_trust *t,
			struct duress_file *f)
{
	struct stat st;

	f->fd = reopen_for_reading(path_fd, kind);
	if (f->fd < 0) {
		f->error = errno;
		f->skip = rules[kind].unreadable;
		return;
	}
	if (fstat(f->fd, &st) < 0 || st.st_dev != f->st.st_dev || st.st_ino != f->st.st_ino) {
		f->error = EIO;
		f->skip = rules[kind].unreadable;
	} else {
		/* The open descriptor's own state is the one that counts. */
		f->st = st;
		f->skip = duress_judge_file(kind, &st, t);
	}
	if (f->skip != DURESS_SKIP_NONE) {
		close(f->fd);
		f->fd = -1;
	}
}

static void open_path(int dir_fd, const char *path, enum duress_file_kind kind,
		      const struct duress_trust *t, bool for_reading, struct duress_file *f)
{
	int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (kind == DURESS_FILE_DIR ? O_DIRECTORY : 0);
	int path_fd = openat(dir_fd, path, flags);

	if (path_fd < 0) {
		f->error = errno;
		return;
	}
	if (fstat(path_fd, &f->st) < 0)
		f->error = errno;
	else if ((f->skip = duress_judge_file(kind, &f->st, t)) == DURESS_SKIP_NONE && for_reading)
		open_judged(path_fd, kind, t, f);
	close(path_fd);
}

int duress_open_file(int dir_fd, const char *path, enum duress_file_kind kind,
		     const struct duress_trust *t, bool for_reading, struct duress_file *ret)
{
	struct duress_saved_identity saved;
	int r;

	*ret = (struct duress_file){ .fd = -1, .skip = rules[kind].unreadable };
	r = duress_identity_enter(t->as, &saved);
	if (r < 0)
		return r;
	open_path(dir_fd, path, kind, t, for_reading, ret);
	r = duress_identity_leave(&saved);
	if (r < 0 && ret->fd >= 0) {
		close(ret->fd);
		ret->fd = -1;
	}
	return r;
}
