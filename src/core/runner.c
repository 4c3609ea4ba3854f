/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "account.h"

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
		     const struct duress_pam_items *it, bool rehearse)
{
	const struct {
		const char *key;
		const char *value;
	} vars[] = {
		{ "PATH", duress_action_path(pw->pw_uid == 0) },
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
		{ "DURESS_REHEARSE", rehearse ? "1" : NULL },
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

int duress_target_init(struct duress_target *t, const struct passwd *pw,
		       const struct duress_pam_items *items, bool rehearse)
{
	int r;

	*t = (struct duress_target){ .uid = pw->pw_uid, .gid = pw->pw_gid };
	r = build_env(t, pw, items, rehearse);
	if (r == 0)
		r = duress_user_groups(pw, &t->groups, &t->n_groups);
	if (r < 0)
		duress_target_free(t);
	return r;
}

int duress_fd_above_stdio(int fd)
{
	int moved;

	if (fd < 0)
		return -errno;
	if (fd > STDERR_FILENO)
		return fd;
	/* The application had closed a standard descriptor: do not take its place. */
	moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (moved < 0)
		moved = -errno;
	close(fd);
	return moved;
}

/*
 * The descriptors the runner gets, slot i at descriptor
 * DURESS_RUNNER_MANIFEST_FD + i: the manifest, the wait= pipe (or -1) and
 * the jobs' memfds in manifest order; and 0-2.  Filled before the clone,
 * so that the child only copies descriptors.
 */
struct handover {
	int *from;
	int *tmp; /* the child's scratch space */
	size_t n;
	int devnull;
	int in;     /* the runner's stdin: the release channel (struct duress_held) */
	int out;    /* the actions' stdout and stderr: devnull unless traced */
	char *name; /* argv[0]: the program's file name, which `ps` shows as well */
};

static int handover_init(struct handover *h, const char *path, int manifest, int done,
			 const struct duress_chain *chains, size_t n_chains)
{
	const char *slash = strrchr(path, '/');
	size_t n = 2;

	for (size_t c = 0; c < n_chains; c++)
		n += chains[c].n_jobs;
	h->from = calloc(n, sizeof(int));
	h->tmp = calloc(n, sizeof(int));
	h->name = strdup(slash ? slash + 1 : path);
	if (!h->from || !h->tmp || !h->name)
		return -ENOMEM;
	h->from[h->n++] = manifest;
	h->from[h->n++] = done;
	for (size_t c = 0; c < n_chains; c++)
		for (size_t i = 0; i < chains[c].n_jobs; i++)
			h->from[h->n++] = chains[c].jobs[i].memfd;
	return 0;
}

/*
 * In the child of a possibly multithreaded process: async-signal-safe calls
 * only.  Every descriptor goes above its final place first, so that none is
 * overwritten before it is copied; everything else is closed, so that the
 * runner holds none of the application's terminal, sockets or files.
 */
static int place_descriptors(const struct handover *h)
{
	int high = DURESS_RUNNER_MANIFEST_FD + (int)h->n;
	int in = fcntl(h->in, F_DUPFD, high);
	int out = fcntl(h->out, F_DUPFD, high);

	for (size_t i = 0; i < h->n; i++) {
		h->tmp[i] = h->from[i] < 0 ? -1 : fcntl(h->from[i], F_DUPFD, high);
		if (h->from[i] >= 0 && h->tmp[i] < 0)
			return -1;
	}
	if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		return -1;
	for (size_t i = 0; i < h->n; i++) {
		int fd = DURESS_RUNNER_MANIFEST_FD + (int)i;

		if (h->tmp[i] < 0)
			(void)close(fd);
		else if (dup2(h->tmp[i], fd) < 0)
			return -1;
	}
	(void)close_range((unsigned)high, ~0U, 0);
	return 0;
}

/*
 * execve() would give this child an exit signal again (SIGCHLD, to the
 * application): the runner is its child instead (_Fork: no atfork
 * handlers, async-signal-safe), and this one reports how the runner's
 * first process ended.
 */
static _Noreturn void exec_runner(const char *path, const struct handover *h)
{
	const struct sigaction dfl = { .sa_handler = SIG_DFL };
	char *const argv[] = { h->name, NULL };
	char *const envp[] = { NULL };
	int status = 0;
	pid_t pid, r;

	/*
	 * An application that ignores SIGCHLD would have the kernel reap the
	 * runner, and waitpid() fail: its status would be lost and a runner
	 * that never started would read as started (signals stay blocked).
	 */
	if (place_descriptors(h) < 0 || sigaction(SIGCHLD, &dfl, NULL) < 0)
		_exit(1);
	pid = _Fork();
	if (pid == 0) {
		execve(path, argv, envp);
		_exit(127);
	}
	if (pid < 0)
		_exit(1);
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	_exit(r == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/*
 * clone() with no exit signal: the application is never sent SIGCHLD for
 * this child, and its own waitpid(-1) cannot reap it (__WALL can).  With
 * every argument zero this is fork() on every architecture.  Signals stay
 * blocked until the runner has reset their handlers: none of the
 * application's may run in the child.
 */
static int start_runner(const char *path, const struct handover *h)
{
	sigset_t all, old;
	int status = 0;
	pid_t pid;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
	if (pid == 0)
		exec_runner(path, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		return -errno;
	/*
	 * The runner forks at once, and exits once its child has taken the
	 * manifest: that child is adopted by init.
	 */
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return 0;
}

/* Waits until the runner closes the pipe (it exits) or the time is up. */
static void wait_for_runner(int fd, unsigned seconds)
{
	struct timespec start = { 0 }, now = { 0 }; /* a failed read reads 0 */
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

/* Both ends of a new pipe or socket pair above 0-2; 0 or -errno. */
static int pair_above_stdio(int p[2])
{
	p[0] = duress_fd_above_stdio(p[0]);
	p[1] = duress_fd_above_stdio(p[1]);
	return p[0] < 0 ? p[0] : p[1] < 0 ? p[1] : 0;
}

/* A close-on-exec pipe, both ends above 0-2; 0 or -errno. */
static int open_pipe(int p[2])
{
	return pipe2(p, O_CLOEXEC) < 0 ? -errno : pair_above_stdio(p);
}

/*
 * The release channel (struct duress_held): a socket pair rather than a
 * pipe, so that the module's word to a runner that is gone cannot raise
 * SIGPIPE in the application (MSG_NOSIGNAL).  0 or -errno.
 */
static int open_release(int s[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0)
		return -errno;
	return pair_above_stdio(s);
}

/* A traced run's output goes where it asked, not to syslog; it reads the report, not wait=. */
static unsigned runner_flags(unsigned wait_seconds, const struct duress_spawn_io *io,
			     const struct duress_log *lg)
{
	unsigned f = 0;

	if (lg && lg->debug && io->output_fd < 0)
		f |= DURESS_RUN_DEBUG;
	if (io->interp_argv0)
		f |= DURESS_RUN_INTERP_ARGV0;
	if (io->report_fd >= 0)
		f |= DURESS_RUN_REPORT;
	else if (wait_seconds)
		f |= DURESS_RUN_WAIT;
	return f;
}

static void log_start_error(int r, const char *runner_path, const struct duress_log *lg)
{
	if (r == -ECHILD) {
		duress_log(lg, LOG_ERR, "the action runner %s failed to start", runner_path);
	} else if (r < 0) {
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot start the action runner %s: %m", runner_path);
	}
}

/*
 * Opens what the runner is handed besides the jobs: the manifest, the
 * release channel (its stdin), /dev/null and, with wait_seconds, the done pipe.
 * 0 or -errno; the caller closes whatever was opened.
 */
static int open_descriptors(int *manifest, int release[2], int *devnull, int done[2],
			    const struct duress_chain *chains, size_t n_chains, unsigned flags,
			    unsigned wait_seconds)
{
	int r;

	*manifest = duress_manifest_write(chains, n_chains, flags);
	if (*manifest >= 0)
		*manifest = duress_fd_above_stdio(*manifest);
	if (*manifest < 0)
		return *manifest;
	r = open_release(release);
	if (r == 0) {
		*devnull = duress_fd_above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
		r = *devnull < 0 ? *devnull : 0;
	}
	if (r == 0 && wait_seconds)
		r = open_pipe(done);
	return r;
}

int duress_spawn_hold(const char *runner_path, const struct duress_chain *chains, size_t n_chains,
		      unsigned wait_seconds, const struct duress_spawn_io *io,
		      const struct duress_log *lg, struct duress_held *held)
{
	static const struct duress_spawn_io none = { .output_fd = -1, .report_fd = -1 };
	struct handover h = { .devnull = -1 };
	int manifest = -1, release[2] = { -1, -1 }, done[2] = { -1, -1 };
	int r;

	*held = (struct duress_held){ .release = -1, .done = -1 };
	io = io ? io : &none;
	if (io->report_fd >= 0)
		wait_seconds = 0;
	r = open_descriptors(&manifest, release, &h.devnull, done, chains, n_chains,
			     runner_flags(wait_seconds, io, lg), wait_seconds);
	h.in = release[0];
	h.out = io->output_fd >= 0 ? io->output_fd : h.devnull;
	if (r == 0)
		r = handover_init(&h, runner_path, manifest,
				  io->report_fd >= 0 ? io->report_fd : done[1], chains, n_chains);
	if (r == 0)
		r = start_runner(runner_path, &h);
	log_start_error(r, runner_path, lg);
	if (r == 0) {
		*held = (struct duress_held){ .release = release[1],
					      .done = done[0],
					      .wait_seconds = wait_seconds };
		release[1] = done[0] = -1;
	}
	for (int i = 0; i < 2; i++) {
		close_fd(&release[i]);
		close_fd(&done[i]);
	}
	close_fd(&manifest);
	close_fd(&h.devnull);
	free(h.from);
	free(h.tmp);
	free(h.name);
	return r;
}

void duress_spawn_release(struct duress_held *held)
{
	/* The runner's stdin: it starts its chains on this byte, and on nothing else. */
	if (held->release >= 0)
		(void)send(held->release, "", 1, MSG_NOSIGNAL);
	close_fd(&held->release);
	if (held->done >= 0)
		wait_for_runner(held->done, held->wait_seconds);
	close_fd(&held->done);
}

int duress_spawn(const char *runner_path, const struct duress_chain *chains, size_t n_chains,
		 unsigned wait_seconds, const struct duress_spawn_io *io,
		 const struct duress_log *lg)
{
	struct duress_held held;
	int r = duress_spawn_hold(runner_path, chains, n_chains, wait_seconds, io, lg, &held);

	duress_spawn_release(&held);
	return r;
}
