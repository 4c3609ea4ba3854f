/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Module option parsing, services=, and user_dir= expansion. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/opts.h"
#include "core/slots.h"

static struct duress_log quiet_log;

/* Returns how many arguments are bad (logging nothing: those tests are below). */
static int parse(struct duress_opts *o, int argc, const char **argv)
{
	quiet_log = duress_log_for(NULL, argc, argv);
	duress_opts_default(o);
	return duress_opts_parse(o, argc, argv, NULL);
}

static void defaults(void **state)
{
	struct duress_opts o;

	(void)state;
	parse(&o, 0, NULL);
	assert_string_equal(o.global_dir, DURESS_GLOBAL_DIR);
	assert_string_equal(o.user_dir, "%h/.duress");
	assert_null(o.group);
	assert_null(o.services);
	assert_false(o.deny || o.allow_root || o.legacy_sha256 || quiet_log.debug ||
		     quiet_log.quiet);
	assert_int_equal(o.wait_seconds, 0);
	assert_int_equal(o.caps.max_memory, 256ULL << 20);
	assert_int_equal(o.caps.max_file_size, 16ULL << 20);
	assert_int_equal(o.caps.max_total, 64ULL << 20);
	assert_string_equal(o.slot_dir, "/run/pam_duress");
	assert_string_equal(o.state_dir, "/var/lib/pam_duress");
	assert_int_equal(o.max_derivations, 0);
	assert_int_equal(o.max_wait, 5);
}

/* The default cap: at least one, at most two per CPU and 1024, an eighth of the memory. */
static void default_slots(void **state)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long eighth = (unsigned long long)sysconf(_SC_PHYS_PAGES) *
				    (unsigned long long)sysconf(_SC_PAGESIZE) / 8;
	unsigned n = duress_slots_default();

	(void)state;
	assert_true(n >= 1 && n <= DURESS_MAX_DERIVATIONS);
	assert_true(n <= 2 * (unsigned long)cpus);
	assert_true(n == 1 || (unsigned long long)n * (64ULL << 20) <= eighth);
	/* This machine has more than an eighth of its memory for two derivations a CPU. */
	if (eighth >= 2ULL * (unsigned long long)cpus * (64ULL << 20))
		assert_int_equal(n, 2 * cpus);
}

static void every_option(void **state)
{
	const char *argv[] = {
		"global_dir=/srv/g",
		"user_dir=/var/lib/duress/%u",
		"deny",
		"allow_root",
		"group=duress",
		"services=login,gdm-password",
		"wait=30",
		"legacy_sha256",
		"debug",
		"quiet",
		"max_memory=64M",
		"max_ops=3",
		"max_size=1K",
		"max_entries=10",
		"max_params=2",
		"max_total=32M",
		"slot_dir=/run/other",
		"state_dir=/srv/state",
		"max_derivations=3",
		"max_wait=0",
	};
	struct duress_opts o;

	(void)state;
	assert_int_equal(parse(&o, (int)(sizeof(argv) / sizeof(argv[0])), argv), 0);
	assert_string_equal(o.global_dir, "/srv/g");
	assert_string_equal(o.user_dir, "/var/lib/duress/%u");
	assert_true(o.deny && o.allow_root && o.legacy_sha256);
	assert_true(quiet_log.debug && quiet_log.quiet);
	assert_string_equal(o.group, "duress");
	assert_string_equal(o.services, "login,gdm-password");
	assert_int_equal(o.wait_seconds, 30);
	assert_int_equal(o.caps.max_memory, 64ULL << 20);
	assert_int_equal(o.caps.max_ops, 3);
	assert_int_equal(o.caps.max_file_size, 1024);
	assert_int_equal(o.caps.max_entries, 10);
	assert_int_equal(o.caps.max_params, 2);
	assert_int_equal(o.caps.max_total, 32ULL << 20);
	assert_string_equal(o.slot_dir, "/run/other");
	assert_string_equal(o.state_dir, "/srv/state");
	assert_int_equal(o.max_derivations, 3);
	assert_int_equal(o.max_wait, 0);
}

