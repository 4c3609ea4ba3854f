/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The disk-unlock prompt's checks, record and after-boot run (unlock.h). */
#include "boot/unlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/account.h"
#include "core/actions.h"
#include "core/boot.h"
#include "core/escape.h"
#include "core/kdf.h"
#include "core/runner.h"
#include "core/write.h"

/* Whether the action runs in the initramfs, before the disk is unlocked. */
static bool before_unlock(const char *name)
{
	return strncmp(name, DURESS_BOOT_BEFORE_PREFIX, strlen(DURESS_BOOT_BEFORE_PREFIX)) == 0;
}

/*
 * Loads the boot directory (duress_boot_dir_load()).  A directory that is
 * missing, not to be trusted or (one_set) signed with several costs is no
 * error: it is skipped and logged, and the unlock goes on as usual.  0, or
 * -ENOMEM / -ENOTRECOVERABLE.
 */
static int load_boot_dir(struct duress_dir *dir, const char *path, const struct duress_caps *caps,
			 bool one_set, const struct duress_log *lg)
{
	return duress_dir_load_judged(duress_boot_dir_load(dir, path, caps, one_set), path, lg);
}

/*
 * root as the actions see it: its passwd entry, or, in an initramfs that
 * has no passwd file (initramfs-tools copies none), the usual one.
 */
static int root_target(struct duress_target *t, struct duress_account **acct)
{
	static char name[] = "root", x[] = "x", dir[] = "/root", shell[] = "/bin/sh";
	const struct passwd fallback = {
		.pw_name = name,
		.pw_passwd = x,
		.pw_uid = 0,
		.pw_gid = 0,
		.pw_gecos = name,
		.pw_dir = dir,
		.pw_shell = shell,
	};
	const struct duress_pam_items items = { .user = "root", .service = UNLOCK_SERVICE };
	*acct = NULL;
	if (duress_getpw(NULL, 0, acct) == 0 && *acct)
		return duress_target_init(t, &(*acct)->pw, &items, false);
	return duress_target_init(t, &fallback, &items, false);
}

/* Runs jobs as root through the runner, waiting up to wait_seconds (0: detached). */
static int run_as_root(const struct unlock_paths *p, const struct duress_job *jobs, size_t n,
		       unsigned wait_seconds, const struct duress_log *lg)
{
	struct duress_target t = { 0 };
	struct duress_account *acct = NULL;
	struct duress_chain chain = { .target = &t, .jobs = jobs, .n_jobs = n };
	int r;

	if (n == 0)
		return 0;
	r = root_target(&t, &acct);
	if (r < 0) {
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot prepare the actions' environment: %m");
	} else {
		/* Busybox's sh in the initramfs needs its own name in argv[0]. */
		const struct duress_spawn_io io = { .output_fd = -1,
						    .report_fd = -1,
						    .interp_argv0 = true };

		r = duress_spawn(p->runner, &chain, 1, wait_seconds, &io, lg);
	}
	duress_target_free(&t);
	free(acct);
	return r;
}

/*
 * The record's directory, made root's 0700 or found so (not a link: opened
 * with O_NOFOLLOW, then judged and fixed through the descriptor).  Returns
 * the open directory, or -errno.
 */
static int open_record_dir(const char *path)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_uid != 0 || fchmod(fd, 0700) < 0) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

static void to_hex(const unsigned char hash[DURESS_HASH_LEN], char hex[UNLOCK_HASH_HEX + 1])
{
	sodium_bin2hex(hex, UNLOCK_HASH_HEX + 1, hash, DURESS_HASH_LEN);
}

struct record_entry {
	unsigned char hash[DURESS_HASH_LEN];
	const char *name; /* into the record's buffer */
};

/*
 * Parses "HEX NAME\0" entries; every one must be well formed, or none is
 * used.  Returns the number of entries (in *ret, free it) or -EBADMSG.
 */
