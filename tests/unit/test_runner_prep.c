/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the module prepares for the runner (runner.c): the environment built
 * from the account and the PAM items (hostile values kept whole, inside one
 * variable each), the groups, the manifest's bounds on what a target holds,
 * descriptors kept off 0-2 when the application closed them, and the
 * handover itself: a stand-in runner (fake_runner.c) reports exactly which
 * descriptors, manifest and job contents it was given.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/runner.h"
#include "fixture.h"

#define USER_PATH "PATH=/usr/local/bin:/usr/bin:/bin"
#define ROOT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define LONG_RHOST_LEN ((size_t)64 << 10)

static char long_rhost[LONG_RHOST_LEN + 1], long_rhost_env[LONG_RHOST_LEN + 16];

struct env_case {
	const char *name;
	struct passwd pw;
	struct duress_pam_items items;
	const char *env[16]; /* the whole environment, in order */
};

#define S(text) ((char[]){ text })
#define PW(name, uid, home, shell)                                                      \
	{                                                                               \
		.pw_name = S(name), .pw_uid = (uid), .pw_gid = 4242, .pw_dir = S(home), \
		.pw_shell = (shell)                                                     \
	}

static const struct env_case env_cases[] = {
	{ "a user, every item",
	  PW("alice", 1000, "/home/alice", S("/bin/bash")),
	  { "alice", "sshd", "192.0.2.1", "bob", "/dev/pts/1" },
	  { USER_PATH, "HOME=/home/alice", "USER=alice", "LOGNAME=alice", "SHELL=/bin/bash",
	    "PAM_USER=alice", "PAM_SERVICE=sshd", "PAM_RHOST=192.0.2.1", "PAM_RUSER=bob",
	    "PAM_TTY=/dev/pts/1", "PAM_TYPE=auth", "PAMUSER=alice" } },
	{ "root, no items: root's PATH, no PAM_* but the type",
	  PW("root", 0, "/root", S("/bin/sh")),
	  { 0 },
	  { ROOT_PATH, "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/sh",
	    "PAM_TYPE=auth" } },
	{ "an empty shell is /bin/sh",
	  PW("alice", 1000, "/home/alice", S("")),
	  { .service = "login" },
	  { USER_PATH, "HOME=/home/alice", "USER=alice", "LOGNAME=alice", "SHELL=/bin/sh",
	    "PAM_SERVICE=login", "PAM_TYPE=auth" } },
	{ "no shell is /bin/sh",
	  PW("alice", 1000, "/home/alice", NULL),
	  { .tty = "tty1" },
	  { USER_PATH, "HOME=/home/alice", "USER=alice", "LOGNAME=alice", "SHELL=/bin/sh",
	    "PAM_TTY=tty1", "PAM_TYPE=auth" } },
	{ "hostile items stay inside their own variable",
	  PW("alice", 1000, "/home/alice", S("/bin/sh")),
	  { "alice", "sshd", "x\nPAM_USER=root", "a=b", "\033[2J" },
	  { USER_PATH, "HOME=/home/alice", "USER=alice", "LOGNAME=alice", "SHELL=/bin/sh",
	    "PAM_USER=alice", "PAM_SERVICE=sshd", "PAM_RHOST=x\nPAM_USER=root", "PAM_RUSER=a=b",
	    "PAM_TTY=\033[2J", "PAM_TYPE=auth", "PAMUSER=alice" } },
	{ "a 64 KiB rhost is kept whole",
	  PW("alice", 1000, "/home/alice", S("/bin/sh")),
	  { .rhost = long_rhost },
	  { USER_PATH, "HOME=/home/alice", "USER=alice", "LOGNAME=alice", "SHELL=/bin/sh",
	    long_rhost_env, "PAM_TYPE=auth" } },
};

static void expect_env(char *const *got, const char *const *want, const char *what)
{
	size_t n = 0;

	for (; want[n]; n++) {
		if (!got[n] || strcmp(got[n], want[n]) != 0)
			fail_msg("%s: got \"%.60s\", expected \"%.60s\"", what,
				 got[n] ? got[n] : "(end)", want[n]);
	}
	if (got[n])
		fail_msg("%s: unexpected \"%.60s\"", what, got[n]);
}

