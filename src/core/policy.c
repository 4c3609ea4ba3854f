/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "policy.h"

#include <errno.h>
#include <grp.h>
#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account.h"

struct shadow_query {
	const char *user;
	bool locked;
};

static int shadow_locked(void *ctx, char *buf, size_t size)
{
	struct shadow_query *q = ctx;
	struct spwd sp, *found = NULL;
	int r = getspnam_r(q->user, &sp, buf, size, &found);

	if (r == 0 && found)
		q->locked = found->sp_pwdp &&
			    (found->sp_pwdp[0] == '!' || found->sp_pwdp[0] == '*');
	return r;
}

/*
 * pam_unix never accepts a password for a hash starting with '!' (passwd -l,
 * usermod -L) or '*' (no password): neither does a duress password.  A
 * lookup that fails counts as locked, whatever the error (EIO, an sss or
 * LDAP backend's EAGAIN or ETIMEDOUT, an entry too large, no memory): only
 * "no such entry" means the account is not in shadow, and then the passwd
 * field alone counts.  A process that is not root cannot read the shadow
 * file (a screen locker checking its own user): there too the passwd field
 * alone counts, as it did for pam_unix when the account logged in.
 */
static bool account_locked(const struct passwd *pw)
{
	struct shadow_query q = { .user = pw->pw_name };
	int r;

	if (pw->pw_passwd && (pw->pw_passwd[0] == '!' || pw->pw_passwd[0] == '*'))
		return true;
	r = duress_with_scratch(shadow_locked, &q);
	if (r == 0 || r == -ENOENT)
		return q.locked;
	return !(r == -EACCES && geteuid() != 0);
}

struct group_query {
	const char *name;
	bool found;
	gid_t gid;
};

static int group_lookup(void *ctx, char *buf, size_t size)
{
	struct group_query *q = ctx;
	struct group gr, *found = NULL;
	int r = getgrnam_r(q->name, &gr, buf, size, &found);

	if (r == 0 && found) {
		q->found = true;
		q->gid = found->gr_gid;
	}
	return r;
}

bool duress_in_group(const struct passwd *pw, const char *group)
{
	struct group_query q = { .name = group };
	gid_t *groups = NULL;
	size_t n = 0;
	bool member;

	if (duress_with_scratch(group_lookup, &q) != 0 || !q.found)
		return false;
	if (pw->pw_gid == q.gid)
		return true;
	if (duress_user_groups(pw, &groups, &n) < 0)
		return false;
	member = false;
	for (size_t i = 0; i < n && !member; i++)
		member = groups[i] == q.gid;
	free(groups);
	return member;
}

/* "KEY <decimal>" (blanks around, an optional comment after); 0 or -EINVAL. */
static int login_defs_value(const char *line, const char *key, uid_t *ret)
{
	size_t n = strlen(key);
	unsigned long long v = 0;
	const char *p = line + strspn(line, " \t");

	if (strncmp(p, key, n) != 0 || (p[n] != ' ' && p[n] != '\t'))
		return -EINVAL;
	p += n + strspn(p + n, " \t");
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > (uid_t)-2)
			return -EINVAL;
	}
	p += strspn(p, " \t\r\n");
	if (*p && *p != '#')
		return -EINVAL;
	*ret = (uid_t)v;
	return 0;
}

int duress_uid_range_read(const char *path, struct duress_uid_range *ret)
{
	struct duress_uid_range r = { DURESS_UID_MIN_DEFAULT, DURESS_UID_MAX_DEFAULT };
	char line[512];
	bool continued = false;
	FILE *f = fopen(path, "re");
	int error;

	*ret = r;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		/* The tail of an overlong line is not a line of its own. */
		bool tail = continued;

		continued = !strchr(line, '\n') && !feof(f);
		if (tail)
			continue;
		(void)(login_defs_value(line, "UID_MIN", &r.min) == 0 ||
		       login_defs_value(line, "UID_MAX", &r.max) == 0);
	}
	error = ferror(f) ? -EIO : 0;
	fclose(f);
	if (error == 0 && r.min <= r.max)
		*ret = r;
	return error;
}

