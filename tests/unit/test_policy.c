/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UID_MIN/UID_MAX from login.defs, which services count as elevation, and
 * what a match may log in: the exact UID_MIN and UID_MAX boundaries (with a
 * login.defs of the test's own), every locked form of a password field, and
 * lookups that fail: each one a refusal.  getspnam_r() is wrapped at link
 * time (meson.build) so that a test can make it fail as a backend would.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <shadow.h>

#include "core/opts.h"
#include "core/policy.h"

/* --- getspnam_r(), failing on request ------------------------------------- */

static int shadow_error; /* 0: the real lookup */

int __real_getspnam_r(const char *name, struct spwd *sp, char *buf, size_t size, struct spwd **ret);
int __wrap_getspnam_r(const char *name, struct spwd *sp, char *buf, size_t size, struct spwd **ret);

int __wrap_getspnam_r(const char *name, struct spwd *sp, char *buf, size_t size, struct spwd **ret)
{
	if (shadow_error == 0)
		return __real_getspnam_r(name, sp, buf, size, ret);
	*ret = NULL;
	return shadow_error;
}

/* Writes text to a new temporary file; its path in path. */
static void temp_file(char path[], const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void read_defs(const char *text, struct duress_uid_range *r)
{
	char path[] = "/tmp/duress-login-defs.XXXXXX";

	temp_file(path, text);
	assert_int_equal(duress_uid_range_read(path, r), 0);
	unlink(path);
}

static void uid_range_cases(void **state)
{
	static const struct {
		const char *text;
		unsigned min, max;
	} cases[] = {
		{ "", 1000, 60000 },
		{ "UID_MIN 500\nUID_MAX 2000\n", 500, 2000 },
		{ "  UID_MIN\t\t1001  \n", 1001, 60000 },
		{ "UID_MIN 1500 # a comment\n", 1500, 60000 },
		{ "#UID_MIN 5\nSYS_UID_MIN 100\nUID_MINIMUM 7\n", 1000, 60000 },
		{ "UID_MIN 12x\nUID_MAX -1\nUID_MIN\n", 1000, 60000 },
		{ "UID_MIN 99999999999999999999\n", 1000, 60000 },
		/* The last value wins, as in shadow's getdef. */
		{ "UID_MIN 1100\nUID_MIN 1200\n", 1200, 60000 },
		/* min > max: neither counts. */
		{ "UID_MIN 5000\nUID_MAX 4000\n", 1000, 60000 },
		{ "UID_MIN 1300\r\n", 1300, 60000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct duress_uid_range r;

		read_defs(cases[i].text, &r);
		if (r.min != cases[i].min || r.max != cases[i].max)
			fail_msg("case %zu: got %u..%u, want %u..%u", i, (unsigned)r.min,
				 (unsigned)r.max, cases[i].min, cases[i].max);
	}
}

/* An overlong line's tail is not read as a line of its own. */
static void uid_range_long_line(void **state)
{
	char text[2048];
	struct duress_uid_range r;

	(void)state;
	memset(text, 'x', 1000);
	snprintf(text + 1000, sizeof(text) - 1000, "UID_MIN 5\nUID_MAX 3000\n");
	read_defs(text, &r);
	assert_int_equal(r.min, 1000);
	assert_int_equal(r.max, 3000);
}

static void uid_range_missing_file(void **state)
{
	struct duress_uid_range r;

	(void)state;
	assert_int_equal(duress_uid_range_read("/nonexistent/login.defs", &r), 0);
	assert_int_equal(r.min, DURESS_UID_MIN_DEFAULT);
	assert_int_equal(r.max, DURESS_UID_MAX_DEFAULT);
}

/* A file that is there but cannot be read (a directory: EISDIR) is an error, not the defaults. */
static void uid_range_unreadable(void **state)
{
	struct duress_uid_range r;

	(void)state;
	assert_true(duress_uid_range_read("/", &r) < 0);
}

/* --- what a match may log in ------------------------------------------------ */

/* No shadow entry of the machine's has this name: only the passwd field counts. */
#define NOBODY "duress-test-nobody"

static const struct duress_match global_match = { .global = true }, user_match = { .user = true };

static bool allowed(const char *name, uid_t uid, const char *passwd_field, struct duress_match m,
		    const char *login_defs)
{
	struct duress_log lg = { 0 };
	struct duress_opts o;
	char name_buf[64], field[64], dir[] = "/nonexistent", shell[] = "/bin/sh";
	struct passwd pw = { .pw_name = name_buf,
			     .pw_passwd = field,
			     .pw_uid = uid,
			     .pw_gid = 100,
			     .pw_dir = dir,
			     .pw_shell = shell };

	snprintf(name_buf, sizeof(name_buf), "%s", name);
	snprintf(field, sizeof(field), "%s", passwd_field);
	duress_opts_default(&o);
	return duress_login_allowed_defs(&o, &pw, "login", m, login_defs, &lg);
}

/*
 * The global password logs in UID_MIN..UID_MAX exactly, as the file says:
 * one below and one above are system accounts.  Values unlike the machine's
 * (and shadow's defaults), so that the file read is the test's.
 */
static void uid_boundaries(void **state)
{
	static const struct {
		uid_t uid;
		bool global;
	} cases[] = {
		{ 0 + 1, false }, { 1000, false },      { 1499, false }, { 1500, true },
		{ 1501, true },   { 1599, true },       { 1600, true },  { 1601, false },
		{ 60000, false }, { (uid_t)-2, false },
	};
	char defs[] = "/tmp/duress-login-defs.XXXXXX";

	(void)state;
	temp_file(defs, "UID_MIN 1500\nUID_MAX 1600\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned uid = (unsigned)cases[i].uid;

		if (allowed(NOBODY, cases[i].uid, "x", global_match, defs) != cases[i].global)
			fail_msg("uid %u with UID_MIN 1500, UID_MAX 1600: global password %s", uid,
				 cases[i].global ? "refused" : "logs it in");
		/* A per-user password only ever matches its own account: no range. */
		if (!allowed(NOBODY, cases[i].uid, "x", user_match, defs))
			fail_msg("uid %u: the per-user password refused", uid);
	}
	unlink(defs);
}

/* Without the file, shadow's defaults: 1000..60000, exactly. */
static void uid_boundaries_default(void **state)
{
	static const char *const none = "/nonexistent/login.defs";

	(void)state;
	assert_false(allowed(NOBODY, DURESS_UID_MIN_DEFAULT - 1, "x", global_match, none));
	assert_true(allowed(NOBODY, DURESS_UID_MIN_DEFAULT, "x", global_match, none));
	assert_true(allowed(NOBODY, DURESS_UID_MAX_DEFAULT, "x", global_match, none));
	assert_false(allowed(NOBODY, DURESS_UID_MAX_DEFAULT + 1, "x", global_match, none));
}

/* ...and then the global password logs nobody in; a per-user one has no range to read. */
static void uid_range_unreadable_refuses(void **state)
{
	(void)state;
	assert_false(allowed(NOBODY, DURESS_UID_MIN_DEFAULT, "x", global_match, "/"));
	assert_true(allowed(NOBODY, DURESS_UID_MIN_DEFAULT, "x", user_match, "/"));
}

/*
 * A shadow lookup that fails is a locked account, whatever the error: a
 * backend's EIO, EAGAIN or ETIMEDOUT (sss, LDAP) must not turn usermod -L
 * into a duress login.  Only "no such entry" (ENOENT, or no error and no
 * entry: the real lookup of NOBODY) leaves the passwd field to decide, and
 * EACCES where the process is not root (a screen locker cannot read shadow).
 */
static void shadow_lookup_errors(void **state)
{
	static const int errors[] = { EIO, EAGAIN, ETIMEDOUT, ERANGE, ENOMEM, EBADF, EACCES };

	(void)state;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		bool open = errors[i] == EACCES && geteuid() != 0;

		shadow_error = errors[i];
		if (allowed(NOBODY, 1500, "x", user_match, "/nonexistent") != open ||
		    allowed(NOBODY, 1500, "x", global_match, "/nonexistent") != open)
			fail_msg("getspnam_r() failing with errno %d: the account counts as %s",
				 errors[i],
				 open ? "locked" : "open: the duress password logs it in");
	}
	shadow_error = ENOENT;
	assert_true(allowed(NOBODY, 1500, "x", user_match, "/nonexistent"));
	shadow_error = 0;
	assert_true(allowed(NOBODY, 1500, "x", user_match, "/nonexistent"));
}

/*
 * The forms of a locked or password-less account (passwd -l and usermod -L
 * put "!" before the hash; "*", "!!" and "!*" are what useradd, shadow and
 * the distributions write for "no password"; "*LK*" is the BSDs' lock):
 * pam_unix accepts no password for them, and no duress password logs them
 * in, per-user or global.
 */
static const char *const locked_fields[] = { "!", "!x", "!$6$salt$hash", "!!", "!*", "*", "*LK*" };
static const char *const open_fields[] = { "x", "$6$salt$hash", "" };

static void locked_passwd_field(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(locked_fields) / sizeof(locked_fields[0]); i++) {
		if (allowed(NOBODY, 1500, locked_fields[i], user_match, "/nonexistent"))
			fail_msg("password field \"%s\": the per-user password logs it in",
				 locked_fields[i]);
		if (allowed(NOBODY, 1500, locked_fields[i], global_match, "/nonexistent"))
			fail_msg("password field \"%s\": the global password logs it in",
				 locked_fields[i]);
	}
	for (size_t i = 0; i < sizeof(open_fields) / sizeof(open_fields[0]); i++)
		if (!allowed(NOBODY, 1500, open_fields[i], user_match, "/nonexistent"))
			fail_msg("password field \"%s\" counts as locked", open_fields[i]);
}

/*
 * The same forms in the shadow entry (the passwd field "x"), with /etc/shadow
 * replaced by the test's own in a private mount namespace: root only.  In a
 * child, whose answer is the index + 1 of the first entry judged wrong, 0
 * if none, 100 without a namespace.
 */
static unsigned char shadow_child(const char *shadow)
{
	size_t n_locked = sizeof(locked_fields) / sizeof(locked_fields[0]);
	size_t n_open = sizeof(open_fields) / sizeof(open_fields[0]);
	char name[32];

	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount(shadow, "/etc/shadow", NULL, MS_BIND, NULL) != 0)
		return 100;
	for (size_t i = 0; i < n_locked + n_open; i++) {
		bool locked = i < n_locked;

		snprintf(name, sizeof(name), "dtest%zu", i);
		if (allowed(name, 1500, "x", user_match, "/nonexistent") == locked)
			return (unsigned char)(i + 1);
	}
	return 0;
}

