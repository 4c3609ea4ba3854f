/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What only root can show: actions run as their owner (uid, gid, groups),
 * global actions as root, each chain in name order, root itself never
 * logs in with a global duress password unless allow_root, and the owner
 * rules between users.  Each test says SKIP when not run as root.
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <security/pam_appl.h>

/* Parses "1 2 3" into a sorted, comparable form. */
static void sorted_ids(const char *list, unsigned *ids, size_t *n)
{
	char *end;

	*n = 0;
	for (unsigned long v = strtoul(list, &end, 10); end != list && *n < 64;
	     v = strtoul(list, &end, 10)) {
		size_t i = (*n)++;

		while (i > 0 && ids[i - 1] > v) {
			ids[i] = ids[i - 1];
			i--;
		}
		ids[i] = (unsigned)v;
		list = end;
	}
}

static void expect_ids(const char *name, unsigned uid, unsigned gid, const char *groups)
{
	char path[PATH_MAX], want[32];
	unsigned a[64], b[64];
	size_t na, nb;
	struct evidence ev;

	evidence_path(path, name);
	evidence_load(&ev, path);
	snprintf(want, sizeof(want), "%u", uid);
	assert_string_equal(evidence_get(&ev, "uid"), want);
	snprintf(want, sizeof(want), "%u", gid);
	assert_string_equal(evidence_get(&ev, "gid"), want);
	/* Supplementary groups come from the (fake) group file: initgroups. */
	if (groups) {
		sorted_ids(evidence_get(&ev, "groups"), a, &na);
		sorted_ids(groups, b, &nb);
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, na * sizeof(a[0]));
	}
	evidence_free(&ev);
}

/* Which line of results/runs says name, or -1. */
static int run_index(const char *name)
{
	char *text = read_file(W.runs, NULL), *save = NULL;
	int i = 0, found = -1;

	for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l && found < 0;
	     l = strtok_r(NULL, "\n", &save), i++)
		if (strcmp(l, name) == 0)
			found = i;
	free(text);
	return found;
}

/*
 * SPEC 5: per-user actions run in name order as the user with the user's
 * groups, global ones in name order as root; the two chains do not wait for
 * each other, so only the order within each is fixed.
 */
static void ids_and_order(void **state)
{
	const char *pw = "order-duress";
	char groups[64];

	(void)state;
	require_root("actions run as their owner");
	/* Created out of name order: the order must come from the names. */
	action_add(U(ALICE)->dir, "20-user", U(ALICE)->uid, pw);
	action_add(U(ALICE)->dir, "10-user", U(ALICE)->uid, pw);
	action_add(W.global, "20-global", 0, pw);
	action_add(W.global, "10-global", 0, pw);
	assert_int_equal(auth_quick("after", "alice", pw), PAM_SUCCESS);
	expect_runs(RUNS("10-user", "20-user", "10-global", "20-global"), false);
	assert_true(run_index("10-user") < run_index("20-user"));
	assert_true(run_index("10-global") < run_index("20-global"));
	snprintf(groups, sizeof(groups), "%u 20010 20011", (unsigned)U(ALICE)->gid);
	expect_ids("10-user", U(ALICE)->uid, U(ALICE)->gid, groups);
	expect_ids("20-user", U(ALICE)->uid, U(ALICE)->gid, groups);
	expect_ids("10-global", 0, 0, "0");
}

/*
 * SPEC 4: a global password never logs a uid-0 account in, unless
 * allow_root; the actions still run.  toor (uid 0, no shadow entry) shows
 * the uid rule alone; root may also be locked by an NSS module (nss-systemd).
 */
