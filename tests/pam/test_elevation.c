/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 4, least privilege: a duress password never gives more than the
 * account already has.  It never passes an elevation service (sudo,
 * pkexec...) unless allow_root, and the global password logs in only
 * ordinary accounts, narrowed further by global_group=.  In every refused
 * case the actions still run: the alarm goes off, the login fails as a wrong
 * password would.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <security/pam_appl.h>

static const char global_pw[] = "global-duress";

/* sudo with the user's own duress password: the action runs, sudo is refused. */
static void sudo_refuses_user_password(void **state)
{
	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("sudo", "alice", U(ALICE)->real), PAM_SUCCESS);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("sudo", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(RUNS("act"), false);
	/* The same password on an ordinary service logs in. */
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("act", "act"), false);
}

/*
 * allow_root lifts the rule (pkexec is configured with it); a custom
 * elevation_services= list replaces the default one (doas: "run0" only).
 */
static void elevation_list_and_allow_root(void **state)
{
	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("pkexec", "alice", U(ALICE)->duress), PAM_SUCCESS);
	assert_int_equal(auth_quick("doas", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("act", "act"), false);
}

/* sudo with the global password: refused too, the global action runs as root. */
static void sudo_refuses_global_password(void **state)
{
	(void)state;
	require_root("global actions run only as root");
	action_add(W.global, "g", 0, global_pw);
	assert_int_equal(auth_quick("sudo", "bob", global_pw), PAM_AUTH_ERR);
	expect_runs(RUNS("g"), false);
}

/*
 * A system account (uid below UID_MIN of /etc/login.defs) is not logged in by
 * the global password, though it has a real password; its own per-user
 * password is its own business and still logs it in.
 */
static void global_password_spares_system_accounts(void **state)
{
	(void)state;
	require_root("global actions run only as root");
	action_add(W.global, "g", 0, global_pw);
	assert_int_equal(auth_quick("after", "sysacct", U(SYSACCT)->real), PAM_SUCCESS);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("after", "sysacct", global_pw), PAM_AUTH_ERR);
	expect_runs(RUNS("g"), false);
	action_add(U(SYSACCT)->dir, "own", U(SYSACCT)->uid, U(SYSACCT)->duress);
	assert_int_equal(auth_quick("after", "sysacct", U(SYSACCT)->duress), PAM_SUCCESS);
	expect_runs(RUNS("g", "own"), false);
	/* An ordinary account is logged in by the same global password. */
	assert_int_equal(auth_quick("after", "bob", global_pw), PAM_SUCCESS);
	expect_runs(RUNS("g", "own", "g"), false);
}

/*
 * One authentication with the global password in a child whose private
 * mount namespace has the test's login.defs (W.tmp/login.defs) at
 * /etc/login.defs, where the real module reads it.  The PAM code, or 254 if
 * the namespace cannot be had; through a pipe (under valgrind a forked
 * child exits with valgrind's code).
 */
static int auth_in_namespace(const void *user)
{
	char defs[PATH_MAX];

	pathf(defs, "%s/login.defs", W.tmp);
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount(defs, "/etc/login.defs", NULL, MS_BIND, NULL) != 0)
		return 254;
	return auth_quick("after", user, global_pw);
}

static int auth_with_own_login_defs(const char *user)
{
	int result = in_child(auth_in_namespace, user);

	if (result == 254) {
		printf("SKIP: no private mount namespace here\n");
		fflush(stdout);
		skip();
	}
	return result;
}

/*
 * The exact UID_MIN and UID_MAX boundaries through the real module, with a
 * login.defs of the test's own rather than the machine's: with UID_MIN and
 * UID_MAX both bob's uid, alice (one below) is a system account for the
 * global password and bob is ordinary; with both alice's, alice is
 * ordinary and bob (one above) is not.  The action runs every time.
 */
static void global_password_uid_boundaries(void **state)
{
	char defs[PATH_MAX], text[128];
	const unsigned alice = (unsigned)U(ALICE)->uid, bob = (unsigned)U(BOB)->uid;
	int n;

	(void)state;
	require_root("global actions run only as root");
	/*
	 * Seen: from the namespace's child the runner itself exits 0, but the
	 * valgrind-hosted process between it and the module exits with
	 * valgrind's error code, which the module reads as a runner that failed.
	 */
	skip_under_valgrind("the runner started from a private mount namespace");
	if (access("/etc/login.defs", F_OK) != 0) {
		printf("SKIP: no /etc/login.defs to stand in for\n");
		fflush(stdout);
		skip();
	}
	assert_int_equal(bob, alice + 1);
	action_add(W.global, "g", 0, global_pw);
	pathf(defs, "%s/login.defs", W.tmp);
	n = snprintf(text, sizeof(text), "UID_MIN %u\nUID_MAX %u\n", bob, bob);
	write_file(defs, text, (size_t)n, 0, 0644);
	assert_int_equal(auth_with_own_login_defs("alice"), PAM_AUTH_ERR); /* UID_MIN - 1 */
	assert_int_equal(auth_with_own_login_defs("bob"), PAM_SUCCESS);    /* UID_MIN */
	n = snprintf(text, sizeof(text), "UID_MIN %u\nUID_MAX %u\n", alice, alice);
	write_file(defs, text, (size_t)n, 0, 0644);
	assert_int_equal(auth_with_own_login_defs("alice"), PAM_SUCCESS); /* UID_MAX */
	assert_int_equal(auth_with_own_login_defs("bob"), PAM_AUTH_ERR);  /* UID_MAX + 1 */
	expect_runs(RUNS("g", "g", "g", "g"), false);
}

/* global_group=duressers: alice is a member, bob is not. */
static void global_group_narrows(void **state)
{
	(void)state;
	require_root("global actions run only as root");
	action_add(W.global, "g", 0, global_pw);
	assert_int_equal(auth_quick("global-group", "alice", global_pw), PAM_SUCCESS);
	assert_int_equal(auth_quick("global-group", "bob", global_pw), PAM_AUTH_ERR);
	expect_runs(RUNS("g", "g"), false);
	/* bob's own per-user password is not the global one: it still logs him in. */
	action_add(U(BOB)->dir, "own", U(BOB)->uid, U(BOB)->duress);
	assert_int_equal(auth_quick("global-group", "bob", U(BOB)->duress), PAM_SUCCESS);
	expect_runs(RUNS("g", "g", "own"), false);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(sudo_refuses_user_password),     T(elevation_list_and_allow_root),
	T(sudo_refuses_global_password),   T(global_password_spares_system_accounts),
	T(global_password_uid_boundaries), T(global_group_narrows),
};

const struct test_group elevation_group = { "pam_elevation", tests,
					    sizeof(tests) / sizeof(tests[0]) };