static int parse_record(char *buf, size_t len, struct record_entry **ret)
{
	size_t max = len / (UNLOCK_HASH_HEX + 3) + 1, n = 0;
	struct record_entry *e = calloc(max, sizeof(*e));
	size_t at = 0;

	*ret = NULL;
	if (!e)
		return -ENOMEM;
	while (at < len) {
		char *entry = buf + at, *nul = memchr(entry, '\0', len - at);
		size_t bin_len = 0;
		const char *name;

		if (!nul || n >= max || (size_t)(nul - entry) < UNLOCK_HASH_HEX + 2 ||
		    entry[UNLOCK_HASH_HEX] != ' ')
			goto bad;
		name = entry + UNLOCK_HASH_HEX + 1;
		if (sodium_hex2bin(e[n].hash, DURESS_HASH_LEN, entry, UNLOCK_HASH_HEX, NULL,
				   &bin_len, NULL) != 0 ||
		    bin_len != DURESS_HASH_LEN || strlen(name) > NAME_MAX || strchr(name, '/') ||
		    !duress_is_action_name(name))
			goto bad;
		e[n++].name = name;
		at = (size_t)(nul - buf) + 1;
	}
	*ret = e;
	return (int)n;
bad:
	free(e);
	return -EBADMSG;
}

/*
 * A record (root's regular file, group and others without access, not a
 * link, at most UNLOCK_RECORD_MAX bytes) read whole into buf
 * (UNLOCK_RECORD_MAX + 1 bytes).  Returns its length, or -errno: -ENOENT
 * for none, -EBADMSG for one that is not to be read.
 */
static ssize_t read_record(const char *path, char *buf)
{
	struct stat st;
	ssize_t len = duress_read_small_at(AT_FDCWD, path, O_NOFOLLOW, buf, UNLOCK_RECORD_MAX, &st);

	if (len == -EINVAL || len == -EFBIG || len == -ELOOP ||
	    (len >= 0 && (st.st_uid != 0 || (st.st_mode & 077))))
		return -EBADMSG;
	return len;
}

/*
 * What an earlier try of this boot recorded (another duress passphrase, or
 * the same one before a typo), read into buf and parsed into *e: kept, so
 * that no try's actions are lost.  A record that is not to be read, or is
 * malformed, is dropped (0 entries).  Returns its length, or -errno.
 */
static ssize_t read_old_record(const char *path, char *buf, struct record_entry **e, int *n)
{
	ssize_t len = read_record(path, buf);

	*e = NULL;
	*n = 0;
	if (len == -ENOENT || len == -EBADMSG)
		return 0;
	if (len > 0)
		*n = parse_record(buf, (size_t)len, e);
	if (*n == -ENOMEM)
		return -ENOMEM;
	if (len <= 0 || *n <= 0) {
		*n = 0;
		return len < 0 ? len : 0;
	}
	return len;
}

static bool recorded(const struct record_entry *e, int n, const struct duress_action *a)
{
	for (int i = 0; i < n; i++)
		if (strcmp(e[i].name, a->name) == 0 &&
		    sodium_memcmp(e[i].hash, a->content_hash, DURESS_HASH_LEN) == 0)
			return true;
	return false;
}

/*
 * Writes the record: one entry per matched after-boot action, "HEX NAME\0"
 * (HEX: the verified content hash; never the passphrase), after what an
 * earlier try recorded (each entry once, so that the record stays within
 * UNLOCK_RECORD_MAX whatever the number of tries), atomically
 * (duress_write_file_at): the unit never reads half a record.  0 or -errno.
 */
static int write_record(const struct unlock_paths *p, const struct duress_dir *dir)
{
	const char *name = strrchr(p->record, '/') ? strrchr(p->record, '/') + 1 : p->record;
	char *buf = calloc(1, UNLOCK_RECORD_MAX + 1);
	struct record_entry *e = NULL;
	ssize_t len = 0;
	int dfd = -1, n_old = 0, r = buf ? 0 : -ENOMEM;

	if (r == 0 && (len = read_old_record(p->record, buf, &e, &n_old)) < 0)
		r = (int)len;
	for (size_t i = 0; i < dir->n_actions && r == 0; i++) {
		const struct duress_action *a = &dir->actions[i];
		size_t need = UNLOCK_HASH_HEX + 1 + strlen(a->name) + 1;

		if (!a->matched || before_unlock(a->name) || recorded(e, n_old, a))
			continue;
		if ((size_t)len + need > UNLOCK_RECORD_MAX) {
			r = -EFBIG;
			break;
		}
		to_hex(a->content_hash, buf + len);
		buf[len + UNLOCK_HASH_HEX] = ' ';
		memcpy(buf + len + UNLOCK_HASH_HEX + 1, a->name, strlen(a->name) + 1);
		len += (ssize_t)need;
	}
	if (r == 0 && (dfd = open_record_dir(p->record_dir)) < 0)
		r = dfd;
	if (r == 0)
		r = duress_write_file_at(dfd, name, buf, (size_t)len, 0600, 0, 0);
	if (dfd >= 0)
		close(dfd);
	free(e);
	free(buf);
	return r;
}

