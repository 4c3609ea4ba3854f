/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sig.h"

#define DURESS_READ_CHUNK ((size_t)64 * 1024)

/*
 * The name of every memfd the module makes (actions, manifest).  The user
 * an action runs as reads it in /proc: the link of a script's descriptor 3,
 * an ELF action's exe, maps and (Linux 6.14 and later) comm "memfd:NAME".
 * Empty, so that it names nothing, the project least of all.
 */
#define DURESS_MEMFD_NAME ""

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
