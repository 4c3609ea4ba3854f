/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdtree: removes and moves paths for examples/hide without acting on a name
 * that someone else can change under it.  As a global action hide runs as
 * root on paths inside directories that users may own; a tool that opens
 * paths again by name (find -exec shred, rm -rf, mv) follows a symbolic link
 * that a user swapped in between its look and its act.  Here every act
 * starts from a descriptor that is held:
 *
 *   - a configured path is opened one component at a time with O_NOFOLLOW:
 *     a symbolic link among its directories is refused, not followed; the
 *     last component is acted on itself (a link is removed or moved, never
 *     its target);
 *   - a tree is walked with statx(AT_SYMLINK_NOFOLLOW) and openat(O_NOFOLLOW)
 *     from its directory's descriptor, and never into another mount;
 *   - a regular file is overwritten through a descriptor whose inode is the
 *     one looked at, and unlinked from its directory's descriptor.
 *
 * Its name says nothing of the project: a coercer's `ps` shows it.
 *
 *   fdtree remove [-z] PATH     remove PATH and what is under it; -z: first
 *                               overwrite each regular file once with zeros
 *                               where that can reach the blocks
 *   fdtree mkdir DIR            make DIR (and missing parents) 0700, then a
 *                               new DIR/hidden.XXXXXX 0700; print its name
 *   fdtree move SRC DIR NAME    rename SRC to DIR/NAME; DIR must be our own
 *                               0700 directory on the same filesystem
 *
 * Messages go to stderr as "hide: ...".  Exit status: 0 done (a missing
 * path is skipped with a message), 1 something was not done, 2 usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* A tree deeper or larger than this is left partly in place (and said so):
 * one open directory per level, and an end even while a user adds entries. */
#define MAX_DEPTH 128
#define MAX_ENTRIES 10000000UL
/* Passes over one directory: entries renamed into it behind the reader. */
#define MAX_PASSES 4
#define HIDDEN_PREFIX "hidden."

/* <linux/magic.h> is not in every distribution's headers. */
#define BTRFS_MAGIC 0x9123683e
#define ZFS_MAGIC 0x2fc12fc1
#define TMPFS_MAGIC 0x01021994
#define RAMFS_MAGIC 0x858458f6
#define OVERLAYFS_MAGIC 0x794c7630
#define NFS_MAGIC 0x6969
#define SMB_MAGIC 0x517b
#define CIFS_MAGIC 0xff534d42
#define SMB2_MAGIC 0xfe534d42
#define FUSE_MAGIC 0x65735546

/* One tree being removed. */
struct walk {
	dev_t dev; /* the top's filesystem and mount: never left */
	uint64_t mnt_id;
	bool zero; /* overwrite regular files before unlinking them */
	unsigned long entries;
	int failures;
	char path[PATH_MAX]; /* the entry being handled, for messages */
	size_t len;
};

/* One line, one write (stderr is unbuffered; glibc formats a call at once). */
#define say(fmt, ...) fprintf(stderr, "hide: " fmt "\n", ##__VA_ARGS__)

#ifdef FDTREE_TEST_HOOKS
/*
 * Test build only (never installed): run $FDTREE_TEST_HOOK EVENT PATH and
 * wait for it, so that a test can swap a name at the exact point between a
 * look and an act.
 */
