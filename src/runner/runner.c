/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The action runner (installed as session-helper): runs the actions
 * pam_duress matched.  The module starts it with execve() in a fresh process
 * image, so that it holds nothing of the login program's memory (the
 * password least of all) and `ps` shows its own name, which, like every name
 * a user can read in /proc, does not name the project.  It is handed, at
 * fixed descriptors (core/manifest.h), a manifest of two chains (per-user
 * actions as the user, global ones as root) with the ids, groups and
 * environment already looked up, and the sealed memfds of the verified
 * actions: it needs no NSS and parses nothing a user wrote but the #! line.
 *
 * Its first process forks at once and exits once its child, the worker,
 * has checked what it was given: the module waits for that first process
 * only, and the worker is adopted by init (no zombie).  Forking before
 * the manifest is read keeps what the login process reaps (this process
 * and the clone that started it: their page faults and CPU time, in the
 * login process's world-readable /proc counters) the same for a duress
 * login and a wrong password, which is handed an empty manifest.  The
 * worker then waits for a byte on its stdin, which the module sends once
 * its own work for the login is done (before pam_unix, the hash it pays
 * for a match), so that no action competes with it; without that byte
 * nothing runs.  It starts one
 * process per chain, so that a per-user action that sleeps or is stopped
 * never delays root's, and exits when both are done.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "core/manifest.h"
#include "runner/action.h"

/* <linux/ioprio.h> is not in every distribution's headers. */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_NONE 0
#define CPUS_MAX 8192

static void reset_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;

	/* execve() kept the login program's ignored signals and its mask (all blocked). */
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * In a setuid program (su) the real uid is the user who typed the password:
 * with it they could signal the runner and root's actions.  Root in full.
 */
static int become_root(void)
{
	if (geteuid() != 0)
		return 0;
	return setresgid(0, 0, 0) == 0 && setresuid(0, 0, 0) == 0 ? 0 : -1;
}

/* PID 1's limit r: the system's default, not the caller's. */
static void reset_limit(__rlimit_resource_t r)
{
	struct rlimit init, cur;

	if (prlimit(1, r, NULL, &init) != 0 || setrlimit(r, &init) == 0 || getrlimit(r, &cur) != 0)
		return;
	/* Without CAP_SYS_RESOURCE (a container) no hard limit goes up: get as close as allowed. */
	if (init.rlim_max < cur.rlim_max)
		cur.rlim_max = init.rlim_max;
	cur.rlim_cur = init.rlim_cur < cur.rlim_max ? init.rlim_cur : cur.rlim_max;
	(void)setrlimit(r, &cur);
}

/* The system's defaults, not the caller's (`prlimit --fsize=… nice -n 15 su`). */
static void reset_limits_and_scheduling(void)
{
	const struct sched_param normal = { .sched_priority = 0 };
	cpu_set_t *cpus = CPU_ALLOC(CPUS_MAX);

	for (int r = 0; r < RLIM_NLIMITS; r++)
		reset_limit((__rlimit_resource_t)r);
	(void)sched_setscheduler(0, SCHED_OTHER, &normal);
	(void)setpriority(PRIO_PROCESS, 0, 0);
	(void)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_NONE << 13);
	if (cpus) {
		/* The kernel keeps those of them that the cpuset allows. */
		CPU_ZERO_S(CPU_ALLOC_SIZE(CPUS_MAX), cpus);
		for (int i = 0; i < CPUS_MAX; i++)
			CPU_SET_S((size_t)i, CPU_ALLOC_SIZE(CPUS_MAX), cpus);
		(void)sched_setaffinity(0, CPU_ALLOC_SIZE(CPUS_MAX), cpus);
		CPU_FREE(cpus);
	}
}

/* Exactly the verified bytes run: every job must be a sealed memfd. */
static int check_descriptors(const struct duress_manifest *m)
{
	const int sealed = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	struct stat st;

	for (size_t c = 0; c < m->n_chains; c++)
		for (size_t i = 0; i < m->chains[c].n_jobs; i++) {
			int seals = fcntl(m->chains[c].jobs[i].memfd, F_GET_SEALS);

			if (seals < 0 || (seals & sealed) != sealed)
				return -1;
		}
	if (!(m->flags & (DURESS_RUN_WAIT | DURESS_RUN_REPORT)))
		return 0;
	/* Held until every chain is done; nothing started inherits it. */
	if (fstat(DURESS_RUNNER_DONE_FD, &st) < 0 || !S_ISFIFO(st.st_mode))
		return -1;
	return fcntl(DURESS_RUNNER_DONE_FD, F_SETFD, FD_CLOEXEC);
}