static void run_env_case(void **state)
{
	const struct env_case *c = *state;
	struct duress_target t;

	assert_int_equal(duress_target_init(&t, &c->pw, &c->items, false), 0);
	assert_int_equal(t.uid, c->pw.pw_uid);
	assert_int_equal(t.gid, 4242);
	expect_env(t.envp, c->env, c->name);
	/* The primary group is among the groups, whatever else the account has. */
	assert_true(t.n_groups >= 1);
	assert_int_equal(t.groups[0], 4242);
	duress_target_free(&t);
	/* Freed twice, or zeroed: nothing. */
	duress_target_free(&t);
	assert_null(t.envp);
}

/* duress test --rehearse (never the module): DURESS_REHEARSE=1 is added, last. */
static void rehearsal_env(void **state)
{
	static const char *const want[] = {
		USER_PATH,       "HOME=/home/alice",  "USER=alice",
		"LOGNAME=alice", "SHELL=/bin/sh",     "PAM_SERVICE=login",
		"PAM_TYPE=auth", "DURESS_REHEARSE=1", NULL
	};
	const struct env_case *c = &env_cases[2]; /* the same without the rehearsal */
	struct duress_target t;

	(void)state;
	assert_int_equal(duress_target_init(&t, &c->pw, &c->items, true), 0);
	expect_env(t.envp, want, "rehearsal");
	duress_target_free(&t);
}

/* target_init, then the manifest, then the runner's parser: nothing is lost or merged. */
static void env_through_the_manifest(void **state)
{
	const struct env_case *a = &env_cases[4], *b = &env_cases[5];
	struct duress_target t[2];
	char name[] = "10-a";
	const struct duress_job job = { 40, false, name };
	struct duress_chain chains[2];
	struct duress_manifest m;
	int fd;

	(void)state;
	assert_int_equal(duress_target_init(&t[0], &a->pw, &a->items, false), 0);
	assert_int_equal(duress_target_init(&t[1], &b->pw, &b->items, false), 0);
	for (size_t i = 0; i < 2; i++)
		chains[i] = (struct duress_chain){ &t[i], &job, 1 };
	fd = duress_manifest_write(chains, 2, 0);
	assert_true(fd >= 0);
	assert_int_equal(duress_manifest_read(fd, &m), 0);
	close(fd);
	expect_env(m.targets[0].envp, a->env, a->name);
	expect_env(m.targets[1].envp, b->env, b->name);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(m.targets[i].n_groups, t[i].n_groups);
		assert_memory_equal(m.targets[i].groups, t[i].groups,
				    t[i].n_groups * sizeof(gid_t));
	}
	duress_manifest_free(&m);
	duress_target_free(&t[0]);
	duress_target_free(&t[1]);
}

/* What one target may hold: past a bound the manifest is not written at all. */
static void target_bounds(void **state)
{
	static char var[] = "X=1";
	char *env[DURESS_MANIFEST_MAX_ENV + 2] = { 0 };
	struct duress_target t = { .uid = 1000, .gid = 1000, .envp = env };
	struct duress_job *jobs = calloc(DURESS_MANIFEST_MAX_JOBS + 1, sizeof(*jobs));
	struct duress_chain c[2] = { { &t, jobs, 0 }, { &t, jobs, 0 } };
	char *rhost = malloc(DURESS_MANIFEST_MAX + 1);
	char name[] = "j";
	int fd;

	(void)state;
	assert_non_null(jobs);
	assert_non_null(rhost);
	for (size_t i = 0; i <= DURESS_MANIFEST_MAX_JOBS; i++)
		jobs[i] = (struct duress_job){ .memfd = -1, .name = name };
	for (size_t i = 0; i < DURESS_MANIFEST_MAX_ENV; i++)
		env[i] = var;
	fd = duress_manifest_write(c, 1, 0); /* at the bound */
	assert_true(fd >= 0);
	close(fd);
	env[DURESS_MANIFEST_MAX_ENV] = var;
	assert_int_equal(duress_manifest_write(c, 1, 0), -E2BIG);
	env[DURESS_MANIFEST_MAX_ENV] = NULL;
	/* The job bound is for both chains together. */
	c[0].n_jobs = DURESS_MANIFEST_MAX_JOBS;
	fd = duress_manifest_write(c, 2, 0);
	assert_true(fd >= 0);
	close(fd);
	c[1].n_jobs = 1;
	assert_int_equal(duress_manifest_write(c, 2, 0), -E2BIG);
	c[0].n_jobs = c[1].n_jobs = 0;
	/* One variable longer than the whole manifest may be. */
	memset(rhost, 'r', DURESS_MANIFEST_MAX);
	memcpy(rhost, "R=", 2);
	rhost[DURESS_MANIFEST_MAX] = '\0';
	env[0] = rhost;
	assert_int_equal(duress_manifest_write(c, 1, 0), -E2BIG);
	free(rhost);
	free(jobs);
}

