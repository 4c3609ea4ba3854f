/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real runner (src/runner) against job descriptors that are not what
 * the module hands it: exactly the verified bytes may run, so a job memfd
 * that could still be written, shrunk or grown (one of F_SEAL_WRITE,
 * F_SEAL_SHRINK, F_SEAL_GROW missing), a memfd with no seals, or a file
 * that is no memfd at all is refused and nothing of the manifest runs,
 * not even the chain's sealed jobs.  The same manifest with every job
 * sealed as memfd.c seals it does run, so that each row can fail.
 *
 * Handed over by duress_spawn(), with wait= so that a run is over when it
 * returns; each job appends its name to a file here.  Then the hold the
 * module uses: the runner has taken the manifest when duress_spawn_hold()
 * returns, but no chain starts before duress_spawn_release(), and none at
 * all if the module drops the hold without releasing it (it failed, or
 * died); and an empty manifest (a wrong password's) runs nothing and ends
 * at the release.  A runner started with /dev/null as stdin, as a module
 * older than the hold started it, runs at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/runner.h"
#include "fixture.h"

#define ALL_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

enum job_kind {
	MEMFD,      /* a memfd with `seals` added */
	UNSEALABLE, /* a memfd made without MFD_ALLOW_SEALING */
	PLAIN_FILE, /* an ordinary file of the test's directory */
};

struct job_spec {
	enum job_kind kind;
	int seals;
};

struct seal_case {
	const char *name;
	struct job_spec jobs[2]; /* one chain, run in this order */
	bool runs;               /* both jobs run; otherwise the runner refuses and none does */
};

#define SEALED                   \
	{                        \
		MEMFD, ALL_SEALS \
	}

static const struct seal_case cases[] = {
	{ "sealed as the module seals: both jobs run", { SEALED, SEALED }, true },
	{ "without F_SEAL_WRITE: refused", { SEALED, { MEMFD, ALL_SEALS & ~F_SEAL_WRITE } }, false },
	{ "without F_SEAL_SHRINK: refused",
	  { SEALED, { MEMFD, ALL_SEALS & ~F_SEAL_SHRINK } },
	  false },
	{ "without F_SEAL_GROW: refused", { SEALED, { MEMFD, ALL_SEALS & ~F_SEAL_GROW } }, false },
	{ "the first job without F_SEAL_WRITE: refused",
	  { { MEMFD, ALL_SEALS & ~F_SEAL_WRITE }, SEALED },
	  false },
	{ "a memfd with no seal: refused", { SEALED, { MEMFD, 0 } }, false },
	{ "a memfd that cannot be sealed: refused", { SEALED, { UNSEALABLE, 0 } }, false },
	{ "a plain file, not a memfd: refused", { SEALED, { PLAIN_FILE, 0 } }, false },
};

static char tmp[PATH_MAX / 2], ran[PATH_MAX];
static const char *runner;

/* A script that appends its name to `ran`, in a descriptor of the spec's kind. */
static int job_fd(const struct job_spec *s, const char *name)
{
	char script[PATH_MAX + 64], path[PATH_MAX];
	int fd;

	snprintf(script, sizeof(script), "#!/bin/sh\necho %s >>%s\n", name, ran);
	if (s->kind == PLAIN_FILE) {
		snprintf(path, sizeof(path), "%s/%s", tmp, name);
		fx_write_text(AT_FDCWD, path, script, 0700);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd > 2);
		return fd;
	}
	fd = memfd_create("job", MFD_CLOEXEC | (s->kind == MEMFD ? MFD_ALLOW_SEALING : 0));
	assert_true(fd > 2);
	assert_int_equal(write(fd, script, strlen(script)), (ssize_t)strlen(script));
	if (s->seals)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, s->seals), 0);
	return fd;
}

/* What the jobs wrote to `ran` ("" if nothing); whether it exists. */
static bool read_ran(char *text, size_t size)
{
	int fd = open(ran, O_RDONLY | O_CLOEXEC);

	text[0] = '\0';
	if (fd < 0)
		return false;
	assert_true(fx_read_all(fd, text, size) >= 0);
	close(fd);
	return true;
}

static void run_case(void **state)
{
	const struct seal_case *c = *state;
	char path_env[] = "PATH=/usr/bin:/bin", text[64], name0[] = "10-first",
	     name1[] = "20-second";
	char *envp[] = { path_env, NULL };
	gid_t groups[] = { getgid() };
	const struct duress_target target = { getuid(), getgid(), groups, 1, envp };
	struct duress_job jobs[2] = { { -1, false, name0 }, { -1, false, name1 } };
	const struct duress_chain chain = { &target, jobs, 2 };
	bool wrote;
	int r;

	for (size_t i = 0; i < 2; i++)
		jobs[i].memfd = job_fd(&c->jobs[i], jobs[i].name);
	r = duress_spawn(runner, &chain, 1, 30, NULL, NULL);
	for (size_t i = 0; i < 2; i++)
		close(jobs[i].memfd);
	wrote = read_ran(text, sizeof(text));
	if (c->runs) {
		if (r != 0)
			fail_msg("%s: the runner refused it (%d)", c->name, r);
		assert_string_equal(text, "10-first\n20-second\n");
		return;
	}
	if (wrote)
		fail_msg("%s: the runner ran it:\n%s", c->name, text);
	/* It says so: the module logs that the runner failed to start. */
	assert_int_equal(r, -ECHILD);
}

