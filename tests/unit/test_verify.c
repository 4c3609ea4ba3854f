/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a check reads (verify.c), counted: read() and memfd_create() are
 * wrapped at link time (meson.build).  A wrong password reads no byte of any
 * action or companion and makes no memfd, whatever their sizes, and sees no
 * change made since signing; the right one reads exactly the actions whose
 * tag matched (and their companions), once each, into sealed copies; a
 * matched action changed since signing is read, does not run, and is logged
 * only with debug, so that the default log is the same for both passwords.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/actions.h"
#include "fixture.h"
#include "tests/lib/fds.h"

#define RIGHT "right horse"
#define WRONG "wrong horse"
#define OTHER "a third horse"
#define BIG_SIZE ((size_t)4 << 20)
#define SMALL "#!/bin/sh\n. \"$CONF\"\n"
#define CONF "URL=https://example.invalid/\n"
#define EDITED "#!/bin/sh\necho edited\n"

/* --- the counts: what the core reads and how many memfds it makes ------- */

static bool counting;
static size_t bytes_read, memfds_made;

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
int __real_memfd_create(const char *name, unsigned int flags);
int __wrap_memfd_create(const char *name, unsigned int flags);

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	ssize_t r = __real_read(fd, buf, n);

	if (counting && r > 0)
		bytes_read += (size_t)r;
	return r;
}

int __wrap_memfd_create(const char *name, unsigned int flags)
{
	memfds_made += counting;
	return __real_memfd_create(name, flags);
}

/* --- the directory: big, edited, other, small (+ z.conf), in name order -- */

enum { BIG, EDITED_ACTION, OTHER_ACTION, SMALL_ACTION, N_ACTIONS };

static char tmp[PATH_MAX / 2], dir[PATH_MAX / 2 + 8], conf[PATH_MAX];
static struct duress_params params;

/* small.sig: signed for RIGHT, bound to conf as `duress sign --also` does. */
static void sign_with_companion(int fd)
{
	unsigned char action[DURESS_HASH_LEN], also[1][DURESS_HASH_LEN], key[DURESS_KEY_LEN];
	struct duress_sig s = { .params = params };
	char line[DURESS_SIG_MAX + 1];
	int n;

	assert_int_equal(duress_sig_add_also(&s, conf), 0);
	crypto_hash_sha256(action, (const unsigned char *)SMALL, strlen(SMALL));
	crypto_hash_sha256(also[0], (const unsigned char *)CONF, strlen(CONF));
	duress_bound_hash(&s, action, (const unsigned char(*)[DURESS_HASH_LEN])also,
			  s.content_hash);
	assert_int_equal(duress_derive_key(RIGHT, strlen(RIGHT), &params, key), 0);
	duress_tag(key, &s, s.content_hash, s.tag);
	sodium_memzero(key, sizeof(key));
	n = duress_sig_format(&s, line, sizeof(line));
	assert_true(n > 0);
	fx_write_beside(fd, "small", DURESS_SIG_SUFFIX, line, (size_t)n, 0600, (uid_t)-1,
			(gid_t)-1);
}

