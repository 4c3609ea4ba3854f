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
	/*
	 * Costs at least one Argon2id at the default cost (libsodium
	 * INTERACTIVE) whatever its directory holds: a scope with no set at that
	 * cost or more also derives a dummy key, thrown away, so that a prober
	 * cannot tell a missing or empty directory from one with actions.
	 */
	bool stand_in;
	unsigned char (*keys)[DURESS_KEY_LEN]; /* out: n_params keys (sodium_allocarray) */
};

/* Whether duress_kdf_derive() would derive anything for these scopes. */
bool duress_kdf_has_work(const struct duress_kdf_scope *scopes, size_t n);

/*
 * Derives the keys of every scope, one derivation after the other, so that a
 * login holds one derivation's memory at most.  Returns 0, or -errno if a
 * derivation failed; free the keys with duress_kdf_free() either way.
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
