/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/signing.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/realpw.h"
#include "core/actions.h"
#include "core/opts.h"
#include "core/sig.h"

/* An action opened for signing or verifying. */
struct action_file {
	const char *path;
	char dir[PATH_MAX];
	char name[NAME_MAX + 1];
	int dir_fd;
	struct stat st;
	unsigned char hash[DURESS_HASH_LEN];
};

static int fail(const char *path, const char *what)
{
	fprintf(stderr, "duress: %s: %s\n", path, what);
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
		return fail(f->path, "not an action name (hidden, *.sig, *.sha256 or an editor leftover)");
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
	r = duress_stream_content(in.fd, DURESS_DEFAULT_MAX_FILE_SIZE, -1, buf, f->hash, &elf, &len);
	if (r < 0)
		fail(path, r == -EFBIG ? "larger than the module's 16 MiB cap" : "cannot be read");
out:
	free(buf);
	if (in.fd >= 0)
		close(in.fd);
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
	close(in.fd);
	return r;
}

/* The salt and cost of the first valid signature in name order, if any. */
static bool directory_params(const struct action_file *f, struct duress_params *ret)
{
	struct duress_caps caps;
	struct dirent **names = NULL;
	bool found = false;
	int n = scandirat(f->dir_fd, ".", &names, NULL, alphasort);

	duress_caps_default(&caps);
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name), sig_len = 0;
		char buf[DURESS_SIG_MAX + 1];
		struct duress_sig sig;

		if (!found && len > 4 && strcmp(name + len - 4, DURESS_SIG_SUFFIX) == 0 &&
		    read_small(f->dir_fd, name, buf, sizeof(buf), &sig_len) == 0 &&
		    duress_sig_parse(buf, sig_len, &sig) == 0 &&
		    duress_params_check(&sig.params, &caps) == 0) {
			*ret = sig.params;
			found = true;
		}
		free(names[i]);
	}
	free(names);
	return found;
}

static void choose_params(const struct action_file *f, const struct duress_sign_opts *opts,
			  struct duress_params *p)
{
	uint64_t memlimit = opts->memlimit, opslimit = opts->opslimit;
	struct duress_params existing;
	bool have = directory_params(f, &existing);
	uint64_t mem = memlimit ? memlimit : crypto_pwhash_MEMLIMIT_INTERACTIVE;
	uint64_t ops = opslimit ? opslimit : crypto_pwhash_OPSLIMIT_INTERACTIVE;

	if (have && !memlimit && !opslimit) {
		*p = existing;
		return;
	}
	if (have && existing.mem_kib == mem / 1024U && existing.ops == ops) {
		*p = existing;
		return;
	}
	duress_params_new(p, mem, ops);
	if (have)
		printf("%s: note: a new salt and cost; the module now runs Argon2id once more "
		       "for this directory\n",
		       f->path);
}

static int check_cost(const struct action_file *f, const struct duress_params *p)
{
	struct duress_caps caps;
	int r;

	duress_caps_default(&caps);
	r = duress_params_check(p, &caps);
	if (r == -EINVAL)
		return fail(f->path, "cost below libsodium's minimum");
	if (r == -E2BIG)
		fprintf(stderr,
			"duress: %s: warning: cost over the module's default caps; "
			"it needs max_memory= or max_ops= to run\n",
			f->path);
	return 0;
}

