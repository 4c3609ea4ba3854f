/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int duress_write_all(int fd, const void *data, size_t len)
{
	const unsigned char *buf = data;

	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t duress_read_small_at(int dir_fd, const char *name, int open_flags, char *buf, size_t max,
			     struct stat *st)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | open_flags);
	struct stat own;
	size_t len = 0;

	if (fd < 0)
		return -errno;
	if (!st)
		st = &own;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (len <= max) {
		ssize_t n = read(fd, buf + len, max + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return len > max ? -EFBIG : (ssize_t)len;
}

/* ".NAME.RANDOM": hidden, so neither the module nor duress check takes it for an action. */
static int temp_name(const char *name, char *buf, size_t size)
{
	unsigned long long rnd;

	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	if (snprintf(buf, size, ".%.*s.%012llx", NAME_MAX - 16, name, rnd & 0xffffffffffffULL) >=
	    (int)size)
		return -ENAMETOOLONG;
	return 0;
}

int duress_write_file_at(int dir_fd, const char *name, const void *data, size_t len, mode_t mode,
			 uid_t uid, gid_t gid)
{
	char tmp[NAME_MAX + 1];
	int fd, r = temp_name(name, tmp, sizeof(tmp));

	if (r < 0)
		return r;
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0)
		r = -errno;
	/* A short write must not pass for the whole file. */
	if (r == 0)
		r = duress_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dir_fd, tmp, 0);
		return r;
	}
	(void)fsync(dir_fd);
	return 0;
}
