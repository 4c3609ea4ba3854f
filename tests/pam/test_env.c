/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 5: what an action gets — environment, ids, argv, descriptors — and
 * SPEC 4 logging: nothing at the default level tells a match from a miss.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

/* The variables an action may see (SPEC 5); a shell may add PWD. */
static const char *const allowed_env[] = {
	"PATH",      "HOME",      "USER",    "LOGNAME",  "SHELL",   "PAM_USER", "PAM_SERVICE",
	"PAM_RHOST", "PAM_RUSER", "PAM_TTY", "PAM_TYPE", "PAMUSER", NULL,
};

static bool env_allowed(const char *line, bool shell)
{
	size_t k = strcspn(line, "=");

	if (shell && strncmp(line, "PWD=", 4) == 0)
		return true;
	for (size_t i = 0; allowed_env[i]; i++)
		if (strlen(allowed_env[i]) == k && strncmp(line, allowed_env[i], k) == 0)
			return true;
	return false;
}

static void expect_env(const struct evidence *ev, const char *name, const char *value)
{
	const char *got = evidence_env(ev, name);

	if (!value && got)
		fail_msg("%s=%s is set, but its PAM item is not", name, got);
	if (value && (!got || strcmp(got, value) != 0))
		fail_msg("%s is \"%s\", expected \"%s\"", name, got ? got : "(unset)", value);
}

/* Every variable is allowed, has the user's or the item's value, and no secret. */
static void check_env(const struct evidence *ev, const struct auth *a, const struct user *u,
		      bool shell)
{
	for (size_t i = 0; i < ev->n; i++) {
		const char *l = ev->lines[i];

		/* The password must appear nowhere: not in env, argv or anything else. */
		if (strstr(l, a->password) || strstr(l, u->real))
			fail_msg("a password leaked to the action: %s", l);
		if (strncmp(l, "env ", 4) == 0 && !env_allowed(l + 4, shell))
			fail_msg("unexpected variable in the action's environment: %s", l + 4);
	}
	expect_env(ev, "PAM_USER", u->name);
	expect_env(ev, "PAMUSER", u->name);
	expect_env(ev, "PAM_SERVICE", a->service);
	expect_env(ev, "PAM_TYPE", "auth");
	expect_env(ev, "PAM_RHOST", a->rhost);
	expect_env(ev, "PAM_RUSER", a->ruser);
	expect_env(ev, "PAM_TTY", a->tty);
	expect_env(ev, "HOME", u->home);
	expect_env(ev, "USER", u->name);
	expect_env(ev, "LOGNAME", u->name);
	expect_env(ev, "SHELL", u->shell);
	assert_non_null(evidence_env(ev, "PATH"));
	assert_non_null(strstr(evidence_env(ev, "PATH"), "/usr/bin"));
	assert_null(evidence_env(ev, "PAM_AUTHTOK"));
	assert_null(evidence_env(ev, "LD_PRELOAD"));
}

/*
 * 0, 1 and 2 are /dev/null.  An ELF action has nothing else.  A script has
 * exactly the sealed memfd its interpreter reads as /dev/fd/3 (so what runs
 * is the verified copy, not the file), plus the shell's own descriptor for
 * that script (dash keeps it at 10 or above): nothing that is not the action.
 */
static void check_fds(const struct evidence *ev, bool script)
{
	bool std[3] = { false, false, false }, fd3 = false, shell_copy = false;

	for (size_t i = 0; i < ev->n; i++) {
		char target[PATH_MAX];
		int fd;

		if (sscanf(ev->lines[i], "fd %d %4095[^\n]", &fd, target) != 2)
			continue;
		if (fd >= 0 && fd <= 2) {
			if (strcmp(target, "/dev/null") != 0)
				fail_msg("descriptor %d is %s, not /dev/null", fd, target);
			std[fd] = true;
		} else if (script && fd == 3 && strncmp(target, "/memfd:", 7) == 0) {
			fd3 = true;
		} else if (script && fd >= 10 && !shell_copy &&
			   strncmp(target, "/memfd:", 7) == 0) {
			shell_copy = true;
		} else {
			fail_msg("descriptor %d (%s) leaked into the action", fd, target);
		}
	}
	assert_true(std[0] && std[1] && std[2]);
	assert_int_equal(fd3, script);
}