static int make_dir(void **state)
{
	char *big = malloc(BIG_SIZE + 1);
	int fd;

	(void)state;
	assert_non_null(big);
	fx_tmpdir(tmp, sizeof(tmp), "test_verify");
	snprintf(dir, sizeof(dir), "%s/d", tmp);
	snprintf(conf, sizeof(conf), "%s/z.conf", dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(big, '#', BIG_SIZE);
	big[BIG_SIZE] = '\0';
	fx_write_text(fd, "big", big, 0700);
	fx_sign(fd, "big", big, RIGHT, &params, (uid_t)-1, (gid_t)-1);
	free(big);
	fx_write_text(fd, "edited", EDITED, 0700);
	fx_sign(fd, "edited", "#!/bin/sh\necho as signed\n", RIGHT, &params, (uid_t)-1, (gid_t)-1);
	fx_write_text(fd, "other", SMALL, 0700);
	fx_sign(fd, "other", SMALL, OTHER, &params, (uid_t)-1, (gid_t)-1);
	fx_write_text(fd, "small", SMALL, 0700);
	fx_write_text(fd, "z.conf", CONF, 0600);
	sign_with_companion(fd);
	close(fd);
	return 0;
}

static int remove_dir(void **state)
{
	(void)state;
	fx_remove_tree(tmp);
	return 0;
}

static struct duress_caps caps;

static void load(struct duress_dir *d)
{
	assert_int_equal(duress_dir_load(d, dir, DURESS_SCOPE_USER, getuid(), &caps, false, NULL),
			 0);
	assert_int_equal(d->n_actions, N_ACTIONS + 1); /* z.conf: a data file, not an action */
	assert_string_equal(d->actions[SMALL_ACTION].name, "small");
	assert_int_equal(d->n_params, 1);
}

/* One check with password, counted; returns its result. */
static int counted_verify(struct duress_dir *d, const char *password)
{
	unsigned char key[1][DURESS_KEY_LEN];
	int r;

	assert_int_equal(duress_derive_key(password, strlen(password), &d->params[0], key[0]), 0);
	bytes_read = memfds_made = 0;
	counting = true;
	r = duress_dir_verify(d, (const unsigned char(*)[DURESS_KEY_LEN])key, password,
			      strlen(password));
	counting = false;
	sodium_memzero(key, sizeof(key));
	return r;
}

/* What duress_dir_log_skips() writes to stderr (no PAM handle), at debug or not. */
static char *logged_skips(const struct duress_dir *d, bool debug)
{
	const struct duress_log lg = { .debug = debug };
	char *text = calloc(1, 4096);
	int saved = dup(2), fd = memfd_create("log", MFD_CLOEXEC);

	assert_non_null(text);
	assert_true(saved >= 0 && fd >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	duress_dir_log_skips(d, &lg);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_true(fx_read_all(fd, text, 4096) >= 0);
	close(fd);
	return text;
}

/* A wrong password: every action armed and judged, no byte read, no memfd, nothing logged. */
static void wrong_password_reads_nothing(void **state)
{
	struct duress_dir d;
	char *log;

	(void)state;
	load(&d);
	assert_int_equal(counted_verify(&d, WRONG), 0);
	assert_int_equal(bytes_read, 0);
	assert_int_equal(memfds_made, 0);
	for (size_t i = 0; i < N_ACTIONS; i++) {
		assert_int_equal(d.actions[i].skip, DURESS_SKIP_NONE);
		assert_int_equal(d.actions[i].memfd, -1);
	}
	/* Sizes are charged all the same: what a match would read. */
	assert_int_equal(d.actions[BIG].size, BIG_SIZE);
	assert_int_equal(d.actions[SMALL_ACTION].size, strlen(SMALL) + strlen(CONF));
	log = logged_skips(&d, false);
	assert_string_equal(log, "");
	free(log);
	duress_dir_free(&d);
}

/*
 * The right password: the three actions whose tag matches are read once
 * each (small with its companion), into three memfds; other, signed for
 * another password, is not read; edited does not run and is skipped as
 * changed, learnt on the match and so logged only with debug.
 */
static void right_password_reads_the_matches(void **state)
{
	size_t fds = count_open_fds();
	struct duress_dir d;
	char *log;

	(void)state;
	load(&d);
	assert_int_equal(counted_verify(&d, RIGHT), 2);
	assert_int_equal(bytes_read, BIG_SIZE + strlen(EDITED) + strlen(SMALL) + strlen(CONF));
	assert_int_equal(memfds_made, 3);
	assert_true(d.actions[BIG].matched && d.actions[SMALL_ACTION].matched);
	assert_true(d.actions[BIG].memfd >= 0 && d.actions[SMALL_ACTION].memfd >= 0);
	assert_true(fcntl(d.actions[BIG].memfd, F_GET_SEALS) & F_SEAL_WRITE);
	assert_int_equal(lseek(d.actions[BIG].memfd, 0, SEEK_END), (off_t)BIG_SIZE);
	assert_false(d.actions[OTHER_ACTION].matched);
	assert_int_equal(d.actions[OTHER_ACTION].skip, DURESS_SKIP_NONE);
	assert_false(d.actions[EDITED_ACTION].matched);
	assert_int_equal(d.actions[EDITED_ACTION].skip, DURESS_SKIP_CHANGED);
	assert_true(d.actions[EDITED_ACTION].skip_on_match);
	assert_int_equal(d.actions[EDITED_ACTION].memfd, -1);
	log = logged_skips(&d, false);
	assert_string_equal(log, "");
	free(log);
	log = logged_skips(&d, true);
	assert_non_null(strstr(log, "/edited: content changed since signing, skipping"));
	free(log);
	duress_dir_free(&d);
	assert_int_equal(count_open_fds(), fds);
}

/* A check that cannot match (the disk-unlock prompt's too-long passphrase) costs a wrong one's. */
static void judge_reads_nothing(void **state)
{
	struct duress_dir d;

	(void)state;
	load(&d);
	bytes_read = memfds_made = 0;
	counting = true;
	assert_int_equal(duress_dir_judge(&d), 0);
	counting = false;
	assert_int_equal(bytes_read, 0);
	assert_int_equal(memfds_made, 0);
	for (size_t i = 0; i < N_ACTIONS; i++)
		assert_false(d.actions[i].matched);
	duress_dir_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wrong_password_reads_nothing),
		cmocka_unit_test(right_password_reads_the_matches),
		cmocka_unit_test(judge_reads_nothing),
	};

	if (sodium_init() < 0)
		return 1;
	fx_fast_params(&params);
	duress_user_caps_default(&caps);
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
