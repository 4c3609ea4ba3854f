/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/crypttab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/boot.h"
#include "core/write.h"

char *duress_crypttab_read(int dir_fd, const char *name, int open_flags, ssize_t *ret_len)
{
	char *buf = malloc(DURESS_CRYPTTAB_MAX + 1);

	*ret_len = buf ? duress_read_small_at(dir_fd, name, open_flags, buf, DURESS_CRYPTTAB_MAX,
					      NULL) :
			 -ENOMEM;
	if (*ret_len < 0) {
		free(buf);
		return NULL;
	}
	buf[*ret_len] = '\0';
	return buf;
}

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