/* Up to this many bytes of an action's output make one syslog message. */
#define LOG_LINE_MAX 1024

static void log_line(char *line, size_t len)
{
	line[len] = '\0';
	if (len > 0)
		syslog(LOG_DEBUG, "%s", line);
}

/* Each line read from fd (or each LOG_LINE_MAX bytes of a longer one) to syslog. */
static void forward_lines(int fd)
{
	char buf[LOG_LINE_MAX + 1];
	size_t used = 0;
	ssize_t n;

	openlog("pam_duress", 0, LOG_AUTHPRIV);
	while ((n = read(fd, buf + used, LOG_LINE_MAX - used)) != 0) {
		char *line = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		used += (size_t)n;
		while ((nl = memchr(line, '\n', used - (size_t)(line - buf)))) {
			log_line(line, (size_t)(nl - line));
			line = nl + 1;
		}
		used -= (size_t)(line - buf);
		memmove(buf, line, used);
		if (used == LOG_LINE_MAX) {
			log_line(buf, used);
			used = 0;
		}
	}
	log_line(buf, used);
	closelog();
}

/*
 * With debug, stdout and stderr (inherited by every action) go to syslog
 * (authpriv.debug, tag pam_duress) through a child of this process, not an
 * exec'd logger(1): its command line, tag included, is every user's to read.
 */
static void start_log_forwarder(void)
{
	int pipefd[2];
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		/* Only the pipe: no action's memfd, nor the wait= pipe, whose end it would delay. */
		if (dup2(pipefd[0], STDIN_FILENO) < 0)
			_exit(1);
		(void)close_range(STDERR_FILENO + 1, ~0U, 0);
		forward_lines(STDIN_FILENO);
		_exit(0);
	}
	if (pid > 0) {
		(void)dup2(pipefd[1], STDOUT_FILENO);
		(void)dup2(pipefd[1], STDERR_FILENO);
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

static unsigned long ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned long)((now.tv_sec - start->tv_sec) * 1000L +
			       (now.tv_nsec - start->tv_nsec) / 1000000L);
}

/* With DURESS_RUN_REPORT: how the job ended, in one write (manifest.h). */
static void report_job(const struct duress_manifest *m, const struct duress_chain *chain,
		       const struct duress_job *job, int status, const struct timespec *start)
{
	char rec[DURESS_REPORT_MAX];
	size_t len;

	if (!(m->flags & DURESS_RUN_REPORT))
		return;
	len = duress_report_format(rec, chain->target->uid, status, ms_since(start), job->name);
	/* A reader that went away is no reason to stop the chain. */
	while (write(DURESS_RUNNER_DONE_FD, rec, len) < 0 && errno == EINTR)
		;
}

/* Starts one job and waits for it. */
static void run_job(const struct duress_manifest *m, const struct duress_chain *chain,
		    const struct duress_job *job)
{
	struct timespec start;
	int status = 0;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &start);
	pid = fork();
	if (pid == 0) {
		(void)signal(SIGPIPE, SIG_DFL); /* see run_chain() */
		duress_exec_job(job, chain->target, m->flags & DURESS_RUN_INTERP_ARGV0);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid > 0)
		report_job(m, chain, job, status, &start);
}

