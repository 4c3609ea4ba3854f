/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "skip.h"

#include <stddef.h>

const char *duress_skip_reason(enum duress_skip skip)
{
	static const char *const reasons[] = {
		[DURESS_SKIP_NONE] = "armed",
		[DURESS_SKIP_NO_SIG] = "no signature (run: duress sign)",
		[DURESS_SKIP_SIG_MALFORMED] = "signature is malformed",
		[DURESS_SKIP_SIG_COST] = "signature cost is over the module's cap",
		[DURESS_SKIP_SIG_WEAK_COST] = "signature cost is below libsodium's minimum",
		[DURESS_SKIP_TOO_MANY_PARAMS] =
			"too many different salts or costs in the directory",
		[DURESS_SKIP_LEGACY_DISABLED] =
			"legacy .sha256 signature without the legacy_sha256 option",
		[DURESS_SKIP_CHANGED] = "content changed since signing",
		[DURESS_SKIP_OWNER] = "bad owner",
		[DURESS_SKIP_WRITABLE] = "writable by group or others",
		[DURESS_SKIP_SIG_OWNER] = "signature has a bad owner",
		[DURESS_SKIP_SIG_WRITABLE] = "signature is writable by group or others",
		[DURESS_SKIP_SIG_NOT_REGULAR] = "signature is not a regular file",
		[DURESS_SKIP_SYMLINK] = "symlink",
		[DURESS_SKIP_NOT_REGULAR] = "not a regular file",
		[DURESS_SKIP_NOT_EXECUTABLE] = "not executable",
		[DURESS_SKIP_TOO_LARGE] = "too large (max_size=)",
		[DURESS_SKIP_TOTAL_TOO_LARGE] =
			"the directory's actions together are too large (max_total=)",
		[DURESS_SKIP_UNREADABLE] = "unreadable",
		[DURESS_SKIP_NOT_AN_ACTION] = "not an action (neither executable nor signed)",
		[DURESS_SKIP_ALSO_MISSING] = "a companion file (--also) is missing or unreadable",
		/* One literal: clang-tidy takes split ones in an array for a missing comma. */
		[DURESS_SKIP_ALSO_UNSAFE] =
			"a companion file (--also) is a symlink, not a regular file, has a bad owner, is writable by group or others, or is too large",
		[DURESS_SKIP_PSEUDO_FS] = "on a pseudo-filesystem (/proc, /sys...)",
		[DURESS_SKIP_ALSO_PSEUDO_FS] =
			"a companion file (--also) is on a pseudo-filesystem (/proc, /sys...)",
	};

	if ((size_t)skip >= sizeof(reasons) / sizeof(reasons[0]) || !reasons[skip])
		return "unknown";
	return reasons[skip];
}
