/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

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