static void locked_shadow_entry(void **state)
{
	size_t n_locked = sizeof(locked_fields) / sizeof(locked_fields[0]);
	size_t n_open = sizeof(open_fields) / sizeof(open_fields[0]);
	char path[] = "/tmp/duress-shadow.XXXXXX", text[1024] = "";
	unsigned char result = 255;
	int p[2];
	pid_t pid;

	(void)state;
	if (geteuid() != 0 || access("/etc/shadow", F_OK) != 0) {
		printf("SKIP: a shadow file of the test's own needs root and /etc/shadow\n");
		skip();
	}
	for (size_t i = 0; i < n_locked + n_open; i++) {
		const char *field = i < n_locked ? locked_fields[i] : open_fields[i - n_locked];
		size_t used = strlen(text);

		snprintf(text + used, sizeof(text) - used, "dtest%zu:%s:20000:0:99999:7:::\n", i,
			 field);
	}
	temp_file(path, text);
	/* The answer comes through a pipe: under valgrind a child exits with its code. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		result = shadow_child(path);
		_exit(write(p[1], &result, 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &result, 1) != 1)
		result = 255;
	close(p[0]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	unlink(path);
	if (result == 100) {
		printf("SKIP: no private mount namespace here\n");
		skip();
	}
	assert_int_not_equal(result, 255);
	if (result != 0) {
		size_t i = (size_t)result - 1;

		fail_msg("shadow field \"%s\" judged %s",
			 i < n_locked ? locked_fields[i] : open_fields[i - n_locked],
			 i < n_locked ? "open: the duress password logs it in" : "locked");
	}
}

static void elevation_services(void **state)
{
	struct duress_log lg = { 0 };
	struct duress_opts o;
	const char *custom[] = { "elevation_services=doas,my-sudo" };
	const char *none[] = { "elevation_services=" };

	(void)state;
	duress_opts_default(&o);
	for (const char *const *s = (const char *const[]){ "sudo", "sudo-i", "pkexec", "polkit-1",
							   "doas", "run0", NULL };
	     *s; s++)
		assert_true(duress_service_is_elevation(&o, *s));
	assert_false(duress_service_is_elevation(&o, "sshd"));
	assert_false(duress_service_is_elevation(&o, "sud"));
	assert_false(duress_service_is_elevation(&o, NULL));
	duress_opts_parse(&o, 1, custom, &lg);
	assert_true(duress_service_is_elevation(&o, "my-sudo"));
	assert_false(duress_service_is_elevation(&o, "sudo"));
	duress_opts_parse(&o, 1, none, &lg);
	assert_false(duress_service_is_elevation(&o, "doas"));
}

static void global_group_option(void **state)
{
	struct duress_log lg = { 0 };
	struct duress_opts o;
	const char *set[] = { "global_group=duress-global" };
	const char *empty[] = { "global_group=" };

	(void)state;
	duress_opts_default(&o);
	assert_null(o.global_group);
	duress_opts_parse(&o, 1, set, &lg);
	assert_string_equal(o.global_group, "duress-global");
	duress_opts_parse(&o, 1, empty, &lg);
	assert_null(o.global_group);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uid_range_cases),
		cmocka_unit_test(uid_range_long_line),
		cmocka_unit_test(uid_range_missing_file),
		cmocka_unit_test(uid_range_unreadable),
		cmocka_unit_test(uid_range_unreadable_refuses),
		cmocka_unit_test(shadow_lookup_errors),
		cmocka_unit_test(uid_boundaries),
		cmocka_unit_test(uid_boundaries_default),
		cmocka_unit_test(locked_passwd_field),
		cmocka_unit_test(locked_shadow_entry),
		cmocka_unit_test(elevation_services),
		cmocka_unit_test(global_group_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
