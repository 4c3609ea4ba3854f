/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The verify loop: hash each armed action (and its companions) and check the password. */
#include "actions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Hashes one companion file, judged and opened as trust says; 0 or -errno. */
static int hash_companion(const struct duress_trust *trust, const char *path, unsigned char *buf,
			  uint64_t *budget, unsigned char hash[DURESS_HASH_LEN],
			  enum duress_skip *ret_skip)
{
	uint64_t limit = min_u64(trust->max_size, *budget), len = 0;
	struct duress_trust t = *trust;
	struct duress_file f;
	bool elf;
	int r;

	t.max_size = limit;
	r = duress_open_file(AT_FDCWD, path, DURESS_FILE_COMPANION, &t, true, &f);
	if (r < 0)
		return r;
	*ret_skip = f.skip;
	if (f.fd < 0)
		return 0;
	if (duress_stream_content(f.fd, limit, -1, buf, hash, &elf, &len) < 0)
		*ret_skip = DURESS_SKIP_ALSO_UNSAFE;
	*budget -= len;
	return duress_file_close(&f);
}

int duress_bind_companions(const struct duress_trust *trust, const struct duress_sig *sig,
			   unsigned char *buf, uint64_t *budget,
			   unsigned char content_hash[DURESS_HASH_LEN], enum duress_skip *ret_skip)
{
	unsigned char hashes[DURESS_ALSO_MAX_FILES][DURESS_HASH_LEN];
	size_t i = 0;

	*ret_skip = DURESS_SKIP_NONE;
	for (const char *p = NULL; (p = duress_sig_next_also(sig, p)); i++) {
		int r = hash_companion(trust, p, buf, budget, hashes[i], ret_skip);

		if (r < 0 || *ret_skip != DURESS_SKIP_NONE)
			return r;
	}
	duress_bound_hash(sig, content_hash, hashes, content_hash);
	return 0;
}

/* The action's own faults skip it; only the memfd's are internal errors. */
static int stream_action(const struct duress_dir *dir, struct duress_action *a, int fd, bool memfd,
			 unsigned char *buf, uint64_t *budget)
{
	/* What is read, not what stat said, is charged: the file may change. */
	uint64_t limit = min_u64(dir->caps->max_file_size, *budget), len = 0;
	int r;

	if (memfd && (a->memfd = duress_memfd_new()) < 0) {
		r = a->memfd;
		a->memfd = -1;
		return r;
	}
	r = duress_stream_content(fd, limit, a->memfd, buf, a->content_hash, &a->elf, &len);
	if (r == -EFBIG) {
		a->skip = limit == *budget ? DURESS_SKIP_TOTAL_TOO_LARGE : DURESS_SKIP_TOO_LARGE;
		len = limit;
		r = 0;
	} else if (r == -EIO) {
		a->skip = DURESS_SKIP_UNREADABLE;
		r = 0;
	}
	*budget -= len;
	return r;
}

/*
 * Streams the action from a descriptor judged by the one helper into the
 * SHA-256 (and, with memfd, into a sealed memory copy), so that what is
 * hashed is exactly what would run, read with the rights that opened it.
 * Returns 0 (a->skip may now be set) or -errno for internal errors.
 */
static int read_content(const struct duress_dir *dir, struct duress_action *a, bool memfd,
			unsigned char *buf, uint64_t *budget)
{
	struct duress_trust t = duress_dir_trust(dir, dir->caps->max_file_size);
	struct duress_file f;
	int r = duress_open_file(dir->fd, a->name, DURESS_FILE_ACTION, &t, true, &f);

	if (r < 0)
		return r;
	a->skip = f.skip;
	if (a->skip == DURESS_SKIP_NONE && (uint64_t)f.st.st_size > *budget)
		a->skip = DURESS_SKIP_TOTAL_TOO_LARGE;
	if (a->skip == DURESS_SKIP_NONE)
		r = stream_action(dir, a, f.fd, memfd, buf, budget);
	/* Closed before the companions: the rights are held for one file at a time. */
	if (duress_file_close(&f) < 0)
		r = -ENOTRECOVERABLE;
	/* Companions are judged as the action is: same owner, identity and size cap. */
	if (r == 0 && a->skip == DURESS_SKIP_NONE && a->sig.also_len > 0)
		r = duress_bind_companions(&t, &a->sig, buf, budget, a->content_hash, &a->skip);
	if ((r < 0 || a->skip != DURESS_SKIP_NONE) && a->memfd >= 0) {
		close(a->memfd);
		a->memfd = -1;
	}
	return r;
}

static bool action_matches(const struct duress_action *a, const unsigned char *key,
			   const char *password, size_t len)
{
	if (a->legacy)
		return duress_legacy_matches(a->content_hash, password, len, a->sig.content_hash);
	return duress_tag_matches(key, a->content_hash, a->sig.tag);
}

int duress_dir_verify(struct duress_dir *dir, const unsigned char (*keys)[DURESS_KEY_LEN],
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

		if (a->skip != DURESS_SKIP_NONE)
			continue;
		r = read_content(dir, a, true, buf, &budget);
		if (r < 0) {
			matches = r;
			break;
		}
		if (a->skip != DURESS_SKIP_NONE)
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

static int hash_dir(struct duress_dir *dir, bool memfd)
{
	unsigned char *buf = malloc(DURESS_READ_CHUNK);
	uint64_t budget = dir->caps->max_total;
	int r = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < dir->n_actions && r == 0; i++) {
		struct duress_action *a = &dir->actions[i];

		if (a->skip != DURESS_SKIP_NONE || a->legacy)
			continue;
		r = read_content(dir, a, memfd, buf, &budget);
		if (r == 0 && a->skip == DURESS_SKIP_NONE &&
		    memcmp(a->content_hash, a->sig.content_hash, DURESS_HASH_LEN) != 0)
			a->skip = DURESS_SKIP_CHANGED;
		if (a->skip != DURESS_SKIP_NONE && a->memfd >= 0) {
			close(a->memfd);
			a->memfd = -1;
		}
	}
	free(buf);
	return r;
}

int duress_dir_hash(struct duress_dir *dir)
{
	return hash_dir(dir, false);
}

int duress_dir_hash_sealed(struct duress_dir *dir)
{
	return hash_dir(dir, true);
}
