/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 2, 3: hostile files in an action directory.  Each is skipped (never
 * run, never a hang: fresh_test's alarm), its password fails like a wrong
 * one, and a correctly signed sibling "good" still works unless the whole
 * directory must be refused.  A signature whose cost is over the caps is
 * refused for that reason, before any derivation (the debug log says so).
 * How long each takes is bench/bench_hostile's: a time bound here failed on
 * a loaded machine without a bug.
 */
#include "harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <security/pam_appl.h>

#define EVIL_PW "evil-duress"
#define GOOD_PW "good-duress"
#define UNTYPED_PW "never-typed-duress"

typedef void rewrite_fn(char *sig, size_t len, char *out, size_t *n);

struct hostile {
	const char *service;           /* "after" unless a cap option is tested */
	void (*make)(const char *dir); /* puts the hostile thing into dir, or: */
	rewrite_fn *rewrite;           /* turns a valid evil.sig into a hostile one */
	bool whole_dir;                /* the directory itself must be refused */
	const char *refused;           /* the debug log's reason for evil, or NULL: not looked at */
};

static void path_in(char out[PATH_MAX], const char *dir, const char *name)
{
	pathf(out, "%s/%s", dir, name);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	size_t len = 0;
	char *text = read_file(from, &len);

	assert_non_null(text);
	write_file(to, text, len, U(ALICE)->uid, mode);
	free(text);
}

/* dir/evil, a correctly signed action, for hostile twists of it. */
static void signed_evil(const char *dir)
{
	action_add(dir, "evil", U(ALICE)->uid, EVIL_PW);
}

/* A well-formed signature for a non-action: good's (its password fails anyway). */
static void borrowed_sig(const char *dir)
{
	char from[PATH_MAX], to[PATH_MAX];

	path_in(from, dir, "good.sig");
	path_in(to, dir, "evil.sig");
	copy_file(from, to, 0600);
}

static void elsewhere(char out[PATH_MAX])
{
	pathf(out, "%s/elsewhere", W.tmp);
	make_dir(out, U(ALICE)->uid, 0700);
}

static void symlinked_action(const char *dir)
{
	char other[PATH_MAX], from[PATH_MAX], to[PATH_MAX];

	/* Signed where it lies, outside; the link and a valid signature inside. */
	elsewhere(other);
	signed_evil(other);
	path_in(from, other, "evil.sig");
	path_in(to, dir, "evil.sig");
	copy_file(from, to, 0600);
	path_in(from, other, "evil");
	path_in(to, dir, "evil");
	assert_int_equal(symlink(from, to), 0);
}

static void symlinked_sig(const char *dir)
{
	char other[PATH_MAX], from[PATH_MAX], to[PATH_MAX];

	signed_evil(dir);
	elsewhere(other);
	path_in(from, dir, "evil.sig");
	path_in(to, other, "evil.sig");
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(symlink(to, from), 0);
}

static void chmod_in(const char *dir, const char *name, mode_t mode)
{
	char path[PATH_MAX];

	path_in(path, dir, name);
	assert_int_equal(chmod(path, mode), 0);
}

static void group_writable_action(const char *dir)
{
	signed_evil(dir);
	chmod_in(dir, "evil", 0770);
}

static void world_writable_sig(const char *dir)
{
	signed_evil(dir);
	chmod_in(dir, "evil.sig", 0666);
}

static void not_executable(const char *dir)
{
	signed_evil(dir);
	chmod_in(dir, "evil", 0600);
}

static void world_writable_dir(const char *dir)
{
	signed_evil(dir);
	assert_int_equal(chmod(dir, 0777), 0);
}

static void fifo_action(const char *dir)
{
	char path[PATH_MAX];

	path_in(path, dir, "evil");
	assert_int_equal(mkfifo(path, 0700), 0);
	borrowed_sig(dir);
}

static void fifo_sig(const char *dir)
{
	char path[PATH_MAX];

	signed_evil(dir);
	path_in(path, dir, "evil.sig");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
}

static void socket_action(const char *dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[PATH_MAX];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	path_in(path, dir, "evil");
	if (strlen(path) >= sizeof(sa.sun_path)) {
		printf("SKIP: socket_action: TMPDIR too long for a socket path\n");
		skip();
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	borrowed_sig(dir);
}

static void directory_action(const char *dir)
{
	char path[PATH_MAX];

	path_in(path, dir, "evil");
	make_dir(path, U(ALICE)->uid, 0700);
	borrowed_sig(dir);
}

/* Over max_size=1K, while good (checked here) stays under it. */
static void oversized(const char *dir)
{
	char pad[2200], path[PATH_MAX], *text;
	size_t len = 0;

	path_in(path, dir, "good");
	text = read_file(path, &len);
	free(text);
	assert_true(len < 1024);
	memset(pad, '#', sizeof(pad) - 2);
	pad[sizeof(pad) - 2] = '\n';
	pad[sizeof(pad) - 1] = '\0';
	action_script(dir, "evil", U(ALICE)->uid, pad, true);
	path_in(path, dir, "evil");
	action_sign(path, EVIL_PW);
}

/* Replaces evil.sig by what f makes of the valid one. */
/* Room for any signature a test rewrites, however long its line. */
#define DURESS_TEST_SIG_MAX 70000

static void rewrite_sig(const char *dir, rewrite_fn *f)
{
	char path[PATH_MAX], out[DURESS_TEST_SIG_MAX];
	size_t len = 0, n = 0;
	char *sig;

	signed_evil(dir);
	path_in(path, dir, "evil.sig");
	sig = read_file(path, &len);
	assert_true(sig && len > 20 && sig[len - 1] == '\n');
	f(sig, len, out, &n);
	assert_true(n <= sizeof(out));
	write_file(path, out, n, U(ALICE)->uid, 0600);
	free(sig);
}

static void garbage(char *sig, size_t len, char *out, size_t *n)
{
	(void)sig;
	(void)len;
	*n = (size_t)sprintf(out, "garbage\n");
}

static void truncated(char *sig, size_t len, char *out, size_t *n)
{
	*n = len / 2;
	memcpy(out, sig, *n);
}

static void extra_field(char *sig, size_t len, char *out, size_t *n)
{
	*n = (size_t)sprintf(out, "%.*s$QUJD\n", (int)(len - 1), sig);
}

static void huge_line(char *sig, size_t len, char *out, size_t *n)
{
	/* The valid line, padded far past any signature's size on the same line. */
	memcpy(out, sig, len - 1);
	memset(out + len - 1, 'A', 65536);
	out[len - 1 + 65536] = '\n';
	*n = len + 65536;
}

static void with_nul(char *sig, size_t len, char *out, size_t *n)
{
	memcpy(out, sig, len);
	out[len / 2] = '\0';
	*n = len;
}

/* The same signature, claiming cost `cost` instead of the real "m=8,t=1". */
static void recost(char *sig, size_t len, char *out, size_t *n, const char *cost)
{
	const char *at = strstr(sig, "m=8,t=1,");
	size_t head;

	assert_non_null(at);
	head = (size_t)(at - sig);
	*n = (size_t)sprintf(out, "%.*s%s%s", (int)head, sig, cost, at + strlen("m=8,t=1,"));
	(void)len;
}

static void memory_over_cap(char *sig, size_t len, char *out, size_t *n)
{
	recost(sig, len, out, n, "m=4194304,t=1,"); /* 4 GiB */
}

static void ops_over_cap(char *sig, size_t len, char *out, size_t *n)
{
	recost(sig, len, out, n, "m=8,t=4294967295,");
}

/* 10 entries with max_entries=5: the whole directory is refused. */
static void too_many_entries(const char *dir)
{
	signed_evil(dir);
	for (int i = 0; i < 6; i++) {
		char path[PATH_MAX];

		pathf(path, "%s/junk%d", dir, i);
		write_file(path, "x", 1, U(ALICE)->uid, 0600);
	}
}

/* Names that are never actions, each with a valid signature and content. */
static void leftover_names(const char *dir)
{
	static const char *const names[] = { "evil~", "evil.swp", "evil.bak", ".evil", "#evil#" };
	char from[PATH_MAX], to[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		signed_evil(dir);
		path_in(from, dir, "evil");
		path_in(to, dir, names[i]);
		assert_int_equal(rename(from, to), 0);
		path_in(from, dir, "evil.sig");
		pathf(to, "%s/%s.sig", dir, names[i]);
		assert_int_equal(rename(from, to), 0);
	}
}

/* evil's password, with debug: the log must give evil's reason, h->refused. */
static void expect_refused(const struct hostile *h)
{
	char want[PATH_MAX + 128];
	char *log = auth_logged("debug", "alice", EVIL_PW, PAM_AUTH_ERR);

	snprintf(want, sizeof(want), "%s/evil: %s", U(ALICE)->dir, h->refused);
	if (!strstr(log, want))
		fail_msg("no \"%s\" in the log:\n%s", want, log);
	free(log);
}

/*
 * Runs one case: evil's password fails, good's works unless the dir is
 * refused.  A hang (a runaway Argon2id, a blocking open) is fresh_test's
 * alarm and auth_quick's bound.
 */
static void hostile_case(void **state)
{
	const struct hostile *h = *state;
	const char *dir = U(ALICE)->dir;

	action_add(dir, "good", U(ALICE)->uid, GOOD_PW);
	if (h->make)
		h->make(dir);
	else
		rewrite_sig(dir, h->rewrite);
	assert_int_equal(auth_quick(h->service, "alice", EVIL_PW), PAM_AUTH_ERR);
	if (h->refused)
		expect_refused(h);
	assert_int_equal(auth_quick(h->service, "alice", GOOD_PW),
			 h->whole_dir ? PAM_AUTH_ERR : PAM_SUCCESS);
	expect_runs(h->whole_dir ? (const char *const[]){ NULL } :
				   (const char *const[]){ "good", NULL },
		    false);
}

/*
 * Issue 7.6: names are data.  A file named with a newline and a fake sshd
 * line gives exactly one log line, the newline shown as \x0a, at every
 * failed login on the account.
 */
static void name_forges_no_log_line(void **state)
{
	static const char forged[] = "x\nsshd[1]: Accepted password for root from 1.2.3.4";
	char path[PATH_MAX], *log;

	(void)state;
	action_add(U(ALICE)->dir, "good", U(ALICE)->uid, GOOD_PW);
	path_in(path, U(ALICE)->dir, forged);
	write_file(path, "#!/bin/sh\n", 10, U(ALICE)->uid, 0700);
	log = auth_logged("after", "alice", EVIL_PW, PAM_AUTH_ERR);
	if (lines_with(log, "Accepted password") != 1 ||
	    !strstr(log, "the first x\\x0asshd[1]: Accepted password for root from 1.2.3.4: "
			 "no signature"))
		fail_msg("expected one escaped line, got:\n%s", log);
	free(log);
	expect_runs((const char *const[]){ NULL }, false);
}

/* dir/name with a salt of its own: signed in a directory of its own, then moved in. */
static void sign_apart(const char *dir, const char *name)
{
	char apart[PATH_MAX], from[PATH_MAX], to[PATH_MAX];

	pathf(apart, "%s/apart-%s", W.tmp, name);
	make_dir(apart, U(ALICE)->uid, 0700);
	action_add(apart, name, U(ALICE)->uid, UNTYPED_PW);
	path_in(from, apart, name);
	path_in(to, dir, name);
	assert_int_equal(rename(from, to), 0);
	pathf(from, "%s/%s.sig", apart, name);
	pathf(to, "%s/%s.sig", dir, name);
	assert_int_equal(rename(from, to), 0);
	remove_tree(apart);
}

/* Rewrites dir/name.sig to claim `cost` instead of the real "m=8,t=1,". */
static void recost_file(const char *dir, const char *name, const char *cost)
{
	char path[PATH_MAX], out[DURESS_TEST_SIG_MAX];
	size_t len = 0, n = 0;
	char *sig;

	pathf(path, "%s/%s.sig", dir, name);
	sig = read_file(path, &len);
	assert_non_null(sig);
	recost(sig, len, out, &n, cost);
	write_file(path, out, n, U(ALICE)->uid, 0600);
	free(sig);
}

/*
 * Issue 7.5: anyone's wrong password for alice makes root pay for her
 * directory, so it gets libsodium's INTERACTIVE cost and two (salt, cost)
 * sets at most; over that, signatures are skipped before any Argon2id.
 */
static void user_dir_caps(void **state)
{
	const char *dir = U(ALICE)->dir;
	char *log;

	(void)state;
	action_add(dir, "good", U(ALICE)->uid, GOOD_PW); /* the first set */
	action_add(dir, "heavy", U(ALICE)->uid, EVIL_PW);
	recost_file(dir, "heavy", "m=65537,t=1,"); /* 1 KiB over 64 MiB */
	action_add(dir, "passes", U(ALICE)->uid, EVIL_PW);
	recost_file(dir, "passes", "m=8,t=3,");
	sign_apart(dir, "second"); /* the second set */
	sign_apart(dir, "third");  /* one too many */
	/* Each skipped entry has a line of its own with debug (one line for all, without). */
	log = auth_logged("debug", "alice", EVIL_PW, PAM_AUTH_ERR);
	if (!strstr(log, "/heavy: signature cost is over the module's cap, skipping") ||
	    !strstr(log, "/passes: signature cost is over the module's cap, skipping") ||
	    !strstr(log, "/third: too many different salts or costs in the directory, skipping") ||
	    strstr(log, "/second:") || strstr(log, "/good:"))
		fail_msg("per-user caps not applied:\n%s", log);
	free(log);
	assert_int_equal(auth_quick("after", "alice", GOOD_PW), PAM_SUCCESS);
	expect_runs((const char *const[]){ "good", NULL }, false);
}

/* Compound literals at file scope are static: each case's state lives on. */
#define CASE(fn, service, whole)                                                  \
	{                                                                         \
		.name = #fn, .test_func = hostile_case, .setup_func = fresh_test, \
		.initial_state = &(struct hostile)                                \
		{                                                                 \
			service, fn, NULL, whole, NULL                            \
		}                                                                 \
	}
/* A signature rewritten by fn; refused: the debug log's reason for it, or NULL. */
#define SIG(fn, refused)                                                                 \
	{                                                                                \
		.name = "sig_" #fn, .test_func = hostile_case, .setup_func = fresh_test, \
		.initial_state = &(struct hostile)                                       \
		{                                                                        \
			"after", NULL, fn, false, refused                                \
		}                                                                        \
	}
#define OVER_CAPS "signature cost is over the module's cap, skipping"

static const struct CMUnitTest tests[] = {
	CASE(symlinked_action, "after", false),
	CASE(symlinked_sig, "after", false),
	CASE(group_writable_action, "after", false),
	CASE(world_writable_sig, "after", false),
	CASE(not_executable, "after", false),
	CASE(world_writable_dir, "after", true),
	CASE(fifo_action, "after", false),
	CASE(fifo_sig, "after", false),
	CASE(socket_action, "after", false),
	CASE(directory_action, "after", false),
	CASE(oversized, "maxsize", false),
	CASE(too_many_entries, "maxentries", true),
	CASE(leftover_names, "after", false),
	SIG(garbage, NULL),
	SIG(truncated, NULL),
	SIG(extra_field, NULL),
	SIG(huge_line, NULL),
	SIG(with_nul, NULL),
	/* Refused for its cost at load, before any derivation (and so any allocation). */
	SIG(memory_over_cap, OVER_CAPS),
	SIG(ops_over_cap, OVER_CAPS),
	cmocka_unit_test_setup(name_forges_no_log_line, fresh_test),
	cmocka_unit_test_setup(user_dir_caps, fresh_test),
};

const struct test_group hostile_group = { "pam_hostile", tests, sizeof(tests) / sizeof(tests[0]) };
