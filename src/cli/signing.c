/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/signing.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/check.h"
#include "cli/dracut.h"
#include "cli/quality.h"
#include "cli/realpw.h"
#include "core/actions.h"
#include "core/account.h"
#include "core/boot.h"
#include "core/escape.h"
#include "core/identity.h"
#include "core/opts.h"
#include "core/sig.h"
#include "core/write.h"

/* An action opened for signing or verifying. */
struct action_file {
	const char *path;
	char dir[PATH_MAX];
	char name[NAME_MAX + 1];
	int dir_fd;
	struct stat st;
	unsigned char hash[DURESS_HASH_LEN];
};

/* Paths may come from a glob over names a user chose: shown escaped, as data. */
#define SHOWN_PATH_SIZE DURESS_ESCAPED_SIZE(PATH_MAX)

/* "PATH: WHAT", on stderr after "duress: " */
static void say(FILE *out, const char *path, const char *what)
{
	char shown[SHOWN_PATH_SIZE];

	fprintf(out, "%s%s: %s\n", out == stderr ? "duress: " : "",
		duress_escape(path, shown, sizeof(shown)), what);
}

static int fail(const char *path, const char *what)
{
	say(stderr, path, what);
	return -1;
}

static int split_path(struct action_file *f)
{
	const char *slash = strrchr(f->path, '/');
	size_t dir_len = slash ? (size_t)(slash - f->path) : 0;
	const char *name = slash ? slash + 1 : f->path;

	if (strlen(name) > NAME_MAX || dir_len >= sizeof(f->dir))
		return fail(f->path, "name too long");
	if (!duress_is_action_name(name))
		return fail(f->path,
			    "not an action name (hidden, *.sig, *.sha256 or an editor leftover)");
	if (!slash)
		strcpy(f->dir, ".");
	else if (dir_len == 0)
		strcpy(f->dir, "/");
	else
		snprintf(f->dir, sizeof(f->dir), "%.*s", (int)dir_len, f->path);
	snprintf(f->name, sizeof(f->name), "%s", name);
	return 0;
}

/* What the CLI reads for its caller: a regular file (any owner), with our own rights. */
static struct duress_trust input_trust(uint64_t max_size)
{
	return (struct duress_trust){ .max_size = max_size };
}

/* Why the one helper refused to open an action for signing or verifying. */
static const char *input_problem(const struct duress_file *in)
{
	if (in->skip == DURESS_SKIP_SYMLINK)
		return "is a symlink; actions must be regular files";
	if (in->skip == DURESS_SKIP_NOT_REGULAR)
		return "not a regular file";
	if (in->skip == DURESS_SKIP_TOO_LARGE)
		return "larger than the module's 16 MiB cap";
	return strerror(in->error ? in->error : EIO);
}

/* Opens without following a symlink, never a FIFO or device, and hashes what is there. */
static int open_action(struct action_file *f, const char *path)
{
	struct duress_trust t = input_trust(DURESS_DEFAULT_MAX_FILE_SIZE);
	struct duress_file in = { .fd = -1 };
	unsigned char *buf = NULL;
	uint64_t len;
	bool elf;
	int r = -1;

	*f = (struct action_file){ .path = path, .dir_fd = -1 };
	if (split_path(f) < 0)
		return -1;
	f->dir_fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dir_fd < 0)
		return fail(f->dir, strerror(errno));
	if (duress_open_file(f->dir_fd, f->name, DURESS_FILE_INPUT, &t, true, &in) < 0 ||
	    in.fd < 0) {
		fail(path, input_problem(&in));
		goto out;
	}
	f->st = in.st;
	buf = malloc(DURESS_READ_CHUNK);
	if (!buf) {
		fail(path, "out of memory");
		goto out;
	}
	r = duress_stream_content(in.fd, DURESS_DEFAULT_MAX_FILE_SIZE, -1, buf, f->hash, &elf,
				  &len);
	if (r < 0)
		fail(path, r == -EFBIG ? "larger than the module's 16 MiB cap" : "cannot be read");