static void root_needs_allow_root(void **state)
{
	const char *pw = "global-duress";

	(void)state;
	require_root("global actions run only as root");
	action_add(W.global, "g", 0, pw);
	assert_int_equal(auth_quick("after", "toor", U(TOOR)->real), PAM_SUCCESS);
	assert_int_equal(auth_quick("after", "root", U(ROOT)->real), PAM_SUCCESS);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("after", "toor", pw), PAM_AUTH_ERR);
	assert_int_equal(auth_quick("before", "toor", pw), PAM_AUTH_ERR);
	assert_int_equal(auth_quick("after", "root", pw), PAM_AUTH_ERR);
	expect_runs(RUNS("g", "g", "g"), false);
	assert_int_equal(auth_quick("allow-root", "toor", pw), PAM_SUCCESS);
	/* For anyone else the global password is an ordinary duress password. */
	assert_int_equal(auth_quick("after", "bob", pw), PAM_SUCCESS);
	expect_runs(RUNS("g", "g", "g", "g", "g"), false);
	expect_ids("g", 0, 0, "0");
}

/* SPEC 2 trust rules between users: only the user (or root) owns their actions. */
static void foreign_owner(void **state)
{
	char path[PATH_MAX];

	(void)state;
	require_root("files owned by another user");
	/* bob's file in alice's directory, signed for alice's password. */
	action_add(U(ALICE)->dir, "planted", U(BOB)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	/*
	 * A root-owned action in a user's directory is trusted, and runs as the
	 * user, who must be able to read it and its signature: the directory is
	 * read with her rights.
	 */
	action_add(U(ALICE)->dir, "from-root", 0, U(ALICE)->duress);
	pathf(path, "%s/from-root", U(ALICE)->dir);
	assert_int_equal(chmod(path, 0755), 0);
	pathf(path, "%s/from-root.sig", U(ALICE)->dir);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("from-root"), false);
	expect_ids("from-root", U(ALICE)->uid, U(ALICE)->gid, NULL);
	/* A global action not owned by root never runs. */
	action_add(W.global, "not-root", U(ALICE)->uid, "global-duress");
	assert_int_equal(auth_quick("after", "bob", "global-duress"), PAM_AUTH_ERR);
	expect_runs(RUNS("from-root"), false);
	pathf(path, "%s/not-root", W.global);
	assert_int_equal(chown(path, 0, 0), 0);
	pathf(path, "%s/not-root.sig", W.global);
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(auth_quick("after", "bob", "global-duress"), PAM_SUCCESS);
	expect_runs(RUNS("from-root", "not-root"), false);
	/* Nor does anything in a global directory not owned by root. */
	assert_int_equal(chown(W.global, U(ALICE)->uid, U(ALICE)->gid), 0);
	assert_int_equal(auth_quick("after", "bob", "global-duress"), PAM_AUTH_ERR);
	expect_runs(RUNS("from-root", "not-root"), false);
}

/* SPEC 4: with a user_dir without %u, a user's password still fires only for them. */
static void shared_user_dir(void **state)
{
	char dir[PATH_MAX];

	(void)state;
	require_root("a directory owned by one user, read for another");
	pathf(dir, "%s/shared", W.tmp);
	make_dir(dir, U(ALICE)->uid, 0700);
	action_add(dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("shared-userdir", "bob", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("shared-userdir", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("act"), false);
}

/* SPEC 2: without root, global actions cannot run as root and are not looked at. */
static void global_needs_root(void **state)
{
	(void)state;
	if (W.root) {
		printf("SKIP: global actions without root: needs a non-root run\n");
		skip();
	}
	action_add(W.global, "g", getuid(), "global-duress");
	assert_int_equal(auth_quick("after", "alice", "global-duress"), PAM_AUTH_ERR);
	expect_runs(NONE, false);
}

/*
 * The machine's shadow file is out of sight (harness.c): its entry for a
 * fake name, such as a locked account named alice, would decide whether a
 * duress login is locked.
 */
static void machine_shadow_hidden(void **state)
{
	struct stat st;

	(void)state;
	require_root("hiding the machine's shadow file");
	if (stat("/etc/shadow", &st) == 0)
		assert_int_equal(st.st_size, 0);
	else
		assert_int_equal(errno, ENOENT);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(ids_and_order),   T(root_needs_allow_root), T(foreign_owner),
	T(shared_user_dir), T(global_needs_root),     T(machine_shadow_hidden),
};

const struct test_group root_group = { "pam_root", tests, sizeof(tests) / sizeof(tests[0]) };
