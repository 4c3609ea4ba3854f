/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An action directory: open and judge it, list its actions, read their signatures. */
#include "actions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool duress_is_action_name(const char *name)
{
	static const char *const ignored_suffixes[] = {
		DURESS_SIG_SUFFIX, DURESS_LEGACY_SUFFIX, "~",          ".swp",      ".bak",
		".dpkg-old",       ".dpkg-new",          ".dpkg-dist", ".dpkg-tmp", ".rpmnew",
		".rpmsave",
	};
	size_t n = strlen(name);

	if (n == 0 || name[0] == '.' || (name[0] == '#' && n > 1 && name[n - 1] == '#'))
		return false;
	for (size_t i = 0; i < sizeof(ignored_suffixes) / sizeof(ignored_suffixes[0]); i++)
		if (has_suffix(name, ignored_suffixes[i]))
			return false;
	return true;
}

struct duress_trust duress_dir_trust(const struct duress_dir *dir, uint64_t max_size)
{
	return (struct duress_trust){
		.scope = dir->scope,
		.owner = dir->owner,
		.max_size = max_size,
		.as = dir->as,
	};
}

/*
 * Reads the action's signature file (its name and suffix) through the one
 * helper; a->skip says how it went, *open_error which open failed (ENOENT:
 * there is none).  0 or -errno.
 */
static int read_sig_file(const struct duress_dir *dir, struct duress_action *a, const char *suffix,
			 char *buf, size_t *len, int *open_error)
{
	struct duress_trust t = duress_dir_trust(dir, 0);
	char name[NAME_MAX + sizeof(DURESS_LEGACY_SUFFIX)];
	struct duress_file f;
	ssize_t n;
	int r;

	snprintf(name, sizeof(name), "%s%s", a->name, suffix);
	r = duress_open_file(dir->fd, name, DURESS_FILE_SIG, &t, true, &f);

	if (r < 0)
		return r;
	a->skip = f.skip;
	*open_error = f.error;
	if (f.fd < 0)
		return 0;
	a->sig_world_readable = (f.st.st_mode & S_IROTH) != 0;
	do
		n = read(f.fd, buf, DURESS_SIG_MAX + 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		a->skip = DURESS_SKIP_UNREADABLE;
	else if (n > DURESS_SIG_MAX)
		a->skip = DURESS_SKIP_SIG_MALFORMED;
	else
		*len = (size_t)n;
	duress_file_close(&f);
	return 0;
}

static enum duress_skip add_params(struct duress_dir *dir, const struct duress_params *p,
				   size_t *ret_index)
{
	int r = duress_params_check(p, dir->caps);

	if (r == -E2BIG)
		return DURESS_SKIP_SIG_COST;
	if (r < 0)
		return DURESS_SKIP_SIG_WEAK_COST;
	for (size_t i = 0; i < dir->n_params; i++) {
		if (duress_params_equal(&dir->params[i], p)) {
			*ret_index = i;
			return DURESS_SKIP_NONE;
		}
	}
	if (dir->n_params >= dir->caps->max_params)
		return DURESS_SKIP_TOO_MANY_PARAMS;
	dir->params[dir->n_params] = *p;
	*ret_index = dir->n_params++;
	return DURESS_SKIP_NONE;
}

/* NAME.sha256, when there is no NAME.sig. */
static int load_legacy_sig(struct duress_dir *dir, struct duress_action *a)
{
	char buf[DURESS_SIG_MAX + 1];
	size_t len = 0;
	int error = 0;
	int r = read_sig_file(dir, a, DURESS_LEGACY_SUFFIX, buf, &len, &error);

	if (r < 0 || error == ENOENT) {
		a->skip = DURESS_SKIP_NO_SIG;
		return r;
	}
	a->legacy = true;
	if (!dir->legacy_ok)
		a->skip = DURESS_SKIP_LEGACY_DISABLED;
	else if (a->skip == DURESS_SKIP_NONE && len != DURESS_HASH_LEN)
		a->skip = DURESS_SKIP_SIG_MALFORMED;
	else if (a->skip == DURESS_SKIP_NONE)
		memcpy(a->sig.content_hash, buf, DURESS_HASH_LEN);
	return 0;
}

static int load_sig(struct duress_dir *dir, struct duress_action *a)
{
	char buf[DURESS_SIG_MAX + 1];
	size_t len = 0;
	int error = 0;
	int r = read_sig_file(dir, a, DURESS_SIG_SUFFIX, buf, &len, &error);

	if (r < 0)
		return r;
	if (error == ENOENT)
		return load_legacy_sig(dir, a);
	if (a->skip != DURESS_SKIP_NONE)
		return 0;
	if (duress_sig_parse(buf, len, &a->sig) < 0)
		a->skip = DURESS_SKIP_SIG_MALFORMED;
	else
		a->skip = add_params(dir, &a->sig.params, &a->key_index);
	return 0;
}

/* Whether NAME.sig or NAME.sha256 exists, of whatever type: 1, 0 or -errno. */
static int has_signature(const struct duress_dir *dir, const char *name)
{
	static const char *const suffixes[] = { DURESS_SIG_SUFFIX, DURESS_LEGACY_SUFFIX };
	struct duress_trust t = duress_dir_trust(dir, 0);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char sig_name[NAME_MAX + sizeof(DURESS_LEGACY_SUFFIX)];
		struct duress_file f;
		int r;

		snprintf(sig_name, sizeof(sig_name), "%s%s", name, suffixes[i]);
		r = duress_open_file(dir->fd, sig_name, DURESS_FILE_SIG, &t, false, &f);
		if (r < 0 || f.error == 0)
			return r < 0 ? r : 1;
	}
	return 0;
}

