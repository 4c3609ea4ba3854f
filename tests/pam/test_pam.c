/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PAM-stack tests: the real libpam (through pam_wrapper), fake accounts
 * (nss_wrapper), the real pam_unix, the real module and the real CLI.
 * Basic behaviour lives here; see test_root.c, test_hostile.c,
 * test_runner.c and test_isolation.c for the rest.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpamtest.h>
#include <security/pam_appl.h>

/* Signs a script action for user `who` with that user's duress password. */
static void user_action(int who, const char *name)
{
	action_add(U(who)->dir, name, U(who)->uid, U(who)->duress);
}

/*
 * One authentication through libpamtest's own pam_start and conversation,
 * then, after a success, pam_setcred(ESTABLISH) as login and sshd call it.
 */
static void pamtest_auth(const char *service, const char *user, const char *password, int expected)
{
	const char *answers[] = { password, password, password, NULL };
	struct pamtest_conv_data conv = { .in_echo_off = answers };
	struct pam_testcase with_setcred[] = {
		pam_test(PAMTEST_AUTHENTICATE, expected),
		pam_test_flags(PAMTEST_SETCRED, PAM_SUCCESS, PAM_ESTABLISH_CRED),
	};
	struct pam_testcase auth_only[] = { pam_test(PAMTEST_AUTHENTICATE, expected) };
	struct pam_testcase *cases = expected == PAM_SUCCESS ? with_setcred : auth_only;
	enum pamtest_err e;

	if (expected == PAM_SUCCESS)
		e = run_pamtest(service, user, &conv, with_setcred, NULL);
	else
		e = run_pamtest(service, user, &conv, auth_only, NULL);
	if (e != PAMTEST_ERR_OK)
		fail_msg("%s/%s/%s: %s (authenticate: %d, expected %d%s)", service, user, password,
			 pamtest_strerror(e), cases[0].op_rv, expected,
			 e == PAMTEST_ERR_CASE && cases[0].op_rv == expected ? "; setcred failed" :
									       "");
}

/*
 * SPEC 1, 4: the real password logs in and runs nothing; the duress password
 * logs in and runs the action; a wrong one fails and runs nothing.  Checked
 * after each step, so that a run is blamed on the right password.
 */
static void passwords(void **state)
{
	const struct {
		const char *password;
		int rc;
		const char *const *runs;
	} steps[] = {
		{ U(ALICE)->real, PAM_SUCCESS, NONE },
		{ U(ALICE)->duress, PAM_SUCCESS, RUNS("act") },
		{ "wrong-password", PAM_AUTH_ERR, RUNS("act") },
		{ "", PAM_AUTH_ERR, RUNS("act") },
	};

	(void)state;
	user_action(ALICE, "act");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		pamtest_auth("after", "alice", steps[i].password, steps[i].rc);
		expect_runs(steps[i].runs, false);
	}
}

/* SPEC 4 placement: the same answers with pam_duress before pam_unix. */
static void placements(void **state)
{
	const char *services[] = { "after", "before" };

	(void)state;
	user_action(ALICE, "act");
	for (size_t i = 0; i < 2; i++) {
		struct auth a = { .service = services[i], .user = "alice" };

		a.password = U(ALICE)->real;
		assert_int_equal(auth_run(&a), PAM_SUCCESS);
		/* One prompt either way: the second module reuses the first one's token. */
		assert_int_equal(a.prompts, 1);
		a.password = U(ALICE)->duress;
		assert_int_equal(auth_run(&a), PAM_SUCCESS);
		assert_int_equal(a.prompts, 1);
		/* And through libpamtest, with pam_setcred() after it. */
		pamtest_auth(services[i], "alice", U(ALICE)->real, PAM_SUCCESS);
		pamtest_auth(services[i], "alice", U(ALICE)->duress, PAM_SUCCESS);
		pamtest_auth(services[i], "alice", "wrong-password", PAM_AUTH_ERR);
		/* The code differs by placement; what matters is that nobody gets in. */
		assert_int_not_equal(auth_quick(services[i], "nosuchuser", U(ALICE)->duress),
				     PAM_SUCCESS);
	}
	expect_runs(RUNS("act", "act", "act", "act"), false);
}