/* What the global password may log in, beyond the rules for every match. */
static enum duress_deny global_login_denied(const struct duress_opts *o, const struct passwd *pw,
					    const char *login_defs, const struct duress_log *lg)
{
	struct duress_uid_range range;

	if (pw->pw_uid == 0)
		return DURESS_DENY_NONE; /* allow_root, checked by the caller */
	if (duress_uid_range_read(login_defs, &range) < 0) {
		duress_log(lg, LOG_ERR, "cannot read %s: the global duress password logs nobody in",
			   login_defs);
		return DURESS_DENY_NOT_ORDINARY;
	}
	if (pw->pw_uid < range.min || pw->pw_uid > range.max) {
		duress_debug(lg,
			     "%s is not an ordinary account (uid %u outside %u..%u): "
			     "the global duress password does not log it in",
			     pw->pw_name, (unsigned)pw->pw_uid, (unsigned)range.min,
			     (unsigned)range.max);
		return DURESS_DENY_NOT_ORDINARY;
	}
	if (o->global_group && !duress_in_group(pw, o->global_group)) {
		duress_debug(lg,
			     "%s is not in global_group %s: the global duress password "
			     "does not log it in",
			     pw->pw_name, o->global_group);
		return DURESS_DENY_GLOBAL_GROUP;
	}
	return DURESS_DENY_NONE;
}

enum duress_deny duress_login_denied_defs(const struct duress_opts *o, const struct passwd *pw,
					  const char *service, struct duress_match m,
					  const char *login_defs, const struct duress_log *lg)
{
	if (o->deny)
		return DURESS_DENY_OPTION;
	if (!o->allow_root && duress_service_is_elevation(o, service)) {
		duress_debug(lg,
			     "%s authenticates an elevation; a duress password never "
			     "passes it without allow_root: denied",
			     service);
		return DURESS_DENY_ELEVATION;
	}
	if (pw->pw_uid == 0 && !o->allow_root) {
		duress_debug(lg, "duress login as root needs allow_root: denied");
		return DURESS_DENY_ROOT;
	}
	if (account_locked(pw)) {
		duress_debug(lg, "account %s is locked: denied", pw->pw_name);
		return DURESS_DENY_LOCKED;
	}
	/* A per-user password only ever matches its own account. */
	if (m.user)
		return DURESS_DENY_NONE;
	return global_login_denied(o, pw, login_defs, lg);
}

bool duress_login_allowed_defs(const struct duress_opts *o, const struct passwd *pw,
			       const char *service, struct duress_match m, const char *login_defs,
			       const struct duress_log *lg)
{
	return duress_login_denied_defs(o, pw, service, m, login_defs, lg) == DURESS_DENY_NONE;
}

enum duress_deny duress_login_denied(const struct duress_opts *o, const struct passwd *pw,
				     const char *service, struct duress_match m,
				     const struct duress_log *lg)
{
	return duress_login_denied_defs(o, pw, service, m, DURESS_LOGIN_DEFS, lg);
}

bool duress_login_allowed(const struct duress_opts *o, const struct passwd *pw, const char *service,
			  struct duress_match m, const struct duress_log *lg)
{
	return duress_login_denied(o, pw, service, m, lg) == DURESS_DENY_NONE;
}

const char *duress_deny_words(enum duress_deny d)
{
	switch (d) {
	case DURESS_DENY_NONE:
		return "not refused";
	case DURESS_DENY_OPTION:
		return "the module line has the deny option (a silent alarm)";
	case DURESS_DENY_ELEVATION:
		return "the service is an elevation (sudo, pkexec...), which a duress password "
		       "never passes without allow_root";
	case DURESS_DENY_ROOT:
		return "a duress password logs in root only with allow_root";
	case DURESS_DENY_LOCKED:
		return "the account is locked, and a duress password never unlocks it";
	case DURESS_DENY_NOT_ORDINARY:
		return "a global duress password logs in only ordinary accounts "
		       "(UID_MIN..UID_MAX of login.defs)";
	case DURESS_DENY_GLOBAL_GROUP:
		return "the account is not in the module line's global_group=";
	}
	return "refused";
}
