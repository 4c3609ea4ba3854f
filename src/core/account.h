/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Account lookups, shared by the module, the runner's manifest and the CLI. */

#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

/* The account's groups, primary one included (getgrouplist); free *ret.  0 or -errno. */
int duress_user_groups(const struct passwd *pw, gid_t **ret, size_t *n);

/*
 * Calls fn(ctx, buf, size) with a scratch buffer for a *_r lookup, growing
 * it while fn returns ERANGE, up to 1 MiB.  fn returns what the *_r call
 * does (0 or a positive errno).  The buffer is wiped before it is freed (a
 * shadow entry holds the password hash).  Returns 0 or -errno (-ERANGE
 * when even 1 MiB was too small).
 */
int duress_with_scratch(int (*fn)(void *ctx, char *buf, size_t size), void *ctx);

/* A getpwnam_r()/getpwuid_r() result in one allocation; free with free(). */
struct duress_account {
	struct passwd pw;
	char buf[];
};

/* 0, -ENOENT, or another -errno.  Exactly one of name and uid is used. */
int duress_getpw(const char *name, uid_t uid, struct duress_account **ret);
