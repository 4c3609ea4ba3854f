/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/initramfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/boot.h"
#include "core/escape.h"
#include "core/opts.h"

#define UNPACKER "unmkinitramfs"
#define UNPACK_TIMEOUT_MS 60000
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* The boot directory's files: as the module caps a global directory. */
#define MAX_FILES DURESS_DEFAULT_MAX_ENTRIES
#define MAX_FILE_SIZE DURESS_DEFAULT_MAX_FILE_SIZE
#define MAX_TOTAL DURESS_DEFAULT_MAX_TOTAL
#define MAX_SHOWN 8 /* names in the ERROR line */
#define HASH_LEN crypto_hash_sha256_BYTES
#define SHOWN_SIZE DURESS_ESCAPED_SIZE(PATH_MAX)

enum state { SAME, CHANGED, MISSING, EXTRA };

struct entry {
	char name[NAME_MAX + 1];
	enum state state;
};

struct compare {
	struct entry *e;
	size_t n;
	uint64_t total;  /* bytes hashed on the boot directory's side */
	const char *why; /* set when it cannot tell */
	const char *fix;
};

/* The program's full path from PATH, or -1: execve() with no shell and no search. */
static int find_unpacker(char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;
	int r = -1;

	copy = strdup(path && *path ? path : DEFAULT_PATH);
	if (!copy)
		return -1;
	for (char *d = strtok_r(copy, ":", &save); d && r < 0; d = strtok_r(NULL, ":", &save)) {
		struct stat st;

		if (d[0] != '/' || snprintf(out, len, "%s/%s", d, UNPACKER) >= (int)len)
			continue;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			r = 0;
	}
	free(copy);
	return r;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child: its own process group (killed whole on a timeout), no output, no shell. */
static void run_unpacker(const char *prog, const char *image, const char *dir, const char *tmp)
{
	char path_env[PATH_MAX + 8], tmp_env[PATH_MAX + 16], lc_env[] = "LC_ALL=C";
	char arg0[] = UNPACKER, arg1[PATH_MAX], arg2[PATH_MAX + 8];
	const char *path = getenv("PATH");
	char *argv[] = { arg0, arg1, arg2, NULL };
	char *envp[] = { path_env, tmp_env, lc_env, NULL };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	(void)setpgid(0, 0);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(127);
	for (int fd = 3; fd < 1024; fd++)
		(void)close(fd);
	snprintf(arg1, sizeof(arg1), "%s", image);
	snprintf(arg2, sizeof(arg2), "%s", dir);
	snprintf(path_env, sizeof(path_env), "PATH=%s", path && *path ? path : DEFAULT_PATH);
	/* Its temporary copy of the main archive lands in our directory, removed with it. */
	snprintf(tmp_env, sizeof(tmp_env), "TMPDIR=%s", tmp);
	execve(prog, argv, envp);
	_exit(127);
}

/* Unpacks image into dir; 0, or -1 with *why set. */
static int unpack(const char *image, const char *dir, const char *tmp, const char **why)
{
	char prog[PATH_MAX];
	long long deadline;
	int status = 0;
	pid_t pid, r;

	if (find_unpacker(prog, sizeof(prog)) < 0) {
		*why = UNPACKER " is not installed (not found in PATH)";
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		*why = "cannot start " UNPACKER;
		return -1;
	}
	if (pid == 0)
		run_unpacker(prog, image, dir, tmp);
	(void)setpgid(pid, pid);
	deadline = now_ms() + UNPACK_TIMEOUT_MS;
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < deadline) {
		struct timespec tick = { .tv_nsec = 10000000L }; /* 10 ms */

		nanosleep(&tick, NULL);
	}
	/* Whatever is left of its group (a decompressor, cpio) goes too. */
	(void)kill(-pid, SIGKILL);
	if (r == 0) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		*why = UNPACKER " took longer than 60 s";
		return -1;
	}
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*why = UNPACKER " failed on it";
		return -1;
	}
	return 0;
}

