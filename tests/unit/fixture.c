/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the directory, authentication and runner tests (fixture.h). */
#include "fixture.h"

#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

void fx_row_tests(struct CMUnitTest *tests, const void *rows, size_t n, size_t row_size,
		  CMUnitTestFunction fn, CMFixtureFunction setup, CMFixtureFunction teardown)
{
	for (size_t i = 0; i < n; i++) {
		const char *row = (const char *)rows + i * row_size;

		tests[i] = (struct CMUnitTest){ .name = *(const char *const *)(const void *)row,
						.test_func = fn,
						.setup_func = setup,
						.teardown_func = teardown,
						.initial_state = (void *)(uintptr_t)row };
	}
}

void fx_tmpdir(char *out, size_t size, const char *tag)
{
	const char *base = getenv("TMPDIR");

	snprintf(out, size, "%s/%s.XXXXXX", base && *base ? base : "/tmp", tag);
	assert_non_null(mkdtemp(out));
	assert_int_equal(chmod(out, 0755), 0);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

void fx_remove_tree(const char *path)
{
	if (path[0])
		(void)nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void fx_write(int dir_fd, const char *name, const void *data, size_t len, mode_t mode, uid_t uid,
	      gid_t gid)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchown(fd, uid, gid), 0);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

void fx_write_text(int dir_fd, const char *name, const char *text, mode_t mode)
{
	fx_write(dir_fd, name, text, strlen(text), mode, (uid_t)-1, (gid_t)-1);
}

void fx_write_beside(int dir_fd, const char *name, const char *suffix, const void *data, size_t len,
		     mode_t mode, uid_t uid, gid_t gid)
{
	char full[NAME_MAX + 1];
	int n = snprintf(full, sizeof(full), "%s%s", name, suffix);

	assert_true(n > 0 && (size_t)n < sizeof(full));
	fx_write(dir_fd, full, data, len, mode, uid, gid);
}

void fx_fast_params(struct duress_params *p)
{
	duress_params_new(p, crypto_pwhash_MEMLIMIT_MIN, crypto_pwhash_OPSLIMIT_MIN);
}

void fx_sign(int dir_fd, const char *name, const char *content, const char *password,
	     const struct duress_params *p, uid_t uid, gid_t gid)
{
	struct duress_sig s = { .params = *p };
	unsigned char key[DURESS_KEY_LEN];
	char line[DURESS_SIG_MAX + 1];
	int n;

	crypto_hash_sha256(s.content_hash, (const unsigned char *)content, strlen(content));
	assert_int_equal(duress_derive_key(password, strlen(password), p, key), 0);
	duress_tag(key, &s, s.content_hash, s.tag);
	sodium_memzero(key, sizeof(key));
	n = duress_sig_format(&s, line, sizeof(line));
	assert_true(n > 0);
	fx_write_beside(dir_fd, name, DURESS_SIG_SUFFIX, line, (size_t)n, 0644, uid, gid);
}

ssize_t fx_read_all(int fd, char *buf, size_t size)
{
	size_t done = 0;
	ssize_t n;

	while (done + 1 < size && (n = pread(fd, buf + done, size - 1 - done, (off_t)done)) > 0)
		done += (size_t)n;
	buf[done] = '\0';
	return (ssize_t)done;
}
