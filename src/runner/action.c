/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting one action, in the runner (a fresh single-threaded process). */
#include "runner/action.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/shebang.h"

#define ACTION_FD 3

int duress_become(const struct duress_target *t)
{
	if (geteuid() != 0)
		return geteuid() == t->uid ? 0 : -1;
	if (setgroups(t->n_groups, t->groups) != 0 || setresgid(t->gid, t->gid, t->gid) != 0 ||
	    setresuid(t->uid, t->uid, t->uid) != 0)
		return -1;
	if (getuid() != t->uid || geteuid() != t->uid || getgid() != t->gid || getegid() != t->gid)
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
