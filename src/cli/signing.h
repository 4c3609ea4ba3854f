/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

#include "cli/password.h"
#include "core/once.h"
#include "core/sig.h"

struct duress_sign_opts {
	uint64_t memlimit;    /* 0 (with opslimit 0): the directory's salt and cost, */
	uint64_t opslimit;    /* or else libsodium's INTERACTIVE cost */
	bool allow_weak_cost; /* --allow-weak-cost: below the floor too (test suites) */
	const char *also[DURESS_ALSO_MAX_FILES]; /* companion files, as given */
	size_t n_also;
	/*
	 * --no-also: with no --also, bind no companion.  Otherwise, with none
	 * given, those the signature being replaced binds are bound again.
	 */
	bool drop_also;
	/*
	 * --once: the action runs at its first match only (core/once.h).
	 * --no-once: at every match.  Neither: as the signature it replaces.
	 */
	bool once;
	bool drop_once;
	const char *pam_dir;  /* where to find the module line's directories (NULL: /etc/pam.d) */
	const char *boot_dir; /* the disk-unlock prompt's directory (NULL: DURESS_BOOT_DIR) */
	const char *dracut_conf; /* dracut's config directory (NULL: DURESS_DRACUT_CONF_DIR) */
};

/*
 * --memlimit (memory true) or --opslimit: parses value into opts.  Returns
 * 0, or -1 after a one-line error.
 */
int duress_sign_opts_cost(struct duress_sign_opts *opts, bool memory, const char *value);

/*
 * The floor, once every option is read: a --memlimit or --opslimit below
 * libsodium's INTERACTIVE cost (the default) is refused unless
 * --allow-weak-cost.  Returns 0, or -1 after a one-line error.
 */
int duress_sign_opts_floor(const struct duress_sign_opts *opts);

/*
 * Signs the action at path where it lies, bound to the companion files,
 * writing path.sig atomically (mode 0600, owned like the action).  With no
 * companion given and no drop_also, those of the signature it replaces are
 * bound again, with a warning naming them: re-signing after an edit must
 * not quietly unbind a config.  Prints what is done and what still needs
 * fixing; returns 0 or -1 after a one-line error.
 */
int duress_sign_file(const char *path, const struct duress_password *pw,
		     const struct duress_sign_opts *opts);

/*
 * 0: the password matches; 1: it does not; 2: error (reported).  A once
 * signature's line also says whether it ran, as its record under state_dir
 * (NULL: DURESS_STATE_DIR) tells.
 */
int duress_verify_file(const char *path, const struct duress_password *pw, const char *state_dir);

/*
 * What a once signature's record says (core/once.h), in words for `duress
 * check` and `duress verify`, into buf: whether it ran, when, and the
 * command that re-arms it.  Returns buf.
 */
const char *duress_once_words(enum duress_once_state state, const char *state_dir, const char *name,
			      const struct stat *when, char *buf, size_t size);
