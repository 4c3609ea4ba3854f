/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tests/lib/fds.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

size_t count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	size_t n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}