/* Detached (SPEC 5): its own session, and not our child. */
static void check_detached(const struct evidence *ev)
{
	const char *sid = evidence_get(ev, "sid"), *ppid = evidence_get(ev, "ppid");

	assert_non_null(sid);
	assert_non_null(ppid);
	assert_int_not_equal(atoi(sid), (int)getsid(0));
	assert_int_not_equal(atoi(ppid), (int)getpid());
}

static void check_ids(const struct evidence *ev, const struct user *u)
{
	char want[32];

	snprintf(want, sizeof(want), "%u", (unsigned)u->uid);
	assert_string_equal(evidence_get(ev, "uid"), want);
	snprintf(want, sizeof(want), "%u", (unsigned)u->gid);
	assert_string_equal(evidence_get(ev, "gid"), want);
}

static const struct auth with_items = {
	.service = "after",
	.user = "alice",
	.rhost = "203.0.113.7",
	.ruser = "mallory",
	.tty = "/dev/pts/7",
};
static const struct auth without_items = { .service = "svc-ok", .user = "alice" };

/* SPEC 5: what a per-user #! script gets, for one set of PAM items. */
static void script_environment(const struct auth *variant)
{
	struct auth a = *variant;
	struct evidence ev;
	char path[PATH_MAX];

	a.password = U(ALICE)->duress;
	action_add(U(ALICE)->dir, "env-act", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_run(&a), PAM_SUCCESS);
	evidence_path(path, "env-act");
	wait_actions();
	evidence_load(&ev, path);
	check_env(&ev, &a, U(ALICE), true);
	check_ids(&ev, U(ALICE));
	check_fds(&ev, true);
	check_detached(&ev);
	/* argv[0] is the action's name, then the script for its interpreter. */
	assert_string_equal(evidence_get(&ev, "cmdline"), "env-act /dev/fd/3 ");
	evidence_free(&ev);
	expect_runs((const char *const[]){ "env-act", NULL }, false);
}

/* PAM_RHOST, PAM_RUSER and PAM_TTY are passed when set... */
static void env_with_items(void **state)
{
	(void)state;
	script_environment(&with_items);
}

/* ...and absent when not. */
static void env_without_items(void **state)
{
	(void)state;
	script_environment(&without_items);
}

/* SPEC 5: an ELF action gets argv[0] = its name, fds 0-2 only, a clean env. */
static void elf_exact(void **state)
{
	struct auth a = with_items;
	struct evidence ev;
	char path[PATH_MAX];

	(void)state;
	/* valgrind 3.19 fails execveat(fd, "", AT_EMPTY_PATH) in its forked child. */
	skip_under_valgrind("fexecve() of an ELF memfd");
	a.password = U(ALICE)->duress;
	action_elf(U(ALICE)->dir, "elf-act", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_run(&a), PAM_SUCCESS);
	evidence_path(path, "elf-act");
	wait_actions();
	evidence_load(&ev, path);
	assert_string_equal(evidence_get(&ev, "argc"), "1");
	assert_string_equal(evidence_get(&ev, "argv0"), "elf-act");
	check_env(&ev, &a, U(ALICE), false);
	check_ids(&ev, U(ALICE));
	check_fds(&ev, false);
	check_detached(&ev);
	assert_string_equal(evidence_get(&ev, "euid"), evidence_get(&ev, "uid"));
	evidence_free(&ev);
	expect_runs((const char *const[]){ "elf-act", NULL }, false);
}

/* SPEC 5: a script without #! runs under /bin/sh with argv[0] = its name. */
static void script_without_shebang(void **state)
{
	struct auth a = without_items;
	struct evidence ev;
	char path[PATH_MAX];

	(void)state;
	skip_under_valgrind("fexecve() of a memfd, then /bin/sh on ENOEXEC");
	a.password = U(ALICE)->duress;
	action_script(U(ALICE)->dir, "plain-act", U(ALICE)->uid, "", false);
	pathf(path, "%s/plain-act", U(ALICE)->dir);
	action_sign(path, U(ALICE)->duress);
	assert_int_equal(auth_run(&a), PAM_SUCCESS);
	evidence_path(path, "plain-act");
	wait_actions();
	evidence_load(&ev, path);
	/* execve("/bin/sh", { name, "/dev/fd/3" }): the command line starts with the name. */
	assert_true(strncmp(evidence_get(&ev, "cmdline"), "plain-act ", 10) == 0);
	check_env(&ev, &a, U(ALICE), true);
	check_fds(&ev, true);
	evidence_free(&ev);
	expect_runs((const char *const[]){ "plain-act", NULL }, false);
}

