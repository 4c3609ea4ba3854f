/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flows of duress_authenticate() (auth.c), one named test per row: what
 * it answers for each account, password, option and directory state, and
 * exactly which chains and jobs it handed the runner (the stand-in
 * runner's report), or that it started nothing.  A failed runner is an
 * error, never a match.  Rows that need root (the global directory, other
 * users' rights) print SKIP without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth_world.h"
#include "fixture.h"
#include "tests/lib/fds.h"

enum runner { FAKE, FAILING, MISSING };

struct auth_case {
	const char *name;
	const char *user; /* NULL: ualice */
	const char *password;
	const char *service;
	enum world_change change;
	/* options */
	bool deny, no_global, no_user_dir;
	const char *group;
	enum runner runner;
	/* run as ualice (as root: in a child that has dropped to ualice's ids) */
	bool as_user;
	bool needs_root;
	enum duress_outcome outcome;
	const char *chains; /* the runner's chain and job lines; NULL: it must not have run */
};

#define JOB(fd, name) "job fd=" #fd " elf=0 name=" name " content=#!/bin/sh\\x0a# " name "\\x0a\n"
#define USER_CHAIN "chain uid=@U@ gid=@G@ groups=@G@,20010\n"
#define ROOT_CHAIN "chain uid=0 gid=0 groups=0\n"

static const struct auth_case cases[] = {
	{ .name = "unknown user",
	  .user = "nosuchuser",
	  .password = USER_PW,
	  .outcome = DURESS_UNKNOWN_USER },
	{ .name = "wrong password", .password = WRONG_PW, .outcome = DURESS_NO_MATCH },
	{ .name = "the user's duress password",
	  .password = USER_PW,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "the global duress password",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "one password for both: two chains, the user's first",
	  .password = BOTH_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "20-both") ROOT_CHAIN JOB(6, "60-both") },
	{ .name = "deny: the actions run, the login fails",
	  .password = USER_PW,
	  .deny = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "an elevation service: the actions run, sudo fails",
	  .password = USER_PW,
	  .service = "sudo",
	  .outcome = DURESS_MATCH_DENIED,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "a locked account: the global actions run, the login fails",
	  .user = "ucarol",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "no password (\"*\"): the global actions run, the login fails",
	  .user = "udave",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "root without allow_root: the global actions run, the login fails",
	  .user = "root",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "a runner that fails is an error",
	  .password = USER_PW,
	  .runner = FAILING,
	  .outcome = DURESS_ERROR },
	{ .name = "no runner is an error",
	  .password = USER_PW,
	  .runner = MISSING,
	  .outcome = DURESS_ERROR },
	{ .name = "group=: not a member, no per-user actions",
	  .password = USER_PW,
	  .group = "uother",
	  .outcome = DURESS_NO_MATCH },
	{ .name = "group=: a member",
	  .password = USER_PW,
	  .group = "uduressers",
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "group=: no such group",
	  .password = USER_PW,
	  .group = "nosuchgroup",
	  .outcome = DURESS_NO_MATCH },
	{ .name = "a group-writable user directory is skipped",
	  .password = USER_PW,
	  .change = WORLD_USER_DIR_WRITABLE,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "an action changed since signing does not run",
	  .password = USER_PW,
	  .change = WORLD_USER_ACTION_CHANGED,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "a global directory not root's is skipped",
	  .password = GLOBAL_PW,
	  .change = WORLD_GLOBAL_DIR_NOT_ROOTS,
	  .needs_root = true,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "global_dir= empty: no global actions",
	  .password = GLOBAL_PW,
	  .no_global = true,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "user_dir= empty: only the global chain",
	  .password = BOTH_PW,
	  .no_user_dir = true,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = ROOT_CHAIN JOB(5, "60-both") },
	{ .name = "not root: the global directory is not checked",
	  .password = GLOBAL_PW,
	  .as_user = true,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "not root: the user's own actions still run",
	  .password = BOTH_PW,
	  .as_user = true,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "20-both") },
};

static void case_opts(const struct auth_case *c, struct duress_opts *o)
{
	world_opts(o);
	o->deny = c->deny;
	o->group = c->group;
	if (c->no_global)
		o->global_dir = "";
	if (c->no_user_dir)
		o->user_dir = "";
	if (c->runner == FAILING)
		o->runner = W.false_runner;
	else if (c->runner == MISSING)
		o->runner = "/nonexistent/duress-runner";
}

/* As root: authenticates in a child that has become ualice, its report in her home. */
static enum duress_outcome auth_as_user(const struct duress_opts *o, const struct auth_case *c)
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(W.gid, W.gid, W.gid) != 0 ||
		    setresuid(W.uid, W.uid, W.uid) != 0 || chdir(W.home) != 0)
			_exit(100);
		_exit(world_auth(o, "ualice", c->password, c->service));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) < 100);
	return (enum duress_outcome)WEXITSTATUS(status);
}

static const char *outcome_name(enum duress_outcome out)
{
	static const char *const names[] = {
		[DURESS_NO_MATCH] = "no match",
		[DURESS_MATCH] = "match",
		[DURESS_MATCH_DENIED] = "match, denied",
		[DURESS_UNKNOWN_USER] = "unknown user",
		[DURESS_ERROR] = "error",
	};

	return (size_t)out < sizeof(names) / sizeof(names[0]) ? names[out] : "?";
}

static void run_case(void **state)
{
	const struct auth_case *c = *state;
	char got[4096], want[4096];
	struct duress_opts o;
	enum duress_outcome out;
	size_t fds = count_open_fds();
	bool ran;

	if (c->needs_root && !W.root) {
		printf("SKIP: needs root\n");
		skip();
	}
	case_opts(c, &o);
	if (c->as_user && W.root)
		out = auth_as_user(&o, c);
	else
		out = world_auth(&o, c->user ? c->user : "ualice", c->password, c->service);
	if (out != c->outcome)
		fail_msg("%s: answered \"%s\", expected \"%s\"", c->name, outcome_name(out),
			 outcome_name(c->outcome));
	ran = world_report(c->as_user && W.root ? W.home : NULL, got, sizeof(got));
	if (!c->chains) {
		if (ran)
			fail_msg("%s: the runner ran:\n%s", c->name, got);
	} else {
		assert_true(ran);
		world_expand(c->chains, want, sizeof(want));
		assert_string_equal(got, want);
	}
	/* Nothing of the authentication stays open. */
	assert_int_equal(count_open_fds(), fds);
}

static int build(void **state)
{
	const struct auth_case *c = *state;

	world_build(c->change);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0])];

	FX_ROW_TESTS(tests, cases, run_case, build, world_teardown);
	return cmocka_run_group_tests(tests, world_group_setup, world_group_teardown);
}
