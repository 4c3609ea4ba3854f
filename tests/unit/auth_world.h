/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The world the authentication tests run duress_authenticate() in: fake
 * accounts through nss_wrapper (linked into the test, so that the core's
 * getpwnam_r()/getgrouplist() see them), a per-user and a global directory
 * with signed actions, and the stand-in runner (fake_runner.c) whose
 * report says which chains and jobs were started.
 *
 *   user directory ~ualice/.duress:  10-user (USER_PW), 20-both (BOTH_PW)
 *   global directory:                50-global (GLOBAL_PW), 60-both (BOTH_PW)
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/auth.h"
#include "fixture.h"

#define USER_PW "user duress"
#define GLOBAL_PW "global duress"
#define BOTH_PW "both duress"
#define WRONG_PW "no duress at all"
/* ualice's real password: her passwd entry holds its SHA-512 crypt hash. */
#define REAL_PW "the real one"

/* How a case's world differs from the usual one. */
enum world_change {
	WORLD_AS_USUAL,
	WORLD_USER_DIR_WRITABLE,    /* mode 0770 */
	WORLD_USER_ACTION_CHANGED,  /* 10-user edited after signing */
	WORLD_GLOBAL_DIR_NOT_ROOTS, /* owned by ualice (root only) */
	WORLD_NO_GLOBAL_DIR,        /* the global directory does not exist */
	WORLD_GLOBAL_DIR_UNARMED,   /* the global directory holds an unsigned action only */
	WORLD_SLOTS_TAKEN,          /* the only derivation slot is held by someone else */
	WORLD_SLOT_DIR_SYMLINK,     /* the slot directory is a symbolic link */
	WORLD_SLOT_DIR_WRITABLE,    /* the slot directory is writable by others */
	WORLD_SLOT_FILE_SYMLINK,    /* the slot file is a symbolic link */
};

struct world {
	bool root;
	char tmp[PATH_MAX / 2];
	char home[PATH_MAX];   /* ualice's home, and where runner.out is when run as ualice */
	char global[PATH_MAX]; /* the global directory */
	char slots[PATH_MAX];  /* the derivation slots (slot_dir=) */
	int slot_holder;       /* WORLD_SLOTS_TAKEN: the descriptor that holds slot 0 */
	uid_t uid;             /* ualice's: 20001 as root, ours otherwise */
	gid_t gid;
	const char *fake_runner, *false_runner;
	bool before;                      /* world_auth() is in the before-pam_unix placement */
	const struct duress_trace *trace; /* world_auth()'s request's trace, or NULL */
};

extern struct world W;

/* Writes the accounts and points nss_wrapper at them.  0, or -1 if not run by meson. */
int world_init(void);
void world_destroy(void);

/* The directories and actions, fresh, with change applied; world_clear() removes them. */
void world_build(enum world_change change);
void world_clear(void);

/* cmocka teardown: world_clear(). */
int world_teardown(void **state);

/* cmocka group setup and teardown: world_init() and world_destroy(). */
int world_group_setup(void **state);
int world_group_teardown(void **state);

/* Module defaults, with the world's global directory and the stand-in runner. */
void world_opts(struct duress_opts *o);

/* One authentication as ualice's login would do it; service NULL is "login". */
enum duress_outcome world_auth(const struct duress_opts *o, const char *user, const char *password,
			       const char *service);

/*
 * The "chain" and "job" lines of the runner's report in dir (NULL: the
 * world's top directory); false if the runner did not run.  The report is
 * removed, so that the next one is the next runner's.
 */
bool world_report(const char *dir, char *buf, size_t size);

/* tmpl with @U@ and @G@ replaced by ualice's uid and gid. */
void world_expand(const char *tmpl, char *out, size_t size);
