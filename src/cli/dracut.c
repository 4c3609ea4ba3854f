/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/dracut.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/write.h"

#define VAR "add_dracutmodules"
#define MODULE "pam-duress"
#define CONF_MAX (64U << 10) /* a config is a few lines: a bigger file is not read */

/*
 * Whether root may run the program at path: every component of its
 * resolved path is root's and writable by no one else (a directory that
 * others may write, /tmp, only with the sticky bit, which keeps them from
 * replacing root's entry in it).  Then out holds the resolved path, which
 * no other user can change before it is run.
 */
static bool safe_for_root(const char *path, char *out, size_t len)
{
	char *real = realpath(path, NULL), *slash;
	bool safe = real && strlen(real) < len;

	for (slash = real; safe && slash; slash = strchr(slash + 1, '/')) {
		struct stat st, parent;
		char c = slash[1];

		slash[1] = '\0';
		safe = lstat(real, &parent) == 0;
		slash[1] = c;
		if (!safe)
			break;
		/* The parent (and / itself) judged as a directory holding root's next entry. */
		safe = parent.st_uid == 0 &&
		       (!(parent.st_mode & 022) || (parent.st_mode & S_ISVTX));
		if (safe && !strchr(slash + 1, '/'))
			safe = lstat(real, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
			       !(st.st_mode & 022);
	}
	if (safe)
		snprintf(out, len, "%s", real);
	free(real);
	return safe;
}

bool duress_find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, found_at[PATH_MAX];
	bool found = false;

	copy = strdup(path && *path ? path : DURESS_DEFAULT_PATH);
	if (!copy)
		return false;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (d[0] != '/' ||
		    snprintf(found_at, sizeof(found_at), "%s/%s", d, name) >= (int)sizeof(found_at))
			continue;
		found = stat(found_at, &st) == 0 && S_ISREG(st.st_mode) &&
			access(found_at, X_OK) == 0;
		/* As root, a program another user could have put or changed there is not run. */
		if (found && geteuid() == 0)
			found = safe_for_root(found_at, out, len);
		else if (found)
			found = snprintf(out, len, "%s", found_at) < (int)len;
	}
	free(copy);
	return found;
}

const char *duress_child_path(void)
{
	const char *path = getenv("PATH");

	/* sudo may keep the caller's PATH: what a program run as root looks up is not theirs. */
	if (geteuid() == 0 || !path || !*path)
		return DURESS_DEFAULT_PATH;
	return path;
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

/* The line of the regular file dir/name adding MODULE, or 0 (also for a file over CONF_MAX). */
static unsigned file_adds_module(int dir_fd, const char *name)
{
	static char buf[CONF_MAX + 1];
	ssize_t len = duress_read_small_at(dir_fd, name, 0, buf, CONF_MAX, NULL);
	char *rest = buf, *l;
	unsigned no = 0;

	if (len < 0)
		return 0;
	buf[len] = '\0';
	while ((l = strsep(&rest, "\n"))) {
		no++;
		if (line_adds_module(l))
			return no;
	}
	return 0;
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
	n = dir_fd >= 0 ? scandirat(dir_fd, ".", &names, conf_file, alphasort) : -1;
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
