/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The trust rules (every kind against every rule) and the one helper that opens files. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/safe_open.h"
#include "core/sig.h"
#include "nobody.h"

#define ME 1000
#define OTHER 1001
#define CAP 100

struct judge_case {
	const char *what;
	enum duress_file_kind kind;
	enum duress_scope scope;
	mode_t mode; /* type and permissions */
	uid_t uid;
	off_t size;
	enum duress_skip expected;
};

#define REG(perm) (S_IFREG | (perm))
#define DIR(perm) (S_IFDIR | (perm))
#define U DURESS_SCOPE_USER
#define G DURESS_SCOPE_GLOBAL

static const struct judge_case judge_cases[] = {
	/* directory */
	{ "dir: own, 0700", DURESS_FILE_DIR, U, DIR(0700), ME, 4096, DURESS_SKIP_NONE },
	{ "dir: root's in user scope", DURESS_FILE_DIR, U, DIR(0755), 0, 4096, DURESS_SKIP_NONE },
	{ "dir: no execute bit needed", DURESS_FILE_DIR, U, DIR(0600), ME, 4096, DURESS_SKIP_NONE },
	{ "dir: another user's", DURESS_FILE_DIR, U, DIR(0700), OTHER, 4096, DURESS_SKIP_OWNER },
	{ "dir: global, root's", DURESS_FILE_DIR, G, DIR(0700), 0, 4096, DURESS_SKIP_NONE },
	{ "dir: global, a user's", DURESS_FILE_DIR, G, DIR(0700), ME, 4096, DURESS_SKIP_OWNER },
	{ "dir: group-writable", DURESS_FILE_DIR, U, DIR(0770), ME, 4096, DURESS_SKIP_WRITABLE },
	{ "dir: world-writable", DURESS_FILE_DIR, U, DIR(0707), ME, 4096, DURESS_SKIP_WRITABLE },
	{ "dir: a regular file", DURESS_FILE_DIR, U, REG(0700), ME, 1, DURESS_SKIP_NOT_REGULAR },
	{ "dir: a symlink", DURESS_FILE_DIR, U, S_IFLNK | 0777, ME, 1, DURESS_SKIP_NOT_REGULAR },
	{ "dir: huge is fine", DURESS_FILE_DIR, U, DIR(0700), ME, 1 << 30, DURESS_SKIP_NONE },
	/* action */
	{ "action: own, 0700", DURESS_FILE_ACTION, U, REG(0700), ME, 10, DURESS_SKIP_NONE },
	{ "action: readable by others", DURESS_FILE_ACTION, U, REG(0755), ME, 10,
	  DURESS_SKIP_NONE },
	{ "action: root's in user scope", DURESS_FILE_ACTION, U, REG(0755), 0, 10,
	  DURESS_SKIP_NONE },
	{ "action: global, root's", DURESS_FILE_ACTION, G, REG(0700), 0, 10, DURESS_SKIP_NONE },
	{ "action: global, a user's", DURESS_FILE_ACTION, G, REG(0700), ME, 10, DURESS_SKIP_OWNER },
	{ "action: another user's", DURESS_FILE_ACTION, U, REG(0700), OTHER, 10,
	  DURESS_SKIP_OWNER },
	{ "action: group-writable", DURESS_FILE_ACTION, U, REG(0770), ME, 10,
	  DURESS_SKIP_WRITABLE },
	{ "action: world-writable", DURESS_FILE_ACTION, U, REG(0702), ME, 10,
	  DURESS_SKIP_WRITABLE },
	{ "action: no owner-execute", DURESS_FILE_ACTION, U, REG(0655), ME, 10,
	  DURESS_SKIP_NOT_EXECUTABLE },
	{ "action: at the cap", DURESS_FILE_ACTION, U, REG(0700), ME, CAP, DURESS_SKIP_NONE },
	{ "action: over the cap", DURESS_FILE_ACTION, U, REG(0700), ME, CAP + 1,
	  DURESS_SKIP_TOO_LARGE },
	{ "action: symlink", DURESS_FILE_ACTION, U, S_IFLNK | 0777, ME, 1, DURESS_SKIP_SYMLINK },
	{ "action: FIFO", DURESS_FILE_ACTION, U, S_IFIFO | 0700, ME, 0, DURESS_SKIP_NOT_REGULAR },
	{ "action: device", DURESS_FILE_ACTION, U, S_IFCHR | 0700, ME, 0, DURESS_SKIP_NOT_REGULAR },
	{ "action: socket", DURESS_FILE_ACTION, U, S_IFSOCK | 0700, ME, 0,
	  DURESS_SKIP_NOT_REGULAR },
	{ "action: directory", DURESS_FILE_ACTION, U, DIR(0700), ME, 0, DURESS_SKIP_NOT_REGULAR },
	/* The order of the rules: type, owner, mode, execute bit, size. */
	{ "action: owner before mode", DURESS_FILE_ACTION, U, REG(0777), OTHER, 10,
	  DURESS_SKIP_OWNER },
	{ "action: mode before execute", DURESS_FILE_ACTION, U, REG(0666), ME, 10,
	  DURESS_SKIP_WRITABLE },
	{ "action: execute before size", DURESS_FILE_ACTION, U, REG(0600), ME, CAP + 1,
	  DURESS_SKIP_NOT_EXECUTABLE },
	/* signature: its own cap, no execute bit */
	{ "sig: own, 0600", DURESS_FILE_SIG, U, REG(0600), ME, 150, DURESS_SKIP_NONE },
	{ "sig: root's in user scope", DURESS_FILE_SIG, U, REG(0644), 0, 150, DURESS_SKIP_NONE },
	{ "sig: global, a user's", DURESS_FILE_SIG, G, REG(0600), ME, 150, DURESS_SKIP_SIG_OWNER },
	{ "sig: another user's", DURESS_FILE_SIG, U, REG(0600), OTHER, 150, DURESS_SKIP_SIG_OWNER },
	{ "sig: group-writable", DURESS_FILE_SIG, U, REG(0620), ME, 150, DURESS_SKIP_SIG_WRITABLE },
	{ "sig: world-writable", DURESS_FILE_SIG, U, REG(0602), ME, 150, DURESS_SKIP_SIG_WRITABLE },
	{ "sig: at DURESS_SIG_MAX", DURESS_FILE_SIG, U, REG(0600), ME, DURESS_SIG_MAX,
	  DURESS_SKIP_NONE },
	{ "sig: over DURESS_SIG_MAX", DURESS_FILE_SIG, U, REG(0600), ME, DURESS_SIG_MAX + 1,
	  DURESS_SKIP_SIG_MALFORMED },
	{ "sig: symlink", DURESS_FILE_SIG, U, S_IFLNK | 0777, ME, 1, DURESS_SKIP_SIG_NOT_REGULAR },
	{ "sig: FIFO", DURESS_FILE_SIG, U, S_IFIFO | 0600, ME, 0, DURESS_SKIP_SIG_NOT_REGULAR },
	{ "sig: directory", DURESS_FILE_SIG, U, DIR(0700), ME, 0, DURESS_SKIP_SIG_NOT_REGULAR },
	/* companion: every failure is the one "unsafe" reason */
	{ "companion: own, 0600", DURESS_FILE_COMPANION, U, REG(0600), ME, 10, DURESS_SKIP_NONE },
	{ "companion: root's", DURESS_FILE_COMPANION, U, REG(0644), 0, 10, DURESS_SKIP_NONE },
	{ "companion: at the cap", DURESS_FILE_COMPANION, U, REG(0600), ME, CAP, DURESS_SKIP_NONE },
	{ "companion: global, a user's", DURESS_FILE_COMPANION, G, REG(0600), ME, 10,
	  DURESS_SKIP_ALSO_UNSAFE },
	{ "companion: another user's", DURESS_FILE_COMPANION, U, REG(0600), OTHER, 10,
	  DURESS_SKIP_ALSO_UNSAFE },
	{ "companion: group-writable", DURESS_FILE_COMPANION, U, REG(0660), ME, 10,
	  DURESS_SKIP_ALSO_UNSAFE },
	{ "companion: over the cap", DURESS_FILE_COMPANION, U, REG(0600), ME, CAP + 1,
	  DURESS_SKIP_ALSO_UNSAFE },
	{ "companion: symlink", DURESS_FILE_COMPANION, U, S_IFLNK | 0777, ME, 1,
	  DURESS_SKIP_ALSO_UNSAFE },
	{ "companion: FIFO", DURESS_FILE_COMPANION, U, S_IFIFO | 0600, ME, 0,
	  DURESS_SKIP_ALSO_UNSAFE },
	{ "companion: device", DURESS_FILE_COMPANION, U, S_IFCHR | 0666, 0, 0,
	  DURESS_SKIP_ALSO_UNSAFE },
	/* input (what the CLI reads): type and size only */
	{ "input: anyone's, any mode", DURESS_FILE_INPUT, U, REG(0666), OTHER, 10,
	  DURESS_SKIP_NONE },
	{ "input: over the cap", DURESS_FILE_INPUT, U, REG(0600), ME, CAP + 1,
	  DURESS_SKIP_TOO_LARGE },
	{ "input: symlink", DURESS_FILE_INPUT, U, S_IFLNK | 0777, ME, 1, DURESS_SKIP_SYMLINK },
	{ "input: FIFO", DURESS_FILE_INPUT, U, S_IFIFO | 0600, ME, 0, DURESS_SKIP_NOT_REGULAR },
};

