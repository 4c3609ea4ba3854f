/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Taking a user's rights: this thread's ids, groups and capabilities, and no
 * other thread's; and giving them back when the kernel refuses a step.
 * syscall() is wrapped at link time (meson.build), so that a test can make
 * one of the identity's system calls fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/identity.h"
#include "core/identity_syscalls.h"
#include "nobody.h"

/* --- syscall(), refusing on request ---------------------------------------- */

static long fail_nr = -1; /* the system call refused; -1: none */
static int fail_skip;     /* how many of its calls go through first */
static int fail_times;    /* how many calls are refused after those */

long __real_syscall(long nr, ...);
long __wrap_syscall(long nr, ...);

/* setfsuid(-1) and setfsgid(-1) only ask: they are never refused. */
static bool a_change(long nr, long arg)
{
	return !((nr == SYS_SETFSUID || nr == SYS_SETFSGID) && (uid_t)arg == (uid_t)-1);
}

/* What the kernel answers when a change does not take. */
static long refused(long nr)
{
	if (nr == SYS_SETFSUID || nr == SYS_SETFSGID)
		return __real_syscall(nr, (long)(uid_t)-1); /* the id it keeps */
	errno = EPERM;
	return -1;
}

long __wrap_syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (size_t i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == fail_nr && fail_times > 0 && a_change(nr, a[0])) {
		if (fail_skip > 0) {
			fail_skip--;
		} else {
			fail_times--;
			return refused(nr);
		}
	}
	return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Refuses nr's calls from the (skip + 1)-th on, times of them. */
static void refuse_from(long nr, int skip, int times)
{
	fail_nr = nr;
	fail_skip = skip;
	fail_times = times;
}

static void refuse(long nr, int times)
{
	refuse_from(nr, 0, times);
}

static const struct {
	long nr;
	const char *name;
} identity_calls[] = {
	{ SYS_capset, "capset" },
	{ SYS_SETFSUID, "setfsuid" },
	{ SYS_SETGROUPS, "setgroups" },
	{ SYS_SETFSGID, "setfsgid" },
	/* The reads that check the result: a failed one reads as "not given back". */
	{ SYS_capget, "capget" },
	{ SYS_GETGROUPS, "getgroups" },
};
#define N_IDENTITY_CALLS (sizeof(identity_calls) / sizeof(identity_calls[0]))

static void require_root(void)
{
	if (geteuid() == 0)
		return;
	printf("SKIP: needs root to take another user's rights\n");
	skip();
}

/* A thread's effective capabilities, as the kernel reports them: not through capget(). */
static uint64_t cap_eff(pid_t tid)
{
	char path[64], line[256];
	uint64_t caps = UINT64_MAX;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, &caps) == 1)
			break;
	fclose(f);
	assert_int_not_equal(caps, UINT64_MAX);
	return caps;
}

static uid_t current_fsuid(void)
{
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
}

/* Another thread of the process, parked until told to end. */
struct other {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	bool end;
};

static void *park(void *arg)
{
	struct other *o = arg;

	pthread_mutex_lock(&o->lock);
	o->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&o->cond);
	while (!o->end)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