out:
	free(buf);
	duress_file_close(&in);
	if (r < 0 && f->dir_fd >= 0) {
		close(f->dir_fd);
		f->dir_fd = -1;
	}
	return r < 0 ? -1 : 0;
}

/* Reads NAME.sig (or another small file) beside the action; -errno. */
static int read_small(int dir_fd, const char *name, char *buf, size_t size, size_t *len)
{
	/* No size cap: reading stops at size, and the parser judges what it got. */
	struct duress_trust t = input_trust(UINT64_MAX);
	struct duress_file in;
	ssize_t n;
	int r = duress_open_file(dir_fd, name, DURESS_FILE_INPUT, &t, true, &in);

	if (r < 0)
		return r;
	if (in.error)
		return -in.error;
	if (in.fd < 0)
		return -EINVAL;
	if ((n = read(in.fd, buf, size)) < 0)
		r = -errno;
	else
		*len = (size_t)n;
	duress_file_close(&in);
	return r;
}

/*
 * The action's directory as the module sees it: the global one only if it
 * is the very directory DURESS_GLOBAL_DIR names, otherwise per-user, with
 * that scope's default caps.  load is duress_dir_load()'s result; dir is
 * loaded only if it is 0.
 */
struct dir_view {
	enum duress_scope scope;
	uid_t owner;
	struct duress_identity as; /* per-user: read with the owner's rights, as the module does */
	struct duress_caps caps;
	struct duress_dir dir;
	int load;
};

/* Whether the action's directory is the one path names. */
static bool in_dir(const struct action_file *f, const char *path)
{
	struct stat dir, st;

	return fstat(f->dir_fd, &dir) == 0 && stat(path, &st) == 0 && dir.st_dev == st.st_dev &&
	       dir.st_ino == st.st_ino;
}

/* The disk-unlock prompt's directory: root's, judged as the global one (docs/boot.md). */
static bool in_boot_dir(const struct action_file *f, const struct duress_sign_opts *opts)
{
	return in_dir(f, opts->boot_dir ? opts->boot_dir : DURESS_BOOT_DIR);
}

/* The initramfs holds a copy of the boot directory, which is no module's: rebuilt by hand. */
static void remind_rebuild(const char *shown, const struct duress_sign_opts *opts)
{
	struct duress_dracut d;

	duress_dracut_find(opts->dracut_conf, &d);
	fprintf(stderr, "duress: %s: a boot action: run %s so that the initramfs holds it\n", shown,
		duress_dracut_rebuild(&d));
}

static enum duress_scope action_scope(const struct action_file *f,
				      const struct duress_sign_opts *opts)
{
	return in_dir(f, DURESS_GLOBAL_DIR) || in_boot_dir(f, opts) ? DURESS_SCOPE_GLOBAL :
								      DURESS_SCOPE_USER;
}

/* The rights a per-user directory is read with: its owner's (nothing to switch unless root). */
static int view_identity(struct dir_view *v)
{
	struct duress_account *p = NULL;
	int r;

	if (v->scope == DURESS_SCOPE_GLOBAL)
		return 0;
	r = duress_getpw(NULL, v->owner, &p);
	if (r == 0)
		r = duress_identity_init(&v->as, &p->pw, NULL);
	free(p);
	return r;
}

static void view_load(const struct action_file *f, const struct duress_sign_opts *opts,
		      struct dir_view *v)
{
	v->scope = action_scope(f, opts);
	/* A per-user directory is judged as the action owner's. */
	v->owner = v->scope == DURESS_SCOPE_GLOBAL ? 0 : f->st.st_uid;
	if (v->scope == DURESS_SCOPE_GLOBAL)
		duress_caps_default(&v->caps);
	else
		duress_user_caps_default(&v->caps);
	v->load = view_identity(v);
	if (v->load == 0)
		v->load = duress_dir_load(&v->dir, f->dir, v->scope, v->owner, &v->caps, false,
					  &v->as);
}

static void view_free(struct dir_view *v)
{
	duress_dir_free(&v->dir);
	duress_identity_free(&v->as);
}