static void judge_table(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(judge_cases) / sizeof(judge_cases[0]); i++) {
		const struct judge_case *c = &judge_cases[i];
		struct duress_trust t = { .scope = c->scope,
					  .owner = c->scope == U ? ME : 0,
					  .max_size = CAP };
		struct stat st = { .st_mode = c->mode, .st_uid = c->uid, .st_size = c->size };
		enum duress_skip got = duress_judge_file(c->kind, &st, &t);

		if (got != c->expected) {
			print_error("%s: got \"%s\", expected \"%s\"\n", c->what,
				    duress_skip_reason(got), duress_skip_reason(c->expected));
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

/* --- the helper on real files ------------------------------------------- */

static char tmp[PATH_MAX / 2];
static int tmp_fd = -1;

static int make_tmp(void **state)
{
	const char *base = getenv("TMPDIR");

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s/test_safe_open.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmp))
		return -1;
	tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return tmp_fd < 0 ? -1 : 0;
}

static int remove_tmp(void **state)
{
	const char *names[] = { "file", "fifo", "link", "sub", "secret" };

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		(void)unlinkat(tmp_fd, names[i], 0);
	(void)unlinkat(tmp_fd, "sub", AT_REMOVEDIR);
	close(tmp_fd);
	return rmdir(tmp);
}