/* Opens a relative path below root component by component, never following a link. */
static int open_below(int root, const char *rel, bool last_is_dir)
{
	char buf[PATH_MAX], *save = NULL, *next;
	int fd = dup(root);

	if (fd < 0 || snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (char *c = strtok_r(buf, "/", &save); c && fd >= 0; c = next) {
		int flags, sub;

		next = strtok_r(NULL, "/", &save);
		flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
		if (next || last_is_dir)
			flags |= O_DIRECTORY;
		sub = openat(fd, c, flags);
		close(fd);
		fd = sub;
	}
	return fd;
}

/*
 * SHA-256 of name in dir_fd, a regular file of at most MAX_FILE_SIZE (no
 * link followed); adds its size to *total when total is not NULL.  0,
 * -ENOENT when it is not there (or not a regular file), -EFBIG, -errno.
 */
static int hash_at(int dir_fd, const char *name, unsigned char out[HASH_LEN], uint64_t *total)
{
	crypto_hash_sha256_state st;
	unsigned char buf[16384];
	struct stat s;
	uint64_t left;
	int fd, r = 0;

	if (dir_fd < 0)
		return -ENOENT;
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -ENOENT : -errno;
	if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if ((uint64_t)s.st_size > MAX_FILE_SIZE ||
	    (total && *total + (uint64_t)s.st_size > MAX_TOTAL)) {
		close(fd);
		return -EFBIG;
	}
	if (total)
		*total += (uint64_t)s.st_size;
	crypto_hash_sha256_init(&st);
	/* Bounded by what was measured: a file growing meanwhile reads as changed. */
	for (left = (uint64_t)s.st_size + 1; left > 0;) {
		ssize_t n = read(fd, buf, sizeof(buf) < left ? sizeof(buf) : (size_t)left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		crypto_hash_sha256_update(&st, buf, (size_t)n);
		left -= (uint64_t)n;
	}
	crypto_hash_sha256_final(&st, out);
	close(fd);
	return r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static bool known(const struct compare *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->e[i].name, name) == 0)
			return true;
	return false;
}

/*
 * Whether the initramfs-tools hook copies this file of the boot directory:
 * a regular file, not hidden, a signature or executable.
 */
static bool hook_copies(const char *name, const struct stat *s)
{
	size_t len = strlen(name);

	return name[0] != '.' && ((len > 4 && strcmp(name + len - 4, ".sig") == 0) ||
				  (s->st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)));
}

/*
 * The regular files of dir_fd (only those the hook copies, with
 * copied_only), as entries in state st (appended); -1 with c->why set when
 * there are too many.  Entries already known are left out.
 */
static int list_files(struct compare *c, int dir_fd, enum state st, bool copied_only)
{
	int fd = dup(dir_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		c->why = "cannot list the boot directory";
		c->fix = "run duress check as root";
		return -1;
	}
	while ((de = readdir(d))) {
		struct stat s;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dir_fd, de->d_name, &s, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(s.st_mode) || (copied_only && !hook_copies(de->d_name, &s)) ||
		    known(c, de->d_name))
			continue;
		if (c->n >= 2 * MAX_FILES) {
			closedir(d);
			c->why = "more than 256 files to compare";
			c->fix = "keep the boot directory to its actions and signatures";
			return -1;
		}
		snprintf(c->e[c->n].name, sizeof(c->e[c->n].name), "%s", de->d_name);
		c->e[c->n++].state = st;
	}
	closedir(d);
	return 0;
}

