/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Issue 26, item 2, the iteration attack: an action signed with --once runs
 * at its first match only.  Later matches answer as the first did (log in,
 * or with deny fail), run nothing, and log the same lines.  Its record is
 * root's: not root (the test run as a user, a screen locker), a once action
 * never runs, and the answer is still a match's.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <security/pam_appl.h>

#define RUNS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NONE ((const char *const[]){ NULL })

/* A script action in dir, signed with --once. */
static void once_action(const char *dir, const char *name, uid_t uid, const char *password)
{
	char path[PATH_MAX];

	action_script(dir, name, uid, "", true);
	pathf(path, "%s/%s", dir, name);
	action_sign_once(path, password);
}

/* alice's "first", once, and "every", not, signed with the same password. */
static void alice_actions(void)
{
	once_action(U(ALICE)->dir, "first", U(ALICE)->uid, U(ALICE)->duress);
	action_add(U(ALICE)->dir, "every", U(ALICE)->uid, U(ALICE)->duress);
}

/* The state directory's records: how many, the first one's path in path. */
static size_t records(char path[PATH_MAX])
{
	char dir[PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	pathf(dir, "%s/once", W.state);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && n++ == 0)
			pathf(path, "%s/%s", dir, de->d_name);
	closedir(d);
	return n;
}

/*
 * Three duress logins in a row: the first runs the once action and its
 * sibling, the second and third the sibling alone; all three log in, with
 * the same log lines.  As a user the once action never runs: its record
 * could be forged.
 */
static void runs_once(void **state)
{
	char *log[3];

	(void)state;
	alice_actions();
	for (int i = 0; i < 3; i++) {
		log[i] = auth_logged("after", "alice", U(ALICE)->duress, PAM_SUCCESS);
		if (i == 0 && W.root)
			expect_runs(RUNS("first", "every"), false);
		else if (i == 0)
			expect_runs(RUNS("every"), false);
	}
	expect_runs(W.root ? RUNS("first", "every", "every", "every") :
			     RUNS("every", "every", "every"),
		    false);
	assert_string_equal(log[1], log[0]);
	assert_string_equal(log[2], log[0]);
	for (int i = 0; i < 3; i++)
		free(log[i]);
}

