/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "opts.h"
#include "sig.h"

/* Why an action will not run.  DURESS_ARMED (0) means it will, for its password. */
enum duress_skip {
	DURESS_ARMED = 0,
	DURESS_SKIP_NO_SIG,
	DURESS_SKIP_SIG_MALFORMED,
	DURESS_SKIP_SIG_COST,
	DURESS_SKIP_SIG_WEAK_COST,
	DURESS_SKIP_TOO_MANY_PARAMS,
	DURESS_SKIP_LEGACY_DISABLED,
	DURESS_SKIP_CHANGED,
	DURESS_SKIP_OWNER,
	DURESS_SKIP_WRITABLE,
	DURESS_SKIP_SIG_OWNER,
	DURESS_SKIP_SIG_WRITABLE,
	DURESS_SKIP_SIG_NOT_REGULAR,
	DURESS_SKIP_SYMLINK,
	DURESS_SKIP_NOT_REGULAR,
	DURESS_SKIP_NOT_EXECUTABLE,
	DURESS_SKIP_TOO_LARGE,
	DURESS_SKIP_TOTAL_TOO_LARGE,
	DURESS_SKIP_UNREADABLE,
	DURESS_SKIP_ALSO_MISSING,
	DURESS_SKIP_ALSO_UNSAFE,
	DURESS_NOT_AN_ACTION, /* neither executable nor signed: ignored, not logged */
};

const char *duress_skip_reason(enum duress_skip skip);

enum duress_scope {
	DURESS_SCOPE_USER,   /* ~/.duress: owned by the user or root, run as the user */
	DURESS_SCOPE_GLOBAL, /* /etc/duress.d: owned by root, run as root */
};

struct duress_action {
	char name[NAME_MAX + 1];
	enum duress_skip skip;
	bool legacy;             /* NAME.sha256 rather than NAME.sig */
	bool world_readable;     /* allowed, but `duress check` warns */
	bool sig_world_readable; /* the same for the signature: offline guessing */
	size_t key_index;        /* which of the directory's keys verifies it */
	struct duress_sig sig;   /* for legacy: sig.content_hash is the stored hash */
	unsigned char content_hash[DURESS_HASH_LEN]; /* filled by duress_dir_verify/hash */
	int memfd;               /* sealed copy of the verified bytes, or -1 */
	bool elf;                /* an ELF binary (its memfd may be close-on-exec) */
	bool matched;
};

struct duress_dir {
	const char *path;
	enum duress_scope scope;
	uid_t owner; /* the user whose directory this is; 0 for global */
	int fd;
	const struct duress_caps *caps;
	bool legacy_ok;
	size_t n_actions;
	struct duress_action *actions; /* sorted by name */
	size_t n_params;
	struct duress_params *params; /* distinct (salt, cost) sets */
};

/*
 * Opens and judges a directory, lists its actions in name order and reads
 * their signatures.  Returns 0; -ENOENT (no directory: nothing to do);
 * -EPERM (bad owner or mode); -ENOTDIR; -E2BIG (more than max_entries);
 * or another -errno.  On failure *dir holds nothing to free.
 */
int duress_dir_load(struct duress_dir *dir, const char *path, enum duress_scope scope, uid_t owner,
		    const struct duress_caps *caps, bool legacy_ok);

/*
 * Checks `password` against every armed action of dir, with one Argon2id
 * per parameter set, and the same work whichever action matches.  Matching
 * actions keep a sealed memfd of exactly the bytes whose hash was verified.
 * Returns the number of matches, or -errno on an internal error.
 */
int duress_dir_verify(struct duress_dir *dir, const char *password, size_t len);

/* Fills content_hash of each armed action (no password): for `duress check`. */
void duress_dir_hash(struct duress_dir *dir);

void duress_dir_free(struct duress_dir *dir);

/*
 * Why a whole directory is skipped, from duress_dir_load()'s error, in the
 * words both the module's log and `duress check` use.  buf holds the text
 * for errors without words of their own.
 */
const char *duress_dir_problem(int r, char *buf, size_t len);

#define DURESS_READ_CHUNK ((size_t)64 * 1024)

/*
 * Reads fd to its end into a SHA-256 and, if memfd >= 0, into memfd, which
 * is then sealed.  buf holds DURESS_READ_CHUNK bytes.  Returns 0; -EFBIG past
 * max bytes; -EIO if fd cannot be read; another -errno if memfd fails.
 * *ret_len is the number of bytes read.
 */
int duress_stream_content(int fd, uint64_t max, int memfd, unsigned char *buf,
			  unsigned char hash[DURESS_HASH_LEN], bool *elf, uint64_t *ret_len);

/*
 * Turns an action's SHA-256 (in content_hash) into the hash of the action
 * bound to sig's companion files (also=), each opened without following a
 * symlink and judged like a signature: regular, owned by root (or by the
 * directory's user), not writable by group or others, within max_size.  What
 * is read is charged to *budget.  Returns DURESS_ARMED or why not.
 */
enum duress_skip duress_bind_companions(const struct duress_dir *dir, const struct duress_sig *sig,
					unsigned char *buf, uint64_t *budget,
					unsigned char content_hash[DURESS_HASH_LEN]);

/* Whether a directory entry name can be an action at all. */
bool duress_is_action_name(const char *name);
