/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "core/actions.h"

/*
 * What duress check can see of the tells docs/tells.md lists: a WARN line
 * each, ending in "; fix: ...".  A warning does not change the exit status.
 */

enum duress_machine {
	DURESS_MACHINE_AUTO, /* a laptop if /sys says so */
	DURESS_MACHINE_LAPTOP,
	DURESS_MACHINE_SERVER,
};

/* --machine laptop|server|auto; -1 if s is none of them. */
int duress_machine_parse(const char *s, enum duress_machine *ret);

/*
 * Whether the machine may be taken along, and its logs read or its logins
 * timed: a portable DMI chassis type, or a system battery.
 */
bool duress_machine_is_laptop(enum duress_machine m);

/* Whether path lies inside home (a home of "/" holds nothing: system accounts). */
bool duress_in_home(const char *path, const char *home);

/* The per-user directory path (shown: escaped) inside user's home: one WARN. */
void duress_tell_home_dir(const char *shown, const char *user);

/*
 * The module line at (escaped "FILE:LINE (pam_duress.so)") is after
 * pam_unix on a laptop: one WARN; debian_profile: the fix is pam-auth-update.
 */
void duress_tell_after_placement(const char *at, bool debian_profile);

/*
 * Whether the signature of a (read: not legacy, not malformed) binds path,
 * a companion file (--also).
 */
bool duress_binds(const struct duress_action *a, const char *path);

/*
 * A loaded directory's tells: "duress" in the name of one of its files; and
 * for each companion file its signatures bind, read with the directory's
 * rights, "duress" in its name or text, or its place inside the owner's home
 * (home: NULL for the global directory).  shown is the directory's escaped
 * path.  Returns -1 if the rights to read a file with cannot be taken.
 */
int duress_tells_dir(const char *shown, const struct duress_dir *dir, const char *home,
		     const char *user);
