/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * Lowers an Argon2id cost to the cheapest libsodium takes: the tests'
 * wrappers of crypto_pwhash() (test_pam's, which the module it loads calls
 * too, and the unit tests' link-time wraps) call it on every derivation.
 *
 * The module pays a stand-in derivation at the default cost (64 MiB, two
 * passes) on every login that matches nothing (SPEC 4): 0.2 s each, two
 * thirds of the PAM suite's time, and 2 s each under valgrind, three
 * quarters of the valgrind step's.  These tests judge what a login does,
 * not what it costs; the derivation still runs, into the same buffers,
 * through the same calls.  That the stand-in is paid, at its full cost, is
 * test_timing's to prove, through auth_child: a program of its own, whose
 * derivations keep their cost (as do those of e2e's pamtester, su and sshd,
 * package's and examples-e2e's real logins).  A test that signed at the
 * default cost outside the process and logged in inside it would no longer
 * match: it fails, it does not pass by mistake.
 */
void kdf_cost_cheapest(unsigned long long *opslimit, size_t *memlimit);

/*
 * Both sides of a link-time wrap of libsodium's crypto_pwhash()
 * (-Wl,--wrap=crypto_pwhash), declared once for the tests that make one:
 * kdf_wrap.c's, or a test's own that counts or stops derivations.
 */
int __real_crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
			 unsigned long long passwdlen, const unsigned char *salt,
			 unsigned long long opslimit, size_t memlimit, int alg);
int __wrap_crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
			 unsigned long long passwdlen, const unsigned char *salt,
			 unsigned long long opslimit, size_t memlimit, int alg);
