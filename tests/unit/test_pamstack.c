/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PAM stack reader and the abstract run behind `duress check`: each
 * stack shape, written to a scratch PAM directory, gets its exact verdict.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/pamstack.h"

#define TYPICAL                                                \
	"auth [success=2 default=ignore] pam_unix.so nullok\n" \
	"auth [success=1 default=ignore] pam_duress.so\n"      \
	"auth requisite pam_deny.so\n"                         \
	"auth required pam_permit.so\n"

struct file {
	const char *name;
	const char *text;
};

struct stack_case {
	const char *what;
	struct file files[4];
	enum duress_placement placement;
	const char *module;  /* "file:line" of the pam_duress.so entry, or NULL */
	const char *culprit; /* "file:line", or NULL */
	enum duress_culprit how;
};

/* The service is always "svc"; "other" exists only where a case writes it. */
static const struct stack_case cases[] = {
	{ "SPEC 1 typical stack through @include",
	  { { "svc", "@include common-auth\n" }, { "common-auth", TYPICAL } },
	  DURESS_PLACED,
	  "common-auth:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "include and substack reach it too",
	  { { "svc", "auth substack common-auth\n" }, { "common-auth", TYPICAL } },
	  DURESS_PLACED,
	  "common-auth:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "include",
	  { { "svc", "auth include common-auth\naccount include nowhere\n" },
	    { "common-auth", TYPICAL } },
	  DURESS_PLACED,
	  "common-auth:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "before pam_unix (docs/configuration.md placement)",
	  { { "svc", "auth [success=done default=ignore] pam_duress.so\n"
		     "auth [success=1 default=ignore] pam_unix.so nullok try_first_pass\n"
		     "auth requisite pam_deny.so\nauth required pam_permit.so\n" } },
	  DURESS_PLACED,
	  "svc:1",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "a full path and a -auth line count",
	  { { "svc", "auth [success=2 default=ignore] pam_unix.so\n"
		     "-auth [success=1 default=ignore] /lib/security/pam_duress.so\n"
		     "auth requisite pam_deny.so\nauth required pam_permit.so\n" } },
	  DURESS_PLACED,
	  "svc:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "module missing (Debian's stock common-auth)",
	  { { "svc", "@include common-auth\n" },
	    { "common-auth", "auth [success=1 default=ignore] pam_unix.so nullok\n"
			     "auth requisite pam_deny.so\nauth required pam_permit.so\n" } },
	  DURESS_NOT_IN_STACK,
	  NULL,
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "only on a non-auth line",
	  { { "svc", "auth required pam_unix.so\naccount required pam_duress.so\n" } },
	  DURESS_NOT_AUTH,
	  "svc:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "pam_unix success=1 default=die ends the stack first",
	  { { "svc", "auth [success=1 default=die] pam_unix.so\n"
		     "auth sufficient pam_duress.so\nauth required pam_permit.so\n" } },
	  DURESS_NEVER_REACHED,
	  "svc:2",
	  "svc:1",
	  DURESS_CULPRIT_ENDS },
	{ "required pam_unix, then requisite pam_deny before it",
	  { { "svc", "auth required pam_unix.so\nauth requisite pam_deny.so\n"
		     "auth sufficient pam_duress.so\n" } },
	  DURESS_NEVER_REACHED,
	  "svc:3",
	  "svc:2",
	  DURESS_CULPRIT_ENDS },
	{ "requisite pam_deny before it",
	  { { "svc",
	      "auth [success=2 default=ignore] pam_unix.so\nauth requisite pam_deny.so\n"
	      "auth [success=1 default=ignore] pam_duress.so\nauth required pam_permit.so\n" } },
	  DURESS_NEVER_REACHED,
	  "svc:3",
	  "svc:2",
	  DURESS_CULPRIT_ENDS },
	{ "default=2 jumps over it",
	  { { "svc", "auth [success=3 default=2] pam_unix.so\n"
		     "auth [success=2 default=ignore] pam_duress.so\nauth requisite pam_deny.so\n"
		     "auth required pam_deny.so\nauth required pam_permit.so\n" } },
	  DURESS_NEVER_REACHED,
	  "svc:2",
	  "svc:1",
	  DURESS_CULPRIT_JUMPS },
	{ "required pam_deny before it: reached, never a login",
	  { { "svc", "auth required pam_deny.so\nauth sufficient pam_duress.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:1",
	  DURESS_CULPRIT_FAILS },
	{ "required pam_unix before it fails the stack",
	  { { "svc", "auth required pam_unix.so\nauth sufficient pam_duress.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:1",
	  DURESS_CULPRIT_FAILS },
	{ "optional pam_duress then requisite pam_deny",
	  { { "svc", "auth [success=1 default=ignore] pam_unix.so\n"
		     "auth optional pam_duress.so\nauth requisite pam_deny.so\n"
		     "auth required pam_permit.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:3",
	  DURESS_CULPRIT_FAILS },
	{ "success=1 lands on pam_deny",
	  { { "svc", "auth [success=3 default=ignore] pam_unix.so\n"
		     "auth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\n"
		     "auth requisite pam_deny.so\nauth required pam_permit.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:4",
	  DURESS_CULPRIT_FAILS },
	{ "a jump past the end",
	  { { "svc",
	      "auth [success=2 default=ignore] pam_unix.so\n"
	      "auth [success=3 default=ignore] pam_duress.so\nauth requisite pam_deny.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:2",
	  DURESS_CULPRIT_BAD_JUMP },
	{ "a jump to the end is no success",
	  { { "svc",
	      "auth [success=2 default=ignore] pam_unix.so\n"
	      "auth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  NULL,
	  DURESS_CULPRIT_NO_GRANT },
	{ "a jump cannot leave its substack",
	  { { "svc", "auth substack sub\nauth required pam_permit.so\n" },
	    { "sub", "auth [success=1 default=ignore] pam_duress.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "sub:1",
	  "sub:1",
	  DURESS_CULPRIT_BAD_JUMP },
	{ "die in a substack ends only the substack",
	  { { "svc", "auth substack sub\nauth sufficient pam_duress.so\n" },
	    { "sub", "auth requisite pam_deny.so\nauth required pam_permit.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "sub:1",
	  DURESS_CULPRIT_FAILS },
	{ "reset in a substack forgets its failure",
	  { { "svc", "auth substack sub\nauth required pam_permit.so\n" },
	    { "sub",
	      "auth required pam_unix.so\nauth [success=reset default=bad] pam_duress.so\n" } },
	  DURESS_PLACED,
	  "sub:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "comments and continuation lines",
	  { { "svc", "# auth requisite pam_deny.so\n"
		     "auth [success=2 \\\n   default=ignore] pam_unix.so # a comment \\\n"
		     "  \t auth [success=1 default=ignore] \\\n\tpam_duress.so \\\n"
		     "   user_dir=/x\nauth requisite pam_deny.so\nauth required pam_permit.so" } },
	  DURESS_PLACED,
	  "svc:4",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "a missing include fails the stack",
	  { { "svc", "auth include nothere\n@include common-auth\n" }, { "common-auth", TYPICAL } },
	  DURESS_NEVER_SUCCEEDS,
	  "common-auth:2",
	  "svc:1",
	  DURESS_CULPRIT_FAILS },
	{ "an include loop stops 16 deep and fails",
	  { { "svc", "auth include loop\n@include common-auth\n" },
	    { "loop", "auth include loop\n" },
	    { "common-auth", TYPICAL } },
	  DURESS_NEVER_SUCCEEDS,
	  "common-auth:2",
	  "loop:1",
	  DURESS_CULPRIT_FAILS },
	{ "a misspelt type is an auth line that fails",
	  { { "svc", "auht required pam_unix.so\nauth sufficient pam_duress.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:1",
	  DURESS_CULPRIT_FAILS },
	{ "a misspelt control makes every value bad",
	  { { "svc", "auth requried pam_unix.so\nauth sufficient pam_duress.so\n" } },
	  DURESS_NEVER_SUCCEEDS,
	  "svc:2",
	  "svc:1",
	  DURESS_CULPRIT_FAILS },
	{ "an unknown module that may deny every login is not the placement's fault",
	  { { "svc", "auth requisite pam_nologin.so\n@include common-auth\n" },
	    { "common-auth", TYPICAL } },
	  DURESS_PLACED,
	  "common-auth:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "an unknown module that always ends the stack",
	  { { "svc", "auth [success=done default=die] pam_foo.so\n@include common-auth\n" },
	    { "common-auth", TYPICAL } },
	  DURESS_NEVER_REACHED,
	  "common-auth:2",
	  "svc:1",
	  DURESS_CULPRIT_ENDS },
	{ "no service file: other",
	  { { "other", "@include common-auth\n" }, { "common-auth", TYPICAL } },
	  DURESS_PLACED,
	  "common-auth:2",
	  NULL,
	  DURESS_CULPRIT_NONE },
	{ "the service's own auth lines win over other's",
	  { { "svc", "auth required pam_deny.so\n" },
	    { "other", "@include common-auth\n" },
	    { "common-auth", TYPICAL } },
	  DURESS_NOT_IN_STACK,
	  NULL,
	  NULL,
	  DURESS_CULPRIT_NONE },
};

/* A scratch PAM directory with the case's files. */
static void write_files(char *dir, const struct file *files)
{
	strcpy(dir, "/tmp/test_pamstack.XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < 4 && files[i].name; i++) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(files[i].text, f);
		fclose(f);
	}
}

static void remove_files(const char *dir, const struct file *files)
{
	for (size_t i = 0; i < 4 && files[i].name; i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		unlink(path);
	}
	rmdir(dir);
}

static void expect_at(const struct duress_pam_entry *e, const char *at)
{
	char got[256];

	if (!at) {
		assert_null(e);
		return;
	}
	assert_non_null(e);
	snprintf(got, sizeof(got), "%s:%u", e->file, e->line);
	assert_string_equal(got, at);
}

static void table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct stack_case *c = &cases[i];
		struct duress_pam_stack s;
		struct duress_pam_verdict v;
		char dir[64];

		print_message("%s\n", c->what);
		write_files(dir, c->files);
		assert_int_equal(duress_pam_load(&s, dir, "svc"), 0);
		assert_string_equal(s.error, "");
		duress_pam_judge(&s, &v);
		assert_int_equal(v.placement, c->placement);
		expect_at(v.module, c->module);
		expect_at(v.culprit, c->culprit);
		assert_int_equal(v.how, c->how);
		duress_pam_free(&s);
		remove_files(dir, c->files);
	}
}

struct load_case {
	const char *what;
	struct file files[3];
	const char *error; /* the exact reason */
	bool pam_fails;
};

static const struct load_case load_cases[] = {
	{ "@include of a missing file aborts",
	  { { "svc", "auth required pam_permit.so\n@include nothere\n" } },
	  "Linux-PAM cannot load this stack, every login fails: svc:2: @include nothere: its file "
	  "cannot be opened",
	  true },
	{ "@include loop",
	  { { "svc", "@include svc\n" } },
	  "Linux-PAM cannot load this stack, every login fails: svc:1: @include svc: includes "
	  "nested 16 deep (a loop?)",
	  true },
	{ "a trailing backslash at the end of the file",
	  { { "svc", "auth required pam_permit.so\nauth required \\\n" } },
	  "Linux-PAM cannot load this stack, every login fails: svc:2: its file ends inside a "
	  "continued line (a trailing backslash)",
	  true },
	{ "neither the service nor other",
	  { { "unrelated", "auth required pam_permit.so\n" } },
	  NULL,
	  true },
	{ "a NUL byte",
	  { { "svc", "auth required pam_permit.so\n" }, { "other", "" } },
	  NULL,
	  false },
};

static void load_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		const struct load_case *c = &load_cases[i];
		struct duress_pam_stack s;
		char dir[64], expected[320];

		print_message("%s\n", c->what);
		write_files(dir, c->files);
		if (i == 4) {
			/* fputs() cannot write a NUL: append one by hand. */
			char path[512];
			FILE *f;

			snprintf(path, sizeof(path), "%s/svc", dir);
			f = fopen(path, "a");
			assert_non_null(f);
			fputc('\0', f);
			fclose(f);
			snprintf(expected, sizeof(expected), "svc: contains a NUL byte");
		} else if (!c->error) {
			snprintf(expected, sizeof(expected), "neither %s/svc nor %s/other exists",
				 dir, dir);
		} else {
			snprintf(expected, sizeof(expected), "%s", c->error);
		}
		assert_int_equal(duress_pam_load(&s, dir, "svc"), -1);
		assert_string_equal(s.error, expected);
		assert_int_equal(s.pam_fails, c->pam_fails);
		duress_pam_free(&s);
		remove_files(dir, c->files);
	}
}

/* Our own bounds: a line over 4096 bytes, a file over 64 KiB. */
static void bounds(void **state)
{
	struct file files[2] = { { "svc", NULL } };
	struct duress_pam_stack s;
	size_t n = DURESS_PAM_MAX_FILE + 2;
	char *text = malloc(n);
	char dir[64];

	(void)state;
	assert_non_null(text);
	memset(text, 'x', DURESS_PAM_MAX_LINE + 1);
	strcpy(text + DURESS_PAM_MAX_LINE + 1, "\n");
	files[0].text = text;
	write_files(dir, files);
	assert_int_equal(duress_pam_load(&s, dir, "svc"), -1);
	assert_string_equal(s.error, "svc:1: line longer than 4096 bytes");
	duress_pam_free(&s);
	remove_files(dir, files);

	memset(text, '#', n - 1);
	text[n - 1] = '\0';
	write_files(dir, files);
	assert_int_equal(duress_pam_load(&s, dir, "svc"), -1);
	assert_string_equal(s.error, "svc: larger than 64 KiB");
	duress_pam_free(&s);
	remove_files(dir, files);
	free(text);
}

/* The module's arguments reach the entry as PAM splits them, [..] kept whole. */
static void arguments(void **state)
{
	struct file files[] = { { "svc", "auth sufficient pam_duress.so user_dir=/v/%u "
					 "[services=a b] servces=x\n" },
				{ NULL, NULL } };
	struct duress_pam_stack s;
	struct duress_pam_verdict v;
	char dir[64];

	(void)state;
	write_files(dir, files);
	assert_int_equal(duress_pam_load(&s, dir, "svc"), 0);
	duress_pam_judge(&s, &v);
	assert_non_null(v.module);
	assert_int_equal(v.module->argc, 3);
	assert_string_equal(v.module->argv[0], "user_dir=/v/%u");
	assert_string_equal(v.module->argv[1], "services=a b");
	assert_string_equal(v.module->argv[2], "servces=x");
	assert_false(v.module->via_common_auth);
	duress_pam_free(&s);
	remove_files(dir, files);
}

/* A stack that lets a wrong password in is found; the usual ones are not. */
static void wrong_password(void **state)
{
	static const struct {
		const char *text;
		bool logs_in;
	} stacks[] = {
		{ TYPICAL, false },
		{ "auth [success=2 default=2] pam_unix.so\n"
		  "auth [success=1 default=ignore] pam_duress.so\n"
		  "auth requisite pam_deny.so\nauth required pam_permit.so\n",
		  true },
		{ "auth sufficient pam_rootok.so\nauth required pam_unix.so\n", false },
		{ "auth optional pam_unix.so\nauth required pam_permit.so\n", true },
		{ "auth required pam_env.so\nauth optional pam_unix.so\n", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct file files[] = { { "svc", stacks[i].text }, { NULL, NULL } };
		struct duress_pam_stack s;
		char dir[64];

		write_files(dir, files);
		assert_int_equal(duress_pam_load(&s, dir, "svc"), 0);
		assert_int_equal(duress_pam_wrong_password_logs_in(&s), stacks[i].logs_in);
		duress_pam_free(&s);
		remove_files(dir, files);
	}
}

/*
 * Issue 18, item 4: the real password's path.  pam_unix grants it and
 * pam_duress ignores it; a stack where no combination logs in is found with
 * the line that fails it, and the before placement is told apart.
 */
static void real_password(void **state)
{
	static const struct {
		const char *text;
		bool logs_in, reaches;
		const char *culprit;
		enum duress_culprit how;
	} stacks[] = {
		{ TYPICAL, true, false, NULL, DURESS_CULPRIT_NONE },
		{ "auth [success=done default=ignore] pam_duress.so\n"
		  "auth [success=1 default=ignore] pam_unix.so try_first_pass\n"
		  "auth requisite pam_deny.so\nauth required pam_permit.so\n",
		  true, true, NULL, DURESS_CULPRIT_NONE },
		/* "end" is no action: Linux-PAM makes every result of the line bad. */
		{ "auth [success=done default=ignore] pam_duress.so\n"
		  "auth [success=end default=die] pam_unix.so try_first_pass\n"
		  "auth requisite pam_deny.so\nauth required pam_permit.so\n",
		  false, false, "svc:2", DURESS_CULPRIT_FAILS },
		{ "auth requisite pam_deny.so\n"
		  "auth [success=2 default=ignore] pam_unix.so\n"
		  "auth [success=1 default=ignore] pam_duress.so\n"
		  "auth requisite pam_deny.so\nauth required pam_permit.so\n",
		  false, false, "svc:1", DURESS_CULPRIT_FAILS },
		{ "auth [success=2 default=ignore] pam_unix.so\n"
		  "auth [success=1 default=ignore] pam_duress.so\nauth requisite pam_deny.so\n",
		  false, false, NULL, DURESS_CULPRIT_NO_GRANT },
		/* Unknown modules may grant it; no pam_unix.so: no verdict. */
		{ "auth sufficient pam_sss.so\nauth requisite pam_deny.so\n", true, false, NULL,
		  DURESS_CULPRIT_NONE },
		{ "auth required pam_deny.so\n", true, false, NULL, DURESS_CULPRIT_NONE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct file files[] = { { "svc", stacks[i].text }, { NULL, NULL } };
		struct duress_pam_stack s;
		struct duress_pam_real real;
		char dir[64];

		write_files(dir, files);
		assert_int_equal(duress_pam_load(&s, dir, "svc"), 0);
		duress_pam_real_password(&s, &real);
		assert_int_equal(real.logs_in, stacks[i].logs_in);
		assert_int_equal(real.reaches_module, stacks[i].reaches);
		expect_at(real.culprit, stacks[i].culprit);
		assert_int_equal(real.how, stacks[i].how);
		duress_pam_free(&s);
		remove_files(dir, files);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),          cmocka_unit_test(load_errors),
		cmocka_unit_test(bounds),         cmocka_unit_test(arguments),
		cmocka_unit_test(wrong_password), cmocka_unit_test(real_password),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
