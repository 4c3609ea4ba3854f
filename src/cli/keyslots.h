/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/*
 * duress check's line on the key slots of the disk that crypttab's keyscript
 * line unlocks (source: its second field, UUID=, PARTUUID=, LABEL= or a
 * path).  cryptsetup tries the slots in order, preferred ones first: a
 * duress passphrase in a later slot unlocks a whole key derivation later,
 * which a stopwatch sees (docs/boot.md, Timing).  Prints one line, prefixed
 * with prefix: OK when a slot is preferred, a WARN with the fix when there
 * are several and none is, a WARN when there is one (the duress passphrase
 * is then no key slot and unlocks nothing), or a WARN saying why it cannot
 * tell.  Reads the header with `cryptsetup luksDump`, without a shell and
 * with a timeout.  A source that names no device here is a WARN, or, for
 * keyscript_disk (the disk of a line that uses the keyscript, which the
 * initramfs must find), an ERROR with the fix.  Returns the ERRORs (0 or 1).
 */
int duress_keyslots_report(const char *prefix, const char *source, bool keyscript_disk);
