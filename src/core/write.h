/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/*
 * Writes all of data, through short writes and EINTR.  Returns 0, or -errno
 * (-EIO for a write that wrote nothing).  Depends on libc alone: the runner
 * links it too.
 */
int duress_write_all(int fd, const void *data, size_t len);

struct stat;

/*
 * Reads the whole of dir_fd's entry name (AT_FDCWD: a path), a regular
 * file of at most max bytes, into buf (max + 1 bytes: one more, to tell a
 * longer file).  open_flags are added to O_RDONLY|O_CLOEXEC|O_NONBLOCK
 * (O_NOFOLLOW where a link must not be followed); *st, when not NULL, is its
 * fstat().  Returns its length, or -errno: -EINVAL not a regular file,
 * -EFBIG longer than max.
 */
ssize_t duress_read_small_at(int dir_fd, const char *name, int open_flags, char *buf, size_t max,
			     struct stat *st);

/*
 * Replaces dir_fd's entry name with a file holding data, atomically: a new
 * temporary file beside it (O_EXCL|O_NOFOLLOW, so nothing planted there is
 * followed), given mode and owner (uid/gid -1: unchanged), written, fsync'd,
 * then renamed over name (a symlink there is replaced, never followed) and
 * the directory fsync'd.  Returns 0 or -errno; the temporary file is
 * removed on failure.
 */
int duress_write_file_at(int dir_fd, const char *name, const void *data, size_t len, mode_t mode,
			 uid_t uid, gid_t gid);