/*
 * Whether an action's signature shares a set the module computes anyway:
 * duress_dir_load() armed it (trusted, well-formed, within the caps and the
 * directory's max_params), and it is not a legacy one.
 */
static bool shares_params(const struct duress_action *a)
{
	return a->skip == DURESS_SKIP_NONE && !a->legacy;
}

/* Asked for a cost (want), only that one; by default, at least the default. */
static bool reusable(const struct duress_params *p, const struct duress_params *want)
{
	if (want)
		return p->mem_kib == want->mem_kib && p->ops == want->ops;
	return (uint64_t)p->mem_kib * 1024U >= crypto_pwhash_MEMLIMIT_INTERACTIVE &&
	       p->ops >= crypto_pwhash_OPSLIMIT_INTERACTIVE;
}

/*
 * The salt and cost of the first action, in name order, that shares them
 * and is reusable: an orphan or a weak signature is never inherited.
 */
static bool directory_params(const struct dir_view *v, const struct duress_params *want,
			     struct duress_params *ret)
{
	for (size_t i = 0; v->load == 0 && i < v->dir.n_actions; i++) {
		const struct duress_action *a = &v->dir.actions[i];

		if (shares_params(a) && reusable(&a->sig.params, want)) {
			*ret = a->sig.params;
			return true;
		}
	}
	return false;
}

enum params_choice {
	PARAMS_SHARED,        /* those of an action in the directory */
	PARAMS_FRESH_DEFAULT, /* none to share: a fresh salt at the default cost */
	PARAMS_FRESH_ASKED,   /* none at the cost asked for: a fresh salt at that cost */
};

static enum params_choice choose_params(const struct dir_view *v,
					const struct duress_sign_opts *opts,
					struct duress_params *p)
{
	bool asked = opts->memlimit || opts->opslimit;
	struct duress_params fresh;

	duress_params_new(&fresh,
			  opts->memlimit ? opts->memlimit : crypto_pwhash_MEMLIMIT_INTERACTIVE,
			  opts->opslimit ? opts->opslimit : crypto_pwhash_OPSLIMIT_INTERACTIVE);
	if (directory_params(v, asked ? &fresh : NULL, p))
		return PARAMS_SHARED;
	*p = fresh;
	return asked ? PARAMS_FRESH_ASKED : PARAMS_FRESH_DEFAULT;
}

/* Whether another action already has a set the module computes. */
static bool other_sets(const struct action_file *f, const struct dir_view *v)
{
	for (size_t i = 0; v->load == 0 && i < v->dir.n_actions; i++) {
		const struct duress_action *a = &v->dir.actions[i];

		if (shares_params(a) && strcmp(a->name, f->name) != 0)
			return true;
	}
	return false;
}

/* Says what a salt of its own means; a fresh default one is always said. */
static void report_params(const struct action_file *f, const struct dir_view *v,
			  enum params_choice choice)
{
	char shown[SHOWN_PATH_SIZE];
	bool more = other_sets(f, v);

	if (choice == PARAMS_SHARED || (choice == PARAMS_FRESH_ASKED && !more))
		return;
	printf("%s: note: %s%s\n", duress_escape(f->path, shown, sizeof(shown)),
	       choice == PARAMS_FRESH_DEFAULT ?
		       "a fresh salt at the default cost: no signed action "
		       "here has one at that cost or more to share" :
		       "a new salt and cost",
	       more ? "; the module now runs Argon2id once more for this directory" : "");
}

static bool params_known(const struct duress_params *const *seen, size_t n,
			 const struct duress_params *p)
{
	for (size_t i = 0; i < n; i++)
		if (duress_params_equal(seen[i], p))
			return true;
	return false;
}

_Static_assert(DURESS_USER_MAX_PARAMS <= DURESS_DEFAULT_MAX_PARAMS, "seen[] holds either scope's");

/*
 * Whether, with p signed, the module would have more distinct (salt, cost)
 * sets to compute than max_params: p, and those of every other action whose
 * signature it reads (the one being replaced does not count).
 */
