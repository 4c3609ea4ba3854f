/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/vfs.h>
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
	enum duress_skip pseudo_fs;  /* on a pseudo-filesystem; NONE: not judged */
} rules[] = {
	[DURESS_FILE_DIR] = {
		.type = S_IFDIR, .trusted_owner = true, .cap = UINT64_MAX,
		.symlink = DURESS_SKIP_NOT_REGULAR, .wrong_type = DURESS_SKIP_NOT_REGULAR,
		.owner = DURESS_SKIP_OWNER, .writable = DURESS_SKIP_WRITABLE,
		.unreadable = DURESS_SKIP_UNREADABLE, .pseudo_fs = DURESS_SKIP_PSEUDO_FS,
	},
	[DURESS_FILE_ACTION] = {
		.type = S_IFREG, .trusted_owner = true, .owner_executes = true,
		.symlink = DURESS_SKIP_SYMLINK, .wrong_type = DURESS_SKIP_NOT_REGULAR,
		.owner = DURESS_SKIP_OWNER, .writable = DURESS_SKIP_WRITABLE,
		.too_large = DURESS_SKIP_TOO_LARGE, .unreadable = DURESS_SKIP_UNREADABLE,
		.pseudo_fs = DURESS_SKIP_PSEUDO_FS,
	},
	[DURESS_FILE_SIG] = {
		.type = S_IFREG, .trusted_owner = true, .cap = DURESS_SIG_MAX,
		.symlink = DURESS_SKIP_SIG_NOT_REGULAR, .wrong_type = DURESS_SKIP_SIG_NOT_REGULAR,
		.owner = DURESS_SKIP_SIG_OWNER, .writable = DURESS_SKIP_SIG_WRITABLE,
		.too_large = DURESS_SKIP_SIG_MALFORMED, .unreadable = DURESS_SKIP_UNREADABLE,
		.pseudo_fs = DURESS_SKIP_PSEUDO_FS,
	},
	[DURESS_FILE_COMPANION] = {
		.type = S_IFREG, .trusted_owner = true,
		.symlink = DURESS_SKIP_ALSO_UNSAFE, .wrong_type = DURESS_SKIP_ALSO_UNSAFE,
		.owner = DURESS_SKIP_ALSO_UNSAFE, .writable = DURESS_SKIP_ALSO_UNSAFE,
		.too_large = DURESS_SKIP_ALSO_UNSAFE, .unreadable = DURESS_SKIP_ALSO_MISSING,
		.pseudo_fs = DURESS_SKIP_ALSO_PSEUDO_FS,
	},
	/* What the caller named, read with the caller's own rights: nothing to judge by. */
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

/* Magic numbers that <linux/magic.h> does not have (the kernel's own, in the files named). */
#define CONFIGFS_MAGIC 0x62656570      /* fs/configfs/mount.c */
#define MQUEUE_MAGIC 0x19800202        /* ipc/mqueue.c */
#define FUSECTL_SUPER_MAGIC 0x65735543 /* fs/fuse/control.c */
#define RPC_PIPEFS_MAGIC 0x67596969    /* net/sunrpc/rpc_pipe.c: RPCAUTH_GSSMAGIC */
#define NFSD_MAGIC 0x6e667364          /* fs/nfsd/nfsctl.c */
#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC 0x50494446 /* fs/pidfs.c; <linux/magic.h> since Linux 6.9 */
#endif

/*
 * Filesystems whose files are no files: the kernel makes up their content
 * at each read, often for that reader (/proc/PID/wchan shows root what it
 * hides from others), and a read may act on the system.  Nothing there is
 * an action, a signature, a directory of them or a companion: a signed hash
 * of it would be an oracle on what the reader may see.
 */
static const unsigned long pseudo_filesystems[] = {
	PROC_SUPER_MAGIC,     SYSFS_MAGIC,          DEBUGFS_MAGIC,
	TRACEFS_MAGIC,        SECURITYFS_MAGIC,     CGROUP_SUPER_MAGIC,
	CGROUP2_SUPER_MAGIC,  BPF_FS_MAGIC,         CONFIGFS_MAGIC,
	DEVPTS_SUPER_MAGIC,   PSTOREFS_MAGIC,       EFIVARFS_MAGIC,
	SELINUX_MAGIC,        SMACK_MAGIC,          AAFS_MAGIC,
	HUGETLBFS_MAGIC,      MQUEUE_MAGIC,         BINFMTFS_MAGIC,
	AUTOFS_SUPER_MAGIC,   FUSECTL_SUPER_MAGIC,  NSFS_MAGIC,
	PID_FS_MAGIC,         PIPEFS_MAGIC,         SOCKFS_MAGIC,
	ANON_INODE_FS_MAGIC,  RDTGROUP_SUPER_MAGIC, USBDEVICE_SUPER_MAGIC,
	OPENPROM_SUPER_MAGIC, XENFS_SUPER_MAGIC,    BINDERFS_SUPER_MAGIC,
	RPC_PIPEFS_MAGIC,     NFSD_MAGIC,
};

/* Whether fd's filesystem is one of them: 1, 0, or -errno. */
static int on_pseudo_fs(int fd)
{
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(pseudo_filesystems) / sizeof(pseudo_filesystems[0]); i++)
		if ((unsigned long)fs.f_type == pseudo_filesystems[i])
			return 1;
	return 0;
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

/* Judges what path_fd stands for; opens it for reading if it is fit and that is asked. */
static void judge_path(int path_fd, enum duress_file_kind kind, const struct duress_trust *t,
		       bool for_reading, struct duress_file *f)
{
	int r = rules[kind].pseudo_fs ? on_pseudo_fs(path_fd) : 0;

	if (r < 0) {
		f->error = -r;
		return;
	}
	f->skip = r > 0 ? rules[kind].pseudo_fs : duress_judge_file(kind, &f->st, t);
	if (f->skip == DURESS_SKIP_NONE && for_reading)
		open_judged(path_fd, kind, t, f);
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
	else
		judge_path(path_fd, kind, t, for_reading, f);
	close(path_fd);
}

int duress_open_file(int dir_fd, const char *path, enum duress_file_kind kind,
		     const struct duress_trust *t, bool for_reading, struct duress_file *ret)
{
	int r;

	*ret = (struct duress_file){ .fd = -1, .skip = rules[kind].unreadable };
	r = duress_identity_enter(t->as, &ret->held);
	if (r < 0)
		return r;
	open_path(dir_fd, path, kind, t, for_reading, ret);
	/* What is open is read with the rights that opened it: they go with its close. */
	if (ret->fd < 0)
		duress_identity_leave(&ret->held);
	return 0;
}

void duress_file_release(struct duress_file *f)
{
	duress_identity_leave(&f->held);
}

void duress_file_close(struct duress_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	duress_file_release(f);
}