/* deny: every match fails as a wrong password would; the action still runs once. */
static void deny_runs_once(void **state)
{
	(void)state;
	once_action(U(ALICE)->dir, "first", U(ALICE)->uid, U(ALICE)->duress);
	for (int i = 0; i < 3; i++)
		assert_int_equal(auth_quick("deny", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(W.root ? RUNS("first") : NONE, false);
	assert_int_equal(auth_quick("deny", "alice", U(ALICE)->real), PAM_SUCCESS);
}

/*
 * Before pam_unix, a spent duress login logs what a real login logs, and
 * the alone stack shows the module's own answer: a match's.
 */
static void spent_logs_as_real(void **state)
{
	char *real, *spent;

	(void)state;
	once_action(U(ALICE)->dir, "first", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("before", "alice", U(ALICE)->duress), PAM_SUCCESS);
	real = auth_logged("before", "alice", U(ALICE)->real, PAM_SUCCESS);
	spent = auth_logged("before", "alice", U(ALICE)->duress, PAM_SUCCESS);
	assert_string_equal(spent, real);
	free(real);
	free(spent);
	assert_int_equal(auth_quick("alone", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(W.root ? RUNS("first") : NONE, false);
}

static int duress_login(const void *arg)
{
	(void)arg;
	return auth_quick("after", "alice", U(ALICE)->duress) == PAM_SUCCESS ? 0 : 1;
}

/*
 * The record is root's, 0600 in 0700 directories, and survives the module
 * loaded again in another process; removing it, or signing again, re-arms.
 */
static void record_kept(void **state)
{
	char record[PATH_MAX], path[PATH_MAX];
	struct stat st;

	(void)state;
	require_root("records are root's");
	once_action(U(ALICE)->dir, "first", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("first"), false);
	assert_int_equal(records(record), 1);
	assert_int_equal(lstat(record, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0600);
	assert_int_equal(st.st_size, 0);
	pathf(path, "%s/once", W.state);
	for (const char *d = W.state; d; d = d == W.state ? path : NULL) {
		assert_int_equal(lstat(d, &st), 0);
		assert_true(S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0700);
	}
	assert_int_equal(in_child(duress_login, NULL), 0);
	expect_runs(RUNS("first"), false);
	assert_int_equal(unlink(record), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("first", "first"), false);
	pathf(path, "%s/first", U(ALICE)->dir);
	action_sign_once(path, U(ALICE)->duress);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("first", "first", "first"), false);
	assert_int_equal(records(record), 2);
}

/* What alice can learn of the records: nothing, not even a stat. */
static int alice_looks(const void *arg)
{
	const char *dir = arg;
	struct stat st;

	if (setgroups(0, NULL) != 0 || setresgid(U(ALICE)->gid, U(ALICE)->gid, U(ALICE)->gid) ||
	    setresuid(U(ALICE)->uid, U(ALICE)->uid, U(ALICE)->uid))
		return 2;
	return opendir(W.state) == NULL && errno == EACCES && stat(dir, &st) < 0 &&
			       errno == EACCES ?
		       0 :
		       1;
}

/*
 * Per-user records are keyed by the account: bob, holding a copy of
 * alice's once action and signature, has a record of his own, and cannot
 * spend hers.  A global once action runs once for the whole machine.
 */
static void records_per_account(void **state)
{
	char from[PATH_MAX], to[PATH_MAX], once_dir[PATH_MAX];
	char *text;
	size_t len;

	(void)state;
	require_root("global actions and other accounts need root");
	once_action(U(ALICE)->dir, "first", U(ALICE)->uid, U(ALICE)->duress);
	for (const char *sfx = ""; sfx; sfx = *sfx ? NULL : ".sig") {
		pathf(from, "%s/first%s", U(ALICE)->dir, sfx);
		pathf(to, "%s/first%s", U(BOB)->dir, sfx);
		text = read_file(from, &len);
		assert_non_null(text);
		write_file(to, text, len, U(BOB)->uid, *sfx ? 0600 : 0700);
		free(text);
	}
	once_action(W.global, "global-first", 0, "global-duress");
	assert_int_equal(auth_quick("after", "bob", U(ALICE)->duress), PAM_SUCCESS);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("first", "first"), false);
	assert_int_equal(auth_quick("after", "alice", "global-duress"), PAM_SUCCESS);
	assert_int_equal(auth_quick("after", "bob", "global-duress"), PAM_SUCCESS);
	expect_runs(RUNS("first", "first", "global-first"), false);
	assert_int_equal(records(to), 3);
	pathf(once_dir, "%s/once", W.state);
	assert_int_equal(in_child(alice_looks, once_dir), 0);
}

/*
 * A state directory that is not root's alone: no record can be made, and
 * the once action does not run (at most once), while the login is a
 * match's and its sibling runs.
 */
static void state_dir_unsafe(void **state)
{
	char path[PATH_MAX];

	(void)state;
	require_root("the state directory is root's");
	alice_actions();
	make_dir(W.state, 0, 0755);
	pathf(path, "%s/once", W.state);
	make_dir(path, 0, 0700);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("every"), false);
	assert_int_equal(records(path), 0);
}

/*
 * A runner that cannot start fails the login and runs nothing: the once
 * action keeps no record, and runs at the next match.
 */
static void no_runner_keeps_armed(void **state)
{
	char path[PATH_MAX];

	(void)state;
	require_root("records are root's");
	once_action(U(ALICE)->dir, "first", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_not_equal(auth_quick("no-runner", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(NONE, false);
	assert_int_equal(records(path), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("first"), false);
	assert_int_equal(records(path), 1);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(runs_once),           T(deny_runs_once),   T(spent_logs_as_real),    T(record_kept),
	T(records_per_account), T(state_dir_unsafe), T(no_runner_keeps_armed),
};

const struct test_group once_group = { "pam_once", tests, sizeof(tests) / sizeof(tests[0]) };
