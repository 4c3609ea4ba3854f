/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stddef.h>

/* The per-user directory of the Debian package's duress-laptop profile. */
#define DURESS_LAPTOP_USER_DIR "/var/lib/duress/%u"

/*
 * Actions left in the per-user directory of the other placement: the
 * default ~/.duress (profiles duress, duress-before) when the module lines
 * read another one, /var/lib/duress/USER (duress-laptop) when they read
 * another.  Switching profiles leaves them where the module never looks,
 * and nothing else says so.  Prints, for each action of pw's directory
 * that no template of in_use (the user_dir= of the module lines, none
 * empty) names, one SKIPPED line whose fix moves it into in_use[0]'s
 * directory: mv, and for a companion file that moves with it, the sed that
 * points the action at its new place and the duress sign that binds it
 * there.  Returns the number of lines.
 */
int duress_check_left_behind(const struct passwd *pw, const char *const *in_use, size_t n_in_use);
