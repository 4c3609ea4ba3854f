/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The files the initramfs needs of a boot directory (boot.h). */
#include "boot.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"

static int add_path(struct duress_boot_files *f, size_t max, const char *a, const char *b)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s%s", a, b) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (!f->paths || f->n >= max)
		return -E2BIG;
	for (size_t i = 0; i < f->n; i++)
		if (f->paths[i] && strcmp(f->paths[i], path) == 0)
			return 0;
	f->paths[f->n] = strdup(path);
	if (!f->paths[f->n])
		return -ENOMEM;
	f->n++;
	return 0;
}

/* An action's own path, its signature's and its companions'. */
static int add_action(struct duress_boot_files *f, size_t max, const struct duress_dir *dir,
		      const struct duress_action *a)
{
	char base[PATH_MAX];
	int r;

	if (snprintf(base, sizeof(base), "%s/%s", dir->path, a->name) >= (int)sizeof(base))
		return -ENAMETOOLONG;
	r = add_path(f, max, base, "");
	if (r == 0)
		r = add_path(f, max, base, DURESS_SIG_SUFFIX);
	for (const char *p = NULL; r == 0 && (p = duress_sig_next_also(&a->sig, p));)
		r = add_path(f, max, p, "");
	return r;
}

int duress_boot_dir_load(struct duress_dir *dir, const char *path, const struct duress_caps *caps,
			 bool one_set)
{
	int r = duress_dir_load(dir, path, DURESS_SCOPE_GLOBAL, 0, caps, false, NULL);

	if (r == 0 && one_set && dir->n_params > 1) {
		duress_dir_free(dir);
		r = -ETOOMANYREFS;
	}
	return r;
}

int duress_boot_files(const char *path, struct duress_boot_files *ret)
{
	struct duress_caps caps;
	struct duress_dir dir = { 0 };
	size_t max;
	int r;

	*ret = (struct duress_boot_files){ 0 };
	/* As unlock-helper loads it at the prompt. */
	duress_caps_default(&caps);
	r = duress_boot_dir_load(&dir, path, &caps, true);
	if (r == -ENOMEM || r == -ENOTRECOVERABLE)
		return r;
	if (r < 0) {
		ret->skipped = r;
		return 0;
	}
	/* Unchanged since signing, companions there and trusted: as the prompt will find them. */
	r = duress_dir_hash(&dir);
	max = dir.n_actions * (2 + DURESS_ALSO_MAX_FILES);
	ret->paths = max ? calloc(max, sizeof(*ret->paths)) : NULL;
	if (r == 0 && max && !ret->paths)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < dir.n_actions; i++)
		if (dir.actions[i].skip == DURESS_SKIP_NONE && !dir.actions[i].legacy)
			r = add_action(ret, max, &dir, &dir.actions[i]);
	duress_dir_free(&dir);
	if (r < 0)
		duress_boot_files_free(ret);
	return r;
}

void duress_boot_files_free(struct duress_boot_files *f)
{
	for (size_t i = 0; f->paths && i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	*f = (struct duress_boot_files){ 0 };
}