static bool too_many_params(const struct action_file *f, const struct dir_view *v,
			    const struct duress_params *p)
{
	const struct duress_params *seen[DURESS_DEFAULT_MAX_PARAMS + 1] = { p };
	size_t n = 1;

	for (size_t i = 0; v->load == 0 && i < v->dir.n_actions && n <= v->caps.max_params; i++) {
		const struct duress_action *a = &v->dir.actions[i];

		if (strcmp(a->name, f->name) == 0 || a->legacy ||
		    (a->skip != DURESS_SKIP_NONE && a->skip != DURESS_SKIP_TOO_MANY_PARAMS))
			continue;
		if (!params_known(seen, n, &a->sig.params))
			seen[n++] = &a->sig.params;
	}
	return n > v->caps.max_params;
}

static const char *scope_name(enum duress_scope scope)
{
	return scope == DURESS_SCOPE_GLOBAL ? "the global directory" : "a per-user directory";
}

/* Refuses what the module, with its default options, would skip. */
static int check_cost(const struct action_file *f, const struct dir_view *v,
		      const struct duress_params *p)
{
	char why[256];
	int r = duress_params_check(p, &v->caps);

	if (r == -EINVAL)
		return fail(f->path, "cost below libsodium's minimum");
	if (r == -E2BIG) {
		snprintf(why, sizeof(why),
			 "cost over the module's caps for %s (at most %llu KiB and %llu passes)",
			 scope_name(v->scope), (unsigned long long)(v->caps.max_memory / 1024U),
			 (unsigned long long)v->caps.max_ops);
		return fail(f->path, why);
	}
	if (too_many_params(f, v, p)) {
		snprintf(why, sizeof(why),
			 "a salt and cost of its own would be one more than the %llu sets the "
			 "module computes for %s; re-sign the others at one cost",
			 (unsigned long long)v->caps.max_params, scope_name(v->scope));
		return fail(f->path, why);
	}
	return 0;
}

/* Writes the line to NAME.sig through a temporary file and rename(). */
static int write_sig(const struct action_file *f, const char *line, size_t len)
{
	char final[NAME_MAX + 1];
	bool root = geteuid() == 0;
	int r;

	if (snprintf(final, sizeof(final), "%s%s", f->name, DURESS_SIG_SUFFIX) >=
	    (int)sizeof(final))
		return fail(f->path, "name too long for its signature");
	r = duress_write_file_at(f->dir_fd, final, line, len, 0600, root ? f->st.st_uid : (uid_t)-1,
				 root ? f->st.st_gid : (gid_t)-1);
	return r < 0 ? fail(f->path, strerror(-r)) : 0;
}

/* Says, as the module would judge it, what still keeps the action from running. */
static void report_state(const struct action_file *f, const struct dir_view *before)
{
	char shown[SHOWN_PATH_SIZE];
	struct dir_view v = *before;

	/* Judged again: the new signature is part of the directory now. */
	v.load = duress_dir_load(&v.dir, f->dir, v.scope, v.owner, &v.caps, false, &v.as);
	if (v.load < 0) {
		char buf[128];

		fprintf(stderr, "duress: %s: warning: the module will skip this directory: %s\n",
			duress_escape(f->dir, shown, sizeof(shown)),
			duress_dir_problem(v.load, buf, sizeof(buf)));
		return;
	}
	duress_escape(f->path, shown, sizeof(shown));
	duress_dir_hash(&v.dir);
	for (size_t i = 0; i < v.dir.n_actions; i++) {
		const struct duress_action *a = &v.dir.actions[i];

		if (strcmp(a->name, f->name) != 0)
			continue;
		if (a->skip != DURESS_SKIP_NONE)
			fprintf(stderr, "duress: %s: warning: the module will skip it: %s\n", shown,
				duress_skip_reason(a->skip));
		else if (a->world_readable)
			fprintf(stderr, "duress: %s: note: readable by others\n", shown);
	}
	/* v.as is before's: only the directory is v's own. */
	duress_dir_free(&v.dir);
}

