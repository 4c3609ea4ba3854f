/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "kdf_cost.h"

#include <sodium.h>

void kdf_cost_cheapest(unsigned long long *opslimit, size_t *memlimit)
{
	*opslimit = crypto_pwhash_OPSLIMIT_MIN;
	*memlimit = crypto_pwhash_MEMLIMIT_MIN;
}
