/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 4, 5: the runner is detached and bounded by wait=, the module is
 * thread-safe, and it leaks no descriptors across many calls in one process.
 */
#include "harness.h"
#include "tests/lib/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <security/pam_appl.h>

/* Records the evidence only after sleeping. */
static void slow_action(const char *name, const char *pre)
{
	char path[PATH_MAX];

	action_script(U(ALICE)->dir, name, U(ALICE)->uid, pre, true);
	pathf(path, "%s/%s", U(ALICE)->dir, name);
	action_sign(path, U(ALICE)->duress);
}

/*
 * An action held until results/release exists, which the test writes only
 * once pam_authenticate has returned: a module that waited for it would
 * wait for ever (fresh_test's alarm).  600 s only against a killed test.
 */
static const char held_pre[] =
	"n=0; while [ ! -e \"$R/release\" ] && [ $n -lt 6000 ]; do sleep 0.1; n=$((n + 1)); done\n";

struct wait_case {
	const char *service;
	const char *pre;     /* what the action does before its evidence */
	bool done_on_return; /* its evidence was written before pam_authenticate returned */
};

/*
 * SPEC 5 wait=: pam_authenticate waits up to wait= seconds for the actions,
 * and not at all without it; past the bound the actions keep running.  The
 * order of the return and the action's evidence shows it, never the clock
 * (bench/bench_wait measures the times).
 */
static void wait_option(const struct wait_case *c)
{
	char path[PATH_MAX];

	slow_action("slow", c->pre);
	evidence_path(path, "slow");
	assert_int_equal(auth_quick(c->service, "alice", U(ALICE)->duress), PAM_SUCCESS);
	assert_int_equal(file_exists(path), c->done_on_return);
	pathf(path, "%s/release", W.results);
	write_file(path, "", 0, 0, 0644);
	/* Either way the action completes: detached, not killed at return. */
	expect_runs((const char *const[]){ "slow", NULL }, false);
}

/*
 * wait=600, a 1 s action: its evidence is there when pam_authenticate
 * returns, which it does when the action ends (waiting out the 600 s would
 * be a hang: auth_quick's bound).
 */
static void wait600_sleep1(void **state)
{
	(void)state;
	wait_option(&(const struct wait_case){ "wait600", "sleep 1\n", true });
}

/* No wait=: pam_authenticate returns without waiting for a held action. */
static void nowait_held(void **state)
{
	(void)state;
	wait_option(&(const struct wait_case){ "after", held_pre, false });
}

/* wait=1, a held action: pam_authenticate gives up waiting, and returns before it. */
static void wait1_held(void **state)
{
	(void)state;
	wait_option(&(const struct wait_case){ "wait1", held_pre, false });
}

static volatile sig_atomic_t sigchld_seen;

static void on_sigchld(int sig)
{
	(void)sig;
	sigchld_seen++;
}

/* What the forked application saw: 0 when all is as it should be. */
enum { AUTH_FAILED = 1, GOT_SIGCHLD = 2, HAS_A_CHILD = 4, NO_WORD = 8 };

/* One login of the forked application, and what it saw. */
struct app_run {
	const char *service;
	const char *password;
	int want; /* the PAM result */
	/* out */
	unsigned char auth, seen; /* the bits above, after the login and at the end */
	long children_minflt;     /* its reaped children's page faults after the login */
	size_t adopted;           /* what the runner left, adopted here */
};

/*
 * A login program, forked: it authenticates as alice, says so (the result
 * byte, and its reaped children's page faults, as /proc/PID/stat's cminflt
 * shows them to anyone), and when told that everything the module started
 * has ended, looks for a SIGCHLD and a child.  No cmocka assertion here: a
 * failure would jump back into the test runner in this process.
 */
