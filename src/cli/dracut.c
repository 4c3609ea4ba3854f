/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/dracut.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VAR "add_dracutmodules"
#define MODULE "pam-duress"
#define LINE_MAX_READ 4096 /* longer lines are no assignment of ours */
#define LINES_MAX 4096     /* a config is a few lines: a bigger file is not read further */

bool duress_find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;
	bool found = false;

	copy = strdup(path && *path ? path : DURESS_DEFAULT_PATH);
	if (!copy)
		return false;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (d[0] != '/' || snprintf(out, len, "%s/%s", d, name) >= (int)len)
			continue;
		found = stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
	}
	free(copy);
	return found;
}

/* Whether the shell word list value (after the =) has the word MODULE. */
static bool value_has_module(char *v)
{
	char quote = *v == '"' || *v == '\'' ? *v : '\0';
	char *end, *save = NULL;

	if (quote) {
		v++;
		end = strchr(v, quote);
		if (!end)
			return false;
	} else {
		/* Unquoted, the value ends at a blank (then a comment, or a command). */
		end = v + strcspn(v, " \t\n#;");
	}
	*end = '\0';
	for (char *w = strtok_r(v, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
		if (strcmp(w, MODULE) == 0)
			return true;
	return false;
}

/* Whether a config line assigns add_dracutmodules a value with MODULE. */
static bool line_adds_module(char *l)
{
	l += strspn(l, " \t");
	if (strncmp(l, VAR, strlen(VAR)) != 0)
		return false;
	l += strlen(VAR);
	if (*l == '+')
		l++;
	return *l == '=' && value_has_module(l + 1);
}

/* The line of the regular file dir/name adding MODULE, or 0. */
static unsigned file_adds_module(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char buf[LINE_MAX_READ];
	unsigned no = 0, found = 0;
	struct stat st;
	FILE *f;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	while (!found && no < LINES_MAX && fgets(buf, sizeof(buf), f)) {
		bool whole = strchr(buf, '\n') || feof(f);

		no++;
		if (whole && line_adds_module(buf))
			found = no;
		/* The rest of an overlong line is skipped, not read as lines of its own. */
		while (!whole && fgets(buf, sizeof(buf), f))
			whole = strchr(buf, '\n') != NULL;
	}
	fclose(f);
	return found;
}

static int conf_file(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 5 && strcmp(de->d_name + len - 5, ".conf") == 0;
}

void duress_dracut_find(const char *dir, struct duress_dracut *d)
{
	struct dirent **names = NULL;
	char prog[PATH_MAX];
	int dir_fd, n;

	*d = (struct duress_dracut){ .dir = dir ? dir : DURESS_DRACUT_CONF_DIR };
	dir_fd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = dir_fd >= 0 ? scandir(d->dir, &names, conf_file, alphasort) : -1;
	for (int i = 0; i < n; i++) {
		if (!d->on && (d->line = file_adds_module(dir_fd, names[i]->d_name)) > 0) {
			d->on = true;
			snprintf(d->file, sizeof(d->file), "%s/%s", d->dir, names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	if (dir_fd >= 0)
		close(dir_fd);
	d->builder = d->on || (duress_find_program("dracut", prog, sizeof(prog)) &&
			       !duress_find_program("update-initramfs", prog, sizeof(prog)));
}

const char *duress_dracut_rebuild(const struct duress_dracut *d)
{
	return d->builder ? "sudo dracut -f" : "sudo update-initramfs -u";
}
