/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * Writes all of data, through short writes and EINTR.  Returns 0, or -errno
 * (-EIO for a write that wrote nothing).  Depends on libc alone: the runner
 * links it too.
 */
int duress_write_all(int fd, const void *data, size_t len);
