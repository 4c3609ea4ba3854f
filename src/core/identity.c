/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "identity.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "account.h"
#include "identity_syscalls.h"

/* Passes over what differs before the rights count as lost: a failure that passes goes with the second. */
#define RESTORE_PASSES 2

int duress_identity_init(struct duress_identity *id, const struct passwd *pw,
			 const struct duress_log *lg)
{
	*id = (struct duress_identity){ .lg = lg };
	if (geteuid() != 0 || pw->pw_uid == 0)
		return 0;
	*id = (struct duress_identity){ .switched = true,
					.uid = pw->pw_uid,
					.gid = pw->pw_gid,
					.lg = lg };
	return duress_user_groups(pw, &id->groups, &id->n_groups);
}

void duress_identity_free(struct duress_identity *id)
{
	free(id->groups);
	*id = (struct duress_identity){ 0 };
}

/* setfsuid() cannot report failure; an invalid id changes nothing and returns the current one. */
static bool set_fsuid(uid_t uid)
{
	(void)syscall(SYS_SETFSUID, uid);
	return (uid_t)syscall(SYS_SETFSUID, (uid_t)-1) == uid;
}

static bool set_fsgid(gid_t gid)
{
	(void)syscall(SYS_SETFSGID, gid);
	return (gid_t)syscall(SYS_SETFSGID, (gid_t)-1) == gid;
}

static bool set_groups(const gid_t *groups, size_t n)
{
	return syscall(SYS_SETGROUPS, n, groups) == 0 && syscall(SYS_GETGROUPS, 0, NULL) == (long)n;
}

_Static_assert(sizeof(((struct duress_saved_identity *)0)->effective) ==
		       _LINUX_CAPABILITY_U32S_3 * sizeof(uint32_t),
	       "one word per capget() data struct");

/*
 * capget() and capset() with pid 0 act on the calling thread alone.  The
 * words are cleared first: the kernel fills them all, but valgrind takes
 * capget() to write only the first (its v1 layout).
 */
static bool get_caps(struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	memset(data, 0, _LINUX_CAPABILITY_U32S_3 * sizeof(*data));
	return syscall(SYS_capget, &h, data) == 0;
}

/* Sets the thread's effective capabilities (permitted and inheritable kept) and checks them. */
static bool set_effective(const uint32_t effective[_LINUX_CAPABILITY_U32S_3])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (!get_caps(data))
		return false;
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i].effective = effective[i];
	if (syscall(SYS_capset, &h, data) != 0 || !get_caps(data))
		return false;
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective != effective[i])
			return false;
	return true;
}

static int save(struct duress_saved_identity *saved)
{
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	long n = syscall(SYS_GETGROUPS, 0, NULL);

	*saved = (struct duress_saved_identity){
		.fsuid = (uid_t)syscall(SYS_SETFSUID, (uid_t)-1),
		.fsgid = (gid_t)syscall(SYS_SETFSGID, (gid_t)-1),
	};
	if (n < 0 || !get_caps(caps))
		return -ENOTRECOVERABLE;
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		saved->effective[i] = caps[i].effective;
	if (n > 0) {
		/* Twice: the second half is where restored() reads the groups back. */
		saved->groups = calloc(2 * (size_t)n, sizeof(gid_t));
		if (!saved->groups)
			return -ENOMEM;
		if (syscall(SYS_GETGROUPS, n, saved->groups) != n) {
			free(saved->groups);
			saved->groups = NULL;
			return -ENOTRECOVERABLE;
		}
	}
	saved->n_groups = (int)n;
	return 0;
}

int duress_identity_enter(const struct duress_identity *id, struct duress_saved_identity *saved)
{
	int r;

	*saved = (struct duress_saved_identity){ 0 };
	if (!id || !id->switched)
		return 0;
	r = save(saved);
	if (r < 0)
		return r;
	saved->switched = true;
	saved->lg = id->lg;
	/* Groups and fsgid while the capabilities are still there, fsuid, then none. */
	if (set_groups(id->groups, id->n_groups) && set_fsgid(id->gid) && set_fsuid(id->uid) &&
	    set_effective((const uint32_t[_LINUX_CAPABILITY_U32S_3]){ 0 }))
		return 0;
	duress_identity_leave(saved);
	return -ENOTRECOVERABLE;
}

static bool fsuid_is(uid_t uid)
{
	return (uid_t)syscall(SYS_SETFSUID, (uid_t)-1) == uid;
}

static bool fsgid_is(gid_t gid)
{
	return (gid_t)syscall(SYS_SETFSGID, (gid_t)-1) == gid;
}

/* The thread's groups are exactly the saved ones, in their order (as setgroups() left them). */
static bool groups_restored(const struct duress_saved_identity *s)
{
	const size_t n = (size_t)s->n_groups;
	gid_t *now = s->groups + n; /* save()'s second half */

	return syscall(SYS_GETGROUPS, s->n_groups, now) == s->n_groups &&
	       (n == 0 || memcmp(now, s->groups, n * sizeof(gid_t)) == 0);
}

static bool effective_is(const uint32_t effective[_LINUX_CAPABILITY_U32S_3])
{
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (!get_caps(data))
		return false;
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective != effective[i])
			return false;
	return true;
}

static bool restored(const struct duress_saved_identity *s)
{
	return fsuid_is(s->fsuid) && fsgid_is(s->fsgid) && groups_restored(s) &&
	       effective_is(s->effective);
}

/*
 * One pass that changes back whatever differs, each step tried whatever
 * the one before did: a failed capset() must not leave the user's fsuid in
 * place.  Only what differs is changed, so that a call the application may
 * not make (a seccomp filter denying setgroups()) is not needed to give
 * back what was never taken.  The capabilities first, to change the ids
 * with; again at the end, since fsuid 0 raises the filesystem ones that
 * were maybe not in effect.
 */
static void restore_pass(const struct duress_saved_identity *s)
{
	if (!effective_is(s->effective))
		(void)set_effective(s->effective);
	if (!fsuid_is(s->fsuid))
		(void)set_fsuid(s->fsuid);
	if (!groups_restored(s))
		(void)set_groups(s->groups, (size_t)s->n_groups);
	if (!fsgid_is(s->fsgid))
		(void)set_fsgid(s->fsgid);
	if (!effective_is(s->effective))
		(void)set_effective(s->effective);
}

/*
 * The caller's rights cannot be given back: the process ends here rather
 * than return to its application with a user's file rights, another
 * user's groups or fewer capabilities, which the rest of a PAM stack
 * (default=ignore) and the application would carry on with.  OpenSSH's
 * restore_uid() ends the process too (fatal()); Linux-PAM's
 * pam_modutil_regain_priv() returns an error and leaves the process as it
 * is.  _exit: no atexit handler or stdio flush of the application runs in
 * this state, and no core holds a password.
 */
static _Noreturn void identity_lost(const struct duress_log *lg)
{
	duress_log(lg, LOG_CRIT,
		   "cannot restore the caller's identity after reading a user's files: "
		   "ending the process");
	_exit(EXIT_FAILURE);
}

void duress_identity_leave(struct duress_saved_identity *saved)
{
	const struct duress_log *lg = saved->lg;
	bool ok;

	if (!saved->switched)
		return;
	/* Each look counts once: a read that fails once is looked at again after a pass. */
	ok = restored(saved);
	for (int pass = 0; pass < RESTORE_PASSES && !ok; pass++) {
		restore_pass(saved);
		ok = restored(saved);
	}
	free(saved->groups);
	*saved = (struct duress_saved_identity){ 0 };
	if (!ok)
		identity_lost(lg);
}
