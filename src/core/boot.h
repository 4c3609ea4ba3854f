/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/*
 * Duress at the disk-unlock prompt (docs/boot.md).  Boot actions are signed
 * like global ones, in their own directory; the passphrase typed at the
 * initramfs prompt is checked against them with one derivation per try.
 */

/* Root's, 0700: its actions and signatures are copied into the initramfs. */
#ifndef DURESS_BOOT_DIR
#define DURESS_BOOT_DIR "/etc/duress-boot.d"
#endif

/*
 * An action whose name starts with this runs in the initramfs, before the
 * disk is unlocked (destroying key slots, say); any other runs once after
 * boot, from the record.
 */
#define DURESS_BOOT_BEFORE_PREFIX "initramfs-"

/*
 * Where the initramfs leaves, for the after-boot unit, the names and content
 * hashes of the matched after-boot actions (never the passphrase).  The
 * initramfs's /run becomes the booted system's.  Root's, 0700; the unit
 * consumes the record and removes the directory.
 */
#define DURESS_BOOT_RECORD_DIR "/run/unlock-helper"
#define DURESS_BOOT_RECORD DURESS_BOOT_RECORD_DIR "/record"

#include <stddef.h>

/*
 * The files the initramfs needs of a boot directory, as absolute paths:
 * each action the prompt would verify (signed, trusted, unchanged since
 * signing, its companions there and trusted, exactly as the core judges it
 * with the default caps), its signature, and each companion its signature
 * binds (also=), at the path the signature names, each path once.  The
 * initramfs-tools hook copies exactly these (unlock-helper --list-files),
 * and `duress check` compares exactly these with the initramfs.  A
 * directory the prompt would skip whole (missing, untrusted, more than one
 * salt and cost) needs nothing.  Bounded: at most DURESS_DEFAULT_MAX_ENTRIES
 * actions, each with its signature and at most DURESS_ALSO_MAX_FILES
 * companions.
 */
struct duress_boot_files {
	char **paths; /* n of them, each malloc'ed */
	size_t n;
	int skipped; /* 0, or why the whole directory needs nothing (-errno of duress_boot_dir_load()) */
};

/* 0 (see skipped), or -ENOMEM / -ENOTRECOVERABLE / -errno of an internal error. */
int duress_boot_files(const char *dir, struct duress_boot_files *ret);

/*
 * The boot directory loaded as unlock-helper takes it: as a global one
 * (root's, signed as global actions are, no legacy signature), with caps
 * (the global ones; dir keeps the pointer).  With one_set (the prompt, and what the initramfs needs for
 * it), one with more than one salt and cost set is freed and -ETOOMANYREFS:
 * the prompt derives one key per try, so it skips it whole.  After boot
 * nothing is derived (the record names actions by content hash): no such
 * rule.  Otherwise duress_dir_load()'s result.
 */
struct duress_dir;
struct duress_caps;
int duress_boot_dir_load(struct duress_dir *dir, const char *path, const struct duress_caps *caps,
			 bool one_set);
void duress_boot_files_free(struct duress_boot_files *f);