/* --- descriptors, when the application had closed some of 0-2 ------------ */

/* In a child: on failure report the line on the pipe. */
static int report_fd = -1;
#define CHILD_CHECK(cond)                                             \
	do {                                                          \
		if (!(cond)) {                                        \
			int line = __LINE__;                          \
			(void)!write(report_fd, &line, sizeof(line)); \
			_exit(1);                                     \
		}                                                     \
	} while (0)

/* Runs fn in a child with the descriptors in `closed` (bit i: fd i) closed; fails with its line. */
static void in_child(void (*fn)(const void *), const void *arg, unsigned closed)
{
	int p[2], status = 0, line = 0;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		report_fd = p[1];
		for (int fd = 0; fd < 3; fd++)
			if (closed & (1U << fd))
				close(fd);
		fn(arg);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (read(p[0], &line, sizeof(line)) == sizeof(line))
		fail_msg("the check at line %d failed in the child", line);
	close(p[0]);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct fd_case {
	const char *name;
	unsigned closed;
	bool no_room; /* RLIMIT_NOFILE 3: nothing above 2 can be had */
};

static const struct fd_case fd_cases[] = {
	{ "fd 0 closed", 1, false },    { "fd 1 closed", 2, false },
	{ "fd 2 closed", 4, false },    { "0, 1 and 2 closed", 7, false },
	{ "no room above 2", 1, true }, { "none closed: unchanged", 0, false },
};

static void fd_child(const void *arg)
{
	const struct fd_case *c = arg;
	struct rlimit lim;
	int fd = open("/dev/null", O_RDONLY), moved;

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(c->closed ? fd <= 2 : fd > 2);
	/* The soft limit only: valgrind refuses a change of the hard one. */
	CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &lim) == 0);
	lim.rlim_cur = 3;
	CHILD_CHECK(!c->no_room || setrlimit(RLIMIT_NOFILE, &lim) == 0);
	moved = duress_fd_above_stdio(fd);
	if (c->no_room) {
		/* F_DUPFD past the limit: EINVAL from the kernel, EMFILE under valgrind. */
		CHILD_CHECK(moved == -EINVAL || moved == -EMFILE);
		CHILD_CHECK(fcntl(fd, F_GETFD) == -1); /* not kept in the application's place */
	} else if (c->closed) {
		CHILD_CHECK(moved > 2);
		CHILD_CHECK(fcntl(moved, F_GETFD) == FD_CLOEXEC);
		CHILD_CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	} else {
		CHILD_CHECK(moved == fd);
		CHILD_CHECK(fcntl(fd, F_GETFD) == 0); /* flags untouched */
	}
	errno = EBADF;
	CHILD_CHECK(duress_fd_above_stdio(-1) == -EBADF);
}

static void run_fd_case(void **state)
{
	const struct fd_case *c = *state;

	in_child(fd_child, c, c->closed);
}

/* --- the handover to a stand-in runner ----------------------------------- */

static char tmp[PATH_MAX / 2];
static const char *fake_runner, *false_runner;

enum runner { FAKE, FALSE, MISSING };

struct spawn_case {
	const char *name;
	enum runner runner;
	unsigned wait;
	unsigned closed; /* descriptors the application closed */
	int result;
	const char *report; /* runner.out, or NULL: none */
};

#define CHAINS                                                         \
	"chain uid=1000 gid=1000 groups=1000,20010\n"                  \
	"env=USER=alice\n"                                             \
	"env=PAM_RHOST=x\\x0aPAM_USER=root\n"                          \
	"job fd=5 elf=0 name=10-a content=#!/bin/sh\\x0aecho a\\x0a\n" \
	"job fd=6 elf=1 name=20-b\\x0aforged content=\\x7fELF\\x02\n"  \
	"chain uid=0 gid=0 groups=0\n"                                 \
	"env=USER=root\n"                                              \
	"job fd=7 elf=0 name=alert content=#!/bin/sh\\x0a\n"

static const struct spawn_case spawn_cases[] = {
	{ "two chains", FAKE, 0, 0, 0, "fds 0 1 2 3 5 6 7\nmanifest 0 flags=0 chains=2\n" CHAINS },
	{ "wait=: the done descriptor too", FAKE, 1, 0, 0,
	  "fds 0 1 2 3 4 5 6 7\nmanifest 0 flags=2 chains=2\n" CHAINS },
	{ "the application closed 0-2", FAKE, 0, 7, 0,
	  "fds 0 1 2 3 5 6 7\nmanifest 0 flags=0 chains=2\n" CHAINS },
	{ "the application closed 1, with wait=", FAKE, 1, 2, 0,
	  "fds 0 1 2 3 4 5 6 7\nmanifest 0 flags=2 chains=2\n" CHAINS },
	{ "a runner that fails", FALSE, 0, 0, -ECHILD, NULL },
	{ "no runner there", MISSING, 0, 0, -ECHILD, NULL },
};