static struct duress_trust own_trust(void)
{
	return (struct duress_trust){ .scope = DURESS_SCOPE_USER,
				      .owner = geteuid(),
				      .max_size = CAP };
}

static void write_at(const char *name, const char *text, mode_t mode)
{
	int fd = openat(tmp_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void opens_a_fit_file_for_reading(void **state)
{
	struct duress_trust t = own_trust();
	struct duress_file f;
	struct stat st;
	char buf[16] = { 0 };

	(void)state;
	write_at("file", "content", 0600);
	assert_int_equal(duress_open_file(tmp_fd, "file", DURESS_FILE_COMPANION, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_NONE);
	assert_true(f.fd >= 0);
	assert_int_equal(read(f.fd, buf, sizeof(buf) - 1), 7);
	assert_string_equal(buf, "content");
	assert_int_equal(fstatat(tmp_fd, "file", &st, 0), 0);
	assert_true(st.st_ino == f.st.st_ino && st.st_dev == f.st.st_dev);
	/* Read-only, close-on-exec. */
	assert_int_equal(fcntl(f.fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(f.fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(duress_file_close(&f), 0);
	/* Judged only: nothing is left open. */
	assert_int_equal(duress_open_file(tmp_fd, "file", DURESS_FILE_COMPANION, &t, false, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_NONE);
	assert_int_equal(f.fd, -1);
}

/* Whether anything opened the watched inode (an O_PATH open is no open to inotify). */
static bool was_opened(int in)
{
	char buf[4096];

	return read(in, buf, sizeof(buf)) > 0;
}

static void never_opens_a_fifo(void **state)
{
	struct duress_trust t = own_trust();
	struct duress_file f;
	char path[PATH_MAX];
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	(void)state;
	assert_true(in >= 0);
	assert_int_equal(mkfifoat(tmp_fd, "fifo", 0600), 0);
	snprintf(path, sizeof(path), "%s/fifo", tmp);
	assert_true(inotify_add_watch(in, path, IN_OPEN) >= 0);
	for (int kind = DURESS_FILE_ACTION; kind <= DURESS_FILE_INPUT; kind++) {
		assert_int_equal(duress_open_file(tmp_fd, "fifo", kind, &t, true, &f), 0);
		assert_int_not_equal(f.skip, DURESS_SKIP_NONE);
		assert_int_equal(f.fd, -1);
	}
	assert_int_equal(duress_open_file(AT_FDCWD, path, DURESS_FILE_COMPANION, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_ALSO_UNSAFE);
	assert_false(was_opened(in));
	/* The watch itself works: a real open is seen. */
	close(open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
	assert_true(was_opened(in));
	close(in);
}

static void never_follows_a_symlink(void **state)
{
	struct duress_trust t = own_trust();
	struct duress_file f;

	(void)state;
	write_at("file", "x", 0700);
	assert_int_equal(symlinkat("file", tmp_fd, "link"), 0);
	assert_int_equal(duress_open_file(tmp_fd, "link", DURESS_FILE_ACTION, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_SYMLINK);
	assert_int_equal(f.fd, -1);
	assert_int_equal(duress_open_file(tmp_fd, "link", DURESS_FILE_SIG, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_SIG_NOT_REGULAR);
	assert_int_equal(unlinkat(tmp_fd, "link", 0), 0);
	/* A symlink to a directory is no directory. */
	assert_int_equal(mkdirat(tmp_fd, "sub", 0700), 0);
	assert_int_equal(symlinkat("sub", tmp_fd, "link"), 0);
	assert_int_equal(duress_open_file(tmp_fd, "link", DURESS_FILE_DIR, &t, true, &f), 0);
	assert_int_equal(f.error, ENOTDIR);
	assert_int_equal(f.fd, -1);
}

static void missing_file(void **state)
{
	struct duress_trust t = own_trust();
	struct duress_file f;

	(void)state;
	assert_int_equal(duress_open_file(tmp_fd, "none", DURESS_FILE_COMPANION, &t, true, &f), 0);
	assert_int_equal(f.error, ENOENT);
	assert_int_equal(f.skip, DURESS_SKIP_ALSO_MISSING);
	assert_int_equal(duress_open_file(tmp_fd, "none", DURESS_FILE_SIG, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_UNREADABLE);
}

static void opens_a_directory_for_listing(void **state)
{
	struct duress_trust t = own_trust();
	struct duress_file f;

	(void)state;
	assert_int_equal(duress_open_file(AT_FDCWD, tmp, DURESS_FILE_DIR, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_NONE);
	assert_true(f.fd >= 0);
	/* Opened for reading, not O_PATH: getdents works. */
	assert_true(syscall(SYS_getdents64, f.fd, (char[512]){ 0 }, 512) > 0);
	assert_int_equal(duress_file_close(&f), 0);
	assert_int_equal(fchmodat(AT_FDCWD, tmp, 0770, 0), 0);
	assert_int_equal(duress_open_file(AT_FDCWD, tmp, DURESS_FILE_DIR, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_WRITABLE);
	assert_int_equal(f.fd, -1);
	assert_int_equal(fchmodat(AT_FDCWD, tmp, 0700, 0), 0);
}

/* --- pseudo-filesystems ---------------------------------------------------- */

/* A regular file of sysfs that every kernel has, or NULL. */
static const char *a_sysfs_file(void)
{
	static const char *const candidates[] = { "/sys/kernel/uevent_seqnum", "/sys/power/state",
						  "/sys/kernel/profiling" };
	struct stat st;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (stat(candidates[i], &st) == 0 && S_ISREG(st.st_mode))
			return candidates[i];
	return NULL;
}

/* Fit by every other rule (root's or ours, not writable by others), refused for where it is. */
static void refuses_pseudo_filesystems(void **state)
{
	struct duress_trust t = own_trust();
	const char *sys = a_sysfs_file();
	struct duress_file f;
	int proc_self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	t.max_size = 1 << 20;
	assert_true(proc_self >= 0);
	assert_int_equal(duress_open_file(proc_self, "status", DURESS_FILE_COMPANION, &t, true, &f),
			 0);
	assert_int_equal(f.skip, DURESS_SKIP_ALSO_PSEUDO_FS);
	assert_int_equal(f.fd, -1);
	assert_int_equal(duress_open_file(proc_self, "status", DURESS_FILE_ACTION, &t, true, &f),
			 0);
	assert_int_equal(f.skip, DURESS_SKIP_PSEUDO_FS);
	assert_int_equal(duress_open_file(proc_self, "status", DURESS_FILE_SIG, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_PSEUDO_FS);
	assert_int_equal(f.fd, -1);
	assert_int_equal(duress_open_file(AT_FDCWD, "/proc/sys", DURESS_FILE_DIR, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_PSEUDO_FS);
	assert_int_equal(f.fd, -1);
	assert_int_equal(duress_open_file(AT_FDCWD, "/sys/kernel", DURESS_FILE_DIR, &t, true, &f),
			 0);
	assert_int_equal(f.skip, DURESS_SKIP_PSEUDO_FS);
	if (sys) {
		assert_int_equal(
			duress_open_file(AT_FDCWD, sys, DURESS_FILE_COMPANION, &t, true, &f), 0);
		assert_int_equal(f.skip, DURESS_SKIP_ALSO_PSEUDO_FS);
		assert_int_equal(f.fd, -1);
	}
	/* What the CLI reads for its caller, with the caller's rights, is not judged so. */
	assert_int_equal(duress_open_file(proc_self, "status", DURESS_FILE_INPUT, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_NONE);
	assert_int_equal(duress_file_close(&f), 0);
	assert_string_equal(duress_skip_reason(DURESS_SKIP_PSEUDO_FS),
			    "on a pseudo-filesystem (/proc, /sys...)");
	close(proc_self);
}

/* --- with another user's rights (root only) ------------------------------ */

static void require_root(void)
{
	if (geteuid() == 0)
		return;
	printf("SKIP: needs root to take another user's rights\n");
	skip();
}

static uid_t current_fsuid(void)
{
	return (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
}

/* A per-user scope read with nobody's rights (uid and gid 65534, no other group). */
static struct duress_trust nobody_trust(void)
{
	return (struct duress_trust){
		.scope = DURESS_SCOPE_USER,
		.owner = 65534,
		.max_size = CAP,
		.as = nobody_identity(),
	};
}

static void reads_with_the_users_rights(void **state)
{
	struct duress_trust t = nobody_trust();
	struct duress_file f;
	int n_groups = getgroups(0, NULL);

	(void)state;
	require_root();
	/* Root's file, fit by every rule but readable by root only, where the user can reach it. */
	assert_int_equal(fchmod(tmp_fd, 0711), 0);
	write_at("secret", "guess me", 0600);
	assert_int_equal(fchownat(tmp_fd, "secret", 0, 0, 0), 0);
	assert_int_equal(duress_open_file(tmp_fd, "secret", DURESS_FILE_COMPANION, &t, true, &f),
			 0);
	assert_int_equal(f.skip, DURESS_SKIP_ALSO_MISSING);
	assert_int_equal(f.error, EACCES);
	assert_int_equal(f.fd, -1);
	/* Our own rights are back. */
	assert_int_equal(current_fsuid(), 0);
	assert_int_equal((gid_t)syscall(SYS_setfsgid, (gid_t)-1), getegid());
	assert_int_equal(getgroups(0, NULL), n_groups);
	/* Readable by the user: the same file opens. */
	assert_int_equal(fchmodat(tmp_fd, "secret", 0644, 0), 0);
	assert_int_equal(duress_open_file(tmp_fd, "secret", DURESS_FILE_COMPANION, &t, true, &f),
			 0);
	assert_int_equal(f.skip, DURESS_SKIP_NONE);
	assert_true(f.fd >= 0);
	assert_int_equal(duress_file_close(&f), 0);
	assert_int_equal(current_fsuid(), 0);
}

/* A thread's effective capabilities, from the kernel's report. */
static unsigned long long cap_eff(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/thread-self/status", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

/* What is open is read with the rights that opened it, until duress_file_close(). */
static void holds_the_rights_until_close(void **state)
{
	struct duress_trust t = nobody_trust();
	struct duress_file f;
	unsigned long long caps = cap_eff();
	char buf[16] = { 0 };

	(void)state;
	require_root();
	assert_int_equal(fchmod(tmp_fd, 0711), 0);
	write_at("file", "content", 0644);
	assert_int_equal(duress_open_file(tmp_fd, "file", DURESS_FILE_COMPANION, &t, true, &f), 0);
	assert_int_equal(f.skip, DURESS_SKIP_NONE);
	assert_int_equal(current_fsuid(), 65534);
	assert_true(cap_eff() == 0);
	assert_int_equal(read(f.fd, buf, sizeof(buf) - 1), 7);
	assert_int_equal(duress_file_close(&f), 0);
	assert_int_equal(f.fd, -1);
	assert_int_equal(current_fsuid(), 0);
	assert_true(cap_eff() == caps);
	/* Nothing left open, nothing held. */
	assert_int_equal(duress_open_file(tmp_fd, "file", DURESS_FILE_COMPANION, &t, false, &f), 0);
	assert_int_equal(current_fsuid(), 0);
	assert_int_equal(duress_open_file(tmp_fd, "none", DURESS_FILE_COMPANION, &t, true, &f), 0);
	assert_int_equal(current_fsuid(), 0);
	assert_true(cap_eff() == caps);
}

static void search_permission_is_the_users(void **state)
{
	struct duress_trust t = nobody_trust();
	struct duress_file f;
	char path[PATH_MAX];

	(void)state;
	require_root();
	/* A world-readable file in a root-only directory: not even its O_PATH opens. */
	assert_int_equal(fchmod(tmp_fd, 0711), 0);
	assert_int_equal(mkdirat(tmp_fd, "sub", 0700), 0);
	snprintf(path, sizeof(path), "%s/sub/secret", tmp);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	assert_int_equal(duress_open_file(AT_FDCWD, path, DURESS_FILE_COMPANION, &t, true, &f), 0);
	assert_int_equal(f.error, EACCES);
	assert_int_equal(f.skip, DURESS_SKIP_ALSO_MISSING);
	assert_int_equal(unlink(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(judge_table),
		cmocka_unit_test_setup_teardown(opens_a_fit_file_for_reading, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(never_opens_a_fifo, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(never_follows_a_symlink, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(missing_file, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(opens_a_directory_for_listing, make_tmp,
						remove_tmp),
		cmocka_unit_test(refuses_pseudo_filesystems),
		cmocka_unit_test_setup_teardown(reads_with_the_users_rights, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(holds_the_rights_until_close, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(search_permission_is_the_users, make_tmp,
						remove_tmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