/* Turns f->hash into the hash bound to sig's companion files; -1 after an error. */
static int bind_companions(const struct action_file *f, const struct duress_sig *sig,
			   unsigned char hash[DURESS_HASH_LEN])
{
	struct duress_caps caps;
	struct duress_trust trust;
	unsigned char *buf;
	uint64_t budget;
	enum duress_skip skip;
	int r;

	memcpy(hash, f->hash, DURESS_HASH_LEN);
	if (sig->also_len == 0)
		return 0;
	duress_caps_default(&caps);
	/* Judged as the module judges the owner's; opened with the rights of who signs. */
	trust = (struct duress_trust){ .scope = DURESS_SCOPE_USER,
				       .owner = f->st.st_uid,
				       .max_size = caps.max_file_size };
	budget = caps.max_total;
	buf = malloc(DURESS_READ_CHUNK);
	if (!buf)
		return fail(f->path, "out of memory");
	r = duress_bind_companions(&trust, sig, buf, &budget, hash, &skip);
	free(buf);
	if (r < 0)
		return fail(f->path, strerror(-r));
	if (skip != DURESS_SKIP_NONE)
		return fail(f->path, duress_skip_reason(skip));
	return 0;
}

/* Records the companion files given, by absolute path, symlinks resolved. */
static int add_companions(const struct action_file *f, const struct duress_sign_opts *opts,
			  struct duress_sig *sig)
{
	sig->also_len = 0;
	for (size_t i = 0; i < opts->n_also; i++) {
		char *abs = realpath(opts->also[i], NULL);
		int r = abs ? duress_sig_add_also(sig, abs) : -errno;

		free(abs);
		if (r < 0) {
			char shown[SHOWN_PATH_SIZE];

			fprintf(stderr, "duress: %s: companion %s: %s\n",
				duress_escape(f->path, shown, sizeof(shown)), opts->also[i],
				r == -E2BIG ? "too many companion files or paths too long" :
					      strerror(-r));
			return -1;
		}
	}
	return 0;
}

/* The companions as --also options ("--also A --also B"), escaped, into buf. */
static const char *also_options(const struct duress_sig *sig, char *buf, size_t size)
{
	char shown[SHOWN_PATH_SIZE];
	size_t used = 0;

	buf[0] = '\0';
	for (const char *p = duress_sig_next_also(sig, NULL); p && used < size;
	     p = duress_sig_next_also(sig, p))
		used += (size_t)snprintf(buf + used, size - used, "%s--also %s", used ? " " : "",
					 duress_escape(p, shown, sizeof(shown)));
	return buf;
}

/*
 * The signature being replaced, into *old; one that is absent, unreadable
 * or malformed is none (zeroed): nothing of it is kept.
 */
static void old_signature(const struct action_file *f, struct duress_sig *old)
{
	char name[NAME_MAX + sizeof(DURESS_SIG_SUFFIX)], buf[DURESS_SIG_MAX + 1];
	size_t len = 0;

	snprintf(name, sizeof(name), "%s%s", f->name, DURESS_SIG_SUFFIX);
	if (read_small(f->dir_fd, name, buf, sizeof(buf), &len) < 0 ||
	    duress_sig_parse(buf, len, old) < 0)
		memset(old, 0, sizeof(*old));
}

/*
 * With no --also (and no --no-also): the companions the signature being
 * replaced binds, said in one warning.
 */
static void keep_companions(const struct action_file *f, const struct duress_sig *old,
			    struct duress_sig *sig)
{
	char shown[SHOWN_PATH_SIZE];
	/* Each path escaped, and " --also " before each. */
	char also[DURESS_ESCAPED_SIZE(DURESS_ALSO_MAX_BYTES) +
		  sizeof(" --also ") * (size_t)DURESS_ALSO_MAX_FILES];

	if (old->also_len == 0)
		return;
	memcpy(sig->also, old->also, old->also_len);
	sig->also_len = old->also_len;
	fprintf(stderr,
		"duress: %s: warning: no --also given: still bound to what its old signature "
		"binds (%s); --no-also binds nothing\n",
		duress_escape(f->path, shown, sizeof(shown)),
		also_options(sig, also, sizeof(also)));
}

