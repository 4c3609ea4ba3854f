/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define USER_PATH "/usr/local/bin:/usr/bin:/bin"
#define ACTION_FD 3
#define MAX_GROUPS 65536

static int env_add(char **envp, size_t *n, const char *key, const char *value)
{
	if (!value)
		return 0;
	if (asprintf(&envp[*n], "%s=%s", key, value) < 0) {
		envp[*n] = NULL;
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

static int build_env(struct duress_target *t, const struct passwd *pw,
		     const struct duress_pam_items *it)
{
	const struct {
		const char *key;
		const char *value;
	} vars[] = {
		{ "PATH", pw->pw_uid == 0 ? ROOT_PATH : USER_PATH },
		{ "HOME", pw->pw_dir },
		{ "USER", pw->pw_name },
		{ "LOGNAME", pw->pw_name },
		{ "SHELL", pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh" },
		{ "PAM_USER", it->user },
		{ "PAM_SERVICE", it->service },
		{ "PAM_RHOST", it->rhost },
		{ "PAM_RUSER", it->ruser },
		{ "PAM_TTY", it->tty },
		{ "PAM_TYPE", "auth" },
		{ "PAMUSER", it->user },
	};
	size_t n = 0;
	const size_t max = sizeof(vars) / sizeof(vars[0]);

	t->envp = calloc(max + 1, sizeof(char *));
	if (!t->envp)
		return -ENOMEM;
	for (size_t i = 0; i < max; i++)
		if (env_add(t->envp, &n, vars[i].key, vars[i].value) < 0)
			return -ENOMEM;
	return 0;
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
		if (want <= n || want > MAX_GROUPS) {
			free(groups);
			return -E2BIG;
		}
		n = want;
	}
}

int duress_target_init(struct duress_target *t, const struct passwd *pw,
		       const struct duress_pam_items *items)
{
	int r;

	*t = (struct duress_target){ .uid = pw->pw_uid, .gid = pw->pw_gid };
	r = build_env(t, pw, items);
	if (r == 0)
		r = duress_user_groups(pw, &t->groups, &t->n_groups);
	if (r < 0)
		duress_target_free(t);
	return r;
}

void duress_target_free(struct duress_target *t)
{
	for (size_t i = 0; t->envp && t->envp[i]; i++)
		free(t->envp[i]);
	free(t->envp);
	free(t->groups);
	*t = (struct duress_target){ 0 };
}

/*
 * Everything from here to duress_spawn runs in children of a possibly
 * multithreaded process: async-signal-safe calls and raw system calls only.
 * glibc's setuid() family may try to talk to the parent's other threads,
 * hence syscall().
 */
static int drop_privileges(const struct duress_target *t)
{
	if (geteuid() != 0)
		return geteuid() == t->uid ? 0 : -1;
	if (syscall(SYS_setgroups, t->n_groups, t->groups) != 0 ||
	    syscall(SYS_setresgid, t->gid, t->gid, t->gid) != 0 ||
	    syscall(SYS_setresuid, t->uid, t->uid, t->uid) != 0)
		return -1;
	if (getuid() != t->uid || geteuid() != t->uid || getgid() != t->gid ||
	    getegid() != t->gid)
		return -1;
	/* Losing root must be for good. */
	if (t->uid != 0 && syscall(SYS_setresuid, 0, 0, 0) == 0)
		return -1;
	return 0;
}

static void reset_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Descriptors the children use; -1 when absent. */
struct spawn_fds {
	int devnull;
	int log_read;  /* with debug: logger(1) reads the actions' output here */
	int log_write;
	int done;      /* with wait=: closed when the runner exits */
	int *keep;     /* all of the above and the jobs' memfds, ascending */
	size_t n_keep;
};

int duress_fd_above_stdio(int fd)
{
	int moved;

	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	/* The application had closed a standard descriptor: do not take its place. */
	moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return moved;
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The descriptors the runner needs, sorted, so that it can close all others. */
static int list_kept_fds(struct spawn_fds *fds, const struct duress_job *jobs, size_t n_jobs)
{
	int own[] = { fds->devnull, fds->log_read, fds->log_write, fds->done };

	fds->keep = calloc(n_jobs + sizeof(own) / sizeof(own[0]), sizeof(int));
	if (!fds->keep)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i] >= 0)
			fds->keep[fds->n_keep++] = own[i];
	for (size_t i = 0; i < n_jobs; i++)
		fds->keep[fds->n_keep++] = jobs[i].memfd;
	qsort(fds->keep, fds->n_keep, sizeof(int), compare_ints);
	return 0;
}

/*
 * The runner outlives the login: it must not hold the application's
 * terminal, sockets or files open.  Standard descriptors go to /dev/null and
 * every descriptor not in fds->keep is closed.
 */
static void detach_descriptors(const struct spawn_fds *fds)
{
	unsigned next = STDERR_FILENO + 1;

	if (dup2(fds->devnull, 0) < 0 || dup2(fds->devnull, 1) < 0 || dup2(fds->devnull, 2) < 0)
		_exit(1);
	for (size_t i = 0; i < fds->n_keep; i++) {
		unsigned fd = (unsigned)fds->keep[i];

		if (fd > next)
			(void)close_range(next, fd - 1, 0);
		if (fd + 1 > next)
			next = fd + 1;
	}
	(void)close_range(next, ~0U, 0);
}

void duress_job_prepare(struct duress_job *job)
{
	ssize_t n = pread(job->memfd, job->line, DURESS_SHEBANG_MAX, 0);
	char *p, *end;

	job->interp = job->interp_arg = NULL;
	if (n < 2 || job->line[0] != '#' || job->line[1] != '!')
		return;
	job->line[n] = '\0';
	end = memchr(job->line, '\n', (size_t)n);
	/* A line the kernel would truncate is left to the kernel. */
	if (!end)
		return;
	*end = '\0';
	p = job->line + 2 + strspn(job->line + 2, " \t");
	if (!*p)
		return;
	job->interp = p;
	p += strcspn(p, " \t");
	if (*p) {
		*p++ = '\0';
		p += strspn(p, " \t");
		/* As the kernel does: one argument, trailing blanks removed. */
		for (char *q = p + strlen(p); q > p && (q[-1] == ' ' || q[-1] == '\t');)
			*--q = '\0';
		job->interp_arg = *p ? p : NULL;
	}
}

static void exec_job(const struct duress_job *job, int devnull, int out)
{
	char sh[] = "/bin/sh", fd_path[] = "/dev/fd/3"; /* ACTION_FD */
	char *const argv[] = { job->name, NULL };
	char *const script_argv[] = {
		job->name, job->interp_arg ? job->interp_arg : fd_path,
		job->interp_arg ? fd_path : NULL, NULL,
	};
	char *const sh_argv[] = { job->name, fd_path, NULL };
	int action = fcntl(job->memfd, F_DUPFD, 10);
	int in = fcntl(devnull, F_DUPFD, 10);

	out = fcntl(out, F_DUPFD, 10);
	if (action < 0 || in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(out, 2) < 0 || dup2(action, ACTION_FD) < 0)
		_exit(127);
	(void)close_range(ACTION_FD + 1, ~0U, 0);
	/* An ELF binary does not need its descriptor; a script's interpreter does. */
	if (job->elf)
		(void)fcntl(ACTION_FD, F_SETFD, FD_CLOEXEC);
	if (chdir("/") != 0 || drop_privileges(job->target) != 0)
		_exit(126);
	umask(077);
	if (job->interp)
		execve(job->interp, script_argv, job->target->envp);
	else
		fexecve(ACTION_FD, argv, job->target->envp);
	/* No #! line and not a binary: run it with /bin/sh, as execvp() does. */
	if (errno == ENOEXEC)
		execve(sh, sh_argv, job->target->envp);
	_exit(127);
}

/* Returns where the actions' stdout and stderr go. */
static int start_logger(const struct spawn_fds *fds)
{
	char logger[] = "/usr/bin/logger", p[] = "-p", prio[] = "authpriv.debug";
	char t[] = "-t", tag[] = "pam_duress";
	char *const argv[] = { logger, p, prio, t, tag, NULL };
	char *const envp[] = { NULL };
	pid_t pid;

	if (fds->log_read < 0)
		return fds->devnull;
	pid = _Fork();
	if (pid == 0) {
		int in = fcntl(fds->log_read, F_DUPFD, 10);
		int null = fcntl(fds->devnull, F_DUPFD, 10);

		if (in < 0 || null < 0 || dup2(in, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		(void)close_range(3, ~0U, 0);
		execve(logger, argv, envp);
		_exit(127);
	}
	return pid < 0 ? fds->devnull : fds->log_write;
}

static void run_jobs(const struct duress_job *jobs, size_t n, const struct spawn_fds *fds)
{
	int out = start_logger(fds);

	for (size_t i = 0; i < n; i++) {
		pid_t pid = _Fork();
		int status;

		if (pid == 0)
			exec_job(&jobs[i], fds->devnull, out);
		if (pid < 0)
			continue;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
}

static _Noreturn void first_child(const struct duress_job *jobs, size_t n,
				  const struct spawn_fds *fds)
{
	pid_t pid;

	/* It holds a copy of the application's memory: keep it out of core dumps. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	reset_signals();
	if (setsid() < 0)
		_exit(1);
	detach_descriptors(fds);
	/* The runner is orphaned at once and adopted by init (or a subreaper). */
	pid = _Fork();
	if (pid == 0) {
		run_jobs(jobs, n, fds);
		_exit(0);
	}
	_exit(pid < 0 ? 1 : 0);
}

/* Waits until the runner closes the pipe (it exits) or the time is up. */
static void wait_for_runner(int fd, unsigned seconds)
{
	struct timespec start, now;
	long elapsed_ms = 0;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed_ms < (long)seconds * 1000L) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)((long)seconds * 1000L - elapsed_ms));

		if (r > 0 && read(fd, &c, 1) <= 0)
			return;
		if (r == 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed_ms = (now.tv_sec - start.tv_sec) * 1000L +
			     (now.tv_nsec - start.tv_nsec) / 1000000L;
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int duress_spawn(const struct duress_job *jobs, size_t n_jobs, unsigned wait_seconds,
		 const struct duress_log *lg)
{
	struct spawn_fds fds = { .log_read = -1, .log_write = -1, .done = -1 };
	int done[2] = { -1, -1 };
	int r = 0;
	int status = 0;
	pid_t pid;

	fds.devnull = duress_fd_above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
	if (fds.devnull < 0) {
		r = -errno;
		duress_log(lg, LOG_ERR, "cannot open /dev/null for the actions: %m");
		return r;
	}
	if (lg && lg->debug) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) == 0) {
			fds.log_read = duress_fd_above_stdio(p[0]);
			fds.log_write = duress_fd_above_stdio(p[1]);
		}
	}
	if (wait_seconds > 0 && pipe2(done, O_CLOEXEC) < 0) {
		r = -errno;
		duress_log(lg, LOG_ERR, "cannot create a pipe for wait=: %m");
		goto out;
	}
	done[0] = duress_fd_above_stdio(done[0]);
	fds.done = done[1] = duress_fd_above_stdio(done[1]);
	if (list_kept_fds(&fds, jobs, n_jobs) < 0) {
		r = -ENOMEM;
		goto out;
	}
	/*
	 * clone() with no exit signal: the application is never sent SIGCHLD
	 * for this child, and its own waitpid(-1) cannot reap it (__WALL can).
	 * With every argument zero this is fork() on every architecture.
	 */
	pid = (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
	if (pid == 0) {
		close_fd(&done[0]);
		first_child(jobs, n_jobs, &fds);
	}
	if (pid < 0) {
		r = -errno;
		duress_log(lg, LOG_ERR, "cannot start the action runner: %m");
		goto out;
	}
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		r = -ECHILD;
		duress_log(lg, LOG_ERR, "cannot start the action runner");
		goto out;
	}
	if (done[1] >= 0) {
		close_fd(&done[1]);
		wait_for_runner(done[0], wait_seconds);
	}
out:
	close_fd(&done[0]);
	close_fd(&done[1]);
	close_fd(&fds.log_read);
	close_fd(&fds.log_write);
	close_fd(&fds.devnull);
	free(fds.keep);
	return r;
}
