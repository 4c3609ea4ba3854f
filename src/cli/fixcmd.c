/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/fixcmd.h"

#include <limits.h>
#include <stdlib.h>

#include "core/escape.h"

/* The longest word: a sed script of two paths (leftover.c). */
#define WORD_MAX (3 * PATH_MAX)

void duress_fix_begin(struct duress_fix *fix)
{
	*fix = (struct duress_fix){ .ok = true };
	fix->f = open_memstream(&fix->text, &fix->len);
	fix->ok = fix->f != NULL;
}

void duress_fix_text(struct duress_fix *fix, const char *text)
{
	fix->ok = fix->ok && fputs(text, fix->f) >= 0;
}

void duress_fix_word(struct duress_fix *fix, const char *s)
{
	char *word = NULL;

	if (fix->ok)
		word = malloc(DURESS_SHELL_WORD_SIZE(WORD_MAX));
	fix->ok = word && duress_shell_word(s, word, DURESS_SHELL_WORD_SIZE(WORD_MAX)) &&
		  fprintf(fix->f, " %s", word) > 0;
	free(word);
}

void duress_fix_path(struct duress_fix *fix, const char *dir, const char *name, const char *suffix)
{
	char path[PATH_MAX];

	fix->ok = fix->ok && snprintf(path, sizeof(path), "%s%s%s%s", dir, name ? "/" : "",
				      name ? name : "", suffix) < (int)sizeof(path);
	duress_fix_word(fix, path);
}

void duress_fix_end(struct duress_fix *fix, const char *in_words)
{
	if (fix->f)
		fix->ok = fclose(fix->f) == 0 && fix->ok;
	puts(fix->ok ? fix->text : in_words);
	free(fix->text);
	fix->text = NULL;
}
