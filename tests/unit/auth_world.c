/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The authentication tests' world (auth_world.h). */
#include "auth_world.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <crypt.h>
#include <sodium.h>

#include "fixture.h"

struct world W;

#define ALICE_UID 20001
#define DURESSERS_GID 20010

static void join(char *out, size_t size, const char *dir, const char *name)
{
	int n = snprintf(out, size, "%s/%s", dir, name);

	assert_true(n > 0 && (size_t)n < size);
}

static void write_accounts(void)
{
	char path[PATH_MAX], text[4 * PATH_MAX];
	unsigned u = (unsigned)W.uid, g = (unsigned)W.gid;
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *hash;

	assert_non_null(cd);
	/* In the passwd field, not shadowed: what the module hashes before pam_unix. */
	hash = crypt_r(REAL_PW, "$6$worldsalt$", cd);
	assert_true(hash && strncmp(hash, "$6$", 3) == 0);

	/*
	 * ucarol is locked as `usermod -L` does it, udave has no password at
	 * all ("*", as useradd leaves it); root's home has no actions.  toor is
	 * a second uid 0 (as on the BSDs) with a password: the module reads
	 * shadow with getspnam_r(), which nss_wrapper does not wrap, so root
	 * gets the host's shadow entry (often "*", locked) and toor none.
	 */
	snprintf(text, sizeof(text),
		 "root:x:0:0:root:%s/home/root:/bin/sh\n"
		 "ualice:%s:%u:%u:ualice:%s:/bin/sh\n"
		 "ucarol:!x:%u:%u:ucarol:%s/home/ucarol:/bin/sh\n"
		 "udave:*:%u:%u:udave:%s/home/udave:/bin/sh\n"
		 "toor:%s:0:0:toor:%s/home/toor:/bin/sh\n",
		 W.tmp, hash, u, g, W.home, W.root ? u + 2 : u, g, W.tmp, W.root ? u + 3 : u, g,
		 W.tmp, hash, W.tmp);
	free(cd);
	join(path, sizeof(path), W.tmp, "passwd");
	fx_write_text(AT_FDCWD, path, text, 0644);
	setenv("NSS_WRAPPER_PASSWD", path, 1);
	snprintf(text, sizeof(text),
		 "root:x:0:\nualice:x:%u:\nuduressers:x:%u:ualice\nuother:x:%u:ucarol\n", g,
		 DURESSERS_GID, DURESSERS_GID + 1);
	join(path, sizeof(path), W.tmp, "group");
	fx_write_text(AT_FDCWD, path, text, 0644);
	setenv("NSS_WRAPPER_GROUP", path, 1);
}

/*
 * Whether nss_wrapper answers; it keeps its files open once read, so they
 * are opened here, not inside a test's count of descriptors.
 */
static int warm_up_lookups(void)
{
	gid_t groups[8];
	int n = 8;

	if (getpwnam("ualice") && getgrnam("uduressers") &&
	    getgrouplist("ualice", W.gid, groups, &n) == 2)
		return 0;
	fputs("the fake accounts are not seen: nss_wrapper is not linked first\n", stderr);
	return -1;
}

int world_init(void)
{
	W.fake_runner = getenv("DURESS_FAKE_RUNNER");
	W.false_runner = getenv("DURESS_FALSE");
	if (!W.fake_runner || !W.false_runner) {
		fputs("run through meson test: DURESS_FAKE_RUNNER and DURESS_FALSE\n", stderr);
		return -1;
	}
	if (sodium_init() < 0)
		return -1;
	W.root = geteuid() == 0;
	/* Not root: per-user actions are only ever ours. */
	W.uid = W.root ? ALICE_UID : getuid();
	W.gid = W.root ? ALICE_UID : getgid();
	fx_tmpdir(W.tmp, sizeof(W.tmp), "test_auth");
	join(W.home, sizeof(W.home), W.tmp, "ualice");
	join(W.global, sizeof(W.global), W.tmp, "global");
	join(W.slots, sizeof(W.slots), W.tmp, "slots");
	W.slot_holder = -1;
	write_accounts();
	/* The runner writes its report in our working directory. */
	return warm_up_lookups() < 0 ? -1 : chdir(W.tmp);
}

void world_destroy(void)
{
	if (chdir("/") == 0)
		fx_remove_tree(W.tmp);
}

static void add_action(int dir_fd, const char *name, const char *password,
		       const struct duress_params *p, uid_t uid, gid_t gid)
{
	char content[128];

	snprintf(content, sizeof(content), "#!/bin/sh\n# %s\n", name);
	fx_write(dir_fd, name, content, strlen(content), 0700, uid, gid);
	fx_sign(dir_fd, name, content, password, p, uid, gid);
}

/* A directory with two actions, owned by uid; returns it open. */
static int make_dir(const char *path, const char *const names[2], const char *password, uid_t uid,
		    gid_t gid)
{
	struct duress_params p;
	int fd;

	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, uid, gid), 0);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	fx_fast_params(&p);
	add_action(fd, names[0], password, &p, uid, gid);
	add_action(fd, names[1], BOTH_PW, &p, uid, gid);
	return fd;
}

