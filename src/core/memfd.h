/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sig.h"

#define DURESS_READ_CHUNK ((size_t)64 * 1024)

/*
 * A memfd to hold the verified copy of an action, sealable, executable, and
 * above descriptors 0-2.  Returns the descriptor or -errno.
 */
int duress_memfd_new(void);

/*
 * Reads fd to its end into a SHA-256 and, if memfd >= 0, into memfd, which
 * is then sealed.  buf holds DURESS_READ_CHUNK bytes.  Returns 0; -EFBIG past
 * max bytes; -EIO if fd cannot be read; another -errno if memfd fails.
 * *ret_len is the number of bytes read.
 */
int duress_stream_content(int fd, uint64_t max, int memfd, unsigned char *buf,
			  unsigned char hash[DURESS_HASH_LEN], bool *elf, uint64_t *ret_len);