/* One sealed job NAME, as ourselves, handed to RUNNER_PATH and held: the runner has taken it. */
static void hold_one_job(const char *runner_path, char *name, struct duress_held *held)
{
	char path_env[] = "PATH=/usr/bin:/bin";
	char *envp[] = { path_env, NULL };
	gid_t groups[] = { getgid() };
	const struct duress_target target = { getuid(), getgid(), groups, 1, envp };
	struct duress_job job = { job_fd(&(struct job_spec)SEALED, name), false, name };
	const struct duress_chain chain = { &target, &job, 1 };

	assert_int_equal(duress_spawn_hold(runner_path, &chain, 1, 30, NULL, NULL, held), 0);
	close(job.memfd);
	assert_true(held->release >= 0 && held->done >= 0);
}

/* The module's end of the hold closed without the release's byte; returns once the runner ended. */
static void drop_hold(struct duress_held *held)
{
	char c;

	close(held->release);
	assert_int_equal(read(held->done, &c, 1), 0);
	close(held->done);
}

/*
 * Held: the runner took the manifest (its first process has exited), its
 * worker waits for the release, so its done pipe stays open and the job
 * has not run however long we look (a second here: a worker that did not
 * wait would be done well within it); at the release it runs, and the
 * release waits for it (wait=).
 */
static void held_until_release(void **state)
{
	char name[] = "10-held", text[64];
	struct duress_held held;
	struct pollfd p;

	(void)state;
	hold_one_job(runner, name, &held);
	p = (struct pollfd){ .fd = held.done, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 1000), 0);
	assert_false(read_ran(text, sizeof(text)));
	duress_spawn_release(&held);
	assert_int_equal(held.release, -1);
	assert_int_equal(held.done, -1);
	assert_true(read_ran(text, sizeof(text)));
	assert_string_equal(text, "10-held\n");
}

/*
 * The module failed or died between the hold and the release: its end of
 * the runner's stdin closes without the release's byte, and the job never
 * runs; the runner ends all the same (the done pipe closes).
 */
static void dropped_hold(void **state)
{
	char name[] = "10-dropped", text[64];
	struct duress_held held;

	(void)state;
	hold_one_job(runner, name, &held);
	drop_hold(&held);
	assert_false(read_ran(text, sizeof(text)));
}

/*
 * A module from before the release channel (a 0.1.0 build still loaded in
 * a screen locker across an upgrade) started the runner with /dev/null as
 * stdin, once its answer was made, and sent no release: that start is the
 * release, and the job runs.  Played by a shell that starts the real
 * runner so, and a hold dropped without its byte.
 */
static void started_without_channel(void **state)
{
	char name[] = "10-old", text[64], old_start[PATH_MAX], script[PATH_MAX + 64];
	struct duress_held held;

	(void)state;
	snprintf(old_start, sizeof(old_start), "%s/old-start", tmp);
	snprintf(script, sizeof(script), "#!/bin/sh\nexec %s \"$@\" </dev/null\n", runner);
	fx_write_text(AT_FDCWD, old_start, script, 0700);
	hold_one_job(old_start, name, &held);
	drop_hold(&held);
	assert_true(read_ran(text, sizeof(text)));
	assert_string_equal(text, "10-old\n");
}

/*
 * A wrong password's runner: an empty manifest, the same start; it runs
 * nothing, and its done pipe closes at the release, so that wait= (300 s
 * here, meson's bound 60 s) waits for nothing but its end.
 */
static void empty_manifest(void **state)
{
	struct duress_held held;
	char text[64];

	(void)state;
	assert_int_equal(duress_spawn_hold(runner, NULL, 0, 300, NULL, NULL, &held), 0);
	assert_true(held.release >= 0 && held.done >= 0);
	duress_spawn_release(&held);
	assert_false(read_ran(text, sizeof(text)));
}

static int make_tmp(void **state)
{
	(void)state;
	fx_tmpdir(tmp, sizeof(tmp), "test_runner_seals");
	snprintf(ran, sizeof(ran), "%s/ran", tmp);
	return 0;
}

static int remove_tmp(void **state)
{
	(void)state;
	fx_remove_tree(tmp);
	return 0;
}

int main(void)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 4];

	runner = getenv("DURESS_RUNNER");
	if (!runner || *runner != '/') {
		fputs("test_runner_seals: run through meson test (DURESS_RUNNER)\n", stderr);
		return 1;
	}
	FX_ROW_TESTS(tests, cases, run_case, make_tmp, remove_tmp);
	tests[n] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(held_until_release, make_tmp,
								      remove_tmp);
	tests[n + 1] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(empty_manifest, make_tmp,
									  remove_tmp);
	tests[n + 2] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(dropped_hold, make_tmp,
									  remove_tmp);
	tests[n + 3] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(started_without_channel,
									  make_tmp, remove_tmp);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