static void hook(const char *event, const char *path)
{
	const char *prog = getenv("FDTREE_TEST_HOOK");
	pid_t pid;

	if (prog == NULL || *prog == '\0')
		return;
	pid = fork();
	if (pid == 0) {
		execl(prog, prog, event, path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		(void)waitpid(pid, NULL, 0);
}
#else
static void hook(const char *event, const char *path)
{
	(void)event;
	(void)path;
}
#endif

static int look(int dirfd, const char *name, int flags, struct statx *ret)
{
	if (statx(dirfd, name, flags | AT_NO_AUTOMOUNT,
		  STATX_TYPE | STATX_MODE | STATX_INO | STATX_NLINK | STATX_UID | STATX_SIZE |
			  STATX_MNT_ID,
		  ret) != 0)
		return -errno;
	return 0;
}

/* The mount id where the kernel has one (5.8+); else the device alone decides. */
static bool same_mount(const struct walk *w, const struct statx *st)
{
	if (makedev(st->stx_dev_major, st->stx_dev_minor) != w->dev)
		return false;
	return w->mnt_id == 0 || !(st->stx_mask & STATX_MNT_ID) || st->stx_mnt_id == w->mnt_id;
}

static bool same_inode(const struct statx *a, const struct statx *b)
{
	return a->stx_ino == b->stx_ino && a->stx_dev_major == b->stx_dev_major &&
	       a->stx_dev_minor == b->stx_dev_minor;
}

/*
 * PATH must be absolute, not / and without a trailing slash (which would
 * follow a last link) or "." and ".." components (a user could move one).
 */
static bool plain_path(const char *path)
{
	size_t n = strlen(path);
	bool plain = path[0] == '/' && n > 1 && n < PATH_MAX && path[n - 1] != '/';

	for (const char *p = path; plain && *p != '\0'; p++) {
		if (p[0] == '/' && p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0' || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			plain = false;
	}
	if (!plain)
		say("%s: refused: not an absolute path without \".\", \"..\" or a trailing slash",
		    path);
	return plain;
}

/* Descend from *fd into the directory NAME; say why not (PATH: the path so far). */
static int descend(int *fd, const char *name, const char *path)
{
	struct stat st;
	int nfd = openat(*fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;

	if (nfd < 0) {
		if (e == ENOENT)
			return -ENOENT;
		if (fstatat(*fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			say("%s is a symbolic link: refused (links in a configured path are not "
			    "followed; write the path without it)",
			    path);
		else
			say("cannot open %s: %s", path, strerror(e));
		return -e;
	}
	close(*fd);
	*fd = nfd;
	return 0;
}

/* descend(), making NAME 0700 first if it is missing (as mkdir -p). */
static int descend_or_make(int *fd, const char *name, const char *path, bool make)
{
	int r = descend(fd, name, path);

	if (r != -ENOENT || !make)
		return r;
	if (mkdirat(*fd, name, 0700) != 0 && errno != EEXIST) {
		say("cannot make %s: %m", path);
		return -EACCES;
	}
	return descend(fd, name, path);
}

/*
 * Opens the directories of PATH from / down, without following a link, and
 * returns a descriptor of the last one (O_PATH: search permission is enough).
 * WHOLE: PATH itself, else its parent, with *ret_name pointing into PATH at
 * the last component.  MAKE: missing directories are made.  -ENOENT is not
 * said, other errors are.
 */
static int open_dirs(char *path, bool whole, bool make, const char **ret_name)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *p = path;

	if (ret_name != NULL)
		*ret_name = path;
	if (fd < 0)
		return -errno;
	for (;;) {
		char *end, *next, saved;
		int r;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		for (next = end; *next == '/';)
			next++;
		if (*p == '\0' || (!whole && *next == '\0')) {
			if (ret_name != NULL)
				*ret_name = p;
			return fd;
		}
		saved = *end;
		*end = '\0'; /* PATH is now the path so far, for messages */
		r = descend_or_make(&fd, p, path, make);
		*end = saved;
		if (r < 0) {
			close(fd);
			return r;
		}
		p = next;
	}
}

static void push(struct walk *w, const char *name, size_t *ret_len)
{
	size_t n = strlen(name);

	*ret_len = w->len;
	if (w->len + 1 + n >= sizeof(w->path))
		return; /* messages name the deepest directory that fits */
	w->path[w->len] = '/';
	memcpy(w->path + w->len + 1, name, n + 1);
	w->len += 1 + n;
}

static void pop(struct walk *w, size_t len)
{
	w->len = len;
	w->path[len] = '\0';
}

/* Overwriting reaches the blocks only where a file is rewritten in place. */
static bool overwrite_useful(int fd)
{
	struct statfs fs;

	if (fstatfs(fd, &fs) != 0)
		return false;
	switch ((unsigned long)fs.f_type) {
	case BTRFS_MAGIC:
	case ZFS_MAGIC:
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case OVERLAYFS_MAGIC:
	case NFS_MAGIC:
	case SMB_MAGIC:
	case CIFS_MAGIC:
	case SMB2_MAGIC:
	case FUSE_MAGIC:
		return false;
	default:
		return true;
	}
}

static int write_zeros(int fd, uint64_t size)
{
	static const char zeros[65536];

	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < sizeof(zeros) ? (size_t)(size - off) : sizeof(zeros);
		ssize_t r = pwrite(fd, zeros, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		off += (uint64_t)r;
	}
	return fsync(fd) == 0 ? 0 : -errno;
}

/*
 * A read-only file of the user's own (a per-user action, as shred -f): made
 * writable by name.  Only without root: chmod as a user reaches only files
 * the user owns, wherever a swapped name leads.
 */
static int open_own_readonly(int dirfd, const char *name, const struct statx *seen)
{
	if (geteuid() == 0 || seen->stx_uid != geteuid() ||
	    fchmodat(dirfd, name, (seen->stx_mode & 07777) | S_IWUSR, 0) != 0)
		return -1;
	return openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

/*
 * Overwrite the regular file NAME once with zeros, if it is still the inode
 * SEEN, on the tree's mount, with no other name (its data would be another
 * name's: with fs.protected_hardlinks=0 a user may link root's files).  A
 * failure is said, not counted: the file is still deleted.
 */
static void overwrite(struct walk *w, int dirfd, const char *name, const struct statx *seen)
{
	struct statx now;
	int fd, r;

	if (seen->stx_nlink > 1) {
		say("%s has other hard links: deleted, not overwritten", w->path);
		return;
	}
	hook("open", w->path);
	fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == EACCES)
		fd = open_own_readonly(dirfd, name, seen);
	if (fd < 0) {
		say("cannot overwrite %s: %m", w->path);
		return;
	}
	if (look(fd, "", AT_EMPTY_PATH, &now) != 0 || !S_ISREG(now.stx_mode) ||
	    !same_inode(&now, seen) || !same_mount(w, &now) || now.stx_nlink > 1)
		say("%s changed while it was being removed: not overwritten", w->path);
	else if (overwrite_useful(fd) && (r = write_zeros(fd, now.stx_size)) < 0)
		say("cannot overwrite %s: %s", w->path, strerror(-r));
	close(fd);
}

static void remove_entry(struct walk *w, int dirfd, const char *name, int depth);

/* One pass over the open directory D; true if it held an entry. */
static bool remove_children(struct walk *w, DIR *d, int depth)
{
	const struct dirent *e;
	bool any = false;

	while ((e = readdir(d)) != NULL && w->entries < MAX_ENTRIES) {
		size_t len;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		any = true;
		push(w, e->d_name, &len);
		remove_entry(w, dirfd(d), e->d_name, depth + 1);
		pop(w, len);
	}
	return any;
}

/* Empty the directory NAME (the inode SEEN or whatever directory is there now). */
static int empty_dir(struct walk *w, int dirfd, const char *name, int depth)
{
	struct statx now;
	DIR *d;
	int fd;

	hook("open", w->path);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (look(fd, "", AT_EMPTY_PATH, &now) != 0 || !same_mount(w, &now)) {
		close(fd);
		return -EXDEV;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return -errno;
	}
	/* Again while a pass saw entries and all went: the reader may have missed
	 * one renamed in behind it; one that stays is not reported twice. */
	for (int pass = 0; pass < MAX_PASSES; pass++) {
		int failures = w->failures;

		if (!remove_children(w, d, depth) || w->failures != failures)
			break;
		rewinddir(d);
	}
	closedir(d);
	return 0;
}

static void remove_dir(struct walk *w, int dirfd, const char *name, int depth)
{
	int r;

	if (depth >= MAX_DEPTH) {
		say("%s is more than %d levels deep: left in place", w->path, MAX_DEPTH);
		w->failures++;
		return;
	}
	r = empty_dir(w, dirfd, name, depth);
	if (r == -ELOOP || r == -ENOTDIR) {
		/* Swapped for a link or a file since the look: remove that instead. */
		say("%s changed while it was being removed", w->path);
		if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
			return;
		r = -errno;
	}
	if (r == -EXDEV) {
		say("%s is another mount: not entered", w->path);
		w->failures++;
		return;
	}
	if (r < 0 || unlinkat(dirfd, name, AT_REMOVEDIR) != 0) {
		say("cannot remove %s: %s", w->path, strerror(r < 0 ? -r : errno));
		w->failures++;
	}
}

/* Remove the entry NAME of the directory DIRFD, as it is: never through a link. */
static void remove_entry(struct walk *w, int dirfd, const char *name, int depth)
{
	struct statx st;
	int r = look(dirfd, name, AT_SYMLINK_NOFOLLOW, &st);

	if (++w->entries == MAX_ENTRIES)
		say("more than %lu entries: the rest left in place", MAX_ENTRIES);
	if (r == -ENOENT)
		return;
	if (r == 0 && !same_mount(w, &st)) {
		say("%s is another mount: not entered", w->path);
		w->failures++;
		return;
	}
	if (r == 0 && S_ISDIR(st.stx_mode)) {
		remove_dir(w, dirfd, name, depth);
		return;
	}
	if (r == 0 && S_ISREG(st.stx_mode) && w->zero)
		overwrite(w, dirfd, name, &st);
	if (r < 0 || (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT)) {
		say("cannot remove %s: %s", w->path, strerror(r < 0 ? -r : errno));
		w->failures++;
	}
}

/* The parent of PATH opened and its last component looked at; -ENOENT said as a skip. */
static int open_last(char *path, const char **ret_name, struct statx *ret)
{
	int fd = open_dirs(path, false, false, ret_name);
	int r = fd < 0 ? fd : look(fd, *ret_name, AT_SYMLINK_NOFOLLOW, ret);

	if (r < 0 && fd >= 0)
		close(fd);
	if (r == -ENOENT)
		say("skip: %s does not exist", path);
	else if (r < 0 && fd >= 0)
		say("cannot look at %s: %s", path, strerror(-r));
	return r < 0 ? r : fd;
}

static int cmd_remove(char *path, bool zero)
{
	static struct walk w; /* static: PATH_MAX bytes off the stack */
	struct statx top;
	const char *name;
	int fd = open_last(path, &name, &top);

	if (fd < 0)
		return fd == -ENOENT ? 0 : 1;
	w.dev = makedev(top.stx_dev_major, top.stx_dev_minor);
	w.mnt_id = (top.stx_mask & STATX_MNT_ID) ? top.stx_mnt_id : 0;
	w.zero = zero;
	w.len = strlen(path);
	memcpy(w.path, path, w.len + 1);
	remove_entry(&w, fd, name, 0);
	close(fd);
	return w.failures == 0 && w.entries < MAX_ENTRIES ? 0 : 1;
}

/* A fresh hidden.XXXXXX in DIRFD, 0700; its name in NAME. */
static int make_hidden(int dirfd, char name[static sizeof(HIDDEN_PREFIX) + 6])
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[6];

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -errno;
		memcpy(name, HIDDEN_PREFIX, sizeof(HIDDEN_PREFIX) - 1);
		for (size_t i = 0; i < sizeof(rnd); i++)
			name[sizeof(HIDDEN_PREFIX) - 1 + i] = set[rnd[i] % (sizeof(set) - 1)];
		name[sizeof(HIDDEN_PREFIX) + 5] = '\0';
		if (mkdirat(dirfd, name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int cmd_mkdir(char *dir)
{
	char name[sizeof(HIDDEN_PREFIX) + 6];
	int fd = open_dirs(dir, true, true, NULL);
	int r;

	if (fd < 0) {
		if (fd == -ENOENT)
			say("cannot make %s", dir);
		return 1;
	}
	r = make_hidden(fd, name);
	close(fd);
	if (r < 0) {
		say("cannot make a directory in %s: %s", dir, strerror(-r));
		return 1;
	}
	printf("%s\n", name);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* DIR, opened without links, must be ours and private: nothing is moved to a user. */
static int open_private_dir(char *dir)
{
	struct statx st;
	int fd = open_dirs(dir, true, false, NULL);

	if (fd < 0) {
		if (fd == -ENOENT)
			say("%s does not exist", dir);
		return -1;
	}
	if (look(fd, "", AT_EMPTY_PATH, &st) != 0 || st.stx_uid != geteuid() ||
	    (st.stx_mode & 077) != 0) {
		say("%s is not a private directory of ours: nothing moved there", dir);
		close(fd);
		return -1;
	}
	return fd;
}

static int cmd_move(char *src, char *dir, const char *dest)
{
	struct statx st;
	const char *name;
	int to, from, r = 1;

	to = open_private_dir(dir);
	if (to < 0)
		return 1;
	from = open_last(src, &name, &st);
	if (from >= 0) {
		hook("move", src);
		r = renameat(from, name, to, dest) == 0 ? 0 : -errno;
		if (r == -EXDEV)
			say("%s is on another filesystem than %s: not moved (a copy would "
			    "leave the original to delete by name; put HIDE_DIR on its filesystem)",
			    src, dir);
		else if (r < 0)
			say("cannot move %s: %s", src, strerror(-r));
		close(from);
	}
	close(to);
	if (from == -ENOENT)
		return 0;
	return from >= 0 && r == 0 ? 0 : 1;
}

/* NAME for move: one component. */
static bool plain_name(const char *name)
{
	return *name != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static int usage(void)
{
	fputs("usage: fdtree remove [-z] PATH | mkdir DIR | move SRC DIR NAME\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	/*
	 * As a per-user action's helper it runs as the user: not dumpable, so
	 * that the session cannot read its exe link (the package's libexec
	 * directory) or its environment in /proc; the command line stays.
	 */
	(void)prctl(PR_SET_DUMPABLE, 0);
	/* What it makes is 0700 whatever umask the caller had. */
	umask(077);
	if (argc == 3 && strcmp(cmd, "remove") == 0)
		return plain_path(argv[2]) ? cmd_remove(argv[2], false) : 1;
	if (argc == 4 && strcmp(cmd, "remove") == 0 && strcmp(argv[2], "-z") == 0)
		return plain_path(argv[3]) ? cmd_remove(argv[3], true) : 1;
	if (argc == 3 && strcmp(cmd, "mkdir") == 0)
		return plain_path(argv[2]) ? cmd_mkdir(argv[2]) : 1;
	if (argc == 5 && strcmp(cmd, "move") == 0 && plain_name(argv[4])) {
		if (!plain_path(argv[2]) || !plain_path(argv[3]))
			return 1;
		return cmd_move(argv[2], argv[3], argv[4]);
	}
	return usage();
}