/* SPEC 4: placed before pam_unix, a duress login leaves no pam_unix failure line. */
static void placement_logs(void **state)
{
	char *after, *before;

	(void)state;
	user_action(ALICE, "act");
	after = auth_logged("after", "alice", U(ALICE)->duress, PAM_SUCCESS);
	before = auth_logged("before", "alice", U(ALICE)->duress, PAM_SUCCESS);
	assert_non_null(strstr(after, "authentication failure"));
	assert_null(strstr(before, "authentication failure"));
	free(after);
	free(before);
	expect_runs(RUNS("act", "act"), false);
}

/* SPEC 3: a changed action no longer runs, and the password is then just wrong. */
static void modified_action(void **state)
{
	char path[PATH_MAX], *text;
	size_t len;

	(void)state;
	user_action(ALICE, "act");
	user_action(ALICE, "untouched");
	pathf(path, "%s/act", U(ALICE)->dir);
	text = read_file(path, &len);
	assert_non_null(text);
	/* One byte more, same owner and mode: only the content differs. */
	text = realloc(text, len + 2);
	assert_non_null(text);
	memcpy(text + len, "#\n", 2);
	write_file(path, text, len + 2, U(ALICE)->uid, 0700);
	free(text);
	/* The sibling signed with the same password still runs; the changed one not. */
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("untouched"), false);
	pathf(path, "%s/untouched", U(ALICE)->dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(RUNS("untouched"), false);
}

