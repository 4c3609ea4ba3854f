/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Taking a user's rights: this thread's ids, groups and capabilities, and no other thread's. */
#include <errno.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "core/identity.h"
#include "nobody.h"

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
	assert_int_equal(duress_identity_leave(&saved), 0);
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
	assert_int_equal(duress_identity_leave(&inner), 0); /* zeroed: nothing to give back */
	assert_int_equal(duress_identity_leave(&outer), 0);
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
	assert_int_equal(duress_identity_leave(&saved), 0);
	assert_int_equal(duress_identity_enter(&none, &saved), 0);
	assert_int_equal(cap_eff(me), mine);
	assert_int_equal(current_fsuid(), fsuid);
	assert_int_equal(duress_identity_leave(&saved), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empties_this_threads_capabilities),
		cmocka_unit_test(cannot_be_taken_twice),
		cmocka_unit_test(nothing_to_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