static _Noreturn void application(const struct app_run *run, int report, int told)
{
	struct sigaction sa = { .sa_handler = on_sigchld };
	struct auth a = { .service = run->service, .user = "alice", .password = run->password };
	unsigned char seen = 0;
	struct rusage ru = { 0 };
	char word;

	if (sigaction(SIGCHLD, &sa, NULL) != 0 || auth_run(&a) != run->want)
		seen |= AUTH_FAILED;
	(void)getrusage(RUSAGE_CHILDREN, &ru);
	if (write(report, &seen, 1) != 1 ||
	    write(report, &ru.ru_minflt, sizeof(ru.ru_minflt)) != sizeof(ru.ru_minflt) ||
	    read(told, &word, 1) != 1)
		seen |= NO_WORD;
	if (sigchld_seen)
		seen |= GOT_SIGCHLD;
	errno = 0;
	if (waitpid(-1, NULL, WNOHANG | __WALL) != -1 || errno != ECHILD)
		seen |= HAS_A_CHILD;
	/* The result through the pipe: under valgrind a forked child exits with valgrind's code. */
	_exit(write(report, &seen, 1) == 1 ? 0 : 1);
}

/*
 * Runs the application and fills run's out fields.  The application is a
 * forked process, not the test process: the test process is a child
 * subreaper (reaper.c), which login programs are not.  It adopts the
 * runner's worker, and only once that and everything it started has ended
 * does the application look: nothing can come later.
 */
static void run_application(struct app_run *run)
{
	int report[2], tell[2];
	pid_t pid;

	assert_int_equal(pipe2(report, O_CLOEXEC), 0);
	assert_int_equal(pipe2(tell, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		application(run, report[1], tell[0]);
	close(report[1]);
	close(tell[0]);
	run->seen = 0xff;
	assert_int_equal(read(report[0], &run->auth, 1), 1);
	assert_int_equal(read(report[0], &run->children_minflt, sizeof(run->children_minflt)),
			 (ssize_t)sizeof(run->children_minflt));
	run->adopted = wait_actions();
	assert_int_equal(write(tell[1], "", 1), 1);
	assert_int_equal(read(report[0], &run->seen, 1), 1);
	close(report[0]);
	close(tell[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	printf("# %s, %s: children's page faults %ld, adopted %zu\n", run->service,
	       run->password == U(ALICE)->duress ? "duress" :
	       run->password == U(ALICE)->real   ? "real" :
						   "wrong",
	       run->children_minflt, run->adopted);
	fflush(stdout);
}

/* SPEC 5: no SIGCHLD and no child (zombie or not) left to the application. */
static void runner_detached(void **state)
{
	struct app_run run = { .service = "wait2",
			       .password = U(ALICE)->duress,
			       .want = PAM_SUCCESS };

	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	run_application(&run);
	assert_int_equal(run.auth, 0);
	assert_int_equal(run.seen, 0);
	/* The worker outlived its parent, the runner's first process: it was detached. */
	assert_true(run.adopted >= 1);
	expect_runs((const char *const[]){ "act", NULL }, false);
}

/*
 * Issue 24, SPEC 4: every login that reaches the module starts the runner
 * the same way, a duress login with its actions and any other with none,
 * so that the login process's /proc counters do not tell them apart.  For
 * a real and a duress login before pam_unix (the placement for coercion)
 * and a wrong password after it: the application reaped children that
 * cost it page faults (none before, when only a match started the
 * runner), exactly one worker outlived them (adopted here), and it got no
 * SIGCHLD and kept no child.
 */
static void every_login_starts_the_runner(void **state)
{
	struct app_run runs[] = {
		{ .service = "before", .password = U(ALICE)->real, .want = PAM_SUCCESS },
		{ .service = "before", .password = U(ALICE)->duress, .want = PAM_SUCCESS },
		{ .service = "after", .password = "wrong", .want = PAM_AUTH_ERR },
	};

	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		run_application(&runs[i]);
		assert_int_equal(runs[i].auth, 0);
		assert_int_equal(runs[i].seen, 0);
		assert_true(runs[i].children_minflt > 0);
		assert_int_equal(runs[i].adopted, 1);
	}
	expect_runs((const char *const[]){ "act", NULL }, false);
}

#define THREADS 8
/*
 * Every authentication that reaches the module costs two Argon2id at the
 * default cost (SPEC 4, constant work), 64 MiB each: a round of eight
 * threads takes about 3 s on two cores, 4 s under ASan, 20 s under
 * valgrind (one thread at a time, about 2.5 s an authentication).  Three
 * rounds give every thread each kind of password once: 24 authentications,
 * eight in flight at a time, queued at the derivation cap.
 */
#define ROUNDS 3

struct worker {
	pthread_t thread;
	int id;
	int n_duress;            /* duress authentications done */
	char duress[ROUNDS][48]; /* the PAM_RHOST each of them carried */
	int failures;            /* results that were not what the password calls for */
};

/* 0 real, 1 duress, 2 wrong, in turn. */
static int attempt_kind(int thread, int round)
{
	int kind = (thread + round) % 3;

	/*
	 * valgrind cannot fork a multithreaded client reliably (its children
	 * hang, or exit with its error code), and a duress match forks: under
	 * valgrind the duress attempts become wrong ones.  The module still
	 * checks every action each time.
	 */
	return W.valgrind && kind == 1 ? 2 : kind;
}

/*
 * Real, duress and wrong passwords in turn, each with its own handle and a
 * PAM_RHOST naming the attempt, which the action records: a run is then
 * traced to the one authentication that caused it.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < ROUNDS; i++) {
		int kind = attempt_kind(w->id, i);
		const char *pw = kind == 0 ? U(ALICE)->real :
				 kind == 1 ? U(ALICE)->duress :
					     "wrong";
		struct auth a = { .service = "after", .user = "alice", .password = pw };
		int want = kind == 2 ? PAM_AUTH_ERR : PAM_SUCCESS;
		char id[48];

		snprintf(id, sizeof(id), "t%d-%d-%d", w->id, i, kind);
		a.rhost = id;
		if (auth_run(&a) != want)
			w->failures++;
		if (kind == 1)
			memcpy(w->duress[w->n_duress++], id, sizeof(id));
	}
	return NULL;
}

/* SPEC 4: thread-safe; every duress authentication runs the action exactly once. */
static void threads(void **state)
{
	static struct worker w[THREADS];
	const char *expected[THREADS * ROUNDS + 1];
	int n = 0, failures = 0;

	(void)state;
	/* The action only says who triggered it: one O_APPEND line per run. */
	slow_action("count", "echo \"$PAM_RHOST\" >>\"$R/runs\"; exit 0\n");
	/* pam_wrapper sets itself up in the first pam_start: not in eight at once. */
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->real), PAM_SUCCESS);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .id = i };
		assert_int_equal(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(w[i].thread, NULL), 0);
		failures += w[i].failures;
		for (int j = 0; j < w[i].n_duress; j++)
			expected[n++] = w[i].duress[j];
	}
	expected[n] = NULL;
	assert_int_equal(failures, 0);
	assert_true(n > 0 || W.valgrind);
	expect_runs(expected, false);
}