/*
 * SPEC 4 logging: at the default level, a duress match and a wrong password
 * log the same lines (a warning about a broken action shows in both).
 */
static void log_same_for_match_and_miss(void **state)
{
	char *match, *miss;

	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	/* No signature: a configuration problem the module reports every time. */
	action_script(U(ALICE)->dir, "unsigned", U(ALICE)->uid, "", true);
	match = auth_logged("after", "alice", U(ALICE)->duress, PAM_SUCCESS);
	miss = auth_logged("after", "alice", "wrong-password", PAM_AUTH_ERR);
	if (strcmp(match, miss) != 0)
		fail_msg("log differs:\n--- match:\n%s--- wrong password:\n%s", match, miss);
	/* The capture works: the warning about the unsigned action is in it. */
	assert_non_null(strstr(match, "unsigned"));
	free(match);
	free(miss);
	expect_runs((const char *const[]){ "act", NULL }, false);
}

/*
 * SPEC 4: configuration problems are logged; quiet logs nothing, not even a match;
 * debug also says what it did (a match may show there, and only there).
 */
static void log_levels(void **state)
{
	char *normal, *quiet, *debug;

	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	action_script(U(ALICE)->dir, "unsigned", U(ALICE)->uid, "", true);
	normal = auth_logged("after", "alice", "wrong-password", PAM_AUTH_ERR);
	quiet = auth_logged("quiet", "alice", U(ALICE)->duress, PAM_SUCCESS);
	debug = auth_logged("debug", "alice", U(ALICE)->duress, PAM_SUCCESS);
	assert_non_null(strstr(normal, "unsigned"));
	assert_null(strstr(normal, "SYSLOG(7)"));
	/* quiet: not the unsigned action; pam_unix's line only. */
	assert_null(strstr(quiet, "unsigned"));
	assert_null(strstr(quiet, "SYSLOG(7)"));
	assert_non_null(strstr(quiet, "authentication failure"));
	assert_non_null(strstr(debug, "unsigned"));
	assert_non_null(strstr(debug, "SYSLOG(7)"));
	free(normal);
	free(quiet);
	free(debug);
	expect_runs((const char *const[]){ "act", "act", NULL }, false);
}

/*
 * Issue 17, item 4: a user's directory full of skipped entries with long
 * names costs one line of log per attempt, with the count and the first
 * name; the details are for debug.
 */
static void log_bounded(void **state)
{
	enum { ENTRIES = 100 };
	char name[NAME_MAX + 1], *log;

	(void)state;
	for (int i = 0; i < ENTRIES; i++) {
		snprintf(name, sizeof(name), "%03d-%0200d", i, 0);
		action_script(U(ALICE)->dir, name, U(ALICE)->uid, "", true);
	}
	log = auth_logged("after", "alice", "wrong-password", PAM_AUTH_ERR);
	assert_int_equal(lines_with(log, U(ALICE)->dir), 1);
	assert_non_null(strstr(log, "100 entries skipped, the first 000-"));
	assert_true(strlen(log) < 2048);
	free(log);
	log = auth_logged("debug", "alice", "wrong-password", PAM_AUTH_ERR);
	assert_true(lines_with(log, U(ALICE)->dir) > ENTRIES);
	free(log);
	expect_runs((const char *const[]){ NULL }, false);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup(env_with_items, fresh_test),
	cmocka_unit_test_setup(env_without_items, fresh_test),
	cmocka_unit_test_setup(elf_exact, fresh_test),
	cmocka_unit_test_setup(script_without_shebang, fresh_test),
	cmocka_unit_test_setup(log_same_for_match_and_miss, fresh_test),
	cmocka_unit_test_setup(log_levels, fresh_test),
	cmocka_unit_test_setup(log_bounded, fresh_test),
};

const struct test_group env_group = { "pam_env", tests, sizeof(tests) / sizeof(tests[0]) };
