/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The verify loop.  A try checks each armed action's tag against the content
 * hash its signature records, which needs no byte of the action: every armed
 * action and companion is opened and judged, their sizes charged, and only an
 * action whose tag matched is read, copied into a sealed memfd and hashed, and
 * kept only if that hash is the recorded one.  So what a wrong password costs
 * does not depend on the actions' sizes (docs/tells.md).
 */
#include "actions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

/* What is read of a file judged fit. */
enum reading {
	JUDGE_ONLY, /* nothing: a try's work for an action whose tag did not match */
	HASH,       /* its SHA-256: `duress check`'s "content changed since signing" */
	SEAL,       /* its SHA-256 and a sealed memfd of exactly the bytes hashed: what runs */
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * Opens and judges one companion, charges its size, and unless how is
 * JUDGE_ONLY hashes it.  *judged is the judging's verdict, *content the
 * reading's.  0 or -errno.
 */
static int check_companion(const struct duress_trust *trust, const char *path, enum reading how,
			   unsigned char *buf, uint64_t *budget,
			   unsigned char hash[DURESS_HASH_LEN], enum duress_skip *judged,
			   enum duress_skip *content)
{
	struct duress_trust t = *trust;
	struct duress_file f;
	uint64_t len;
	bool elf;
	int r;

	t.max_size = min_u64(trust->max_size, *budget);
	r = duress_open_file(AT_FDCWD, path, DURESS_FILE_COMPANION, &t, true, &f);
	if (r < 0)
		return r;
	*judged = f.skip;
	if (f.fd < 0)
		return 0;
	/* What was judged is charged, read or not: the verdicts do not depend on the password. */
	*budget -= (uint64_t)f.st.st_size;
	if (how != JUDGE_ONLY &&
	    duress_stream_content(f.fd, (uint64_t)f.st.st_size, -1, buf, hash, &elf, &len) < 0)
		*content = DURESS_SKIP_ALSO_UNSAFE;
	duress_file_close(&f);
	return 0;
}

/*
 * Judges each companion sig binds, in order, up to the first that is not
 * fit, and unless how is JUDGE_ONLY hashes them and turns content_hash (the
 * action's SHA-256) into the bound hash.  After a companion that cannot be
 * read the others are still judged: the judging's verdict is the same
 * whatever is read.  0 or -errno.
 */
static int check_companions(const struct duress_trust *trust, const struct duress_sig *sig,
			    enum reading how, unsigned char *buf, uint64_t *budget,
			    unsigned char content_hash[DURESS_HASH_LEN], enum duress_skip *judged,
			    enum duress_skip *content)
{
	unsigned char hashes[DURESS_ALSO_MAX_FILES][DURESS_HASH_LEN];
	size_t i = 0;