/*
 * once as asked, or with neither --once nor --no-once as the signature
 * being replaced has it (said in a warning): signing again after an edit
 * must not quietly make a once action run at every match.  A new id
 * either way, so a new record: signing again re-arms it.  No boot action:
 * the disk-unlock prompt keeps no record.  0, or -1 after an error.
 */
static int choose_once(const struct action_file *f, const struct duress_sign_opts *opts,
		       const struct duress_sig *old, struct duress_sig *sig)
{
	char shown[SHOWN_PATH_SIZE];

	sig->once = opts->once || (!opts->drop_once && old->once);
	if (sig->once && in_boot_dir(f, opts))
		return fail(f->path, "--once: not for a boot action (the disk-unlock prompt keeps "
				     "no record of what ran)");
	if (sig->once)
		randombytes_buf(sig->once_id, sizeof(sig->once_id));
	if (sig->once && !opts->once)
		fprintf(stderr,
			"duress: %s: warning: no --once given: still once, as its old signature, "
			"and armed again; --no-once makes it run at every match\n",
			duress_escape(f->path, shown, sizeof(shown)));
	return 0;
}

int duress_sign_opts_cost(struct duress_sign_opts *opts, bool memory, const char *value)
{
	uint64_t *field = memory ? &opts->memlimit : &opts->opslimit;

	if (duress_parse_size(value, UINT32_MAX * 1024ULL, field) < 0 ||
	    (!memory && *field > UINT32_MAX)) {
		fprintf(stderr, "duress: bad value for --%s: %s\n",
			memory ? "memlimit" : "opslimit", value);
		return -1;
	}
	return 0;
}

/* A memory cost as --memlimit takes it, with the largest suffix that divides it. */
static const char *shown_memory(uint64_t bytes, char *buf, size_t size)
{
	static const char *const suffixes[] = { "", "K", "M", "G" };
	size_t i = 0;

	while (i + 1 < sizeof(suffixes) / sizeof(suffixes[0]) && bytes >= 1024 &&
	       bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, size, "%llu%s", (unsigned long long)bytes, suffixes[i]);
	return buf;
}

int duress_sign_opts_floor(const struct duress_sign_opts *opts)
{
	const bool memory = opts->memlimit && opts->memlimit < crypto_pwhash_MEMLIMIT_INTERACTIVE;
	const bool passes = opts->opslimit && opts->opslimit < crypto_pwhash_OPSLIMIT_INTERACTIVE;
	char given[32], floor[32], least[32];

	if (opts->allow_weak_cost || (!memory && !passes))
		return 0;
	shown_memory(crypto_pwhash_MEMLIMIT_INTERACTIVE, floor, sizeof(floor));
	if (memory) {
		shown_memory(opts->memlimit, given, sizeof(given));
		snprintf(least, sizeof(least), "%s", floor);
	} else {
		snprintf(given, sizeof(given), "%llu", (unsigned long long)opts->opslimit);
		snprintf(least, sizeof(least), "%u", crypto_pwhash_OPSLIMIT_INTERACTIVE);
	}
	fprintf(stderr,
		"duress: --%s %s is below the floor, libsodium's interactive cost (%s, %u passes): "
		"wrong passwords for the account would take less time than for an account "
		"without actions; leave it out, or give at least %s\n",
		memory ? "memlimit" : "opslimit", given, floor, crypto_pwhash_OPSLIMIT_INTERACTIVE,
		least);
	return -1;
}