/* One chain: its own jobs only, as its target, one after another. */
static _Noreturn void run_chain(const struct duress_manifest *m, size_t c)
{
	const struct duress_chain *chain = &m->chains[c];

	/* Neither the other chain's actions nor the wait= pipe belong here (the report pipe does). */
	for (size_t o = 0; o < m->n_chains; o++)
		for (size_t i = 0; o != c && i < m->chains[o].n_jobs; i++)
			close(m->chains[o].jobs[i].memfd);
	if (!(m->flags & DURESS_RUN_REPORT))
		(void)close(DURESS_RUNNER_DONE_FD);
	/* A reader that gave up waiting (duress test's bound) must not end the chain. */
	else
		(void)signal(SIGPIPE, SIG_IGN);
	if (duress_become(chain->target) != 0)
		_exit(1);
	/* The change of ids made it dumpable again if fs.suid_dumpable is 1: see prepare(). */
	(void)prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
	for (size_t i = 0; i < chain->n_jobs; i++)
		run_job(m, chain, &chain->jobs[i]);
	_exit(0);
}

static void run_chains(const struct duress_manifest *m)
{
	pid_t chains[DURESS_CHAINS];
	size_t running = 0;

	if (m->flags & DURESS_RUN_DEBUG)
		start_log_forwarder();
	for (size_t c = 0; c < m->n_chains; c++) {
		pid_t pid = fork();

		if (pid == 0)
			run_chain(m, c);
		if (pid > 0)
			chains[running++] = pid;
	}
	/* Whichever chain ends first is reaped first: no zombie waits for the other. */
	while (running > 0) {
		pid_t pid = waitpid(-1, NULL, 0);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		for (size_t c = 0; c < running; c++)
			if (chains[c] == pid)
				chains[c] = chains[--running];
	}
}

/* In the worker: checks what the module handed over and puts the process in its default state. */
static int prepare(struct duress_manifest *m)
{
	if (duress_manifest_read(DURESS_RUNNER_MANIFEST_FD, m) < 0)
		return -1;
	(void)close(DURESS_RUNNER_MANIFEST_FD);
	if (check_descriptors(m) < 0)
		return -1;
	reset_limits_and_scheduling();
	umask(077);
	return chdir("/") == 0 && setsid() >= 0 ? 0 : -1;
}

/*
 * Waits for the module's release: one byte on stdin.  An end without it
 * (the module failed after the hold, or died) means no chain may start:
 * nothing runs that the module's answer does not account for.  Then the
 * actions' stdin is /dev/null.  A stdin that is no socket comes from a
 * module older than the release channel (0.1.0 builds that started this
 * runner with /dev/null, still loaded in a screen locker across an
 * upgrade): it started the runner only once its answer was made, so the
 * start was the release.
 */
static bool released(void)
{
	struct stat st;
	ssize_t n;
	char c;
	int null;

	if (fstat(STDIN_FILENO, &st) == 0 && !S_ISSOCK(st.st_mode))
		return true;
	while ((n = read(STDIN_FILENO, &c, 1)) < 0 && errno == EINTR)
		;
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* Without it, stdin stays the socket at its end: it reads as /dev/null does. */
	if (null >= 0 && dup2(null, STDIN_FILENO) == STDIN_FILENO)
		(void)close(null);
	return n == 1;
}

/* The worker: its word (one byte on word) once it has taken the manifest, then the chains. */
static _Noreturn void work(int word)
{
	struct duress_manifest m = { 0 };

	if (prepare(&m) != 0 || write(word, "", 1) != 1)
		_exit(1);
	(void)close(word);
	if (released())
		run_chains(&m);
	duress_manifest_free(&m);
	_exit(0);
}

/* The first process: 0 once the worker has given its word, 1 if it ended without. */
static int await_word(int word[2])
{
	ssize_t n;
	char c;

	(void)close(word[1]);
	while ((n = read(word[0], &c, 1)) < 0 && errno == EINTR)
		;
	return n == 1 ? 0 : 1;
}

int main(void)
{
	int word[2];
	pid_t pid;

	/*
	 * Until each action's own exec, the user an action runs as (who may
	 * have started this, from a screen locker) must not read this
	 * program's path in /proc/PID/exe and maps, nor its descriptors: a
	 * process that is not dumpable has those owned by root.
	 */
	(void)prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
	if (become_root() != 0 || pipe2(word, O_CLOEXEC) < 0)
		return 1;
	reset_signals();
	/* Nothing of the manifest is read before this: see the top of the file. */
	pid = fork();
	if (pid == 0) {
		(void)close(word[0]);
		work(word[1]);
	}
	return pid < 0 ? 1 : await_word(word);
}
