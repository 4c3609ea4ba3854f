/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/leftover.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/actions.h"
#include "core/escape.h"
#include "core/identity.h"
#include "core/opts.h"

#define SHOWN_SIZE DURESS_ESCAPED_SIZE(PATH_MAX)

/* The per-user directories of the two placements (docs/debian.md, the profiles). */
static const char *const placements[] = { DURESS_USER_DIR_DEFAULT, DURESS_LAPTOP_USER_DIR };

/* Where an action goes, and what is said of it: all escaped. */
struct move {
	const struct passwd *pw;
	const char *tmpl;        /* the user_dir= it goes to */
	char old[SHOWN_SIZE];    /* the directory it is in, as the template names it */
	char target[SHOWN_SIZE]; /* in_use[0]'s directory */
	char real_old[PATH_MAX]; /* the directory it is in, resolved: as a signature names it */
};

static bool same_file(const struct stat *a, const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == a->st_dev && st.st_ino == a->st_ino;
}

/* Whether a module line reads the directory path (which exists). */
static bool read_by_module(const struct stat *dir, const struct passwd *pw,
			   const char *const *in_use, size_t n)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < n; i++)
		if (duress_expand_user_dir(in_use[i], pw->pw_name, pw->pw_dir, path,
					   sizeof(path)) == 0 &&
		    same_file(dir, path))
			return true;
	return false;
}

/* Whether the companion path lies in the directory the action leaves. */
static bool moves_along(const struct move *m, const char *companion)
{
	const char *slash = strrchr(companion, '/');

	return slash && (size_t)(slash - companion) == strlen(m->real_old) &&
	       strncmp(companion, m->real_old, strlen(m->real_old)) == 0;
}

static bool entry_exists(const struct duress_dir *dir, const char *name, const char *suffix)
{
	char path[NAME_MAX + 16];
	struct stat st;

	return snprintf(path, sizeof(path), "%s%s", name, suffix) < (int)sizeof(path) &&
	       fstatat(dir->fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Whether the target directory holds an entry of that name already: mv would replace it. */
static bool in_target(const char *target, const char *name)
{
	char there[PATH_MAX];
	struct stat st;

	return snprintf(there, sizeof(there), "%s/%s", target, name) < (int)sizeof(there) &&
	       lstat(there, &st) == 0;
}

/* "[sudo ]install -d ... TARGET && " when the directory must be made first. */
static void print_make_target(const struct move *m, const char *target)
{
	char parent[PATH_MAX], user[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)];
	struct stat st;
	char *slash;

	if (lstat(target, &st) == 0)
		return;
	snprintf(parent, sizeof(parent), "%s", target);
	slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = '\0';
	/* Under a parent of the user's (the home), the user makes it; under root's, root. */
	if (stat(parent, &st) == 0 && st.st_uid == m->pw->pw_uid)
		printf("install -d -m 700 %s && ", m->target);
	else
		printf("sudo install -d -o %s -m 700 %s && ",
		       duress_escape(m->pw->pw_name, user, sizeof(user)), m->target);
}

/* mv of the action, its signature and the companions beside it, into the target. */
static bool print_mv(const struct move *m, const struct duress_dir *dir,
		     const struct duress_action *a, const char *name)
{
	char shown[SHOWN_SIZE];
	bool along = false;

	printf("mv %s/%s", m->old, name);
	if (entry_exists(dir, a->name, ".sig"))
		printf(" %s/%s.sig", m->old, name);
	if (entry_exists(dir, a->name, ".sha256"))
		printf(" %s/%s.sha256", m->old, name);
	for (const char *p = duress_sig_next_also(&a->sig, NULL); p;
	     p = duress_sig_next_also(&a->sig, p))
		if (moves_along(m, p)) {
			printf(" %s", duress_escape(p, shown, sizeof(shown)));
			along = true;
		}
	printf(" %s/", m->target);
	return along;
}

/* The action then names its companion's new place, and is signed again bound to it. */
static void print_rebind(const struct move *m, const struct duress_action *a, const char *name)
{
	char shown[SHOWN_SIZE];

	printf(" && sed -i 's|%s/|%s/|g' %s/%s && duress sign", m->old, m->target, m->target, name);
	for (const char *p = duress_sig_next_also(&a->sig, NULL); p;
	     p = duress_sig_next_also(&a->sig, p))
		if (moves_along(m, p))
			printf(" --also %s/%s", m->target,
			       duress_escape(strrchr(p, '/') + 1, shown, sizeof(shown)));
		else
			printf(" --also %s", duress_escape(p, shown, sizeof(shown)));
	printf(" %s/%s", m->target, name);
}

static void print_move(const struct move *m, const struct duress_dir *dir,
		       const struct duress_action *a, const char *target)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)], tmpl[SHOWN_SIZE];
	char user[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)];

	duress_escape(a->name, name, sizeof(name));
	printf("%s/%s: SKIPPED: not in the per-user directory the module reads (user_dir=%s: %s); "
	       "fix: ",
	       m->old, name, duress_escape(m->tmpl, tmpl, sizeof(tmpl)), m->target);
	if (geteuid() != m->pw->pw_uid)
		printf("as %s: ", duress_escape(m->pw->pw_name, user, sizeof(user)));
	if (in_target(target, a->name)) {
		printf("%s/%s is there too: keep one of them, remove the other\n", m->target, name);
		return;
	}
	print_make_target(m, target);
	if (print_mv(m, dir, a, name))
		print_rebind(m, a, name);
	putchar('\n');
}

/* The lines for the actions of the directory old; how many. */
static int report_dir(struct move *m, const char *old, const char *target)
{
	struct duress_identity as = { 0 };
	struct duress_caps caps;
	struct duress_dir dir;
	int n = 0;

	duress_user_caps_default(&caps);
	/* Read with the user's rights, as their own directory always is. */
	if (duress_identity_init(&as, m->pw, NULL) < 0)
		return 0;
	if (duress_dir_load(&dir, old, DURESS_SCOPE_USER, m->pw->pw_uid, &caps, true, &as) == 0) {
		/* Signatures name companions by resolved path (duress sign's realpath()). */
		if (!realpath(old, m->real_old))
			snprintf(m->real_old, sizeof(m->real_old), "%s", old);
		for (size_t i = 0; i < dir.n_actions; i++)
			if (dir.actions[i].skip != DURESS_SKIP_NOT_AN_ACTION) {
				print_move(m, &dir, &dir.actions[i], target);
				n++;
			}
		duress_dir_free(&dir);
	}
	duress_identity_free(&as);
	return n;
}

int duress_check_left_behind(const struct passwd *pw, const char *const *in_use, size_t n_in_use)
{
	struct move m = { .pw = pw };
	char target[PATH_MAX], old[PATH_MAX];
	int n = 0;

	if (n_in_use == 0 ||
	    duress_expand_user_dir(in_use[0], pw->pw_name, pw->pw_dir, target, sizeof(target)) < 0)
		return 0;
	m.tmpl = in_use[0];
	duress_escape(target, m.target, sizeof(m.target));
	for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++) {
		struct stat st;

		if (duress_expand_user_dir(placements[i], pw->pw_name, pw->pw_dir, old,
					   sizeof(old)) < 0 ||
		    stat(old, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    read_by_module(&st, pw, in_use, n_in_use))
			continue;
		duress_escape(old, m.old, sizeof(m.old));
		n += report_dir(&m, old, target);
	}
	return n;
}