	for (const char *p = NULL;
	     *judged == DURESS_SKIP_NONE && (p = duress_sig_next_also(sig, p)); i++) {
		enum reading h = *content == DURESS_SKIP_NONE ? how : JUDGE_ONLY;
		int r = check_companion(trust, p, h, buf, budget, hashes[i], judged, content);

		if (r < 0)
			return r;
	}
	if (how != JUDGE_ONLY && *judged == DURESS_SKIP_NONE && *content == DURESS_SKIP_NONE)
		duress_bound_hash(sig, content_hash, hashes, content_hash);
	return 0;
}

int duress_bind_companions(const struct duress_trust *trust, const struct duress_sig *sig,
			   unsigned char *buf, uint64_t *budget,
			   unsigned char content_hash[DURESS_HASH_LEN], enum duress_skip *ret_skip)
{
	enum duress_skip content = DURESS_SKIP_NONE;
	int r;

	*ret_skip = DURESS_SKIP_NONE;
	r = check_companions(trust, sig, HASH, buf, budget, content_hash, ret_skip, &content);
	if (*ret_skip == DURESS_SKIP_NONE)
		*ret_skip = content;
	return r;
}

/*
 * Reads the judged action, size bytes, into its SHA-256 and with SEAL into a
 * sealed memfd.  The file's faults go to *content (more bytes than were
 * judged: it is being changed); only the memfd's are internal errors.
 */
static int read_action(struct duress_action *a, int fd, uint64_t size, enum reading how,
		       unsigned char *buf, enum duress_skip *content)
{
	uint64_t len;
	int r;

	if (how == SEAL && (a->memfd = duress_memfd_new()) < 0) {
		r = a->memfd;
		a->memfd = -1;
		return r;
	}
	r = duress_stream_content(fd, size, a->memfd, buf, a->content_hash, &a->elf, &len);
	if (r == -EFBIG || r == -EIO) {
		*content = r == -EIO ? DURESS_SKIP_UNREADABLE : DURESS_SKIP_CHANGED;
		r = 0;
	}
	return r;
}

/*
 * Opens and judges the action with the rights dir is read with, charges its
 * size to *budget, reads it as how says from the descriptor it was judged
 * by (so what is hashed and copied is that inode, read with those rights),
 * then its companions.  a->skip is the judging's verdict, the same whatever
 * is read; *content the reading's; a->size what was charged.  0 or -errno.
 */
static int check_action(const struct duress_dir *dir, struct duress_action *a, enum reading how,
			unsigned char *buf, uint64_t *budget, enum duress_skip *content)
{
	struct duress_trust t = duress_dir_trust(dir, dir->caps->max_file_size);
	uint64_t before = *budget;
	struct duress_file f;
	int r = duress_open_file(dir->fd, a->name, DURESS_FILE_ACTION, &t, true, &f);

	if (r < 0)
		return r;
	a->skip = f.skip;
	if (a->skip == DURESS_SKIP_NONE && (uint64_t)f.st.st_size > *budget)
		a->skip = DURESS_SKIP_TOTAL_TOO_LARGE;
	if (a->skip == DURESS_SKIP_NONE) {
		*budget -= (uint64_t)f.st.st_size;
		if (how != JUDGE_ONLY)
			r = read_action(a, f.fd, (uint64_t)f.st.st_size, how, buf, content);
	}
	/* Closed before the companions: the rights are held for one file at a time. */
	duress_file_close(&f);
	/* Companions are judged as the action is: same owner, identity and size cap. */
	if (r == 0 && a->skip == DURESS_SKIP_NONE && a->sig.also_len > 0)
		r = check_companions(&t, &a->sig, how, buf, budget, a->content_hash, &a->skip,
				     content);
	a->size = before - *budget;
	return r;
}

static void drop_copy(struct duress_action *a)
{
	if (a->memfd >= 0)
		close(a->memfd);
	a->memfd = -1;
}

/*
 * One armed action's part of a try.  The tag is checked against the hash
 * the signature records (constant time); the files are opened and judged
 * whatever it says, and read only when it matched (a legacy signature
 * needs the content for every check).  A matched action whose bytes are
 * not the signed ones does not run; that is learnt only on a match, so it
 * stays out of the default log (skip_on_match).  key NULL (for a legacy
 * one, password NULL): nothing matches.  0 or -errno.
 */
static int try_action(const struct duress_dir *dir, struct duress_action *a,
		      const unsigned char *key, const char *password, size_t len,
		      unsigned char *buf, uint64_t *budget)
{
	bool tagged = !a->legacy && key && duress_tag_matches(key, &a->sig, a->sig.content_hash);
	enum duress_skip content = DURESS_SKIP_NONE;
	int r = check_action(dir, a, tagged || a->legacy ? SEAL : JUDGE_ONLY, buf, budget,
			     &content);

	a->tagged = tagged;

	if (r == 0 && a->skip == DURESS_SKIP_NONE && content == DURESS_SKIP_NONE) {
		if (a->legacy)
			a->matched = password && duress_legacy_matches(a->content_hash, password,
								       len, a->sig.content_hash);
		else if (tagged &&
			 sodium_memcmp(a->content_hash, a->sig.content_hash, DURESS_HASH_LEN) != 0)
			content = DURESS_SKIP_CHANGED;
		else
			a->matched = tagged;
	}
	if (a->skip == DURESS_SKIP_NONE && content != DURESS_SKIP_NONE) {
		a->skip = content;
		a->skip_on_match = tagged;
	}
	if (!a->matched)
		drop_copy(a);
	return r;
}

/* Every armed action's part of a try, keys NULL for one that matches nothing. */
static int try_dir(struct duress_dir *dir, const unsigned char (*keys)[DURESS_KEY_LEN],
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
		r = try_action(dir, a, keys && !a->legacy ? keys[a->key_index] : NULL, password,
			       len, buf, &budget);
		if (r < 0) {
			matches = r;
			break;
		}
		matches += a->matched;
	}
	free(buf);
	return matches;
}

int duress_dir_verify(struct duress_dir *dir, const unsigned char (*keys)[DURESS_KEY_LEN],
		      const char *password, size_t len)
{
	return try_dir(dir, keys, password, len);
}

int duress_dir_judge(struct duress_dir *dir)
{
	return try_dir(dir, NULL, NULL, 0);
}

static int hash_dir(struct duress_dir *dir, enum reading how)
{
	unsigned char *buf = malloc(DURESS_READ_CHUNK);
	uint64_t budget = dir->caps->max_total;
	int r = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < dir->n_actions && r == 0; i++) {
		struct duress_action *a = &dir->actions[i];
		enum duress_skip content = DURESS_SKIP_NONE;

		if (a->skip != DURESS_SKIP_NONE || a->legacy)
			continue;
		r = check_action(dir, a, how, buf, &budget, &content);
		if (r == 0 && a->skip == DURESS_SKIP_NONE && content == DURESS_SKIP_NONE &&
		    memcmp(a->content_hash, a->sig.content_hash, DURESS_HASH_LEN) != 0)
			content = DURESS_SKIP_CHANGED;
		if (a->skip == DURESS_SKIP_NONE)
			a->skip = content;
		if (r < 0 || a->skip != DURESS_SKIP_NONE)
			drop_copy(a);
	}
	free(buf);
	return r;
}

int duress_dir_hash(struct duress_dir *dir)
{
	return hash_dir(dir, HASH);
}

int duress_dir_hash_sealed(struct duress_dir *dir)
{
	return hash_dir(dir, SEAL);
}
