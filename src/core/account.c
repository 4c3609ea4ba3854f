/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "account.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "manifest.h"

/* Buffers for the *_r lookups grow on ERANGE up to this. */
#define LOOKUP_BUF_MAX (1U << 20)

int duress_with_scratch(int (*fn)(void *ctx, char *buf, size_t size), void *ctx)
{
	for (size_t size = 4096;; size *= 2) {
		char *buf = malloc(size);
		int r;

		if (!buf)
			return -ENOMEM;
		r = fn(ctx, buf, size);
		sodium_memzero(buf, size);
		free(buf);
		if (r != ERANGE || size >= LOOKUP_BUF_MAX)
			return -r;
	}
}

static size_t field_size(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* Copies s into *at and moves *at past it; NULL stays NULL. */
static char *put_field(char **at, const char *s)
{
	size_t n = field_size(s);
	char *copy = n ? memcpy(*at, s, n) : NULL;

	*at += n;
	return copy;
}

/* One allocation holding pw and every string it points to. */
static struct duress_account *account_copy(const struct passwd *pw)
{
	size_t size = field_size(pw->pw_name) + field_size(pw->pw_passwd) +
		      field_size(pw->pw_gecos) + field_size(pw->pw_dir) + field_size(pw->pw_shell);
	struct duress_account *a = malloc(sizeof(*a) + size);
	char *at;

	if (!a)
		return NULL;
	at = a->buf;
	a->pw = (struct passwd){ .pw_uid = pw->pw_uid, .pw_gid = pw->pw_gid };
	a->pw.pw_name = put_field(&at, pw->pw_name);
	a->pw.pw_passwd = put_field(&at, pw->pw_passwd);
	a->pw.pw_gecos = put_field(&at, pw->pw_gecos);
	a->pw.pw_dir = put_field(&at, pw->pw_dir);
	a->pw.pw_shell = put_field(&at, pw->pw_shell);
	return a;
}

struct passwd_query {
	const char *name;
	uid_t uid;
	struct duress_account *found;
};

static int passwd_lookup(void *ctx, char *buf, size_t size)
{
	struct passwd_query *q = ctx;
	struct passwd pw, *found = NULL;
	int r = q->name ? getpwnam_r(q->name, &pw, buf, size, &found) :
			  getpwuid_r(q->uid, &pw, buf, size, &found);

	if (r != 0)
		return r;
	if (!found)
		return ENOENT;
	q->found = account_copy(&pw);
	return q->found ? 0 : ENOMEM;
}

int duress_getpw(const char *name, uid_t uid, struct duress_account **ret)
{
	struct passwd_query q = { .name = name, .uid = uid };
	int r = duress_with_scratch(passwd_lookup, &q);

	if (r == 0)
		*ret = q.found;
	return r;
}

int duress_user_groups(const struct passwd *pw, gid_t **ret, size_t *n_ret)
{
	gid_t *groups = NULL;
	int n = 32;

	/* getgrouplist() reports how many it needs, not ERANGE: grown here. */
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