/* A per-user directory, paid for by anyone's wrong password: INTERACTIVE cost, two sets. */
static void user_caps_defaults(void **state)
{
	struct duress_opts o;
	struct duress_caps c;

	(void)state;
	parse(&o, 0, NULL);
	assert_int_equal(o.user_caps.max_memory, 64ULL << 20);
	assert_int_equal(o.user_caps.max_ops, 2);
	assert_int_equal(o.user_caps.max_params, 2);
	assert_int_equal(o.user_caps.max_file_size, 16ULL << 20);
	assert_int_equal(o.user_caps.max_total, 16ULL << 20);
	assert_int_equal(o.user_caps.max_entries, 128);
	duress_user_caps_default(&c);
	assert_memory_equal(&o.user_caps, &c, sizeof(c));
	/* The global directory keeps its caps. */
	assert_int_equal(o.caps.max_memory, 256ULL << 20);
	assert_int_equal(o.caps.max_ops, 4);
	assert_int_equal(o.caps.max_params, 4);
}

static void user_cap_options(void **state)
{
	const char *argv[] = {
		"user_max_memory=32M", "user_max_ops=1",     "user_max_size=1K",
		"user_max_total=2M",   "user_max_entries=9", "user_max_params=1",
	};
	struct duress_opts o, d;

	(void)state;
	parse(&o, (int)(sizeof(argv) / sizeof(argv[0])), argv);
	duress_opts_default(&d);
	assert_int_equal(o.user_caps.max_memory, 32ULL << 20);
	assert_int_equal(o.user_caps.max_ops, 1);
	assert_int_equal(o.user_caps.max_file_size, 1024);
	assert_int_equal(o.user_caps.max_total, 2ULL << 20);
	assert_int_equal(o.user_caps.max_entries, 9);
	assert_int_equal(o.user_caps.max_params, 1);
	assert_memory_equal(&o.caps, &d.caps, sizeof(d.caps));
}

/* Bad per-user values keep the default, with the same ranges as the global ones. */
static void user_cap_bad_values(void **state)
{
	const char *argv[] = { "user_max_memory=1", "user_max_ops=0",    "user_max_params=65",
			       "user_max_size=",    "user_frobnicate=1", "user_" };
	struct duress_opts o, d;

	(void)state;
	assert_int_equal(parse(&o, (int)(sizeof(argv) / sizeof(argv[0])), argv), 6);
	duress_opts_default(&d);
	assert_memory_equal(&o.user_caps, &d.user_caps, sizeof(d.user_caps));
	assert_memory_equal(&o.caps, &d.caps, sizeof(d.caps));
}

/* A global cap bounds the per-user one: lowering max_*= never loosens a user's directory. */
static void user_caps_never_above_global(void **state)
{
	const char *lower[] = { "max_memory=32M", "max_params=1", "max_entries=5" };
	const char *raise[] = { "user_max_memory=512M", "user_max_ops=8", "max_ops=6",
				"user_max_params=3" };
	struct duress_opts o;

	(void)state;
	parse(&o, 3, lower);
	assert_int_equal(o.user_caps.max_memory, 32ULL << 20);
	assert_int_equal(o.user_caps.max_params, 1);
	assert_int_equal(o.user_caps.max_entries, 5);
	parse(&o, 4, raise);
	assert_int_equal(o.user_caps.max_memory, 256ULL << 20);
	assert_int_equal(o.user_caps.max_ops, 6);
	assert_int_equal(o.user_caps.max_params, 3);
}

