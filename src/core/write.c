/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "write.h"

#include <errno.h>
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
