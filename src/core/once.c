/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "once.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include <sodium.h>

#include "escape.h"

/* Domain separation: a record's name is no other hash of this id. */
static const char name_context[] = "pam_duress once record v1";

void duress_once_name(enum duress_scope scope, uid_t owner, const struct duress_sig *sig,
		      char name[DURESS_ONCE_NAME_SIZE])
{
	const uint32_t uid = (uint32_t)owner;
	const unsigned char who[5] = { scope == DURESS_SCOPE_GLOBAL ? 'g' : 'u', (unsigned char)uid,
				       (unsigned char)(uid >> 8), (unsigned char)(uid >> 16),
				       (unsigned char)(uid >> 24) };
	unsigned char hash[(DURESS_ONCE_NAME_SIZE - 1) / 2];
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, sizeof(hash));
	crypto_generichash_update(&st, (const unsigned char *)name_context, sizeof(name_context));
	crypto_generichash_update(&st, who, sizeof(who));
	crypto_generichash_update(&st, sig->once_id, sizeof(sig->once_id));
	crypto_generichash_final(&st, hash, sizeof(hash));
	sodium_bin2hex(name, DURESS_ONCE_NAME_SIZE, hash, sizeof(hash));
}

/* Opens (and with create makes) a directory of root's alone; its descriptor or -errno. */
static int open_private(int at, const char *path, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdirat(at, path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IRWXG | S_IRWXO))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int duress_once_open(const char *state_dir, bool create)
{
	int top = open_private(AT_FDCWD, state_dir, create);
	int fd;

	if (top < 0)
		return top;
	fd = open_private(top, DURESS_ONCE_SUBDIR, create);
	close(top);
	return fd;
}

int duress_once_spent(int fd, const char *name, struct stat *st)
{
	struct stat own;

	if (fstatat(fd, name, st ? st : &own, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

enum duress_once_state duress_once_state(const char *state_dir, enum duress_scope scope,
					 uid_t owner, const struct duress_sig *sig,
					 char ret_name[DURESS_ONCE_NAME_SIZE], struct stat *when)
{
	int fd = duress_once_open(state_dir, false);
	int r;

	duress_once_name(scope, owner, sig, ret_name);
	/* Missing: the module makes it at the first run. */
	if (fd == -ENOENT)
		return DURESS_ONCE_ARMED;
	/* What root cannot open, the module cannot either; a user cannot open root's. */
	if (fd < 0)
		return geteuid() == 0 ? DURESS_ONCE_BROKEN : DURESS_ONCE_UNKNOWN;
	r = duress_once_spent(fd, ret_name, when);
	close(fd);
	return r < 0 ? DURESS_ONCE_UNKNOWN : r ? DURESS_ONCE_SPENT : DURESS_ONCE_ARMED;
}

/* Makes the record: 1 made now, 0 there already, or -errno. */
static int claim(int fd, const char *name)
{
	int rec = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (rec < 0)
		return errno == EEXIST ? 0 : -errno;
	/*
	 * Not fsync'd: that would add the disk's latency to this login alone.
	 * The file system commits it within seconds (ext4: 5).
	 */
	close(rec);
	return 1;
}

/* 1: a may run; 0: it ran before; -errno: its record cannot be made (or looked up). */
static int may_run(int fd, const struct duress_dir *dir, const struct duress_action *a, bool dry)
{
	char name[DURESS_ONCE_NAME_SIZE];
	int r;

	/* A rehearsal where no record was ever made has nothing to look up. */
	if (fd < 0)
		return dry && fd == -ENOENT ? 1 : fd;
	duress_once_name(dir->scope, dir->owner, &a->sig, name);
	if (!dry)
		return claim(fd, name);
	r = duress_once_spent(fd, name, NULL);
	return r < 0 ? r : !r;
}

static void log_held_back(const struct duress_dir *dir, const struct duress_action *a, int r,
			  const struct duress_log *lg)
{
	char path[DURESS_ESCAPED_SIZE(PATH_MAX)], name[DURESS_ESCAPED_SIZE(NAME_MAX)];

	duress_escape(dir->path, path, sizeof(path));
	duress_escape(a->name, name, sizeof(name));
	errno = -r;
	if (r == 0)
		duress_debug(lg, "%s/%s: once, and it ran before: not run again", path, name);
	else
		duress_debug(lg, "%s/%s: once, and its record cannot be made (%m): not run", path,
			     name);
}

/* Calls fn for each matched once action of dirs; *fd opened (create) at the first. */
static void each_matched_once(
	struct duress_dir *const *dirs, size_t n, const char *state_dir, bool create, int *fd,
	void (*fn)(int fd, struct duress_dir *dir, struct duress_action *a, void *data), void *data)
{
	bool opened = false;

	*fd = -EBADF;
	for (size_t d = 0; d < n; d++) {
		for (size_t i = 0; dirs[d] && i < dirs[d]->n_actions; i++) {
			struct duress_action *a = &dirs[d]->actions[i];

			if (!a->matched || !a->sig.once)
				continue;
			if (!opened)
				*fd = geteuid() == 0 ? duress_once_open(state_dir, create) : -EPERM;
			opened = true;
			fn(*fd, dirs[d], a, data);
		}
	}
}

struct settling {
	bool dry;
	const struct duress_log *lg;
};

static void settle_one(int fd, struct duress_dir *dir, struct duress_action *a, void *data)
{
	const struct settling *s = data;
	int r = may_run(fd, dir, a, s->dry);

	a->spent = r != 1;
	if (a->spent)
		log_held_back(dir, a, r, s->lg);
}

void duress_once_settle(struct duress_dir *const *dirs, size_t n, const char *state_dir, bool dry,
			const struct duress_log *lg)
{
	struct settling s = { .dry = dry, .lg = lg };
	int fd;

	each_matched_once(dirs, n, state_dir, !dry, &fd, settle_one, &s);
	if (fd >= 0)
		close(fd);
}

static void unsettle_one(int fd, struct duress_dir *dir, struct duress_action *a, void *data)
{
	char name[DURESS_ONCE_NAME_SIZE];

	(void)data;
	if (fd < 0 || a->spent)
		return;
	duress_once_name(dir->scope, dir->owner, &a->sig, name);
	(void)unlinkat(fd, name, 0);
}

void duress_once_unsettle(struct duress_dir *const *dirs, size_t n, const char *state_dir, bool dry)
{
	int fd = -EBADF;

	if (!dry)
		each_matched_once(dirs, n, state_dir, false, &fd, unsettle_one, NULL);
	if (fd >= 0)
		close(fd);
}