/* Judges an entry without reading it (a check judges it again, verify.c); 0 or -errno. */
static int judge_entry(struct duress_dir *dir, struct duress_action *a)
{
	struct duress_trust t = duress_dir_trust(dir, dir->caps->max_file_size);
	struct duress_file f;
	int r = duress_open_file(dir->fd, a->name, DURESS_FILE_ACTION, &t, false, &f);

	if (r < 0)
		return r;
	a->skip = f.skip;
	if (f.error == 0)
		a->world_readable = (f.st.st_mode & S_IROTH) != 0;
	/* A plain data file (a companion, notes) is not an action at all. */
	if (a->skip == DURESS_SKIP_NOT_EXECUTABLE) {
		r = has_signature(dir, a->name);
		if (r == 0)
			a->skip = DURESS_SKIP_NOT_AN_ACTION;
		return r < 0 ? r : 0;
	}
	return a->skip == DURESS_SKIP_NONE ? load_sig(dir, a) : 0;
}

static int compare_actions(const void *x, const void *y)
{
	const struct duress_action *a = x, *b = y;

	return strcmp(a->name, b->name);
}

/* Room for one more action; the array grows with the directory, not with the cap. */
static struct duress_action *append_action(struct duress_dir *dir, size_t *capacity)
{
	if (dir->n_actions == *capacity) {
		size_t cap = *capacity ? *capacity * 2 : 16;
		struct duress_action *a = reallocarray(dir->actions, cap, sizeof(*a));

		if (!a)
			return NULL;
		dir->actions = a;
		*capacity = cap;
	}
	return &dir->actions[dir->n_actions++];
}

/* Collects the action names; the whole directory is refused past max_entries. */
static int list_actions(struct duress_dir *dir)
{
	struct dirent *de;
	uint64_t entries = 0;
	size_t capacity = 0;
	int r = 0;
	int fd = dup(dir->fd);
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		struct duress_action *a;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++entries > dir->caps->max_entries) {
			r = -E2BIG;
			break;
		}
		if (!duress_is_action_name(de->d_name))
			continue;
		a = append_action(dir, &capacity);
		if (!a) {
			r = -ENOMEM;
			break;
		}
		*a = (struct duress_action){ .memfd = -1 };
		snprintf(a->name, sizeof(a->name), "%s", de->d_name);
	}
	if (!de && errno)
		r = -errno;
	closedir(d);
	return r;
}

/* Why a directory that duress_open_file() did not open is refused, as duress_dir_load() says. */
static int dir_refused(const struct duress_file *f)
{
	if (f->error)
		return f->error == ELOOP ? -ENOTDIR : -f->error;
	if (f->skip == DURESS_SKIP_NOT_REGULAR)
		return -ENOTDIR;
	if (f->skip == DURESS_SKIP_PSEUDO_FS)
		return -EMEDIUMTYPE;
	return -EPERM;
}

/* Opens the directory and lists it, both with dir->as's rights; 0 or -errno. */
static int open_dir(struct duress_dir *dir)
{
	struct duress_trust t = duress_dir_trust(dir, 0);
	struct duress_file f;
	int r = duress_open_file(AT_FDCWD, dir->path, DURESS_FILE_DIR, &t, true, &f);

	if (r < 0)
		return r;
	if (f.fd < 0)
		return dir_refused(&f);
	dir->fd = f.fd;
	r = list_actions(dir);
	/* The descriptor is dir's now (duress_dir_free() closes it); the rights go back. */
	duress_file_release(&f);
	return r;
}

