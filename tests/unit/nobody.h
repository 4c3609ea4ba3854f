/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

#include "core/identity.h"

/*
 * nobody's rights (uid and gid 65534, no other group): the identity the
 * unit tests take when they stand for a user whose files are read.
 */
static inline const struct duress_identity *nobody_identity(void)
{
	static gid_t groups[] = { 65534 };
	static const struct duress_identity nobody = {
		.switched = true,
		.uid = 65534,
		.gid = 65534,
		.groups = groups,
		.n_groups = 1,
	};

	return &nobody;
}
