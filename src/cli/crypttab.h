/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Reading crypttab(5): /etc/crypttab, and the cryptroot/crypttab of an initramfs. */

#define DURESS_CRYPTTAB_MAX ((size_t)64 * 1024) /* bytes read of one */
#define DURESS_KEYSCRIPT_DISKS 8                /* crypttab lines using the keyscript, kept */
#define DURESS_CRYPTTAB_NAME 256                /* a target name's size, kept */

/*
 * The whole of a crypttab (name at dir_fd, AT_FDCWD: a path; open_flags as
 * duress_read_small_at()'s), at most DURESS_CRYPTTAB_MAX bytes, in memory
 * that ends with a NUL, to free().  NULL with *ret_len -errno (-EFBIG:
 * longer; -ENOMEM), else *ret_len is its length.
 */
char *duress_crypttab_read(int dir_fd, const char *name, int open_flags, ssize_t *ret_len);

/*
 * The next line of a crypttab read into memory (changed), split into its
 * first four fields (NULL where there are fewer); false after the last.
 * Empty lines are kept, so that the calls count the line numbers.
 */
bool duress_crypttab_next(char **rest, char *f[4]);

/*
 * Whether a crypttab options field (comma-separated; changed) has our
 * keyscript=, exactly as the initramfs-tools hook looks for it.
 */
bool duress_crypttab_uses_keyscript(char *options);

/* The target names (first field) of the crypttab lines that use the keyscript. */
struct duress_keyscript_disks {
	char name[DURESS_KEYSCRIPT_DISKS][DURESS_CRYPTTAB_NAME];
	size_t n;
};
