/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "identity.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "account.h"

/*
 * Raw system calls, not glibc's setgroups(), which changes every thread of
 * the process (as libcap's cap_set_proc() may, through libpsx): a PAM
 * application may be multithreaded, and only this thread may take a user's
 * rights.  32-bit ids where the old calls are 16-bit.
 */
#ifdef SYS_setfsuid32
#define SYS_SETFSUID SYS_setfsuid32
#define SYS_SETFSGID SYS_setfsgid32
#define SYS_SETGROUPS SYS_setgroups32
#define SYS_GETGROUPS SYS_getgroups32
#else
#define SYS_SETFSUID SYS_setfsuid
#define SYS_SETFSGID SYS_setfsgid
#define SYS_SETGROUPS SYS_setgroups
#define SYS_GETGROUPS SYS_getgroups
#endif

int duress_identity_init(struct duress_identity *id, const struct passwd *pw)
{
	*id = (struct duress_identity){ 0 };
	if (geteuid() != 0 || pw->pw_uid == 0)
		return 0;
	*id = (struct duress_identity){ .switched = true, .uid = pw->pw_uid, .gid = pw->pw_gid };
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
		saved->groups = calloc((size_t)n, sizeof(gid_t));
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
	/* Groups and fsgid while the capabilities are still there, fsuid, then none. */
	if (set_groups(id->groups, id->n_groups) && set_fsgid(id->gid) && set_fsuid(id->uid) &&
	    set_effective((const uint32_t[_LINUX_CAPABILITY_U32S_3]){ 0 }))
		return 0;
	(void)duress_identity_leave(saved);
	return -ENOTRECOVERABLE;
}

int duress_identity_leave(struct duress_saved_identity *saved)
{
	bool ok;

	if (!saved->switched)
		return 0;
	/*
	 * The capabilities first, to change the ids with; again at the end,
	 * since fsuid 0 raises the filesystem ones that were maybe not in effect.
	 */
	ok = set_effective(saved->effective) && set_fsuid(saved->fsuid) &&
	     set_groups(saved->groups, (size_t)saved->n_groups) && set_fsgid(saved->fsgid) &&
	     set_effective(saved->effective);
	free(saved->groups);
	*saved = (struct duress_saved_identity){ 0 };
	return ok ? 0 : -ENOTRECOVERABLE;
}
