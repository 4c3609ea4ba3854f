/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The disk-unlock prompt's runtime (docs/boot.md, core/boot.h), shared by
 * the unlock-helper program (unlock-main.c) and its unit tests.
 *
 * At the prompt (in the initramfs): the passphrase typed there is checked
 * against the boot directory, signed exactly as a global one, with exactly
 * one Argon2id derivation whatever the directory holds; matched
 * DURESS_BOOT_BEFORE_PREFIX actions run at once through the runner and are
 * waited for, the other matched ones are written to the record for the
 * after-boot unit.  After boot: the record is taken (once), and each entry
 * whose action still has the recorded content hash runs through the runner,
 * detached as a login's actions are.
 */
#include <stdbool.h>
#include <stddef.h>

#include "core/log.h"

/* The longest passphrase read from stdin (bytes); a longer one matches nothing. */
#define UNLOCK_PASS_MAX 512
/* How long the prompt waits for the DURESS_BOOT_BEFORE_PREFIX actions (seconds). */
#define UNLOCK_WAIT_SECONDS 30
/*
 * The longest record read after boot: one entry per action of a directory
 * of DURESS_DEFAULT_MAX_ENTRIES entries, each at most 64 hex digits, a
 * space, NAME_MAX bytes and a NUL (about 83 KiB), rounded up.
 */
#define UNLOCK_RECORD_MAX (128U << 10)
/* A record entry is "HEX NAME\0": HEX the action's SHA-256 in this many hex digits. */
#define UNLOCK_HASH_HEX 64
/* PAM_SERVICE in the actions' environment (there is no PAM there; the same variables as a login's). */
#define UNLOCK_SERVICE "unlock"

struct unlock_paths {
	const char *dir;        /* the boot actions (DURESS_BOOT_DIR) */
	const char *record_dir; /* DURESS_BOOT_RECORD_DIR */
	const char *record;     /* DURESS_BOOT_RECORD, inside record_dir */
	const char *runner;     /* the action runner (session-helper) */
	unsigned wait_seconds;  /* for the before-unlock actions */
};

/*
 * At the prompt: checks pass (len bytes, len <= UNLOCK_PASS_MAX; too_long:
 * it was longer, so matches nothing but costs the same), records the
 * matched after-boot actions and runs the matched before-unlock ones,
 * waiting for them.  Always exactly one derivation, also on errors that
 * come before it.  Returns the number of matched actions, or -errno for an
 * internal error (logged).
 */
int unlock_at_prompt(const struct unlock_paths *p, const char *pass, size_t len, bool too_long,
		     const struct duress_log *lg);

/*
 * After boot: takes the record (if any), runs the recorded actions that
 * are still what was verified at the prompt, removes the record's
 * directory.  Returns the number of actions started, or -errno (logged).
 */
int unlock_after_boot(const struct unlock_paths *p, const struct duress_log *lg);