/* SPEC 4: a per-user password only ever matches for its own user. */
static void other_users_password(void **state)
{
	(void)state;
	user_action(ALICE, "alice-act");
	user_action(BOB, "bob-act");
	assert_int_equal(auth_quick("after", "bob", U(ALICE)->duress), PAM_AUTH_ERR);
	assert_int_equal(auth_quick("after", "alice", U(BOB)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("after", "bob", U(BOB)->duress), PAM_SUCCESS);
	expect_runs(RUNS("bob-act"), false);
}

/* SPEC 4: a locked account stays locked; the action still runs (a silent alarm). */
static void locked_account(void **state)
{
	(void)state;
	user_action(CAROL, "carol-act");
	assert_int_equal(auth_quick("after", "carol", U(CAROL)->real), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("after", "carol", U(CAROL)->duress), PAM_AUTH_ERR);
	assert_int_equal(auth_quick("before", "carol", U(CAROL)->duress), PAM_AUTH_ERR);
	expect_runs(RUNS("carol-act", "carol-act"), false);
}

/* SPEC 4 deny: the actions run but the login fails like a wrong password. */
static void deny_option(void **state)
{
	(void)state;
	user_action(ALICE, "act");
	assert_int_equal(auth_quick("deny", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(RUNS("act"), false);
	/* deny changes nothing for the real password. */
	assert_int_equal(auth_quick("deny", "alice", U(ALICE)->real), PAM_SUCCESS);
	expect_runs(RUNS("act"), false);
}

/* SPEC 4 group=: per-user actions only for members (alice: supplementary). */
static void group_option(void **state)
{
	(void)state;
	user_action(ALICE, "alice-act");
	user_action(BOB, "bob-act");
	assert_int_equal(auth_quick("group", "bob", U(BOB)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("group", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("alice-act"), false);
}

/* SPEC 4 services=: a service outside the list never honours a duress password. */
static void services_option(void **state)
{
	(void)state;
	user_action(ALICE, "act");
	assert_int_equal(auth_quick("svc-other", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("svc-other", "alice", U(ALICE)->real), PAM_SUCCESS);
	assert_int_equal(auth_quick("svc-ok", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("act"), false);
}

/*
 * Issue 18, item 5: a misspelled option (servces=) or a malformed one
 * (max_memory=lots) makes the line inert, in either placement: the duress
 * password is refused and runs nothing, the real password still logs in,
 * and each attempt logs one line naming every bad option; quiet silences it.
 */
static void unknown_option(void **state)
{
	static const char *const inert[] = { "inert-after", "inert-before" };
	char *log;

	(void)state;
	user_action(ALICE, "act");
	for (size_t i = 0; i < sizeof(inert) / sizeof(inert[0]); i++) {
		log = auth_logged(inert[i], "alice", U(ALICE)->duress, PAM_AUTH_ERR);
		assert_int_equal(lines_with(log, "servces=sshd"), 1);
		assert_int_equal(lines_with(log, "module line inert"), 1);
		assert_int_equal(lines_with(log, "max_memory=lots"), 1);
		assert_non_null(strstr(log, "unknown option \"servces=sshd\""));
		assert_non_null(strstr(log, "bad value in option \"max_memory=lots\""));
		free(log);
		assert_int_equal(auth_quick(inert[i], "alice", U(ALICE)->real), PAM_SUCCESS);
		assert_int_equal(auth_quick(inert[i], "alice", "wrong-password"), PAM_AUTH_ERR);
	}
	log = auth_logged("inert-quiet", "alice", U(ALICE)->duress, PAM_AUTH_ERR);
	assert_int_equal(lines_with(log, "servces"), 0);
	free(log);
	expect_runs(NONE, false);
}

/* SPEC 4: user_dir= (empty) turns per-user actions off. */
static void user_dir_empty(void **state)
{
	(void)state;
	user_action(ALICE, "act");
	assert_int_equal(auth_quick("no-userdir", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	assert_int_equal(auth_quick("no-userdir", "alice", U(ALICE)->real), PAM_SUCCESS);
	expect_runs(NONE, false);
}

/* SPEC 2: user_dir=/somewhere/%u outside the home works, and replaces ~/.duress. */
static void user_dir_elsewhere(void **state)
{
	char dir[PATH_MAX];

	(void)state;
	pathf(dir, "%s/var/alice", W.tmp);
	make_dir(dir, U(ALICE)->uid, 0700);
	action_add(dir, "var-act", U(ALICE)->uid, "alice-var-duress");
	user_action(ALICE, "home-act");
	assert_int_equal(auth_quick("var-userdir", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("var-userdir", "alice", "alice-var-duress"), PAM_SUCCESS);
	/* bob has no directory there: nothing, and no error that logs him in. */
	assert_int_equal(auth_quick("var-userdir", "bob", "alice-var-duress"), PAM_AUTH_ERR);
	expect_runs(RUNS("var-act"), false);
}

/* SPEC 3 migration: NAME.sha256 counts only with legacy_sha256. */
static void legacy_sha256(void **state)
{
	char path[PATH_MAX];

	(void)state;
	action_script(U(ALICE)->dir, "old", U(ALICE)->uid, "", true);
	pathf(path, "%s/old", U(ALICE)->dir);
	legacy_sign(path, "legacy-duress", U(ALICE)->uid);
	assert_int_equal(auth_quick("after", "alice", "legacy-duress"), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("legacy", "alice", "wrong-password"), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("legacy", "alice", "legacy-duress"), PAM_SUCCESS);
	expect_runs(RUNS("old"), false);
}

/*
 * SPEC 3: an action signed with --also runs only while its companion file is
 * unchanged and safe; a plain data file beside it is not an action and is
 * not logged on every login.  A change is seen only when the password
 * matches (a wrong one reads nothing): it is logged with debug alone, so
 * that the default log of a match is a wrong password's.
 */
static void companion_file(void **state)
{
	char path[PATH_MAX], conf[PATH_MAX], *log, *miss;

	(void)state;
	pathf(conf, "%s/alert.conf", U(ALICE)->dir);
	write_file(conf, "URL=https://example.invalid/\n", 29, U(ALICE)->uid, 0600);
	action_script(U(ALICE)->dir, "alert", U(ALICE)->uid, "", true);
	pathf(path, "%s/alert", U(ALICE)->dir);
	action_sign_also(path, U(ALICE)->duress, conf);
	log = auth_logged("after", "alice", U(ALICE)->duress, PAM_SUCCESS);
	expect_runs(RUNS("alert"), false);
	assert_null(strstr(log, "alert.conf"));
	free(log);
	/* Same size, same owner and mode: only the content differs. */
	write_file(conf, "URL=https://attacker.invalid\n", 29, U(ALICE)->uid, 0600);
	log = auth_logged("after", "alice", U(ALICE)->duress, PAM_AUTH_ERR);
	miss = auth_logged("after", "alice", "wrong-password", PAM_AUTH_ERR);
	assert_string_equal(log, miss);
	assert_null(strstr(log, "content changed since signing"));
	free(log);
	free(miss);
	log = auth_logged("debug", "alice", U(ALICE)->duress, PAM_AUTH_ERR);
	assert_non_null(strstr(log, "content changed since signing"));
	free(log);
	write_file(conf, "URL=https://example.invalid/\n", 29, U(ALICE)->uid, 0600);
	assert_int_equal(chmod(conf, 0620), 0);
	log = auth_logged("after", "alice", U(ALICE)->duress, PAM_AUTH_ERR);
	assert_non_null(strstr(log, "companion file"));
	free(log);
	assert_int_equal(chmod(conf, 0600), 0);
	assert_int_equal(unlink(conf), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(RUNS("alert"), false);
}

/*
 * Takes the slot our logins of the "slots-*" services would take, as a
 * spray's would; returns it held.  Our lane (core/slots.h): as root, a local
 * login's, the only machine-wide slot; otherwise our real uid's own.
 */
static int hold_the_slot(void)
{
	char dir[PATH_MAX], slot[PATH_MAX];
	int fd;

	pathf(dir, "%s/slots", W.tmp);
	assert_true(mkdir(dir, 0700) == 0 || errno == EEXIST);
	if (getuid() == 0)
		pathf(slot, "%s/slot.0", dir);
	else
		pathf(slot, "%s/uid.%u", dir, (unsigned)getuid());
	fd = open(slot, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

/*
 * SPEC 4, under load: while every derivation slot is taken, the real
 * password still logs in, in both placements; a duress password is
 * answered as a wrong one and runs nothing (never success).  Once a slot
 * is free, the duress password works again.
 */
static void slots_taken(void **state)
{
	static const char *const placements[] = { "slots-after", "slots-before" };
	int held;

	(void)state;
	user_action(ALICE, "act");
	held = hold_the_slot();
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(auth_quick(placements[i], "alice", U(ALICE)->real), PAM_SUCCESS);
		assert_int_equal(auth_quick(placements[i], "alice", U(ALICE)->duress),
				 PAM_AUTH_ERR);
	}
	expect_runs(NONE, false);
	close(held);
	assert_int_equal(auth_quick("slots-before", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("act"), false);
}

/* An answer that must not log anyone in, whatever follows the module. */
static void expect_refused(const char *service, const char *user, const char *password)
{
	int r = auth_quick(service, user, password);

	if (r == PAM_SUCCESS)
		fail_msg("%s/%s: the module's answer let the login through", service, user);
}

/* A conversation that answers no prompt. */
static int conv_fails(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	(void)n;
	(void)msg;
	(void)data;
	*resp = NULL;
	return PAM_CONV_ERR;
}

/* expect_refused() when no password (or, with user NULL, no user name) can be had. */
static void expect_refused_silent(const char *service, const char *user)
{
	const struct pam_conv pc = { conv_fails, NULL };
	pam_handle_t *ph = NULL;
	int r;

	assert_int_equal(pam_start(service, user, &pc, &ph), PAM_SUCCESS);
	r = pam_authenticate(ph, 0);
	pam_end(ph, r);
	if (r == PAM_SUCCESS)
		fail_msg("%s/%s: nothing answered, and the login went through", service,
			 user ? user : "(no user)");
}

/*
 * SPEC 4 Result, in a stack where the module's own return code decides
 * (auth required pam_duress.so, then pam_permit): a match is PAM_SUCCESS,
 * no match PAM_IGNORE (so pam_permit lets even a wrong password in: the
 * control that shows this stack passes whatever the module does not
 * refuse), and every other answer refuses: an internal error (no runner,
 * a runner that fails), deny, a locked account, an unknown or empty user
 * name, a conversation that gives no password or no user name.  In the
 * usual stack pam_deny hides all of these.
 */
static void module_answer(void **state)
{
	(void)state;
	user_action(ALICE, "act");
	user_action(CAROL, "carol-act");
	assert_int_equal(auth_quick("alone", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("act"), false);
	assert_int_equal(auth_quick("alone", "alice", "wrong-password"), PAM_SUCCESS);
	expect_runs(RUNS("act"), false);
	/* Fail closed: an error never logs anyone in. */
	expect_refused("alone-no-runner", "alice", U(ALICE)->duress);
	expect_refused("alone-false-runner", "alice", U(ALICE)->duress);
	expect_runs(RUNS("act"), false);
	expect_refused("alone-deny", "alice", U(ALICE)->duress);
	expect_refused("alone", "carol", U(CAROL)->duress);
	expect_runs(RUNS("act", "act", "carol-act"), false);
	expect_refused("alone", "nosuchuser", U(ALICE)->duress);
	expect_refused("alone", "", U(ALICE)->duress);
	expect_refused_silent("alone", "alice");
	expect_refused_silent("alone", NULL);
	expect_runs(RUNS("act", "act", "carol-act"), false);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(passwords),       T(placements),           T(placement_logs),
	T(modified_action), T(other_users_password), T(locked_account),
	T(deny_option),     T(group_option),         T(services_option),
	T(unknown_option),  T(user_dir_empty),       T(user_dir_elsewhere),
	T(legacy_sha256),   T(companion_file),       T(module_answer),
	T(slots_taken),
};

const struct test_group basic_group = { "pam_basic", tests, sizeof(tests) / sizeof(tests[0]) };

/* Whether group is named in the comma-separated list (NULL or empty: all). */
static bool group_selected(const char *list, const char *group)
{
	size_t len = strlen(group);

	if (!list || !*list)
		return true;
	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, group, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

/*
 * test_pam [GROUP,GROUP...]: some groups only, so that meson runs each group
 * as a test of its own, two at a time (which halves the time under valgrind).
 * DURESS_TEST_FILTER narrows to tests by name.
 */
int main(int argc, char **argv)
{
	const struct test_group *groups[] = { &basic_group,     &env_group,       &root_group,
					      &hostile_group,   &runner_group,    &elevation_group,
					      &privilege_group, &isolation_group, &timing_group,
					      &chauthtok_group, &once_group };
	const char *filter = getenv("DURESS_TEST_FILTER");
	const char *only = argc > 1 ? argv[1] : NULL;
	int failed = 0, ran = 0;

	/* Before any PAM or NSS call: the wrappers read their files from here. */
	if (world_init() < 0)
		return 1;
	if (filter && *filter)
		cmocka_set_test_filter(filter);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		if (!group_selected(only, groups[i]->name))
			continue;
		ran++;
		failed += _cmocka_run_group_tests(groups[i]->name, groups[i]->tests, groups[i]->n,
						  NULL, NULL);
	}
	world_destroy();
	/* A misspelt group name must not pass by running nothing. */
	return failed || !ran ? 1 : 0;
}