/* Bad values keep the default; nothing aborts the parse. */
static void bad_values_keep_defaults(void **state)
{
	const char *argv[] = {
		"global_dir=relative",
		"wait=-1",
		"wait=601",
		"wait=5K",
		"slot_dir=run/relative",
		"state_dir=",
		"state_dir=var/relative",
		"max_derivations=0",
		"max_derivations=1025",
		"max_derivations=4K",
		"max_wait=601",
		"max_wait=",
		"max_memory=1",
		"max_memory=12Q",
		"max_ops=0",
		"max_size=",
		"max_entries=99999999999999999999999",
		"frobnicate",
		"deny=yes",
		"",
		"quiet",
	};
	struct duress_opts o, d;

	(void)state;
	/* Every one but quiet is bad: the module line would be inert. */
	assert_int_equal(parse(&o, (int)(sizeof(argv) / sizeof(argv[0])), argv), 20);
	duress_opts_default(&d);
	assert_string_equal(o.global_dir, d.global_dir);
	assert_int_equal(o.wait_seconds, 0);
	assert_string_equal(o.slot_dir, d.slot_dir);
	assert_string_equal(o.state_dir, d.state_dir);
	assert_int_equal(o.max_derivations, d.max_derivations);
	assert_int_equal(o.max_wait, d.max_wait);
	assert_false(o.deny);
	assert_memory_equal(&o.caps, &d.caps, sizeof(d.caps));
}

