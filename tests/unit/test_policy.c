/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UID_MIN/UID_MAX from login.defs, and which services count as elevation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/opts.h"
#include "core/policy.h"

static void read_defs(const char *text, struct duress_uid_range *r)
{
	char path[] = "/tmp/duress-login-defs.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	duress_uid_range_read(path, r);
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
	duress_uid_range_read("/nonexistent/login.defs", &r);
	assert_int_equal(r.min, DURESS_UID_MIN_DEFAULT);
	assert_int_equal(r.max, DURESS_UID_MAX_DEFAULT);
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
		cmocka_unit_test(uid_range_cases),        cmocka_unit_test(uid_range_long_line),
		cmocka_unit_test(uid_range_missing_file), cmocka_unit_test(elevation_services),
		cmocka_unit_test(global_group_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
