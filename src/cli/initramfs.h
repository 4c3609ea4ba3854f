/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "cli/dracut.h"

/*
 * duress check's freshness line for the disk-unlock prompt: whether the
 * initramfs holds, byte for byte, every file of the boot directory that the
 * initramfs-tools hook (or the dracut module) copies (its signatures and
 * executables, not hidden; under etc/duress-boot.d), no other file there,
 * and the unlock helper and the action runner (with dracut, the relay too)
 * this system has (at their own paths).  It unpacks initramfs (NULL: the
 * running kernel's /boot/initrd.img-RELEASE; with dracut on,
 * /boot/initramfs-RELEASE.img or else initrd.img-RELEASE) with
 * unmkinitramfs (with dracut on, lsinitrd --unpack), run from PATH without
 * a shell and with a timeout, into a private temporary directory it
 * removes.  Prints one line: OK, an ERROR naming what changed, or a WARN
 * saying why it cannot tell; then a WARN when every user can read the
 * initramfs.  Fixes name d's rebuild command.  Returns 0 (OK or cannot
 * tell) or 1 (ERROR).
 */
int duress_initramfs_report(const char *boot_dir, const char *initramfs,
			    const struct duress_dracut *d);
