/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "cli/crypttab.h"
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
 * saying why it cannot tell.  With initramfs-tools, a line per disk of
 * disks (the crypttab lines that use the keyscript): whether the
 * initramfs's cryptroot/crypttab (cryptsetup-initramfs's) unlocks it through
 * the keyscript, and the keyscript is in it (OK, or an ERROR with the fix).
 * Then a WARN when every user can read the initramfs, with the fix its
 * UMASK calls for.  Fixes name d's rebuild command.  Returns the ERRORs (0
 * when OK or it cannot tell).
 */
int duress_initramfs_report(const char *boot_dir, const char *initramfs,
			    const struct duress_dracut *d,
			    const struct duress_keyscript_disks *disks);