/* Fills c: each file of the boot directory against its copy, then the copies left over. */
static int compare_dirs(struct compare *c, int boot_fd, int copy_fd)
{
	size_t boot_n;

	if (list_files(c, boot_fd, SAME, true) < 0)
		return -1;
	if (c->n > MAX_FILES) {
		c->why = "more than 256 files in the boot directory";
		c->fix = "keep the boot directory to its actions and signatures";
		return -1;
	}
	boot_n = c->n;
	for (size_t i = 0; i < boot_n; i++) {
		unsigned char mine[HASH_LEN], theirs[HASH_LEN];
		int r = hash_at(boot_fd, c->e[i].name, mine, &c->total);

		if (r < 0) {
			c->why = r == -EFBIG ?
					 "the boot directory is over 16 MiB a file or 64 MiB" :
					 "a file of the boot directory cannot be read";
			c->fix = r == -EFBIG ? "keep the boot directory small" :
					       "run duress check as root";
			return -1;
		}
		r = hash_at(copy_fd, c->e[i].name, theirs, NULL);
		if (r == -ENOENT)
			c->e[i].state = MISSING;
		else if (r < 0 || memcmp(mine, theirs, HASH_LEN) != 0)
			c->e[i].state = CHANGED;
	}
	if (copy_fd >= 0 && list_files(c, copy_fd, EXTRA, false) < 0)
		return -1;
	/*
	 * A copy of a file the hook need not copy (a companion, a data file) is
	 * not extra while the boot directory has it: it must be the same.
	 */
	for (size_t i = boot_n; i < c->n; i++) {
		unsigned char mine[HASH_LEN], theirs[HASH_LEN];
		int r = hash_at(boot_fd, c->e[i].name, mine, &c->total);

		if (r == -ENOENT)
			continue;
		if (r < 0 || hash_at(copy_fd, c->e[i].name, theirs, NULL) < 0 ||
		    memcmp(mine, theirs, HASH_LEN) != 0)
			c->e[i].state = CHANGED;
		else
			c->e[i].state = SAME;
	}
	qsort(c->e, c->n, sizeof(*c->e), by_name);
	return 0;
}

/* The programs the hook copies with copy_exec(), at the same path in the initramfs. */
static const char *const programs[] = { DURESS_UNLOCK_HELPER_PATH, DURESS_RUNNER_PATH };
#define N_PROGRAMS (sizeof(programs) / sizeof(programs[0]))

/* A program this system has, against the initramfs's copy: SAME when the system has none. */
static enum state compare_program(int root_fd, const char *path)
{
	unsigned char mine[HASH_LEN], theirs[HASH_LEN];
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int here, there, r;
	enum state st = SAME;

	if (!slash || slash == path)
		return SAME;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	here = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (here < 0)
		return SAME;
	if (hash_at(here, slash + 1, mine, NULL) == 0) {
		there = open_below(root_fd, dir + 1, true);
		r = hash_at(there, slash + 1, theirs, NULL);
		if (r == -ENOENT)
			st = MISSING;
		else if (r < 0 || memcmp(mine, theirs, HASH_LEN) != 0)
			st = CHANGED;
		if (there >= 0)
			close(there);
	}
	close(here);
	return st;
}

static const char *state_word(enum state st)
{
	return st == CHANGED ? "changed" : st == MISSING ? "missing" : "extra";
}

