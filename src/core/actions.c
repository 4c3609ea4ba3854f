/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "actions.h"
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

const char *duress_skip_reason(enum duress_skip skip)
{
	static const char *const reasons[] = {
		[DURESS_ARMED] = "armed",
		[DURESS_SKIP_NO_SIG] = "no signature (run: duress sign)",
		[DURESS_SKIP_SIG_MALFORMED] = "signature is malformed",
		[DURESS_SKIP_SIG_COST] = "signature cost is over the module's cap",
		[DURESS_SKIP_SIG_WEAK_COST] = "signature cost is below libsodium's minimum",
		[DURESS_SKIP_TOO_MANY_PARAMS] = "too many different salts or costs in the directory",
		[DURESS_SKIP_LEGACY_DISABLED] = "legacy .sha256 signature without the legacy_sha256 option",
		[DURESS_SKIP_CHANGED] = "content changed since signing",
		[DURESS_SKIP_OWNER] = "bad owner",
		[DURESS_SKIP_WRITABLE] = "writable by group or others",
		[DURESS_SKIP_SIG_OWNER] = "signature has a bad owner",
		[DURESS_SKIP_SIG_WRITABLE] = "signature is writable by group or others",
		[DURESS_SKIP_SIG_NOT_REGULAR] = "signature is not a regular file",
		[DURESS_SKIP_SYMLINK] = "symlink",
		[DURESS_SKIP_NOT_REGULAR] = "not a regular file",
		[DURESS_SKIP_NOT_EXECUTABLE] = "not executable",
		[DURESS_SKIP_TOO_LARGE] = "too large (max_size=)",
		[DURESS_SKIP_TOTAL_TOO_LARGE] = "the directory's actions together are too large (max_total=)",
		[DURESS_SKIP_UNREADABLE] = "unreadable",
		[DURESS_NOT_AN_ACTION] = "not an action (neither executable nor signed)",
		[DURESS_SKIP_ALSO_MISSING] = "a companion file (--also) is missing or unreadable",
		/* One literal: clang-tidy takes split ones in an array for a missing comma. */
		[DURESS_SKIP_ALSO_UNSAFE] = "a companion file (--also) is a symlink, not a regular file, has a bad owner, is writable by group or others, or is too large",
	};

	if ((size_t)skip >= sizeof(reasons) / sizeof(reasons[0]) || !reasons[skip])
		return "unknown";
	return reasons[skip];
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool duress_is_action_name(const char *name)
{
	static const char *const ignored_suffixes[] = {
		DURESS_SIG_SUFFIX, DURESS_LEGACY_SUFFIX, "~", ".swp", ".bak",
		".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-tmp", ".rpmnew", ".rpmsave",
	};
	size_t n = strlen(name);

	if (n == 0 || name[0] == '.' || (name[0] == '#' && n > 1 && name[n - 1] == '#'))
		return false;
	for (size_t i = 0; i < sizeof(ignored_suffixes) / sizeof(ignored_suffixes[0]); i++)
		if (has_suffix(name, ignored_suffixes[i]))
			return false;
	return true;
}

static bool owner_ok(const struct duress_dir *dir, uid_t uid)
{
	return uid == 0 || (dir->scope == DURESS_SCOPE_USER && uid == dir->owner);
}

/* The trust rules for an action, on whatever stat the caller has. */
static enum duress_skip judge_action(const struct duress_dir *dir, const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return DURESS_SKIP_SYMLINK;
	if (!S_ISREG(st->st_mode))
		return DURESS_SKIP_NOT_REGULAR;
	if (!owner_ok(dir, st->st_uid))
		return DURESS_SKIP_OWNER;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return DURESS_SKIP_WRITABLE;
	if (!(st->st_mode & S_IXUSR))
		return DURESS_SKIP_NOT_EXECUTABLE;
	if ((uint64_t)st->st_size > dir->caps->max_file_size)
		return DURESS_SKIP_TOO_LARGE;
	return DURESS_ARMED;
}

static enum duress_skip judge_sig(const struct duress_dir *dir, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return DURESS_SKIP_SIG_NOT_REGULAR;
	if (!owner_ok(dir, st->st_uid))
		return DURESS_SKIP_SIG_OWNER;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return DURESS_SKIP_SIG_WRITABLE;
	if (st->st_size > DURESS_SIG_MAX)
		return DURESS_SKIP_SIG_MALFORMED;
	return DURESS_ARMED;
}

/* Reads a small signature file through a descriptor judged after opening. */
static enum duress_skip read_sig_file(const struct duress_dir *dir, struct duress_action *a,
				      const char *name, char *buf, size_t *len)
{
	struct stat st;
	enum duress_skip skip;
	ssize_t n;
	int fd = openat(dir->fd, name, OPEN_FLAGS);

	if (fd < 0)
		return errno == ELOOP ? DURESS_SKIP_SIG_NOT_REGULAR : DURESS_SKIP_UNREADABLE;
	if (fstat(fd, &st) < 0) {
		skip = DURESS_SKIP_UNREADABLE;
	} else if ((skip = judge_sig(dir, &st)) == DURESS_ARMED) {
		a->sig_world_readable = (st.st_mode & S_IROTH) != 0;
		do
			n = read(fd, buf, DURESS_SIG_MAX + 1);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			skip = DURESS_SKIP_UNREADABLE;
		else if (n > DURESS_SIG_MAX)
			skip = DURESS_SKIP_SIG_MALFORMED;
		else
			*len = (size_t)n;
	}
	close(fd);
	return skip;
}

static enum duress_skip add_params(struct duress_dir *dir, const struct duress_params *p,
				   size_t *ret_index)
{
	int r = duress_params_check(p, dir->caps);

	if (r == -E2BIG)
		return DURESS_SKIP_SIG_COST;
	if (r < 0)
		return DURESS_SKIP_SIG_WEAK_COST;
	for (size_t i = 0; i < dir->n_params; i++) {
		if (duress_params_equal(&dir->params[i], p)) {
			*ret_index = i;
			return DURESS_ARMED;
		}
	}
	if (dir->n_params >= dir->caps->max_params)
		return DURESS_SKIP_TOO_MANY_PARAMS;
	dir->params[dir->n_params] = *p;
	*ret_index = dir->n_params++;
	return DURESS_ARMED;
}

static enum duress_skip load_legacy_sig(struct duress_dir *dir, struct duress_action *a,
					const char *sig_name)
{
	char buf[DURESS_SIG_MAX + 1];
	size_t len = 0;
	enum duress_skip skip;

	a->legacy = true;
	if (!dir->legacy_ok)
		return DURESS_SKIP_LEGACY_DISABLED;
	skip = read_sig_file(dir, a, sig_name, buf, &len);
	if (skip != DURESS_ARMED)
		return skip;
	if (len != DURESS_HASH_LEN)
		return DURESS_SKIP_SIG_MALFORMED;
	memcpy(a->sig.content_hash, buf, DURESS_HASH_LEN);
	return DURESS_ARMED;
}

static enum duress_skip load_sig(struct duress_dir *dir, struct duress_action *a)
{
	char sig_name[NAME_MAX + sizeof(DURESS_LEGACY_SUFFIX)];
	char buf[DURESS_SIG_MAX + 1];
	size_t len = 0;
	struct stat st;
	enum duress_skip skip;

	snprintf(sig_name, sizeof(sig_name), "%s%s", a->name, DURESS_SIG_SUFFIX);
	if (fstatat(dir->fd, sig_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return DURESS_SKIP_UNREADABLE;
		snprintf(sig_name, sizeof(sig_name), "%s%s", a->name, DURESS_LEGACY_SUFFIX);
		if (fstatat(dir->fd, sig_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return load_legacy_sig(dir, a, sig_name);
		return errno == ENOENT ? DURESS_SKIP_NO_SIG : DURESS_SKIP_UNREADABLE;
	}
	skip = read_sig_file(dir, a, sig_name, buf, &len);
	if (skip != DURESS_ARMED)
		return skip;
	if (duress_sig_parse(buf, len, &a->sig) < 0)
		return DURESS_SKIP_SIG_MALFORMED;
	return add_params(dir, &a->sig.params, &a->key_index);
}

static bool has_signature(const struct duress_dir *dir, const char *name)
{
	char sig_name[NAME_MAX + sizeof(DURESS_LEGACY_SUFFIX)];
	struct stat st;

	snprintf(sig_name, sizeof(sig_name), "%s%s", name, DURESS_SIG_SUFFIX);
	if (fstatat(dir->fd, sig_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	snprintf(sig_name, sizeof(sig_name), "%s%s", name, DURESS_LEGACY_SUFFIX);
	return fstatat(dir->fd, sig_name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void judge_entry(struct duress_dir *dir, struct duress_action *a)
{
	struct stat st;

	if (fstatat(dir->fd, a->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		a->skip = DURESS_SKIP_UNREADABLE;
		return;
	}
	a->world_readable = (st.st_mode & S_IROTH) != 0;
	a->skip = judge_action(dir, &st);
	/* A plain data file (a companion, notes) is not an action at all. */
	if (a->skip == DURESS_SKIP_NOT_EXECUTABLE && !has_signature(dir, a->name))
		a->skip = DURESS_NOT_AN_ACTION;
	if (a->skip == DURESS_ARMED)
		a->skip = load_sig(dir, a);
}

static int compare_actions(const void *x, const void *y)
{
	const struct duress_action *a = x, *b = y;

	return strcmp(a->name, b->name);
}

/* Collects the action names; the whole directory is refused past max_entries. */
/* Room for one more action; the array grows with the directory, not with the cap. */
static struct duress_action *append_action(struct duress_dir *dir, size_t *capacity)
{
	if (dir->n_actions == *capacity) {
		size_t cap = *capacity ? *capacity * 2 : 16;
		struct duress_action *a = reallocarray(dir->actions, cap, sizeof(*a));

		if (!a)
			return NULL;
		dir->actions = a;
		*capacity = cap;
	}
	return &dir->actions[dir->n_actions++];
}

static int list_actions(struct duress_dir *dir)
{
	struct dirent *de;
	uint64_t entries = 0;
	size_t capacity = 0;
	int r = 0;
	int fd = dup(dir->fd);
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		struct duress_action *a;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++entries > dir->caps->max_entries) {
			r = -E2BIG;
			break;
		}
		if (!duress_is_action_name(de->d_name))
			continue;
		a = append_action(dir, &capacity);
		if (!a) {
			r = -ENOMEM;
			break;
		}
		*a = (struct duress_action){ .memfd = -1 };
		snprintf(a->name, sizeof(a->name), "%s", de->d_name);
	}
	if (!de && errno)
		r = -errno;
	closedir(d);
	return r;
}

static int open_dir(struct duress_dir *dir)
{
	struct stat st;

	dir->fd = open(dir->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir->fd < 0)
		return errno == ELOOP ? -ENOTDIR : -errno;
	if (fstat(dir->fd, &st) < 0)
		return -errno;
	if (!owner_ok(dir, st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return 0;
}

int duress_dir_load(struct duress_dir *dir, const char *path, enum duress_scope scope, uid_t owner,
		    const struct duress_caps *caps, bool legacy_ok)
{
	int r;

	*dir = (struct duress_dir){
		.path = path, .scope = scope, .owner = owner, .fd = -1,
		.caps = caps, .legacy_ok = legacy_ok,
	};
	r = open_dir(dir);
	if (r < 0)
		goto fail;
	dir->params = calloc(caps->max_params, sizeof(*dir->params));
	if (!dir->params) {
		r = -ENOMEM;
		goto fail;
	}
	r = list_actions(dir);
	if (r < 0)
		goto fail;
	/* An empty directory has no array at all, and qsort() wants one. */
	if (dir->n_actions > 1)
		qsort(dir->actions, dir->n_actions, sizeof(*dir->actions), compare_actions);
	for (size_t i = 0; i < dir->n_actions; i++)
		judge_entry(dir, &dir->actions[i]);
	return 0;
fail:
	duress_dir_free(dir);
	return r;
}

static int write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int new_sealable_memfd(void)
{
	int fd = memfd_create("duress-action", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);

	/* Kernels before 6.3 do not know MFD_EXEC; their memfds are executable anyway. */
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create("duress-action", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	fd = duress_fd_above_stdio(fd);
	return fd < 0 ? -errno : fd;
}

int duress_stream_content(int fd, uint64_t max, int memfd, unsigned char *buf,
			  unsigned char hash[DURESS_HASH_LEN], bool *elf, uint64_t *ret_len)
{
	crypto_hash_sha256_state h;
	uint64_t total = 0;
	ssize_t n;
	int r;

	*elf = false;
	crypto_hash_sha256_init(&h);
	while ((n = read(fd, buf, DURESS_READ_CHUNK)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EIO;
		if (total == 0)
			*elf = n >= 4 && memcmp(buf, "\177ELF", 4) == 0;
		total += (uint64_t)n;
		if (total > max)
			return -EFBIG;
		crypto_hash_sha256_update(&h, buf, (unsigned long long)n);
		if (memfd >= 0 && (r = write_all(memfd, buf, (size_t)n)) < 0)
			return r;
	}
	crypto_hash_sha256_final(&h, hash);
	*ret_len = total;
	if (memfd >= 0 && fcntl(memfd, F_ADD_SEALS,
				F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		return -errno;
	return 0;
}

/*
 * Streams the action from a descriptor judged after opening into the SHA-256
 * (and, with memfd, into a sealed memory copy), so that what is hashed is
 * exactly what would run.  Returns 0 (a->skip may now be set) or -errno for
 * internal errors.
 */
static int read_content(const struct duress_dir *dir, struct duress_action *a, bool memfd,
			unsigned char *buf, uint64_t *budget)
{
	uint64_t limit, len = 0;
	struct stat st;
	int r = 0;
	int fd = openat(dir->fd, a->name, OPEN_FLAGS);

	if (fd < 0) {
		a->skip = errno == ELOOP ? DURESS_SKIP_SYMLINK : DURESS_SKIP_UNREADABLE;
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		a->skip = DURESS_SKIP_UNREADABLE;
		goto out;
	}
	a->skip = judge_action(dir, &st);
	if (a->skip == DURESS_ARMED && (uint64_t)st.st_size > *budget)
		a->skip = DURESS_SKIP_TOTAL_TOO_LARGE;
	if (a->skip != DURESS_ARMED)
		goto out;
	/* What is read, not what stat said, is charged: the file may change. */
	limit = dir->caps->max_file_size < *budget ? dir->caps->max_file_size : *budget;
	if (memfd && (a->memfd = new_sealable_memfd()) < 0) {
		r = a->memfd;
		a->memfd = -1;
		goto out;
	}
	r = duress_stream_content(fd, limit, a->memfd, buf, a->content_hash, &a->elf, &len);
	/* The file's own faults skip it; only the memfd's are internal errors. */
	if (r == -EFBIG) {
		a->skip = limit == *budget ? DURESS_SKIP_TOTAL_TOO_LARGE : DURESS_SKIP_TOO_LARGE;
		len = limit;
		r = 0;
	} else if (r == -EIO) {
		a->skip = DURESS_SKIP_UNREADABLE;
		r = 0;
	}
	*budget -= len;
	if (r == 0 && a->skip == DURESS_ARMED && a->sig.also_len > 0)
		a->skip = duress_bind_companions(dir, &a->sig, buf, budget, a->content_hash);
out:
	close(fd);
	if ((r < 0 || a->skip != DURESS_ARMED) && a->memfd >= 0) {
		close(a->memfd);
		a->memfd = -1;
	}
	return r;
}

static enum duress_skip hash_companion(const struct duress_dir *dir, const char *path,
				       unsigned char *buf, uint64_t *budget,
				       unsigned char hash[DURESS_HASH_LEN])
{
	struct stat st;
	enum duress_skip skip = DURESS_ARMED;
	uint64_t limit, len = 0;
	bool elf;
	int fd = open(path, OPEN_FLAGS);

	if (fd < 0)
		return errno == ELOOP ? DURESS_SKIP_ALSO_UNSAFE : DURESS_SKIP_ALSO_MISSING;
	limit = dir->caps->max_file_size < *budget ? dir->caps->max_file_size : *budget;
	if (fstat(fd, &st) < 0)
		skip = DURESS_SKIP_ALSO_MISSING;
	else if (!S_ISREG(st.st_mode) || !owner_ok(dir, st.st_uid) ||
		 (st.st_mode & (S_IWGRP | S_IWOTH)) || (uint64_t)st.st_size > limit ||
		 duress_stream_content(fd, limit, -1, buf, hash, &elf, &len) < 0)
		skip = DURESS_SKIP_ALSO_UNSAFE;
	*budget -= len;
	close(fd);
	return skip;
}

enum duress_skip duress_bind_companions(const struct duress_dir *dir, const struct duress_sig *sig,
					unsigned char *buf, uint64_t *budget,
					unsigned char content_hash[DURESS_HASH_LEN])
{
	unsigned char hashes[DURESS_ALSO_MAX_FILES][DURESS_HASH_LEN];
	size_t i = 0;

	for (const char *p = NULL; (p = duress_sig_next_also(sig, p)); i++) {
		enum duress_skip skip = hash_companion(dir, p, buf, budget, hashes[i]);

		if (skip != DURESS_ARMED)
			return skip;
	}
	duress_bound_hash(sig, content_hash, hashes, content_hash);
	return DURESS_ARMED;
}

static bool action_matches(const struct duress_action *a, const unsigned char *key,
			   const char *password, size_t len)
{
	if (a->legacy)
		return duress_legacy_matches(a->content_hash, password, len, a->sig.content_hash);
	return duress_tag_matches(key, a->content_hash, a->sig.tag);
}

static int verify_actions(struct duress_dir *dir, unsigned char (*keys)[DURESS_KEY_LEN],
			  const char *password, size_t len)
{
	unsigned char *buf = malloc(DURESS_READ_CHUNK);
	uint64_t budget = dir->caps->max_total;
	int matches = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < dir->n_actions; i++) {
		struct duress_action *a = &dir->actions[i];
		int r;

		if (a->skip != DURESS_ARMED)
			continue;
		r = read_content(dir, a, true, buf, &budget);
		if (r < 0) {
			matches = r;
			break;
		}
		if (a->skip != DURESS_ARMED)
			continue;
		a->matched = action_matches(a, keys[a->key_index], password, len);
		/* Known without the password, so it may be logged; the tag was still computed. */
		if (!a->legacy &&
		    sodium_memcmp(a->content_hash, a->sig.content_hash, DURESS_HASH_LEN) != 0) {
			a->skip = DURESS_SKIP_CHANGED;
			a->matched = false;
		}
		if (a->matched) {
			matches++;
		} else {
			close(a->memfd);
			a->memfd = -1;
		}
	}
	free(buf);
	return matches;
}

int duress_dir_verify(struct duress_dir *dir, const char *password, size_t len)
{
	unsigned char(*keys)[DURESS_KEY_LEN] = NULL;
	int r = 0;

	if (dir->n_params > 0) {
		keys = sodium_allocarray(dir->n_params, DURESS_KEY_LEN);
		if (!keys)
			return -ENOMEM;
	}
	for (size_t i = 0; i < dir->n_params; i++) {
		r = duress_derive_key(password, len, &dir->params[i], keys[i]);
		if (r < 0)
			goto out;
	}
	r = verify_actions(dir, keys, password, len);
out:
	sodium_free(keys); /* wipes them */
	return r;
}

void duress_dir_hash(struct duress_dir *dir)
{
	unsigned char *buf = malloc(DURESS_READ_CHUNK);
	uint64_t budget = dir->caps->max_total;

	if (!buf)
		return;
	for (size_t i = 0; i < dir->n_actions; i++) {
		struct duress_action *a = &dir->actions[i];

		if (a->skip != DURESS_ARMED || a->legacy)
			continue;
		if (read_content(dir, a, false, buf, &budget) == 0 && a->skip == DURESS_ARMED &&
		    memcmp(a->content_hash, a->sig.content_hash, DURESS_HASH_LEN) != 0)
			a->skip = DURESS_SKIP_CHANGED;
	}
	free(buf);
}

const char *duress_dir_problem(int r, char *buf, size_t len)
{
	switch (r) {
	case -EPERM:
		return "bad owner, or writable by group or others";
	case -E2BIG:
		return "more entries than the module reads (max_entries=)";
	case -ENOTDIR:
		return "not a directory (or a symlink to one)";
	default:
		/* GNU strerror_r: thread-safe, returns the text (maybe not in buf). */
		return strerror_r(-r, buf, len);
	}
}

void duress_dir_free(struct duress_dir *dir)
{
	for (size_t i = 0; dir->actions && i < dir->n_actions; i++)
		if (dir->actions[i].memfd >= 0)
			close(dir->actions[i].memfd);
	free(dir->actions);
	free(dir->params);
	if (dir->fd >= 0)
		close(dir->fd);
	*dir = (struct duress_dir){ .fd = -1 };
}
