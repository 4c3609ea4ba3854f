/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What the directory, authentication and runner tests share: a temporary
 * directory, files in it, actions signed with the core's own functions,
 * and a count of open descriptors (a leak shows as a changed count).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "core/sig.h"

/*
 * One cmocka test per table row, named by the row (whose first member is
 * its name); fn, setup and teardown find the row in *state.
 */
void fx_row_tests(struct CMUnitTest *tests, const void *rows, size_t n, size_t row_size,
		  CMUnitTestFunction fn, CMFixtureFunction setup, CMFixtureFunction teardown);
#define FX_ROW_TESTS(tests, rows, fn, setup, teardown)                                            \
	fx_row_tests(tests, rows, sizeof(rows) / sizeof((rows)[0]), sizeof((rows)[0]), fn, setup, \
		     teardown)

/* Makes a fresh directory (mode 0755: other users must reach what is inside); its path in out. */
void fx_tmpdir(char *out, size_t size, const char *tag);
/* Removes path and everything below it, symlinks not followed. */
void fx_remove_tree(const char *path);

/* Writes a file at dir_fd/name with exactly mode, owned by uid and gid (-1: ours). */
void fx_write(int dir_fd, const char *name, const void *data, size_t len, mode_t mode, uid_t uid,
	      gid_t gid);
/* The same for a string. */
void fx_write_text(int dir_fd, const char *name, const char *text, mode_t mode);

/* Writes dir_fd/name+suffix (a signature beside its action) as fx_write() does. */
void fx_write_beside(int dir_fd, const char *name, const char *suffix, const void *data, size_t len,
		     mode_t mode, uid_t uid, gid_t gid);

/* The cheapest cost libsodium allows, with a fresh salt: signing and checking stay fast. */
void fx_fast_params(struct duress_params *p);

/*
 * Writes name.sig (mode 0644, owned by uid/gid, -1: ours) as `duress sign`
 * would for content and password, with params p.
 */
void fx_sign(int dir_fd, const char *name, const char *content, const char *password,
	     const struct duress_params *p, uid_t uid, gid_t gid);

/* The whole content of fd from offset 0, NUL-terminated, in buf; the length or -1. */
ssize_t fx_read_all(int fd, char *buf, size_t size);