static void build_global(enum world_change change)
{
	static const char *const global_names[2] = { "50-global", "60-both" };
	int fd;

	if (change == WORLD_NO_GLOBAL_DIR)
		return;
	if (change == WORLD_GLOBAL_DIR_UNARMED) {
		assert_int_equal(mkdir(W.global, 0700), 0);
		fd = open(W.global, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd >= 0);
		fx_write(fd, "70-unsigned", "#!/bin/sh\n", 10, 0700, geteuid(), getegid());
		close(fd);
		return;
	}
	fd = make_dir(W.global, global_names, GLOBAL_PW, geteuid(), getegid());
	if (change == WORLD_GLOBAL_DIR_NOT_ROOTS)
		assert_int_equal(fchown(fd, W.uid, W.gid), 0);
	close(fd);
}

/* The slot directory as the change says; the usual one is made by the module itself. */
static void build_slots(enum world_change change)
{
	char path[PATH_MAX];

	switch (change) {
	case WORLD_SLOTS_TAKEN:
		assert_int_equal(mkdir(W.slots, 0700), 0);
		join(path, sizeof(path), W.slots, "slot.0");
		W.slot_holder = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
		assert_true(W.slot_holder >= 0);
		assert_int_equal(flock(W.slot_holder, LOCK_EX | LOCK_NB), 0);
		break;
	case WORLD_SLOT_DIR_SYMLINK:
		assert_int_equal(symlink(W.home, W.slots), 0);
		break;
	case WORLD_SLOT_DIR_WRITABLE:
		assert_int_equal(mkdir(W.slots, 0700), 0);
		assert_int_equal(chmod(W.slots, 0777), 0);
		break;
	case WORLD_SLOT_FILE_SYMLINK:
		assert_int_equal(mkdir(W.slots, 0700), 0);
		join(path, sizeof(path), W.slots, "slot.0");
		assert_int_equal(symlink(W.home, path), 0);
		break;
	default:
		break;
	}
}

void world_build(enum world_change change)
{
	static const char *const user_names[2] = { "10-user", "20-both" };
	char dir[PATH_MAX];
	int fd;

	assert_int_equal(mkdir(W.home, 0755), 0);
	assert_int_equal(chown(W.home, W.uid, W.gid), 0);
	join(dir, sizeof(dir), W.home, ".duress");
	fd = make_dir(dir, user_names, USER_PW, W.uid, W.gid);
	if (change == WORLD_USER_DIR_WRITABLE)
		assert_int_equal(fchmod(fd, 0770), 0);
	if (change == WORLD_USER_ACTION_CHANGED)
		fx_write(fd, "10-user", "#!/bin/sh\n", 10, 0700, W.uid, W.gid);
	close(fd);
	build_global(change);
	build_slots(change);
}

void world_clear(void)
{
	fx_remove_tree(W.home);
	fx_remove_tree(W.global);
	if (W.slot_holder >= 0)
		close(W.slot_holder);
	W.slot_holder = -1;
	if (unlink(W.slots) != 0) /* a symlink, or a directory */
		fx_remove_tree(W.slots);
	(void)unlink("runner.out");
}

int world_teardown(void **state)
{
	(void)state;
	world_clear();
	return 0;
}

int world_group_setup(void **state)
{
	(void)state;
	return world_init();
}

int world_group_teardown(void **state)
{
	(void)state;
	world_destroy();
	return 0;
}

void world_opts(struct duress_opts *o)
{
	duress_opts_default(o);
	o->global_dir = W.global;
	o->runner = W.fake_runner;
	o->slot_dir = W.slots;
	o->max_derivations = 1;
	o->max_wait = 0;
}

enum duress_outcome world_auth(const struct duress_opts *o, const char *user, const char *password,
			       const char *service)
{
	const struct duress_request req = {
		.user = user,
		.password = password,
		.password_len = strlen(password),
		.items = { .user = user, .service = service ? service : "login" },
		.unix_follows = W.before,
		.trace = W.trace,
	};
	const struct duress_log lg = { 0 };

	return duress_authenticate(o, &req, &lg);
}

void world_expand(const char *tmpl, char *out, size_t size)
{
	size_t used = 0;

	for (const char *p = tmpl; *p && used + 16 < size;) {
		if (strncmp(p, "@U@", 3) == 0 || strncmp(p, "@G@", 3) == 0) {
			unsigned id = p[1] == 'U' ? (unsigned)W.uid : (unsigned)W.gid;

			used += (size_t)snprintf(out + used, size - used, "%u", id);
			p += 3;
		} else {
			out[used++] = *p++;
		}
	}
	assert_true(used + 16 < size);
	out[used] = '\0';
}

bool world_report(const char *dir, char *buf, size_t size)
{
	char path[PATH_MAX], text[16384];
	int fd;

	join(path, sizeof(path), dir ? dir : W.tmp, "runner.out");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	buf[0] = '\0';
	if (fd < 0)
		return false;
	assert_true(fx_read_all(fd, text, sizeof(text)) > 0);
	close(fd);
	assert_int_equal(unlink(path), 0);
	for (char *line = text, *end; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		if (strncmp(line, "chain ", 6) == 0 || strncmp(line, "job ", 4) == 0) {
			assert_true(strlen(buf) + (size_t)(end - line) < size);
			strncat(buf, line, (size_t)(end - line));
		}
	}
	return true;
}