/* Writes the line to NAME.sig through a temporary file and rename(). */
static int write_sig(const struct action_file *f, const char *line, size_t len)
{
	char tmp[NAME_MAX + 1], final[NAME_MAX + 1];
	unsigned char rnd[6];
	char hex[sizeof(rnd) * 2 + 1];
	int fd, r = 0;

	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
	if (snprintf(final, sizeof(final), "%s%s", f->name, DURESS_SIG_SUFFIX) >= (int)sizeof(final) ||
	    snprintf(tmp, sizeof(tmp), ".%.*s.%s", NAME_MAX - 16, f->name, hex) >= (int)sizeof(tmp))
		return fail(f->path, "name too long for its signature");
	fd = openat(f->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(f->dir, strerror(errno));
	if ((geteuid() == 0 && fchown(fd, f->st.st_uid, f->st.st_gid) < 0) ||
	    fchmod(fd, 0600) < 0 || write(fd, line, len) != (ssize_t)len || fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(f->dir_fd, tmp, f->dir_fd, final) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(f->dir_fd, tmp, 0);
		return fail(f->path, strerror(-r ? -r : EIO));
	}
	(void)fsync(f->dir_fd);
	return 0;
}

/* Says, as the module would judge it, what still keeps the action from running. */
static void report_state(const struct action_file *f)
{
	struct duress_caps caps;
	struct duress_dir dir;
	int r;

	duress_caps_default(&caps);
	/* A per-user directory of the action's owner accepts what a global one does. */
	r = duress_dir_load(&dir, f->dir, DURESS_SCOPE_USER, f->st.st_uid, &caps, false, NULL);
	if (r < 0) {
		fprintf(stderr, "duress: %s: warning: the module will skip this directory: %s\n",
			f->dir,
			r == -EPERM  ? "bad owner, or writable by group or others"
			: r == -E2BIG ? "too many entries"
				      : strerror(-r));
		return;
	}
	duress_dir_hash(&dir);
	for (size_t i = 0; i < dir.n_actions; i++) {
		const struct duress_action *a = &dir.actions[i];

		if (strcmp(a->name, f->name) != 0)
			continue;
		if (a->skip != DURESS_ARMED)
			fprintf(stderr, "duress: %s: warning: the module will skip it: %s\n", f->path,
				duress_skip_reason(a->skip));
		else if (a->world_readable)
			fprintf(stderr, "duress: %s: note: readable by others\n", f->path);
	}
	duress_dir_free(&dir);
}

/* A directory as the module would judge one of the action owner's. */
static void owner_dir(const struct action_file *f, struct duress_caps *caps, struct duress_dir *dir)
{
	duress_caps_default(caps);
	/* .as NULL: the CLI opens companions with its own rights, those of who signs. */
	*dir = (struct duress_dir){
		.path = f->dir, .scope = DURESS_SCOPE_USER, .owner = f->st.st_uid, .fd = -1,
		.caps = caps,
	};
}

/* Turns f->hash into the hash bound to sig's companion files; -1 after an error. */
static int bind_companions(const struct action_file *f, const struct duress_sig *sig,
			   unsigned char hash[DURESS_HASH_LEN])
{
	struct duress_caps caps;
	struct duress_dir dir;
	unsigned char *buf;
	uint64_t budget;
	enum duress_skip skip;
	int r;

	memcpy(hash, f->hash, DURESS_HASH_LEN);
	if (sig->also_len == 0)
		return 0;
	owner_dir(f, &caps, &dir);
	budget = caps.max_total;
	buf = malloc(DURESS_READ_CHUNK);
	if (!buf)
		return fail(f->path, "out of memory");
	r = duress_bind_companions(&dir, sig, buf, &budget, hash, &skip);
	free(buf);
	if (r < 0)
		return fail(f->path, strerror(-r));
	if (skip != DURESS_ARMED)
		return fail(f->path, duress_skip_reason(skip));
	return 0;
}

/* Records the companion files by absolute path, symlinks resolved. */
static int add_companions(const struct action_file *f, const struct duress_sign_opts *opts,
			  struct duress_sig *sig)
{
	sig->also_len = 0;
	for (size_t i = 0; i < opts->n_also; i++) {
		char *abs = realpath(opts->also[i], NULL);
		int r = abs ? duress_sig_add_also(sig, abs) : -errno;

		free(abs);
		if (r < 0) {
			fprintf(stderr, "duress: %s: companion %s: %s\n", f->path, opts->also[i],
				r == -E2BIG ? "too many companion files or paths too long"
					    : strerror(-r));
			return -1;
		}
	}
	return 0;
}

int duress_sign_file(const char *path, const struct duress_password *pw,
		     const struct duress_sign_opts *opts)
{
	struct action_file f;
	struct duress_sig sig;
	unsigned char key[DURESS_KEY_LEN];
	char line[DURESS_SIG_MAX + 1];
	int len, r = -1;

	if (open_action(&f, path) < 0)
		return -1;
	if (geteuid() != 0 && f.st.st_uid != geteuid()) {
		fail(path, "not yours: only its owner or root can sign it");
		goto out;
	}
	if (duress_is_real_password(f.st.st_uid, pw) > 0) {
		fail(path, "that is the account's real password, which pam_unix accepts first");
		goto out;
	}
	duress_warn_weak_password(f.st.st_uid, pw);
	choose_params(&f, opts, &sig.params);
	if (check_cost(&f, &sig.params) < 0 || add_companions(&f, opts, &sig) < 0 ||
	    bind_companions(&f, &sig, sig.content_hash) < 0)
		goto out;
	if (duress_derive_key(pw->text, pw->len, &sig.params, key) < 0) {
		fail(path, "out of memory for Argon2id");
		goto out;
	}
	duress_tag(key, sig.content_hash, sig.tag);
	len = duress_sig_format(&sig, line, sizeof(line));
	if (len < 0 || write_sig(&f, line, (size_t)len) < 0)
		goto out;
	printf("%s: signed (%s%s)\n", path, f.name, DURESS_SIG_SUFFIX);
	report_state(&f);
	r = 0;
out:
	/* One place wipes the key, whichever way the function ends. */
	sodium_memzero(key, sizeof(key));
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

static int verify_sig(const struct action_file *f, const char *buf, size_t len,
		      const struct duress_password *pw)
{
	struct duress_caps caps;
	struct duress_sig sig;
	unsigned char key[DURESS_KEY_LEN], hash[DURESS_HASH_LEN];
	bool match;

	duress_caps_default(&caps);
	if (duress_sig_parse(buf, len, &sig) < 0) {
		fail(f->path, "signature is malformed");
		return 2;
	}
	if (bind_companions(f, &sig, hash) < 0)
		return 1;
	if (duress_params_check(&sig.params, &caps) < 0) {
		fail(f->path, "signature cost is outside the module's default caps");
		return 2;
	}
	if (duress_derive_key(pw->text, pw->len, &sig.params, key) < 0) {
		sodium_memzero(key, sizeof(key));
		fail(f->path, "out of memory for Argon2id");
		return 2;
	}
	match = duress_tag_matches(key, hash, sig.tag);
	sodium_memzero(key, sizeof(key));
	if (!match && sodium_memcmp(hash, sig.content_hash, DURESS_HASH_LEN) != 0)
		fprintf(stderr, "duress: %s: content changed since signing\n", f->path);
	return match ? 0 : 1;
}

int duress_verify_file(const char *path, const struct duress_password *pw)
{
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
		r = verify_sig(&f, buf, len, pw);
	close(f.dir_fd);
	if (r != 2)
		printf("%s: %s\n", path, r == 0 ? "the password matches" : "no match");
	return r;
}
