/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/crypttab.h"

#include <string.h>

#include "core/boot.h"

bool duress_crypttab_next(char **rest, char *f[4])
{
	char *fsave = NULL, *l = strsep(rest, "\n");

	if (!l)
		return false;
	for (int i = 0; i < 4; i++)
		f[i] = strtok_r(i ? NULL : l, " \t", &fsave);
	return true;
}

bool duress_crypttab_uses_keyscript(char *options)
{
	char *save = NULL;

	for (char *o = strtok_r(options, ",", &save); o; o = strtok_r(NULL, ",", &save))
		if (strcmp(o, "keyscript=" DURESS_KEYSCRIPT_PATH) == 0)
			return true;
	return false;
}
