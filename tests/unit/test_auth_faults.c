/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * duress_authenticate() under memory faults: every allocation the core
 * makes (malloc, calloc, realloc, reallocarray, wrapped at link time) is
 * failed in turn, one per authentication, until an authentication makes no
 * more.  A fault never turns into a match: the answer is one the row
 * allows (an error, or a denied match once the actions have started; no
 * match when only the start of a wrong password's empty runner failed), no
 * action is started unless the answer says so, and nothing stays open.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth_world.h"
#include "fixture.h"
#include "tests/lib/fds.h"

/* --- the fault: the fail_at-th allocation while armed -------------------- */

static atomic_bool armed;
static atomic_long calls;
static long fail_at;

static bool injected_fault(void)
{
	if (!atomic_load(&armed) || atomic_fetch_add(&calls, 1) + 1 != fail_at)
		return false;
	errno = ENOMEM;
	return true;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t size);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t n, size_t size);

void *__wrap_malloc(size_t n)
{
	return injected_fault() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return injected_fault() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return injected_fault() ? NULL : __real_realloc(p, n);
}

void *__wrap_reallocarray(void *p, size_t n, size_t size)
{
	return injected_fault() ? NULL : __real_reallocarray(p, n, size);
}

/* --- the rows ------------------------------------------------------------ */

#define BIT(outcome) (1U << (outcome))

struct fault_case {
	const char *name;
	const char *user;
	const char *password;
	bool needs_root;
	enum duress_outcome unfaulted;
	unsigned faulted; /* the answers a fault may give */
};

static const struct fault_case cases[] = {
	{ "both directories match", "ualice", BOTH_PW, true, DURESS_MATCH,
	  BIT(DURESS_ERROR) | BIT(DURESS_MATCH_DENIED) },
	{ "the user's directory matches", "ualice", USER_PW, false, DURESS_MATCH,
	  BIT(DURESS_ERROR) | BIT(DURESS_MATCH_DENIED) },
	{ "no match", "ualice", WRONG_PW, false, DURESS_NO_MATCH,
	  BIT(DURESS_ERROR) | BIT(DURESS_NO_MATCH) },
	{ "unknown user", "nosuchuser", USER_PW, false, DURESS_UNKNOWN_USER, BIT(DURESS_ERROR) },
};

struct tally {
	long allocations;
	unsigned answers[DURESS_ERROR + 1];
};

/*
 * One authentication with the k-th allocation failed (0: none); whether
 * there was a k-th.  *ran: the runner was handed a chain.
 */
static bool auth_with_fault(const struct fault_case *c, long k, enum duress_outcome *out, bool *ran,
			    long *n_calls)
{
	struct duress_opts o;
	char report[4096];

	world_opts(&o);
	atomic_store(&calls, 0);
	fail_at = k;
	atomic_store(&armed, true);
	*out = world_auth(&o, c->user, c->password, NULL);
	atomic_store(&armed, false);
	*ran = world_report(NULL, report, sizeof(report)) && report[0];
	*n_calls = atomic_load(&calls);
	return k > 0 && *n_calls >= k;
}

static void run_case(void **state)
{
	const struct fault_case *c = *state;
	struct tally t = { 0 };
	size_t fds = count_open_fds();
	enum duress_outcome out;
	bool ran;

	if (c->needs_root && !W.root) {
		printf("SKIP: needs root\n");
		skip();
	}
	assert_false(auth_with_fault(c, 0, &out, &ran, &t.allocations));
	assert_int_equal(out, c->unfaulted);
	assert_true(t.allocations > 0);
	for (long k = 1; auth_with_fault(c, k, &out, &ran, &(long){ 0 }); k++) {
		if (!(c->faulted & BIT(out)))
			fail_msg("allocation %ld of %ld failed: answered %d", k, t.allocations,
				 (int)out);
		/* The actions ran if and only if the answer says they did. */
		if (ran != (out == DURESS_MATCH_DENIED))
			fail_msg("allocation %ld failed: answered %d, the runner %s", k, (int)out,
				 ran ? "ran" : "did not run");
		if (count_open_fds() != fds)
			fail_msg("allocation %ld failed: a descriptor was left open", k);
		t.answers[out]++;
	}
	printf("%s: %ld allocations failed in turn: %u errors, %u denied matches\n", c->name,
	       t.allocations, t.answers[DURESS_ERROR], t.answers[DURESS_MATCH_DENIED]);
}

static int build(void **state)
{
	(void)state;
	world_build(WORLD_AS_USUAL);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0])];

	FX_ROW_TESTS(tests, cases, run_case, build, world_teardown);
	return cmocka_run_group_tests(tests, world_group_setup, world_group_teardown);
}
