/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Account lookups, shared by the module, the runner's manifest and the CLI. */

#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

/* The account's groups, primary one included (getgrouplist); free *ret.  0 or -errno. */
int duress_user_groups(const struct passwd *pw, gid_t **ret, size_t *n);

/* A getpwnam_r()/getpwuid_r() result with its own storage; free with free(). */
struct duress_passwd {
	struct passwd pw;
	char buf[];
};

/* 0, -ENOENT, or another -errno.  Exactly one of name and uid is used. */
int duress_getpw(const char *name, uid_t uid, struct duress_passwd **ret);
