/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting one action, in the runner (a fresh single-threaded process). */
#include "runner/action.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/shebang.h"

#define ACTION_FD 3

/*
 * No capability left, in any set, and none to come back at an exec: the
 * kernel clears them at the change of uid only unless the caller set
 * SECBIT_NO_SETUID_FIXUP (inherited across exec, as is the ambient set).
 * The bounding set stays the caller's: it gives nothing by itself, and it
 * still bounds what a setuid program the action starts may get.
 */
static int drop_capabilities(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	/* EINVAL: a kernel before 4.3, with no ambient set. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) != 0 && errno != EINVAL)
		return -1;
	if (syscall(SYS_capset, &h, data) != 0 || syscall(SYS_capget, &h, data) != 0)
		return -1;
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return -1;
	return 0;
}

int duress_become(const struct duress_target *t)
{
	if (geteuid() != 0)
		return geteuid() == t->uid ? 0 : -1;
	if (setgroups(t->n_groups, t->groups) != 0 || setresgid(t->gid, t->gid, t->gid) != 0 ||
	    setresuid(t->uid, t->uid, t->uid) != 0)
		return -1;
	if (getuid() != t->uid || geteuid() != t->uid || getgid() != t->gid || getegid() != t->gid)
		return -1;
	if (t->uid != 0 && drop_capabilities() != 0)
		return -1;
	/* Losing root must be for good. */
	if (t->uid != 0 && setresuid(0, 0, 0) == 0)
		return -1;
	return 0;
}

/*
 * The login program's session keyring (root's, in sshd or su) must not
 * reach the action: it gets a new, empty one, owned by the target.  A
 * kernel without keys has nothing to leak.
 */
static int new_session_keyring(void)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0 || errno == ENOSYS)
		return 0;
	return -1;
}

_Noreturn void duress_exec_job(const struct duress_job *job, const struct duress_target *t,
			       bool interp_argv0)
{
	char sh[] = "/bin/sh", fd_path[] = "/dev/fd/3"; /* ACTION_FD */
	char head[DURESS_SHEBANG_MAX];
	char *name = job->name;
	struct duress_shebang sb;
	ssize_t n = job->elf ? 0 : pread(job->memfd, head, sizeof(head), 0);

	/* The kernel would put the interpreter's path in argv[0]: start it ourselves. */
	duress_shebang_parse(head, n > 0 ? (size_t)n : 0, &sb);
	if (new_session_keyring() != 0 || dup2(job->memfd, ACTION_FD) != ACTION_FD)
		_exit(126);
	(void)close_range(ACTION_FD + 1, ~0U, 0);
	/* An ELF binary does not need its descriptor; a script's interpreter does. */
	if (job->elf)
		(void)fcntl(ACTION_FD, F_SETFD, FD_CLOEXEC);
	if (sb.interp) {
		char *const argv[] = { interp_argv0 ? sb.interp : name, sb.arg ? sb.arg : fd_path,
				       sb.arg ? fd_path : NULL, NULL };

		execve(sb.interp, argv, t->envp);
	} else {
		char *const argv[] = { name, NULL };

		fexecve(ACTION_FD, argv, t->envp);
	}
	/* No #! line and not a binary: run it with /bin/sh, as execvp() does. */
	if (errno == ENOEXEC) {
		char *const argv[] = { interp_argv0 ? sh : name, fd_path, NULL };

		execve(sh, argv, t->envp);
	}
	_exit(127);
}
