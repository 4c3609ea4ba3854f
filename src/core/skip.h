/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Why an action will not run; DURESS_SKIP_NONE (0): no reason, it runs for its password. */
enum duress_skip {
	DURESS_SKIP_NONE = 0,
	DURESS_SKIP_NO_SIG,
	DURESS_SKIP_SIG_MALFORMED,
	DURESS_SKIP_SIG_COST,
	DURESS_SKIP_SIG_WEAK_COST,
	DURESS_SKIP_TOO_MANY_PARAMS,
	DURESS_SKIP_LEGACY_DISABLED,
	DURESS_SKIP_CHANGED,
	DURESS_SKIP_OWNER,
	DURESS_SKIP_WRITABLE,
	DURESS_SKIP_SIG_OWNER,
	DURESS_SKIP_SIG_WRITABLE,
	DURESS_SKIP_SIG_NOT_REGULAR,
	DURESS_SKIP_SYMLINK,
	DURESS_SKIP_NOT_REGULAR,
	DURESS_SKIP_NOT_EXECUTABLE,
	DURESS_SKIP_TOO_LARGE,
	DURESS_SKIP_TOTAL_TOO_LARGE,
	DURESS_SKIP_UNREADABLE,
	DURESS_SKIP_ALSO_MISSING,
	DURESS_SKIP_ALSO_UNSAFE,
	DURESS_SKIP_PSEUDO_FS,      /* /proc, /sys...: made up at each read, per reader */
	DURESS_SKIP_ALSO_PSEUDO_FS, /* the same, for a companion file */
	DURESS_SKIP_NOT_AN_ACTION,  /* neither executable nor signed: ignored, not logged */
};

/* The words the module's log and `duress check` use for a reason. */
const char *duress_skip_reason(enum duress_skip skip);