int duress_sign_file(const char *path, const struct duress_password *pw,
		     const struct duress_sign_opts *opts)
{
	struct action_file f;
	struct dir_view view = { .load = -ENOENT };
	struct duress_sig sig, old;
	unsigned char key[DURESS_KEY_LEN];
	char line[DURESS_SIG_MAX + 1];
	char shown[SHOWN_PATH_SIZE], name[DURESS_ESCAPED_SIZE(NAME_MAX)];
	enum params_choice choice;
	const char *why;
	int real, len, r = -1;

	if (open_action(&f, path) < 0)
		return -1;
	if (geteuid() != 0 && f.st.st_uid != geteuid()) {
		fail(path, "not yours: only its owner or root can sign it");
		goto out;
	}
	real = duress_is_real_password(f.st.st_uid, pw, &why);
	if (real > 0) {
		fail(path, "that is the account's real password, which pam_unix accepts first");
		goto out;
	}
	if (real < 0)
		fprintf(stderr,
			"duress: %s: warning: could not check that this is not the account's "
			"real password: %s\n",
			duress_escape(path, shown, sizeof(shown)), why);
	duress_warn_weak_password(f.st.st_uid, pw);
	view_load(&f, opts, &view);
	choice = choose_params(&view, opts, &sig.params);
	old_signature(&f, &old);
	if (check_cost(&f, &view, &sig.params) < 0 || add_companions(&f, opts, &sig) < 0 ||
	    choose_once(&f, opts, &old, &sig) < 0)
		goto out;
	if (opts->n_also == 0 && !opts->drop_also)
		keep_companions(&f, &old, &sig);
	if (bind_companions(&f, &sig, sig.content_hash) < 0)
		goto out;
	if (duress_derive_key(pw->text, pw->len, &sig.params, key) < 0) {
		fail(path, "out of memory for Argon2id");
		goto out;
	}
	duress_tag(key, &sig, sig.content_hash, sig.tag);
	len = duress_sig_format(&sig, line, sizeof(line));
	if (len < 0 || write_sig(&f, line, (size_t)len) < 0)
		goto out;
	report_params(&f, &view, choice);
	printf("%s: signed (%s%s%s)\n", duress_escape(path, shown, sizeof(shown)),
	       duress_escape(f.name, name, sizeof(name)), DURESS_SIG_SUFFIX,
	       sig.once ? ", once: it runs at its next match, and then no more" : "");
	report_state(&f, &view);
	/* The initramfs holds a copy of the boot directory, which is no module's. */
	if (in_boot_dir(&f, opts))
		remind_rebuild(shown, opts);
	else
		duress_warn_unread_dir(path, f.dir_fd, f.st.st_uid, opts->pam_dir);
	r = 0;
out:
	/* One place wipes the key, whichever way the function ends. */
	sodium_memzero(key, sizeof(key));
	view_free(&view);
	close(f.dir_fd);
	return r;
}

static int verify_legacy(const struct action_file *f, const struct duress_password *pw)
{
	char name[NAME_MAX + sizeof(DURESS_LEGACY_SUFFIX)];
	unsigned char stored[DURESS_HASH_LEN + 1];
	size_t len = 0;

	snprintf(name, sizeof(name), "%s%s", f->name, DURESS_LEGACY_SUFFIX);
	if (read_small(f->dir_fd, name, (char *)stored, sizeof(stored), &len) < 0) {
		fail(f->path, "no signature (neither .sig nor .sha256)");
		return 2;
	}
	if (len != DURESS_HASH_LEN) {
		fail(f->path, "legacy .sha256 signature is malformed");
		return 2;
	}
	return duress_legacy_matches(f->hash, pw->text, pw->len, stored) ? 0 : 1;
}

/* *sig: the signature read, for the once line of a match. */
static int verify_sig(const struct action_file *f, const char *buf, size_t len,
		      const struct duress_password *pw, struct duress_sig *sig)
{
	struct duress_caps caps;
	unsigned char key[DURESS_KEY_LEN], hash[DURESS_HASH_LEN];
	bool match;

	duress_caps_default(&caps);
	if (duress_sig_parse(buf, len, sig) < 0)
		return fail(f->path, "signature is malformed"), 2;
	/* A companion missing or unsafe is a problem to report, not a wrong password. */
	if (bind_companions(f, sig, hash) < 0)
		return 2;
	if (duress_params_check(&sig->params, &caps) < 0)
		return fail(f->path, "signature cost is outside the module's default caps"), 2;
	if (duress_derive_key(pw->text, pw->len, &sig->params, key) < 0)
		return fail(f->path, "out of memory for Argon2id"), 2;
	match = duress_tag_matches(key, sig, hash);
	sodium_memzero(key, sizeof(key));
	if (!match && sodium_memcmp(hash, sig->content_hash, DURESS_HASH_LEN) != 0)
		say(stderr, f->path, "content changed since signing");
	return match ? 0 : 1;
}