/* The jobs' memfds: made (as the module makes them, above 2) before the child closes stdio. */
static int job_fds[3];

static int job_memfd(const char *content)
{
	int fd = memfd_create("job", MFD_CLOEXEC);

	assert_true(fd > 2);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	return fd;
}

static void spawn_child(const void *arg)
{
	const struct spawn_case *c = arg;
	static char u_env0[] = "USER=alice", u_env1[] = "PAM_RHOST=x\nPAM_USER=root";
	static char r_env0[] = "USER=root";
	static char *u_env[] = { u_env0, u_env1, NULL }, *r_env[] = { r_env0, NULL };
	static gid_t u_groups[] = { 1000, 20010 }, r_groups[] = { 0 };
	static char n1[] = "10-a", n2[] = "20-b\nforged", n3[] = "alert";
	const struct duress_target user = { 1000, 1000, u_groups, 2, u_env };
	const struct duress_target root = { 0, 0, r_groups, 1, r_env };
	const struct duress_job u_jobs[] = { { job_fds[0], false, n1 }, { job_fds[1], true, n2 } };
	const struct duress_job r_jobs[] = { { job_fds[2], false, n3 } };
	const struct duress_chain chains[] = { { &user, u_jobs, 2 }, { &root, r_jobs, 1 } };
	const char *path = c->runner == FAKE  ? fake_runner :
			   c->runner == FALSE ? false_runner :
						"/nonexistent/runner";

	CHILD_CHECK(duress_spawn(path, chains, 2, c->wait, NULL, NULL) == c->result);
}

static void run_spawn_case(void **state)
{
	const struct spawn_case *c = *state;
	char got[8192];
	/* Not close-on-exec: the runner must still not get it. */
	int leak = open("/dev/null", O_RDONLY), fd;

	assert_true(leak > 2);
	job_fds[0] = job_memfd("#!/bin/sh\necho a\n");
	job_fds[1] = job_memfd("\177ELF\002");
	job_fds[2] = job_memfd("#!/bin/sh\n");
	in_child(spawn_child, c, c->closed);
	for (size_t i = 0; i < 3; i++)
		close(job_fds[i]);
	close(leak);
	fd = open("runner.out", O_RDONLY | O_CLOEXEC);
	if (!c->report) {
		assert_int_equal(fd, -1);
		return;
	}
	assert_true(fd >= 0);
	assert_true(fx_read_all(fd, got, sizeof(got)) > 0);
	close(fd);
	assert_string_equal(got, c->report);
}

static int make_tmp(void **state)
{
	(void)state;
	fx_tmpdir(tmp, sizeof(tmp), "test_runner_prep");
	return chdir(tmp);
}

static int remove_tmp(void **state)
{
	(void)state;
	(void)unlink("runner.out");
	if (chdir("/") != 0)
		return -1;
	fx_remove_tree(tmp);
	return 0;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
int main(void)
{
	struct CMUnitTest tests[N(env_cases) + N(fd_cases) + N(spawn_cases) + 3] = {
		cmocka_unit_test(env_through_the_manifest),
		cmocka_unit_test(rehearsal_env),
		cmocka_unit_test(target_bounds),
	};
	size_t n = 3; /* the rows' tests follow */

	fake_runner = getenv("DURESS_FAKE_RUNNER");
	false_runner = getenv("DURESS_FALSE");
	if (!fake_runner || !false_runner) {
		fputs("test_runner_prep: run through meson test (DURESS_FAKE_RUNNER)\n", stderr);
		return 1;
	}
	memset(long_rhost, 'h', LONG_RHOST_LEN);
	snprintf(long_rhost_env, sizeof(long_rhost_env), "PAM_RHOST=%s", long_rhost);
	FX_ROW_TESTS(tests + n, env_cases, run_env_case, NULL, NULL);
	n += N(env_cases);
	FX_ROW_TESTS(tests + n, fd_cases, run_fd_case, NULL, NULL);
	n += N(fd_cases);
	FX_ROW_TESTS(tests + n, spawn_cases, run_spawn_case, make_tmp, remove_tmp);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
