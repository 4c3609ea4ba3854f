/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link-time wrap of libsodium's crypto_pwhash (-Wl,--wrap=crypto_pwhash)
 * for a test that only wants it at the cheapest cost (kdf_cost.h says why);
 * tests that count or stop derivations have wraps of their own.
 */
#include "kdf_cost.h"

int __wrap_crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
			 unsigned long long passwdlen, const unsigned char *salt,
			 unsigned long long opslimit, size_t memlimit, int alg)
{
	kdf_cost_cheapest(&opslimit, &memlimit);
	return __real_crypto_pwhash(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
}
