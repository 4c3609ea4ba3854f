/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/actions.h"

/*
 * What an action says it needs installed, on lines of its opening comment
 * block (the lines from the first that all start with "#"):
 *
 *   # Requires: PROGRAM[:PACKAGE][|PROGRAM[:PACKAGE]]... [if KEY[=WORD[,WORD]...]]
 *
 * One need a line, met when any of its programs is installed: a name found
 * in the PATH the action gets (duress_action_path(): root's for a global
 * action, a user's for theirs; and /usr/sbin, /sbin, which the examples add
 * to theirs), not the caller's; or an absolute path; an executable regular
 * file.  PACKAGE is the Debian package
 * that has the program (default: its own name), for the fix.  With "if
 * KEY", the need counts only when the action's config (the file its
 * CONFIG= line names) has a KEY= line with a value, one of the WORDs among
 * its words when they are given (split at commas and blanks); a config that
 * cannot be read counts as meeting every condition.  A line that is not of
 * this form is ignored.  docs/actions.md, "What an action needs".
 */

#define DURESS_MISSING_TEXT 512

struct duress_missing {
	unsigned n;                         /* needs not met */
	char programs[DURESS_MISSING_TEXT]; /* "curl or wget, ip" */
	char packages[DURESS_MISSING_TEXT]; /* "curl iproute2": each need's first program's */
};

/*
 * The needs of script (its first len bytes) not met on this system for an
 * action run as root (as_root) or as a user; config is the text of its
 * config (NULL: it cannot be read).
 */
void duress_requires_missing(const char *script, size_t len, const char *config, size_t config_len,
			     bool as_root, struct duress_missing *m);

/*
 * What to say of m (n > 0) after "WILL FAIL: ": "a program it needs is
 * missing: curl or wget; fix: sudo apt-get install curl" (without apt-get:
 * "fix: install curl or wget").  Returns buf.
 */
const char *duress_missing_say(const struct duress_missing *m, char *buf, size_t size);

/*
 * duress add's warning, on stderr before it asks for the password: the
 * example name (run as root: as_root) will not work, what it misses and
 * the fix (nothing when it misses nothing).  config: its config, as it
 * will be installed (NULL: none can be read).
 */
void duress_requires_warn(const char *name, bool as_root, const char *script, size_t len,
			  const char *config, size_t config_len);

/*
 * duress check's view of an armed action of dir: its head and the config
 * its CONFIG= line names, read with the directory's rights, as the module
 * opens them.  Fills *m (nothing missing when the action cannot be read).
 * Returns 0, or -1 on an internal error (no memory, or rights that cannot
 * be taken): fail closed.
 */
int duress_requires_of_action(const struct duress_dir *dir, const struct duress_action *a,
			      struct duress_missing *m);