static void print_stale(const char *image, const char *boot, const struct compare *c,
			const enum state *prog)
{
	char shown[DURESS_ESCAPED_SIZE(NAME_MAX)];
	size_t said = 0, more = 0;

	printf("ERROR: the initramfs %s is older than %s (", image, boot);
	for (size_t i = 0; i < N_PROGRAMS; i++) {
		if (prog[i] == SAME)
			continue;
		printf("%s%s %s", said ? ", " : "", programs[i], state_word(prog[i]));
		said++;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (c->e[i].state == SAME)
			continue;
		if (said == MAX_SHOWN) {
			more++;
			continue;
		}
		printf("%s%s %s", said ? ", " : "",
		       duress_escape(c->e[i].name, shown, sizeof(shown)),
		       state_word(c->e[i].state));
		said++;
	}
	if (more)
		printf(", and %zu more", more);
	puts("); fix: sudo update-initramfs -u");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

/* Unpacked directories may lack our write bit: given back before the removal. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D)
		(void)chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static void remove_tree(const char *top)
{
	(void)nftw(top, open_up, 16, FTW_PHYS);
	(void)nftw(top, remove_one, 16, FTW_PHYS | FTW_DEPTH);
}

/* Where the archive's main part is: main/ after an early cpio, else the top. */
static int open_root(const char *out)
{
	int top = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int main_fd;

	if (top < 0)
		return -1;
	main_fd = openat(top, "main", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (main_fd < 0)
		return top;
	close(top);
	return main_fd;
}

static void cannot_tell(const char *image, const char *why, const char *fix)
{
	printf("WARN: cannot tell whether the initramfs %s holds the current boot actions: %s; "
	       "fix: %s\n",
	       image, why, fix);
}

/* Unpacks and compares; 0 with *c and prog[] filled, or -1 with c->why and c->fix. */
static int unpack_and_compare(const char *image, const char *tmp, int boot_fd, struct compare *c,
			      enum state *prog)
{
	char out[PATH_MAX + 8], scratch[PATH_MAX + 8];
	int root, copy, r;

	snprintf(out, sizeof(out), "%s/x", tmp);
	snprintf(scratch, sizeof(scratch), "%s/t", tmp);
	if (strlen(tmp) + 3 > PATH_MAX || mkdir(scratch, 0700) < 0) {
		c->why = "cannot make a temporary directory";
		c->fix = "make room in the temporary directory";
		return -1;
	}
	if (unpack(image, out, scratch, &c->why) < 0) {
		c->fix = "sudo apt install initramfs-tools-core";
		return -1;
	}
	root = open_root(out);
	if (root < 0) {
		c->why = UNPACKER " left nothing";
		c->fix = "sudo update-initramfs -u";
		return -1;
	}
	copy = open_below(root, DURESS_BOOT_DIR + 1, true);
	r = compare_dirs(c, boot_fd, copy);
	for (size_t i = 0; i < N_PROGRAMS; i++)
		prog[i] = compare_program(root, programs[i]);
	if (copy >= 0)
		close(copy);
	close(root);
	return r;
}

int duress_initramfs_report(const char *boot_dir, const char *initramfs)
{
	char image[PATH_MAX], shown[SHOWN_SIZE], boot[SHOWN_SIZE], tmp[PATH_MAX];
	struct compare c = { 0 };
	enum state prog[N_PROGRAMS] = { SAME, SAME };
	const char *base = getenv("TMPDIR");
	struct utsname u;
	struct stat st;
	bool stale = false;
	int boot_fd, r;

	if (initramfs) {
		snprintf(image, sizeof(image), "%s", initramfs);
	} else if (uname(&u) == 0) {
		snprintf(image, sizeof(image), "/boot/initrd.img-%s", u.release);
	} else {
		snprintf(image, sizeof(image), "/boot/initrd.img");
	}
	duress_escape(image, shown, sizeof(shown));
	duress_escape(boot_dir, boot, sizeof(boot));
	if (access(image, R_OK) < 0) {
		cannot_tell(shown, strerror(errno),
			    errno == ENOENT ? "sudo update-initramfs -u" :
					      "run duress check as root");
		return 0;
	}
	boot_fd = open(boot_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (boot_fd < 0) {
		cannot_tell(shown, "the boot directory cannot be opened",
			    "run duress check as root");
		return 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s/unpack.XXXXXX",
		     base && base[0] == '/' ? base : "/tmp") >= (int)sizeof(tmp) ||
	    !mkdtemp(tmp)) {
		cannot_tell(shown, "cannot make a temporary directory",
			    "make room in the temporary directory");
		close(boot_fd);
		return 0;
	}
	c.e = calloc(2 * MAX_FILES, sizeof(*c.e));
	r = c.e ? unpack_and_compare(image, tmp, boot_fd, &c, prog) : -1;
	remove_tree(tmp);
	close(boot_fd);
	if (r < 0) {
		cannot_tell(shown, c.why ? c.why : "out of memory", c.fix ? c.fix : "try again");
		free(c.e);
		return 0;
	}
	for (size_t i = 0; i < c.n; i++)
		stale |= c.e[i].state != SAME;
	for (size_t i = 0; i < N_PROGRAMS; i++)
		stale |= prog[i] != SAME;
	if (stale)
		print_stale(shown, boot, &c, prog);
	else
		printf("OK: the initramfs %s holds the current boot actions\n", shown);
	free(c.e);
	/* Debian 12 sets no UMASK: the initramfs is 0644, its signatures everyone's. */
	if (stat(image, &st) == 0 && (st.st_mode & S_IROTH))
		printf("WARN: the initramfs %s is readable by every user, who can copy the boot "
		       "signatures and guess the passphrase offline; fix: add UMASK=0077 to "
		       "/etc/initramfs-tools/initramfs.conf, then sudo update-initramfs -u\n",
		       shown);
	return stale;
}
