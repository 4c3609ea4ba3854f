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
#include <dirent.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/vfs.h>

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
	duress_file_close(&f);
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
	duress_file_close(&f);
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
	duress_file_close(&f);
	assert_string_equal(duress_skip_reason(DURESS_SKIP_PSEUDO_FS),
			    "on a pseudo-filesystem (/proc, /sys...)");
	close(proc_self);
}

/*
 * Every other pseudo-filesystem that holds files: each instance mounted here
 * (every cgroup hierarchy), or, as root, one mounted in a private mount
 * namespace of this test process when none is (it goes when the test ends).
 * Its top directory is refused as a directory, and a regular file in it as
 * an action, a signature and a companion.
 */
struct pseudo_fs {
	const char *name; /* the test's */
	const char *type; /* as mount(8) and /proc/self/mountinfo name it */
	unsigned long magic;
	const char *options; /* for our own mount */
	const char *file;    /* a file every instance has, or NULL: the first one listed */
};

#define CONFIGFS_MAGIC 0x62656570 /* fs/configfs/mount.c; not in <linux/magic.h> */

/* Not const: a test's state is a plain pointer. */
static struct pseudo_fs pseudo_fs_rows[] = {
	{ "pseudo-filesystem: every cgroup (v1) hierarchy", "cgroup", CGROUP_SUPER_MAGIC,
	  "none,name=test_safe_open", "cgroup.procs" },
	{ "pseudo-filesystem: cgroup2", "cgroup2", CGROUP2_SUPER_MAGIC, NULL, "cgroup.procs" },
	{ "pseudo-filesystem: bpf", "bpf", BPF_FS_MAGIC, NULL, NULL },
	{ "pseudo-filesystem: debugfs", "debugfs", DEBUGFS_MAGIC, NULL, NULL },
	{ "pseudo-filesystem: tracefs", "tracefs", TRACEFS_MAGIC, NULL, "README" },
	{ "pseudo-filesystem: securityfs", "securityfs", SECURITYFS_MAGIC, NULL, NULL },
	{ "pseudo-filesystem: configfs", "configfs", CONFIGFS_MAGIC, NULL, NULL },
};

#define MOUNTS_MAX 32

/* The mount points of type in our namespace (without escaped characters); how many. */
static size_t mounts_of(const char *type, char points[MOUNTS_MAX][PATH_MAX])
{
	char line[4096];
	size_t n = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	assert_non_null(f);
	while (n < MOUNTS_MAX && fgets(line, sizeof(line), f)) {
		char point[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[64];

		/* ID PARENT MAJ:MIN ROOT POINT ... - TYPE SOURCE OPTIONS */
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, type) != 0 ||
		    strchr(point, '\\'))
			continue;
		snprintf(points[n++], PATH_MAX, "%s", point);
	}
	fclose(f);
	return n;
}

/* Once per process, as root: a mount namespace of our own, nothing propagated out. */
static int private_mounts(void)
{
	static int r = 1;

	if (r == 1)
		r = unshare(CLONE_NEWNS) == 0 &&
				    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 ?
			    0 :
			    -errno;
	return r;
}

/* Mounts fs at dir in our private namespace; 0, or a SKIP line's reason in why. */
static int mount_own(const struct pseudo_fs *fs, const char *dir, char *why, size_t size)
{
	int r;

	if (geteuid() != 0) {
		snprintf(why, size, "no %s mounted, and mounting one needs root", fs->type);
		return -1;
	}
	r = private_mounts();
	if (r < 0) {
		snprintf(why, size, "no %s mounted, and no private mount namespace (errno %d)",
			 fs->type, -r);
		return -1;
	}
	assert_int_equal(mkdir(dir, 0700), 0);
	if (mount(fs->type, dir, fs->type, 0, fs->options) == 0)
		return 0;
	r = errno;
	(void)rmdir(dir);
	if (r == ENODEV)
		snprintf(why, size, "this kernel has no %s (/proc/filesystems)", fs->type);
	else
		snprintf(why, size, "no %s mounted, and mounting one failed (errno %d)", fs->type,
			 r);
	return -1;
}