/* The matched actions whose name says before/after unlock, as runner jobs; free *jobs. */
static size_t matched_jobs(const struct duress_dir *dir, bool before, struct duress_job **jobs)
{
	size_t n = 0;

	*jobs = dir->n_actions ? calloc(dir->n_actions, sizeof(**jobs)) : NULL;
	for (size_t i = 0; *jobs && i < dir->n_actions; i++) {
		struct duress_action *a = &dir->actions[i];

		if (a->matched && before_unlock(a->name) == before)
			(*jobs)[n++] = (struct duress_job){ .memfd = a->memfd,
							    .elf = a->elf,
							    .name = a->name };
	}
	return n;
}

/* What the matches call for: the record first, then the before-unlock actions, waited for. */
static int act_on_matches(const struct unlock_paths *p, const struct duress_dir *dir,
			  const struct duress_log *lg)
{
	struct duress_job *jobs = NULL;
	size_t n_before;
	bool after = false;
	int r = 0;

	for (size_t i = 0; i < dir->n_actions; i++)
		after = after || (dir->actions[i].matched && !before_unlock(dir->actions[i].name));
	if (after && (r = write_record(p, dir)) < 0) {
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot write %s: %m", p->record);
	}
	n_before = matched_jobs(dir, true, &jobs);
	if (dir->n_actions > 0 && !jobs)
		return -ENOMEM;
	if (n_before > 0) {
		int s = run_as_root(p, jobs, n_before, p->wait_seconds, lg);

		r = r < 0 ? r : s;
	}
	free(jobs);
	return r;
}

/*
 * The one derivation: the directory's single (salt, cost) set, or, when it
 * has none (missing, empty, unarmed, skipped), a stand-in at the default
 * cost.  A directory with more than one set would cost more than one
 * derivation per try, and the prompt's time must not say which directory
 * is there: it is skipped (by the caller) and costs the stand-in.
 */
static int derive_once(struct duress_kdf_scope *kdf, const struct duress_dir *dir, const char *pass,
		       size_t len)
{
	*kdf = (struct duress_kdf_scope){ .stand_in = true };
	if (duress_dir_loaded(dir) && dir->n_params == 1) {
		kdf->params = dir->params;
		kdf->n_params = 1;
		kdf->stand_in = false;
	}
	return duress_kdf_derive(kdf, 1, pass, len);
}

int unlock_at_prompt(const struct unlock_paths *p, const char *pass, size_t len, bool too_long,
		     const struct duress_log *lg)
{
	struct duress_caps caps;
	struct duress_dir dir = { 0 };
	struct duress_kdf_scope kdf = { 0 };
	int r, d, matches = 0;

	duress_caps_default(&caps);
	r = load_boot_dir(&dir, p->dir, &caps, true, lg);
	/* Derived even when loading failed: the work never depends on what is there. */
	d = derive_once(&kdf, &dir, pass, len);
	r = r < 0 ? r : d;
	if (r == 0 && duress_dir_loaded(&dir)) {
		if (too_long) {
			/* A wrong passphrase's work: it costs what the others do, matching nothing. */
			matches = duress_dir_judge(&dir);
		} else {
			matches = duress_dir_verify(
				&dir, (const unsigned char(*)[DURESS_KEY_LEN])kdf.keys, pass, len);
		}
		duress_dir_log_skips(&dir, lg);
		if (matches < 0)
			r = matches;
	}
	duress_kdf_free(&kdf, 1);
	if (r == 0 && matches > 0)
		r = act_on_matches(p, &dir, lg);
	duress_dir_free(&dir);
	if (r < 0) {
		errno = -r;
		duress_log(lg, LOG_ERR, "internal error while checking %s: %m", p->dir);
		return r;
	}
	return matches;
}

/* ---- after boot --------------------------------------------------------------------------- */

/*
 * Takes the record: renamed away first, so that it is used once even if
 * this run is cut short; then read (root's regular file, bounded) and
 * removed, with its directory.  Returns its length (0: no record), or
 * -errno; -EBADMSG for one that is not to be read.
 */