int duress_dir_load(struct duress_dir *dir, const char *path, enum duress_scope scope, uid_t owner,
		    const struct duress_caps *caps, bool legacy_ok,
		    const struct duress_identity *as)
{
	int r;

	*dir = (struct duress_dir){
		.path = path,
		.scope = scope,
		.owner = owner,
		.as = as,
		.fd = -1,
		.caps = caps,
		.legacy_ok = legacy_ok,
	};
	r = open_dir(dir);
	if (r < 0)
		goto fail;
	dir->params = calloc(caps->max_params, sizeof(*dir->params));
	if (!dir->params) {
		r = -ENOMEM;
		goto fail;
	}
	/* An empty directory has no array at all, and qsort() wants one. */
	if (dir->n_actions > 1)
		qsort(dir->actions, dir->n_actions, sizeof(*dir->actions), compare_actions);
	for (size_t i = 0; i < dir->n_actions && r == 0; i++)
		r = judge_entry(dir, &dir->actions[i]);
	if (r == 0)
		return 0;
fail:
	duress_dir_free(dir);
	return r;
}

const char *duress_dir_problem(int r, char *buf, size_t len)
{
	switch (r) {
	case -EPERM:
		return "bad owner, or writable by group or others";
	case -E2BIG:
		return "more entries than the module reads (max_entries=)";
	case -ENOTDIR:
		return "not a directory (or a symlink to one)";
	case -EMEDIUMTYPE:
		return "on a pseudo-filesystem (/proc, /sys...)";
	case -ETOOMANYREFS:
		return "signed with more than one salt or cost, and only one is allowed "
		       "(sign every boot action with the same passphrase settings)";
	default:
		/* GNU strerror_r: thread-safe, returns the text (maybe not in buf). */
		return strerror_r(-r, buf, len);
	}
}

void duress_dir_free(struct duress_dir *dir)
{
	/* Zeroed, or freed already: a path is set before anything is owned. */
	if (!duress_dir_loaded(dir))
		return;
	for (size_t i = 0; dir->actions && i < dir->n_actions; i++)
		if (dir->actions[i].memfd >= 0)
			close(dir->actions[i].memfd);
	free(dir->actions);
	free(dir->params);
	if (dir->fd >= 0)
		close(dir->fd);
	*dir = (struct duress_dir){ 0 };
}

/* The directory's path in a log line: escaped, and cut to a length syslog keeps. */
#define LOGGED_PATH_MAX 1024

/*
 * One line per directory for the entries it skips, whatever their number:
 * the user makes them, and may make many.  The details are for `debug`.
 * A user names the files: each name is escaped, or it could forge log lines.
 * A skip learnt only because the password matched (a matched action changed
 * since signing) is for `debug` alone: at the default level a match and a
 * wrong password log the same lines.
 */
void duress_dir_log_skips(const struct duress_dir *dir, const struct duress_log *lg)
{
	char path[LOGGED_PATH_MAX], name[DURESS_ESCAPED_SIZE(NAME_MAX)];
	const struct duress_action *first = NULL;
	size_t n = 0;

	duress_escape(dir->path, path, sizeof(path));
	for (size_t i = 0; i < dir->n_actions; i++) {
		const struct duress_action *a = &dir->actions[i];

		if (a->skip == DURESS_SKIP_NONE || a->skip == DURESS_SKIP_NOT_AN_ACTION)
			continue;
		duress_debug(lg, "%s/%s: %s, skipping", path,
			     duress_escape(a->name, name, sizeof(name)),
			     duress_skip_reason(a->skip));
		if (a->skip_on_match)
			continue;
		first = first ? first : a;
		n++;
	}
	if (n > 0)
		duress_log(lg, LOG_WARNING, "%s: %zu entr%s skipped, the first %s: %s", path, n,
			   n == 1 ? "y" : "ies", duress_escape(first->name, name, sizeof(name)),
			   duress_skip_reason(first->skip));
}

int duress_dir_load_judged(int r, const char *path, const struct duress_log *lg)
{
	char buf[128];

	if (r == -ENOENT)
		duress_debug(lg, "%s does not exist", path);
	if (r == 0 || r == -ENOENT)
		return 0;
	if (r == -ENOMEM || r == -ENOTRECOVERABLE)
		return r;
	duress_log(lg, LOG_WARNING, "%s: %s, skipping", path,
		   duress_dir_problem(r, buf, sizeof(buf)));
	return 0;
}
