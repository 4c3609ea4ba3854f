/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether this process runs under valgrind (its preload is in LD_PRELOAD). */
bool under_valgrind(void);

/*
 * Under valgrind, lowers an Argon2id cost to the cheapest libsodium takes;
 * elsewhere leaves it.  For the tests' wrappers of crypto_pwhash().
 *
 * valgrind is there to check how our code handles memory.  One derivation
 * at the default cost (64 MiB, two passes) is about 2 s of libsodium's own
 * arithmetic under it, and the module pays one on every login that matches
 * nothing (the stand-in of SPEC 4): three quarters of the valgrind step went
 * there.  The derivation still runs, into the same buffers, through the same
 * calls.  A test that signed at the default cost in the process under
 * valgrind would no longer match: it fails, it does not pass by mistake.
 */
void kdf_cost_under_valgrind(unsigned long long *opslimit, size_t *memlimit);