const char *duress_once_words(enum duress_once_state state, const char *state_dir, const char *name,
			      const struct stat *when, char *buf, size_t size)
{
	char dir[SHOWN_PATH_SIZE], record[PATH_MAX], word[DURESS_SHELL_WORD_SIZE(PATH_MAX)];
	char at[64] = "?";
	struct tm tm;

	duress_escape(state_dir, dir, sizeof(dir));
	if (state == DURESS_ONCE_ARMED)
		snprintf(buf, size,
			 "once: it has not run; it runs at its next match, then no more");
	else if (state == DURESS_ONCE_UNKNOWN)
		snprintf(buf, size,
			 "once: whether it has run, only root can tell (its record is "
			 "root's: run this as root)");
	else if (state == DURESS_ONCE_BROKEN)
		snprintf(buf, size,
			 "once: %s or its once/ cannot be used (each must be a directory of "
			 "root's, mode 0700, not a symlink): no record can be made there, so it "
			 "does not run; fix: make both so",
			 dir);
	if (state != DURESS_ONCE_SPENT)
		return buf;
	if (gmtime_r(&when->st_mtime, &tm))
		strftime(at, sizeof(at), "%Y-%m-%d %H:%M UTC", &tm);
	snprintf(record, sizeof(record), "%s/" DURESS_ONCE_SUBDIR "/%s", state_dir, name);
	if (duress_shell_word(record, word, sizeof(word)))
		snprintf(buf, size,
			 "once: it ran (%s) and does not run again; re-arm: sudo rm %s, or sign "
			 "it again",
			 at, word);
	else
		snprintf(buf, size,
			 "once: it ran (%s) and does not run again; re-arm: remove %s under "
			 "%s/" DURESS_ONCE_SUBDIR ", or sign it again",
			 at, name, dir);
	return buf;
}

/*
 * A matched once signature's line: whether it ran.  Its record is named
 * for the uid its directory is judged for: the global one's root, a
 * per-user one's owner (its file's, when root owns the directory).
 */
static void say_once(const struct action_file *f, const struct duress_sig *sig,
		     const char *state_dir)
{
	static const struct duress_sign_opts defaults;
	enum duress_scope scope = action_scope(f, &defaults);
	char name[DURESS_ONCE_NAME_SIZE], words[2 * SHOWN_PATH_SIZE];
	struct stat dir = { .st_uid = 0 }, when;
	uid_t owner = 0;
	enum duress_once_state st;

	if (scope == DURESS_SCOPE_USER)
		owner = fstat(f->dir_fd, &dir) == 0 && dir.st_uid != 0 ? dir.st_uid : f->st.st_uid;
	state_dir = state_dir ? state_dir : DURESS_STATE_DIR;
	st = duress_once_state(state_dir, scope, owner, sig, name, &when);
	say(stdout, f->path, duress_once_words(st, state_dir, name, &when, words, sizeof(words)));
}

int duress_verify_file(const char *path, const struct duress_password *pw, const char *state_dir)
{
	struct duress_sig sig = { .once = false };
	struct action_file f;
	char name[NAME_MAX + sizeof(DURESS_SIG_SUFFIX)];
	char buf[DURESS_SIG_MAX + 1];
	size_t len = 0;
	int r;

	if (open_action(&f, path) < 0)
		return 2;
	snprintf(name, sizeof(name), "%s%s", f.name, DURESS_SIG_SUFFIX);
	r = read_small(f.dir_fd, name, buf, sizeof(buf), &len);
	if (r == -ENOENT)
		r = verify_legacy(&f, pw);
	else if (r < 0)
		r = (fail(path, "signature cannot be read"), 2);
	else
		r = verify_sig(&f, buf, len, pw, &sig);
	if (r != 2)
		say(stdout, path, r == 0 ? "the password matches" : "no match");
	/* Only a match says the flag is the signer's. */
	if (r == 0 && sig.once)
		say_once(&f, &sig, state_dir);
	close(f.dir_fd);
	return r;
}
