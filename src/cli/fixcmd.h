/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/*
 * A fix printed as a command the user pastes.  Paths in it come from
 * directories and names others may have chosen: each is written as one shell
 * word (duress_shell_word), into a memory stream that is printed only when
 * every word could be made.  A path no shell can be given as it shows (a
 * control byte, a bidi override) makes the fix be said in words instead.
 */
struct duress_fix {
	FILE *f;
	char *text;
	size_t len;
	bool ok;
};

void duress_fix_begin(struct duress_fix *fix);
/* Literal text, as it is: the command's own words and operators. */
void duress_fix_text(struct duress_fix *fix, const char *text);
/* " WORD": s as one shell word. */
void duress_fix_word(struct duress_fix *fix, const char *s);
/* " WORD": the path DIR/NAME (DIR alone when name is NULL) followed by suffix, one shell word. */
void duress_fix_path(struct duress_fix *fix, const char *dir, const char *name, const char *suffix);
/* Prints the command and a newline, or in_words and a newline when a word failed; frees. */
void duress_fix_end(struct duress_fix *fix, const char *in_words);