static void other_start(struct other *o)
{
	*o = (struct other){ .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	assert_int_equal(pthread_create(&o->thread, NULL, park, o), 0);
	pthread_mutex_lock(&o->lock);
	while (o->tid == 0)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

static void other_end(struct other *o)
{
	pthread_mutex_lock(&o->lock);
	o->end = true;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	assert_int_equal(pthread_join(o->thread, NULL), 0);
}

/*
 * The fsuid alone keeps CAP_SYS_PTRACE and the rest in effect, and /proc
 * judges a read by them: the rights taken have none, on this thread only.
 */
static void empties_this_threads_capabilities(void **state)
{
	struct duress_saved_identity saved;
	pid_t me = (pid_t)syscall(SYS_gettid);
	struct other o;
	uint64_t mine, others;

	(void)state;
	require_root();
	other_start(&o);
	mine = cap_eff(me);
	others = cap_eff(o.tid);
	assert_int_not_equal(mine, 0);
	assert_int_equal(duress_identity_enter(nobody_identity(), &saved), 0);
	assert_int_equal(current_fsuid(), 65534);
	assert_int_equal(cap_eff(me), 0);
	/* The application's other threads keep theirs. */
	assert_int_equal(cap_eff(o.tid), others);
	duress_identity_leave(&saved);
	assert_int_equal(current_fsuid(), 0);
	assert_int_equal(cap_eff(me), mine);
	other_end(&o);
}

/* Rights are taken for one file at a time: a second taking fails, and the first is intact. */
static void cannot_be_taken_twice(void **state)
{
	struct duress_saved_identity outer, inner;
	pid_t me = (pid_t)syscall(SYS_gettid);
	uint64_t mine;

	(void)state;
	require_root();
	mine = cap_eff(me);
	assert_int_equal(duress_identity_enter(nobody_identity(), &outer), 0);
	assert_int_equal(duress_identity_enter(nobody_identity(), &inner), -ENOTRECOVERABLE);
	assert_int_equal(current_fsuid(), 65534);
	assert_int_equal(cap_eff(me), 0);
	duress_identity_leave(&inner); /* zeroed: nothing to give back */
	duress_identity_leave(&outer);
	assert_int_equal(current_fsuid(), 0);
	assert_int_equal(cap_eff(me), mine);
}

/* Not switched (no identity, or the process is not root): nothing changes. */
static void nothing_to_switch(void **state)
{
	const struct duress_identity none = { 0 };
	struct duress_saved_identity saved;
	pid_t me = (pid_t)syscall(SYS_gettid);
	uint64_t mine = cap_eff(me);
	uid_t fsuid = current_fsuid();

	(void)state;
	assert_int_equal(duress_identity_enter(NULL, &saved), 0);
	duress_identity_leave(&saved);
	assert_int_equal(duress_identity_enter(&none, &saved), 0);
	assert_int_equal(cap_eff(me), mine);
	assert_int_equal(current_fsuid(), fsuid);
	duress_identity_leave(&saved);
}

/* This thread's rights, as the kernel reports them. */
struct rights {
	uid_t fsuid;
	gid_t fsgid;
	int n_groups;
	gid_t groups[64];
	uint64_t cap_eff;
};

static void rights_now(struct rights *r)
{
	*r = (struct rights){ .fsuid = current_fsuid(),
			      .fsgid = (gid_t)syscall(SYS_SETFSGID, (gid_t)-1),
			      .cap_eff = cap_eff((pid_t)syscall(SYS_gettid)) };
	r->n_groups = getgroups(64, r->groups);
	assert_true(r->n_groups >= 0);
}

static bool rights_equal(const struct rights *a, const struct rights *b)
{
	return a->fsuid == b->fsuid && a->fsgid == b->fsgid && a->n_groups == b->n_groups &&
	       memcmp(a->groups, b->groups, (size_t)a->n_groups * sizeof(gid_t)) == 0 &&
	       a->cap_eff == b->cap_eff;
}

/*
 * One call refused while giving the rights back, whichever of its calls it
 * is: the other steps are still taken, then that one again, and a check
 * that could not read the result is made again.
 */
static void a_refused_step_is_taken_again(void **state)
{
	(void)state;
	require_root();
	for (size_t i = 0; i < N_IDENTITY_CALLS; i++)
		for (int k = 0; k < 12; k++) {
			struct duress_saved_identity saved;
			struct rights before, after;

			rights_now(&before);
			assert_int_equal(duress_identity_enter(nobody_identity(), &saved), 0);
			refuse_from(identity_calls[i].nr, k, 1);
			duress_identity_leave(&saved);
			refuse(-1, 0);
			rights_now(&after);
			if (!rights_equal(&before, &after))
				fail_msg("%s call %d refused while leaving: fsuid %u, fsgid %u, "
					 "%d groups, CapEff %#" PRIx64
					 " (before: %u, %u, %d, %#" PRIx64 ")",
					 identity_calls[i].name, k + 1, (unsigned)after.fsuid,
					 (unsigned)after.fsgid, after.n_groups, after.cap_eff,
					 (unsigned)before.fsuid, (unsigned)before.fsgid,
					 before.n_groups, before.cap_eff);
		}
}

/*
 * Rights that cannot be given back end the process (EXIT_FAILURE) inside
 * duress_identity_leave(): it never returns to its caller as the user.  In a
 * child, which writes a byte if it ever does return.
 */
static void lasting_refusal_ends_the_process(void **state)
{
	(void)state;
	require_root();
	for (size_t i = 0; i < N_IDENTITY_CALLS; i++) {
		struct duress_saved_identity saved;
		int p[2], status = 0;
		char c;
		pid_t pid;

		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			if (duress_identity_enter(nobody_identity(), &saved) != 0)
				_exit(3);
			refuse(identity_calls[i].nr, 1000);
			duress_identity_leave(&saved);
			_exit(write(p[1], "R", 1) == 1 ? 0 : 2);
		}
		close(p[1]);
		if (read(p[0], &c, 1) == 1)
			fail_msg(
				"%s always refused: duress_identity_leave() returned to its caller",
				identity_calls[i].name);
		close(p[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), EXIT_FAILURE);
	}
}

/* A step of taking the rights refused: what was changed goes back, nothing else is needed. */
static void refused_while_taking_changes_nothing(void **state)
{
	(void)state;
	require_root();
	for (size_t i = 0; i < N_IDENTITY_CALLS; i++) {
		struct duress_saved_identity saved;
		struct rights before, after;

		rights_now(&before);
		refuse(identity_calls[i].nr, 1000);
		assert_int_equal(duress_identity_enter(nobody_identity(), &saved),
				 -ENOTRECOVERABLE);
		refuse(-1, 0);
		rights_now(&after);
		if (!rights_equal(&before, &after))
			fail_msg("%s refused while taking the rights: they did not all come back",
				 identity_calls[i].name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empties_this_threads_capabilities),
		cmocka_unit_test(cannot_be_taken_twice),
		cmocka_unit_test(nothing_to_switch),
		cmocka_unit_test(a_refused_step_is_taken_again),
		cmocka_unit_test(lasting_refusal_ends_the_process),
		cmocka_unit_test(refused_while_taking_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
