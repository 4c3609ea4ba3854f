/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "account.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <unistd.h>

#include "manifest.h"

/* Buffers for the *_r lookups grow on ERANGE up to this. */
#define LOOKUP_BUF_MAX (1U << 20)

int duress_getpw(const char *name, uid_t uid, struct duress_passwd **ret)
{
	long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 16384;

	for (;;) {
		struct duress_passwd *p = malloc(sizeof(*p) + size);
		struct passwd *found = NULL;
		int r;

		if (!p)
			return -ENOMEM;
		if (name)
			r = getpwnam_r(name, &p->pw, p->buf, size, &found);
		else
			r = getpwuid_r(uid, &p->pw, p->buf, size, &found);
		if (r == 0 && found) {
			*ret = p;
			return 0;
		}
		free(p);
		if (r != ERANGE)
			return r == 0 ? -ENOENT : -r;
		if (size >= LOOKUP_BUF_MAX)
			return -ERANGE;
		size *= 2;
	}
}

int duress_user_groups(const struct passwd *pw, gid_t **ret, size_t *n_ret)
{
	gid_t *groups = NULL;
	int n = 32;

	for (;;) {
		gid_t *g = reallocarray(groups, (size_t)n, sizeof(gid_t));
		int want = n;

		if (!g) {
			free(groups);
			return -ENOMEM;
		}
		groups = g;
		if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &want) >= 0) {
			*ret = groups;
			*n_ret = (size_t)want;
			return 0;
		}
		if (want <= n || want > (int)DURESS_MANIFEST_MAX_GROUPS) {
			free(groups);
			return -E2BIG;
		}
		n = want;
	}
}
