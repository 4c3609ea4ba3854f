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

#include "cli/fixcmd.h"
#include "core/actions.h"
#include "core/escape.h"
#include "core/identity.h"
#include "core/opts.h"

#define SHOWN_SIZE DURESS_ESCAPED_SIZE(PATH_MAX)

/* The per-user directories of the two placements (docs/debian.md, the profiles). */
static const char *const placements[] = { DURESS_USER_DIR_DEFAULT, DURESS_LAPTOP_USER_DIR };

/* Where an action goes. */
struct move {
	const struct passwd *pw;
	const char *tmpl;           /* the user_dir= it goes to */
	const char *old;            /* the directory it is in, as the template names it */
	const char *target;         /* in_use[0]'s directory */
	char real_old[PATH_MAX];    /* the directory it is in, resolved: as a signature names it */
	char old_shown[SHOWN_SIZE]; /* old and target escaped, for the words of the line */
	char target_shown[SHOWN_SIZE];
};

/* Appends s to out[used..], a backslash before each byte of specials; size when it does not fit. */
static size_t put_for_sed(char *out, size_t used, size_t size, const char *s, const char *specials)
{
	for (; *s && used < size; s++) {
		if (used + 3 > size)
			return size;
		if (strchr(specials, *s))
			out[used++] = '\\';
		out[used++] = *s;
	}
	if (used < size)
		out[used] = '\0';
	return used;
}

/* " 's|OLD/|NEW/|g'": OLD as a basic regular expression, NEW as sed's replacement. */
static void put_sed_script(struct duress_fix *fix, const char *old, const char *new)
{
	char script[3 * PATH_MAX];
	size_t used = put_for_sed(script, 0, sizeof(script), "s|", "");

	used = put_for_sed(script, used, sizeof(script), old, "\\.[]*^$|");
	used = put_for_sed(script, used, sizeof(script), "/|", "");
	used = put_for_sed(script, used, sizeof(script), new, "\\&|");
	used = put_for_sed(script, used, sizeof(script), "/|g", "");
	fix->ok = fix->ok && used < sizeof(script);
	duress_fix_word(fix, script);
}

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
static void put_make_target(struct duress_fix *fix, const struct move *m)
{
	char parent[PATH_MAX];
	struct stat st;
	char *slash;

	if (lstat(m->target, &st) == 0)
		return;
	snprintf(parent, sizeof(parent), "%s", m->target);
	slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = '\0';
	/* Under a parent of the user's (the home), the user makes it; under root's, root. */
	if (stat(parent, &st) == 0 && st.st_uid == m->pw->pw_uid) {
		duress_fix_text(fix, "install -d -m 700");
	} else {
		duress_fix_text(fix, "sudo install -d -o");
		duress_fix_word(fix, m->pw->pw_name);
		duress_fix_text(fix, " -m 700");
	}
	duress_fix_path(fix, m->target, NULL, "");
	duress_fix_text(fix, " && ");
}

/* mv of the action, its signature and the companions beside it, into the target. */
static bool put_mv(struct duress_fix *fix, const struct move *m, const struct duress_dir *dir,
		   const struct duress_action *a)
{
	bool along = false;

	duress_fix_text(fix, "mv");
	duress_fix_path(fix, m->old, a->name, "");
	if (entry_exists(dir, a->name, ".sig"))
		duress_fix_path(fix, m->old, a->name, ".sig");
	if (entry_exists(dir, a->name, ".sha256"))
		duress_fix_path(fix, m->old, a->name, ".sha256");
	for (const char *p = duress_sig_next_also(&a->sig, NULL); p;
	     p = duress_sig_next_also(&a->sig, p))
		if (moves_along(m, p)) {
			duress_fix_path(fix, p, NULL, "");
			along = true;
		}
	duress_fix_path(fix, m->target, NULL, "/");
	return along;
}

