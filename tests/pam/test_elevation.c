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

#include <stdio.h>

#include <security/pam_appl.h>

#define NONE ((const char *const[]){ NULL })
#define RUNS(...) ((const char *const[]){ __VA_ARGS__, NULL })

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
	T(sudo_refuses_user_password),   T(elevation_list_and_allow_root),
	T(sudo_refuses_global_password), T(global_password_spares_system_accounts),
	T(global_group_narrows),
};

const struct test_group elevation_group = { "pam_elevation", tests,
					    sizeof(tests) / sizeof(tests[0]) };
