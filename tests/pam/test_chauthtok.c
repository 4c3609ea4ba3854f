/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The password stack (SPEC 4, issue 26 item 1): pam_chauthtok through the
 * real libpam refuses a new password that is one of the account's duress
 * passwords or a global one, with pam_pwquality's message for a weak
 * password, and starts nothing; any other new password goes through.
 */
#include "harness.h"

#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "conv.h"

/* What one password change answered and showed. */
struct change {
	int rc;
	int prompts;
	char said[512];
};

/* pam_chauthtok for user on service, every prompt answered with password. */
static void change_password(const char *service, const char *user, const char *password,
			    struct change *c)
{
	struct conv_password s = { .password = password,
				   .said = c->said,
				   .said_size = sizeof(c->said) };
	const struct pam_conv pc = { conv_password, &s };
	pam_handle_t *ph = NULL;

	c->said[0] = '\0';
	assert_int_equal(pam_start(service, user, &pc, &ph), PAM_SUCCESS);
	c->rc = pam_chauthtok(ph, 0);
	pam_end(ph, c->rc);
	c->prompts = s.prompts;
}

/* Refused as pam_pwquality refuses a weak password; nothing names the module. */
static void expect_refused(const char *service, const char *user, const char *password)
{
	struct change c;

	change_password(service, user, password, &c);
	assert_int_equal(c.rc, PAM_AUTHTOK_ERR);
	assert_string_equal(c.said, "BAD PASSWORD: The password fails the dictionary check\n");
	/* The module asked for it, twice, as pam_pwquality and pam_unix do. */
	assert_int_equal(c.prompts, 2);
}

static void expect_accepted(const char *service, const char *user, const char *password)
{
	struct change c;

	change_password(service, user, password, &c);
	assert_int_equal(c.rc, PAM_SUCCESS);
	assert_string_equal(c.said, "");
}

static void user_duress_password_refused(void **state)
{
	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	expect_refused("after", "alice", U(ALICE)->duress);
	expect_refused("before", "alice", U(ALICE)->duress);
	expect_accepted("after", "alice", "a-new-password-Qx7");
	/* Only the account's own: bob's duress password is no duress password of alice. */
	action_add(U(BOB)->dir, "bob-act", U(BOB)->uid, U(BOB)->duress);
	expect_accepted("after", "alice", U(BOB)->duress);
	expect_refused("after", "bob", U(BOB)->duress);
	expect_runs(NONE, false);
}

/*
 * Whatever the line's login options say (services= without this service,
 * deny), the password stays a duress password: refused all the same.
 */
static void login_options_do_not_matter(void **state)
{
	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	expect_refused("svc-other", "alice", U(ALICE)->duress);
	expect_refused("deny", "alice", U(ALICE)->duress);
	/* user_dir= empty: alice's actions never run at a login, so her password is free. */
	expect_accepted("no-userdir", "alice", U(ALICE)->duress);
	expect_runs(NONE, false);
}

/*
 * A changed action does not run at a login, but its signature is still
 * the password's: put back, it would match again.  A removed signature
 * frees the password.
 */
static void disarmed_action_keeps_its_password(void **state)
{
	char path[PATH_MAX];

	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	pathf(path, "%s/act", U(ALICE)->dir);
	write_file(path, "#!/bin/sh\nexit 1\n", 17, U(ALICE)->uid, 0700);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_refused("after", "alice", U(ALICE)->duress);
	pathf(path, "%s/act.sig", U(ALICE)->dir);
	assert_int_equal(unlink(path), 0);
	expect_accepted("after", "alice", U(ALICE)->duress);
	expect_runs(NONE, false);
}

static void global_password_refused(void **state)
{
	static const char global_pw[] = "global-duress-Zk4";

	(void)state;
	require_root("global actions are checked only as root");
	action_add(W.global, "g", 0, global_pw);
	expect_refused("after", "alice", global_pw);
	expect_refused("after", "carol", global_pw);
	expect_accepted("after", "alice", "another-new-password-Wm2");
	expect_runs(NONE, false);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(user_duress_password_refused),
	T(login_options_do_not_matter),
	T(disarmed_action_keeps_its_password),
	T(global_password_refused),
};

const struct test_group chauthtok_group = { "pam_chauthtok", tests,
					    sizeof(tests) / sizeof(tests[0]) };