/* The action then names its companion's new place, and is signed again bound to it. */
static void put_rebind(struct duress_fix *fix, const struct move *m, const struct duress_action *a)
{
	duress_fix_text(fix, " && sed -i");
	put_sed_script(fix, m->old, m->target);
	duress_fix_path(fix, m->target, a->name, "");
	duress_fix_text(fix, " && duress sign");
	for (const char *p = duress_sig_next_also(&a->sig, NULL); p;
	     p = duress_sig_next_also(&a->sig, p)) {
		duress_fix_text(fix, " --also");
		if (moves_along(m, p))
			duress_fix_path(fix, m->target, strrchr(p, '/') + 1, "");
		else
			duress_fix_path(fix, p, NULL, "");
	}
	duress_fix_path(fix, m->target, a->name, "");
}

/* The fix as a command, or in words when a path in it cannot be pasted as typed. */
static void print_fix(const struct move *m, const struct duress_dir *dir,
		      const struct duress_action *a)
{
	char in_words[SHOWN_SIZE + 128];
	struct duress_fix fix;

	snprintf(in_words, sizeof(in_words),
		 "move it, its .sig and the companions beside it to %s, then sign it again there",
		 m->target_shown);
	duress_fix_begin(&fix);
	put_make_target(&fix, m);
	if (put_mv(&fix, m, dir, a))
		put_rebind(&fix, m, a);
	duress_fix_end(&fix, in_words);
}

static void print_move(const struct move *m, const struct duress_dir *dir,
		       const struct duress_action *a)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)], tmpl[SHOWN_SIZE];
	char user[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)];

	duress_escape(a->name, name, sizeof(name));
	printf("%s/%s: SKIPPED: not in the per-user directory the module reads (user_dir=%s: %s); "
	       "fix: ",
	       m->old_shown, name, duress_escape(m->tmpl, tmpl, sizeof(tmpl)), m->target_shown);
	if (geteuid() != m->pw->pw_uid)
		printf("as %s: ", duress_escape(m->pw->pw_name, user, sizeof(user)));
	if (in_target(m->target, a->name))
		printf("%s/%s is there too: keep one of them, remove the other\n", m->target_shown,
		       name);
	else
		print_fix(m, dir, a);
}

/* The lines for the actions of the directory old; how many. */
static int report_dir(struct move *m)
{
	struct duress_identity as = { 0 };
	struct duress_caps caps;
	struct duress_dir dir;
	int n = 0;

	duress_user_caps_default(&caps);
	/* Read with the user's rights, as their own directory always is. */
	if (duress_identity_init(&as, m->pw, NULL) < 0)
		return 0;
	if (duress_dir_load(&dir, m->old, DURESS_SCOPE_USER, m->pw->pw_uid, &caps, true, &as) ==
	    0) {
		/* Signatures name companions by resolved path (duress sign's realpath()). */
		if (!realpath(m->old, m->real_old))
			snprintf(m->real_old, sizeof(m->real_old), "%s", m->old);
		for (size_t i = 0; i < dir.n_actions; i++)
			if (dir.actions[i].skip != DURESS_SKIP_NOT_AN_ACTION) {
				print_move(m, &dir, &dir.actions[i]);
				n++;
			}
		duress_dir_free(&dir);
	}
	duress_identity_free(&as);
	return n;
}

int duress_check_left_behind(const struct passwd *pw, const char *const *in_use, size_t n_in_use)
{
	char target[PATH_MAX], old[PATH_MAX];
	struct move m = { .pw = pw, .target = target, .old = old };
	int n = 0;

	if (n_in_use == 0 ||
	    duress_expand_user_dir(in_use[0], pw->pw_name, pw->pw_dir, target, sizeof(target)) < 0)
		return 0;
	m.tmpl = in_use[0];
	duress_escape(target, m.target_shown, sizeof(m.target_shown));
	for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++) {
		struct stat st;

		if (duress_expand_user_dir(placements[i], pw->pw_name, pw->pw_dir, old,
					   sizeof(old)) < 0 ||
		    stat(old, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    read_by_module(&st, pw, in_use, n_in_use))
			continue;
		duress_escape(old, m.old_shown, sizeof(m.old_shown));
		n += report_dir(&m);
	}
	return n;
}
