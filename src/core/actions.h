/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "identity.h"
#include "memfd.h"
#include "opts.h"
#include "safe_open.h"
#include "sig.h"
#include "skip.h"

struct duress_action {
	char name[NAME_MAX + 1];
	enum duress_skip skip;
	bool legacy;             /* NAME.sha256 rather than NAME.sig */
	bool world_readable;     /* allowed, but `duress check` warns */
	bool sig_world_readable; /* the same for the signature: offline guessing */
	size_t key_index;        /* which of the directory's keys verifies it */
	struct duress_sig sig;   /* for legacy: sig.content_hash is the stored hash */
	/* What was read: by duress_dir_hash*(), and by a try only for a match or a legacy one. */
	unsigned char content_hash[DURESS_HASH_LEN];
	int memfd; /* sealed copy of the verified bytes, or -1 */
	bool elf;  /* an ELF binary (its memfd may be close-on-exec) */
	bool matched;
	/*
	 * The password's key verified the signature's tag, whatever the files
	 * then said (changed, unreadable): it is that signature's password.
	 */
	bool tagged;
	bool spent; /* matched, but a once action that must not run (once.h) */
	/* skip was learnt by reading an action its password matched: not for the default log. */
	bool skip_on_match;
	uint64_t size; /* what a match reads: the action's and its companions' sizes, as judged */
};

struct duress_dir {
	const char *path;
	enum duress_scope scope;
	uid_t owner;                      /* the user whose directory this is; 0 for global */
	const struct duress_identity *as; /* whose rights open its files; NULL: ours */
	int fd;
	const struct duress_caps *caps;
	bool legacy_ok;
	size_t n_actions;
	struct duress_action *actions; /* sorted by name */
	size_t n_params;
	struct duress_params *params; /* distinct (salt, cost) sets */
};

/* Whether dir holds a loaded directory: a zeroed one has no path. */
static inline bool duress_dir_loaded(const struct duress_dir *dir)
{
	return dir->path != NULL;
}

/*
 * Opens and judges a directory, lists its actions in name order and reads
 * their signatures, every file opened and read with as's rights (NULL: the
 * process's; kept in dir, so it must outlive it).  Returns 0; -ENOENT (no directory:
 * nothing to do); -EPERM (bad owner or mode); -ENOTDIR; -EMEDIUMTYPE (on a
 * pseudo-filesystem); -E2BIG (more than max_entries); or another -errno,
 * among them an identity that could not be taken.  On failure *dir is left
 * as a zeroed one: nothing to free.
 */
int duress_dir_load(struct duress_dir *dir, const char *path, enum duress_scope scope, uid_t owner,
		    const struct duress_caps *caps, bool legacy_ok,
		    const struct duress_identity *as);

/* The trust rules' view of dir, with max_size for actions and companions. */
struct duress_trust duress_dir_trust(const struct duress_dir *dir, uint64_t max_size);

/*
 * Checks `password` against every armed action of dir, with keys[i] the key
 * of dir->params[i] (duress_kdf_derive()).  Each tag is checked against the
 * content hash its signature records, so no action is read unless it
 * matches: every armed action and companion is opened and judged (trust
 * rules, sizes, max_total), whatever the password.  A matching action is
 * then copied, with the rights that opened it, from the descriptor it was
 * judged by into a sealed memfd, hashed, and kept only if that hash is the
 * recorded one (else skipped as changed, with skip_on_match).  A legacy
 * .sha256 one is hashed (and copied) at every check: its check needs the
 * content.  Returns the number of matches, or -errno on an internal error.
 */
int duress_dir_verify(struct duress_dir *dir, const unsigned char (*keys)[DURESS_KEY_LEN],
		      const char *password, size_t len);

/*
 * The work of a check that matches nothing, without a password: what
 * duress_dir_verify() does for a wrong one (for a passphrase that cannot
 * be checked at all).  0 or -errno.
 */
int duress_dir_judge(struct duress_dir *dir);

/*
 * Fills content_hash of each armed action (no password) and skips those
 * changed since signing: for `duress check`.  Returns 0 or -errno for an
 * internal error.
 */
int duress_dir_hash(struct duress_dir *dir);

/*
 * duress_dir_hash(), and each armed action whose bytes still have the
 * signed hash also keeps a sealed memfd of exactly those bytes (as
 * duress_dir_verify() leaves a match's): the after-boot unit runs boot
 * actions matched at the disk-unlock prompt without the passphrase,
 * by their hash.  0 or -errno.
 */
int duress_dir_hash_sealed(struct duress_dir *dir);

/*
 * What duress_dir_load()'s result r for path means to a caller that goes
 * on without the directory: 0 for a load, a missing directory (a debug
 * line) or one not to be trusted (a configuration problem: one warning
 * with duress_dir_problem()'s words); -ENOMEM or -ENOTRECOVERABLE (rights
 * that could not be taken), on which the caller fails closed.
 */
int duress_dir_load_judged(int r, const char *path, const struct duress_log *lg);

/*
 * One log line for the entries dir skips, whatever their number (a user
 * makes them, and may make many): how many and the first; each, with
 * debug.  Names and the path are escaped: they could forge log lines.
 */
void duress_dir_log_skips(const struct duress_dir *dir, const struct duress_log *lg);

/* Frees what a load left; a zeroed directory, or one freed already, is fine too. */
void duress_dir_free(struct duress_dir *dir);

/*
 * Why a whole directory is skipped, from duress_dir_load()'s error, in the
 * words both the module's log and `duress check` use.  buf holds the text
 * for errors without words of their own.
 */
const char *duress_dir_problem(int r, char *buf, size_t len);

/*
 * Turns an action's SHA-256 (in content_hash) into the hash of the action
 * bound to sig's companion files (also=), each opened by duress_open_file()
 * with trust's identity and judged as a companion of trust's scope and owner:
 * regular, owned by root (or by that user), not writable by group or others,
 * within trust->max_size.  Each one's size is charged to *budget.  Returns 0
 * with *ret_skip DURESS_SKIP_NONE or why not, or -errno for an internal error.
 */
int duress_bind_companions(const struct duress_trust *trust, const struct duress_sig *sig,
			   unsigned char *buf, uint64_t *budget,
			   unsigned char content_hash[DURESS_HASH_LEN], enum duress_skip *ret_skip);

/* Whether a directory entry name can be an action at all. */
bool duress_is_action_name(const char *name);