/* fs->file in dir, or the first regular file listed there; false if there is none. */
static bool a_file_in(const struct pseudo_fs *fs, const char *dir, char out[PATH_MAX])
{
	struct stat st;
	struct dirent *e;
	DIR *d;

	snprintf(out, PATH_MAX, "%s/%s", dir, fs->file ? fs->file : "");
	if (fs->file && lstat(out, &st) == 0 && S_ISREG(st.st_mode))
		return true;
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		snprintf(out, PATH_MAX, "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && lstat(out, &st) == 0 && S_ISREG(st.st_mode))
			break;
	}
	closedir(d);
	return e != NULL;
}

/* One kind's judgement of path: refused for where it is, nothing left open. */
static void expect_pseudo(const char *path, enum duress_file_kind kind, enum duress_skip want)
{
	struct duress_trust t = own_trust();
	struct duress_file f;

	t.max_size = 1 << 20;
	assert_int_equal(duress_open_file(AT_FDCWD, path, kind, &t, true, &f), 0);
	if (f.skip != want)
		fail_msg("%s as kind %d: \"%s\", expected \"%s\"", path, (int)kind,
			 duress_skip_reason(f.skip), duress_skip_reason(want));
	assert_int_equal(f.fd, -1);
}

/*
 * One instance: its top directory, then a file in it (said when there is
 * none).  False if this user cannot reach into it (debugfs is root's 0700).
 */
static bool expect_instance_refused(const struct pseudo_fs *fs, const char *dir)
{
	char file[PATH_MAX];
	struct statfs sfs;

	if (access(dir, R_OK | X_OK) != 0) {
		printf("# %s at %s: not open to this user\n", fs->type, dir);
		return false;
	}
	assert_int_equal(statfs(dir, &sfs), 0);
	assert_true((unsigned long)sfs.f_type == fs->magic);
	expect_pseudo(dir, DURESS_FILE_DIR, DURESS_SKIP_PSEUDO_FS);
	if (!a_file_in(fs, dir, file)) {
		printf("# %s at %s: no regular file in it, its directory only\n", fs->type, dir);
		return true;
	}
	printf("# %s: %s\n", fs->type, file);
	expect_pseudo(file, DURESS_FILE_ACTION, DURESS_SKIP_PSEUDO_FS);
	expect_pseudo(file, DURESS_FILE_SIG, DURESS_SKIP_PSEUDO_FS);
	expect_pseudo(file, DURESS_FILE_COMPANION, DURESS_SKIP_ALSO_PSEUDO_FS);
	return true;
}

static void refuses_every_pseudo_filesystem(void **state)
{
	const struct pseudo_fs *fs = *state;
	char points[MOUNTS_MAX][PATH_MAX], why[256], own[PATH_MAX];
	size_t n = mounts_of(fs->type, points), tested = 0;

	for (size_t i = 0; i < n; i++)
		tested += expect_instance_refused(fs, points[i]);
	if (tested > 0)
		return;
	snprintf(own, sizeof(own), "%s/%s", tmp, fs->type);
	if (n > 0)
		snprintf(why, sizeof(why), "no %s mounted here is open to this user", fs->type);
	if (n > 0 || mount_own(fs, own, why, sizeof(why)) < 0) {
		printf("SKIP: %s\n", why);
		skip();
	}
	assert_true(expect_instance_refused(fs, own));
}

/* Our own mount goes, passed or failed, before the temporary directory. */
static int unmount_own(void **state)
{
	const struct pseudo_fs *fs = *state;
	char own[PATH_MAX];

	snprintf(own, sizeof(own), "%s/%s", tmp, fs->type);
	(void)umount2(own, MNT_DETACH);
	(void)rmdir(own);
	return remove_tmp(state);
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
	duress_file_close(&f);
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
	duress_file_close(&f);
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
	enum { N_PSEUDO = sizeof(pseudo_fs_rows) / sizeof(pseudo_fs_rows[0]), N_OTHERS = 10 };
	struct CMUnitTest tests[N_OTHERS + N_PSEUDO] = {
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

	for (size_t i = 0; i < N_PSEUDO; i++)
		tests[N_OTHERS + i] = (struct CMUnitTest){
			.name = pseudo_fs_rows[i].name,
			.test_func = refuses_every_pseudo_filesystem,
			.setup_func = make_tmp,
			.teardown_func = unmount_own,
			.initial_state = &pseudo_fs_rows[i],
		};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