/*
 * SPEC 4: no descriptor leaks across many authentications in one process.
 * Each kind (duress at 0 and 20, real ones in both placements, wrong ones)
 * comes several times: a descriptor one of them leaks shows in the count.
 */
static void no_fd_leak(void **state)
{
	const int rounds = W.valgrind ? 20 : 40;
	size_t before, after;
	int duress = 0;

	(void)state;
	slow_action("count", "echo \"$N\" >>\"$R/runs\"; exit 0\n");
	/* Warm up: the wrappers and libsodium open what they keep for good. */
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	assert_int_equal(auth_quick("after", "alice", "wrong"), PAM_AUTH_ERR);
	duress++;
	before = count_open_fds();
	for (int i = 0; i < rounds; i++) {
		const char *pw = i % 20 == 0 ? U(ALICE)->duress : i % 2 ? U(ALICE)->real : "wrong";
		int want = pw == U(ALICE)->duress || pw == U(ALICE)->real ? PAM_SUCCESS :
									    PAM_AUTH_ERR;

		assert_int_equal(auth_quick(i % 4 == 1 ? "before" : "after", "alice", pw), want);
		duress += pw == U(ALICE)->duress;
	}
	after = count_open_fds();
	assert_int_equal(before, after);
	wait_actions();
	assert_int_equal(runs_count(), duress);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(wait600_sleep1),
	T(nowait_held),
	T(wait1_held),
	T(runner_detached),
	T(every_login_starts_the_runner),
	T(threads),
	T(no_fd_leak),
};

const struct test_group runner_group = { "pam_runner", tests, sizeof(tests) / sizeof(tests[0]) };