/* Runs duress_opts_parse() with a logger to stderr; returns what it wrote (free it). */
static char *parse_logged(int argc, const char **argv, int *bad)
{
	struct duress_log lg = { 0 };
	struct duress_opts o;
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	char *text = calloc(1, 8192);
	size_t n;

	assert_non_null(f);
	assert_non_null(text);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	duress_opts_default(&o);
	*bad = duress_opts_parse(&o, argc, argv, &lg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(f);
	n = fread(text, 1, 8191, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/*
 * Issue 18, item 5: a line with a misspelled or malformed option is inert;
 * one log line names every bad one (escaped), and says so.
 */
static void bad_options_one_line(void **state)
{
	const char *argv[] = { "debug", "servces=sshd", "wait=900", "quiet", "evil\nforged line" };
	const char *good[] = { "debug", "services=sshd", "wait=9" };
	int bad;
	char *log;

	(void)state;
	log = parse_logged(5, argv, &bad);
	assert_int_equal(bad, 3);
	assert_int_equal(count_char(log, '\n'), 1);
	assert_non_null(strstr(log, "module line inert"));
	assert_non_null(strstr(log, "unknown option \"servces=sshd\""));
	assert_non_null(strstr(log, "bad value in option \"wait=900\""));
	assert_non_null(strstr(log, "\"evil\\x0aforged line\""));
	assert_non_null(strstr(log, "duress check"));
	assert_null(strstr(log, "debug"));
	assert_null(strstr(log, "quiet"));
	free(log);
	log = parse_logged(3, good, &bad);
	assert_int_equal(bad, 0);
	assert_string_equal(log, "");
	free(log);
}

/* However many and however long the bad options, the line stays bounded. */
static void bad_options_bounded(void **state)
{
	enum { N = 200 };
	static char long_arg[4096];
	const char *argv[N];
	int bad;
	char *log;

	(void)state;
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	for (int i = 0; i < N; i++)
		argv[i] = long_arg;
	log = parse_logged(N, argv, &bad);
	assert_int_equal(bad, N);
	assert_int_equal(count_char(log, '\n'), 1);
	assert_true(strlen(log) < DURESS_INERT_WHY_MAX + 256);
	assert_non_null(strstr(log, "more; fix it"));
	free(log);
}

static void empty_values_disable(void **state)
{
	const char *argv[] = { "user_dir=", "global_dir=", "group=" };
	struct duress_opts o;

	(void)state;
	parse(&o, 3, argv);
	assert_string_equal(o.user_dir, "");
	assert_string_equal(o.global_dir, "");
	assert_null(o.group);
}

static void services_list(void **state)
{
	const char *argv[] = { "services=login,gdm-password,su" };
	struct duress_opts o;

	(void)state;
	parse(&o, 1, argv);
	assert_true(duress_service_allowed(&o, "login"));
	assert_true(duress_service_allowed(&o, "gdm-password"));
	assert_true(duress_service_allowed(&o, "su"));
	assert_false(duress_service_allowed(&o, "sshd"));
	assert_false(duress_service_allowed(&o, "gdm"));
	assert_false(duress_service_allowed(&o, "s"));
	assert_false(duress_service_allowed(&o, "login,su"));
	assert_false(duress_service_allowed(&o, NULL));
	o.services = NULL;
	assert_true(duress_service_allowed(&o, "sshd"));
	o.services = "";
	assert_false(duress_service_allowed(&o, "sshd"));
}

static void expand_user_dir(void **state)
{
	char out[PATH_MAX];
	char tiny[16];

	(void)state;
	assert_int_equal(
		duress_expand_user_dir("%h/.duress", "alice", "/home/alice", out, sizeof(out)), 0);
	assert_string_equal(out, "/home/alice/.duress");
	assert_int_equal(
		duress_expand_user_dir("/var/lib/duress/%u", "alice", "/h", out, sizeof(out)), 0);
	assert_string_equal(out, "/var/lib/duress/alice");
	assert_int_equal(duress_expand_user_dir("/x/%%u/%u%%", "a", "/h", out, sizeof(out)), 0);
	assert_string_equal(out, "/x/%u/a%");
	assert_int_equal(duress_expand_user_dir("%q", "a", "/h", out, sizeof(out)), -EINVAL);
	assert_int_equal(duress_expand_user_dir("/x/%", "a", "/h", out, sizeof(out)), -EINVAL);
	assert_int_equal(duress_expand_user_dir("%u/x", "a", "/h", out, sizeof(out)), -EINVAL);
	assert_int_equal(duress_expand_user_dir("%h/x", "a", "", out, sizeof(out)), -EINVAL);
	assert_int_equal(duress_expand_user_dir("/d/%u", "../etc", "/h", out, sizeof(out)),
			 -EINVAL);
	assert_int_equal(duress_expand_user_dir("/d/%u", "..", "/h", out, sizeof(out)), -EINVAL);
	assert_int_equal(duress_expand_user_dir("%h/.duress", "a", "/home/a-long-name", tiny,
						sizeof(tiny)),
			 -ENAMETOOLONG);
	assert_int_equal(duress_expand_user_dir("/123456789012345", "a", "/h", tiny, sizeof(tiny)),
			 -ENAMETOOLONG);
	assert_int_equal(duress_expand_user_dir("/12345678901234", "a", "/h", tiny, sizeof(tiny)),
			 0);
}

static void parse_size(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(duress_parse_size("0", 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(duress_parse_size("2K", UINT64_MAX, &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(duress_parse_size("3G", UINT64_MAX, &v), 0);
	assert_int_equal(v, 3ULL << 30);
	assert_int_equal(duress_parse_size("11", 10, &v), -ERANGE);
	assert_int_equal(duress_parse_size("1K", 1023, &v), -ERANGE);
	assert_int_equal(duress_parse_size("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(duress_parse_size("17179869184G", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(duress_parse_size("", 10, &v), -EINVAL);
	assert_int_equal(duress_parse_size("1KB", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(duress_parse_size("k", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(duress_parse_size(" 1", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(duress_parse_size(NULL, UINT64_MAX, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(default_slots),
		cmocka_unit_test(every_option),
		cmocka_unit_test(user_caps_defaults),
		cmocka_unit_test(user_cap_options),
		cmocka_unit_test(user_cap_bad_values),
		cmocka_unit_test(user_caps_never_above_global),
		cmocka_unit_test(bad_values_keep_defaults),
		cmocka_unit_test(bad_options_one_line),
		cmocka_unit_test(bad_options_bounded),
		cmocka_unit_test(empty_values_disable),
		cmocka_unit_test(services_list),
		cmocka_unit_test(expand_user_dir),
		cmocka_unit_test(parse_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
