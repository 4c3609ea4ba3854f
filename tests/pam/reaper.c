/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Waiting for what the module started.  The runner detaches: its first
 * process forks a worker and exits, the worker calls setsid() and starts
 * the chains and actions.  Left alone, init adopts the worker, and the
 * only way to know that no action is still to come is to wait "long
 * enough".  The test process is a child subreaper instead: every orphan
 * below it (the worker, then whatever a chain or an action leaves behind)
 * is adopted by it, and ends as its zombie.  "Every action that was
 * started has finished" is then "no adopted child is left", which SIGCHLD
 * says the moment it becomes true.
 *
 * The runner's first process has exited before pam_authenticate returns
 * (the module waits for it), and an orphan is adopted before its parent
 * becomes a zombie: when the module returns, its worker is already ours,
 * and after a reap a fresh look finds the reaped one's orphans.
 *
 * The harness's own children (duress sign, auth_child, a forked login...)
 * stay in the test's session, and each is waited for where it is started:
 * none may be reaped here, behind its waitpid().  What the runner started
 * is in the worker's own session (test_env.c checks it), or is the worker
 * itself before its setsid(): another session, or the runner's program.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* More at once is looked at in the next round: nothing is lost, only later. */
#define ADOPTED_MAX 256

struct adopted {
	pid_t pid[ADOPTED_MAX];
	size_t n;      /* still running */
	size_t reaped; /* ended and reaped */
};

/* The runner's program, as /proc/PID/exe shows it. */
static char runner_exe[PATH_MAX];

int reaper_init(void)
{
	if (!realpath(W.runner, runner_exe)) {
		fprintf(stderr, "test_pam: %s: %s\n", W.runner, strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL) == 0)
		return 0;
	perror("test_pam: prctl(PR_SET_CHILD_SUBREAPER)");
	return -1;
}

static bool started_by_runner(pid_t pid, pid_t session)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	if (getsid(pid) != session)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	return strcmp(exe, runner_exe) == 0;
}

/* Children of one of our threads that the runner started. */
static void list_children(const char *tid, pid_t session, struct adopted *a)
{
	char path[PATH_MAX];
	long pid;
	FILE *f;

	pathf(path, "/proc/self/task/%s/children", tid);
	f = fopen(path, "re");
	if (!f)
		return; /* the thread has ended: its children are another thread's now */
	while (a->n < ADOPTED_MAX && fscanf(f, "%ld", &pid) == 1)
		if (started_by_runner((pid_t)pid, session))
			a->pid[a->n++] = (pid_t)pid;
	fclose(f);
}

static void list_adopted(struct adopted *a)
{
	DIR *tasks = opendir("/proc/self/task");
	pid_t session = getsid(0);
	struct dirent *e;

	assert_non_null(tasks);
	a->n = 0;
	while ((e = readdir(tasks)))
		if (e->d_name[0] != '.')
			list_children(e->d_name, session, a);
	closedir(tasks);
}

/* Reaps what has ended; keeps the others.  Returns how many it reaped. */
static size_t reap_ended(struct adopted *a)
{
	size_t running = 0, reaped = 0;

	for (size_t i = 0; i < a->n; i++) {
		/* __WALL: whatever its exit signal was, an adopted child has SIGCHLD now. */
		pid_t r = waitpid(a->pid[i], NULL, WNOHANG | __WALL);

		if (r == 0)
			a->pid[running++] = a->pid[i];
		else
			reaped++;
	}
	a->n = running;
	a->reaped += reaped;
	return reaped;
}

/* Until a SIGCHLD (blocked by the caller) or the deadline. */
static void wait_sigchld(const sigset_t *chld, double deadline)
{
	double left = deadline - now();
	struct timespec ts;

	if (left <= 0)
		return;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
	(void)sigtimedwait(chld, NULL, &ts);
}

/*
 * Until no adopted child is left or the time is up.  SIGCHLD is blocked
 * from before the first look, so that one sent between a look and the
 * wait stays pending: no exit is missed.
 */
static void reap_adopted(struct adopted *a, double seconds)
{
	double deadline = now() + seconds;
	sigset_t chld, old;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &chld, &old), 0);
	a->n = 0;
	for (;;) {
		list_adopted(a);
		/* Something ended: its orphans are ours by now, look again at once. */
		if (reap_ended(a) > 0)
			continue;
		if (a->n == 0 || now() >= deadline)
			break;
		wait_sigchld(&chld, deadline);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* "PID command line", then what it started in [...], as deep as it goes (bounded). */
static void describe_tree(FILE *f, pid_t pid, int depth)
{
	char path[64], *cmdline, *children;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	cmdline = read_proc(path, &len);
	for (size_t j = 0; cmdline && j + 1 < len; j++)
		cmdline[j] = cmdline[j] ? cmdline[j] : ' ';
	fprintf(f, "%d %s", (int)pid, cmdline && *cmdline ? cmdline : "(ended)");
	free(cmdline);
	/* The runner's processes have one thread each: the main thread's children are all. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	children = depth < 8 ? read_proc(path, NULL) : NULL;
	if (children && *children) {
		char *save = NULL;

		fputs(" [", f);
		for (char *c = strtok_r(children, " \n", &save); c;
		     c = strtok_r(NULL, " \n", &save)) {
			describe_tree(f, (pid_t)strtol(c, NULL, 10), depth + 1);
			fputs(save && *save ? "; " : "", f);
		}
		fputs("]", f);
	}
	free(children);
}

/* What is still running, with what each started (free it). */
static char *describe(const struct adopted *a)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	assert_non_null(f);
	for (size_t i = 0; i < a->n; i++) {
		fputs(i ? "; " : "", f);
		describe_tree(f, a->pid[i], 0);
	}
	fclose(f);
	return out;
}

static double bound(void)
{
	return hang_ms(15000, 60000) / 1000.0;
}

/*
 * Kills what is still running: it would spoil the tests after this one.  A
 * killed process's own children are adopted in turn: rounds until none is
 * left.  Returns how many it killed.
 */
static size_t kill_the_rest(struct adopted *a)
{
	size_t killed = 0;

	for (int round = 0; a->n > 0 && round < 10; round++) {
		for (size_t i = 0; i < a->n; i++)
			kill(a->pid[i], SIGKILL);
		killed += a->n;
		reap_adopted(a, 5.0);
	}
	return killed;
}

size_t wait_actions(void)
{
	struct adopted a = { 0 };

	reap_adopted(&a, bound());
	if (a.n > 0) {
		char *what = describe(&a), msg[4096];

		snprintf(msg, sizeof(msg), "%s", what);
		free(what);
		kill_the_rest(&a);
		fail_msg("still running after %.0f s (killed): %s", bound(), msg);
	}
	return a.reaped;
}

size_t end_actions(void)
{
	struct adopted a = { 0 };

	reap_adopted(&a, bound());
	if (a.n > 0) {
		char *what = describe(&a);

		printf("# still running after %.0f s (killed): %s\n", bound(), what);
		fflush(stdout);
		free(what);
	}
	return kill_the_rest(&a);
}