static ssize_t take_record(const struct unlock_paths *p, char *buf)
{
	char taken[PATH_MAX];
	ssize_t n;

	if (snprintf(taken, sizeof(taken), "%s/.taken", p->record_dir) >= (int)sizeof(taken))
		return -ENAMETOOLONG;
	if (rename(p->record, taken) < 0)
		return errno == ENOENT ? 0 : -errno;
	n = read_record(taken, buf);
	(void)unlink(taken);
	return n;
}

/* The entries' actions that are still what the prompt verified, as jobs (each name once). */
static size_t recorded_jobs(const struct duress_dir *dir, const struct record_entry *e, size_t n,
			    struct duress_job *jobs, const struct duress_log *lg)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)];
	size_t n_jobs = 0;

	for (size_t k = 0; k < n; k++) {
		struct duress_action *a = NULL;
		bool dup = false;

		for (size_t j = 0; j < k; j++)
			dup = dup || strcmp(e[j].name, e[k].name) == 0;
		if (dup)
			continue;
		for (size_t i = 0; duress_dir_loaded(dir) && i < dir->n_actions && !a; i++)
			if (strcmp(dir->actions[i].name, e[k].name) == 0)
				a = &dir->actions[i];
		duress_escape(e[k].name, name, sizeof(name));
		if (!a || before_unlock(a->name)) {
			duress_log(
				lg, LOG_WARNING,
				"%s: recorded action %s is not an after-boot action of %s, skipping",
				"record", name, dir->path ? dir->path : "the boot directory");
			continue;
		}
		if (a->skip != DURESS_SKIP_NONE || a->memfd < 0) {
			duress_log(lg, LOG_WARNING, "%s/%s: %s, skipping", dir->path, name,
				   duress_skip_reason(a->skip != DURESS_SKIP_NONE ?
							      a->skip :
							      DURESS_SKIP_UNREADABLE));
			continue;
		}
		if (sodium_memcmp(a->content_hash, e[k].hash, DURESS_HASH_LEN) != 0) {
			duress_log(
				lg, LOG_WARNING,
				"%s/%s: changed since it was verified at the disk-unlock prompt, skipping",
				dir->path, name);
			continue;
		}
		jobs[n_jobs++] =
			(struct duress_job){ .memfd = a->memfd, .elf = a->elf, .name = a->name };
	}
	return n_jobs;
}

int unlock_after_boot(const struct unlock_paths *p, const struct duress_log *lg)
{
	struct duress_caps caps;
	struct duress_dir dir = { 0 };
	struct record_entry *e = NULL;
	struct duress_job *jobs = NULL;
	char *buf = calloc(1, UNLOCK_RECORD_MAX + 1);
	ssize_t len;
	int n = 0, r = 0;
	size_t n_jobs = 0;

	if (!buf)
		return -ENOMEM;
	len = take_record(p, buf);
	if (len == -EBADMSG || (len > 0 && (n = parse_record(buf, (size_t)len, &e)) == -EBADMSG)) {
		duress_log(lg, LOG_ERR, "%s: malformed or too large, nothing run", p->record);
		goto out;
	}
	if (len < 0 || n < 0) {
		r = len < 0 ? (int)len : n;
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot read %s: %m", p->record);
		goto out;
	}
	if (n == 0)
		goto out;
	duress_caps_default(&caps);
	r = load_boot_dir(&dir, p->dir, &caps, false, lg);
	if (r == 0 && duress_dir_loaded(&dir))
		r = duress_dir_hash_sealed(&dir);
	jobs = calloc((size_t)n, sizeof(*jobs));
	if (r == 0 && !jobs)
		r = -ENOMEM;
	if (r == 0)
		n_jobs = recorded_jobs(&dir, e, (size_t)n, jobs, lg);
	/* Detached, as a login's actions are: this unit does not wait for them. */
	if (r == 0 && n_jobs > 0)
		r = run_as_root(p, jobs, n_jobs, 0, lg);
	if (r < 0) {
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot run the recorded actions: %m");
	}
out:
	(void)rmdir(p->record_dir);
	duress_dir_free(&dir);
	free(jobs);
	free(e);
	free(buf);
	return r < 0 ? r : (int)n_jobs;
}
