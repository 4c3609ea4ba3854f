/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>

#include "sig.h"

/*
 * One scope's key derivations: a key per parameter set of its directory
 * (none when it has no directory, an empty one, or one that is skipped).
 */
struct duress_kdf_scope {
	const struct duress_params *params;
	size_t n_params;
	unsigned char (*keys)[DURESS_KEY_LEN]; /* out: n_params keys (sodium_allocarray) */
	int result;                            /* out: 0 or -errno */
};

/*
 * Derives the keys of every scope, each scope costing at least one Argon2id
 * at the default cost (libsodium INTERACTIVE): a scope with no set at that
 * cost or more also derives a dummy key, thrown away, so that a prober
 * cannot tell a missing or empty directory from one with actions.  Scope 0
 * is derived on a thread of its own while this one derives the others
 * (sequentially when no thread can be made): a login waits for the slowest
 * scope, not for their sum.  Returns 0, or -errno if any scope failed;
 * free the keys with duress_kdf_free() either way.
 */
int duress_kdf_derive(struct duress_kdf_scope *scopes, size_t n, const char *password, size_t len);

/* Wipes and frees the keys. */
void duress_kdf_free(struct duress_kdf_scope *scopes, size_t n);

/*
 * What pam_unix would have spent on password: crypt_r() of it against the
 * account's hash (the passwd field, or the shadow entry when that is "x"
 * and readable), as many times as pam_unix calls it, results thrown away.
 * Nothing for a locked ('!'), disabled ('*') or empty hash: pam_unix does
 * not hash those either.
 */
void duress_mirror_unix_hash(const struct passwd *pw, const char *password);
