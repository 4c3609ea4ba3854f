/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/initramfs.h"

#include <ctype.h>
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
#include "core/wait.h"
#include "core/write.h"
#include "cli/crypttab.h"
#include "cli/dracut.h"

#define UNPACK_TIMEOUT_MS 60000
/* The boot directory's files: as the module caps a global directory. */
#define MAX_FILES DURESS_DEFAULT_MAX_ENTRIES
#define MAX_FILE_SIZE DURESS_DEFAULT_MAX_FILE_SIZE
#define MAX_TOTAL DURESS_DEFAULT_MAX_TOTAL
#define MAX_SHOWN 8 /* names in the ERROR line */
#define HASH_LEN crypto_hash_sha256_BYTES
#define SHOWN_SIZE DURESS_ESCAPED_SIZE(PATH_MAX)
/* initramfs-tools' configuration, as mkinitramfs sources it, and our conf hook. */
#define ITOOLS_CONF "/etc/initramfs-tools/initramfs.conf"
#define ITOOLS_CONF_D "/etc/initramfs-tools/conf.d"
#define CONF_HOOK "/usr/share/initramfs-tools/conf-hooks.d/pam_duress"
#define CONF_MAX ((size_t)64 * 1024)

enum state { SAME, CHANGED, MISSING, EXTRA };

struct entry {
	char *name; /* as shown: a name in the boot directory, or a companion's path */
	enum state state;
};

/* How each builder's image is unpacked, and installed when it cannot be. */
struct unpacker {
	const char *name;    /* run from PATH */
	const char *install; /* the fix when PATH has none */
	bool in_cwd;         /* unpacks into its working directory: lsinitrd --unpack IMAGE */
};

static const struct unpacker initramfs_tools = { "unmkinitramfs",
						 "sudo apt install initramfs-tools-core", false };
static const struct unpacker dracut = {
	"lsinitrd", "install dracut's lsinitrd (Debian: sudo apt install dracut-core)", true
};

struct compare {
	struct entry *e;
	size_t n, max;
	uint64_t total;  /* bytes hashed on the boot directory's side */
	const char *why; /* set when it cannot tell */
	const char *fix;
	char why_buf[128]; /* where a why naming the unpacker is written */
};

/* The child: its own process group (killed whole on a timeout), no output, no shell. */
static void run_unpacker(const struct unpacker *u, const char *prog, const char *image,
			 const char *dir, const char *tmp)
{
	char path_env[PATH_MAX + 8], tmp_env[PATH_MAX + 16], lc_env[] = "LC_ALL=C";
	char arg0[32], arg1[PATH_MAX + 8], arg2[PATH_MAX + 8];
	char *argv[] = { arg0, arg1, arg2, NULL };
	char *envp[] = { path_env, tmp_env, lc_env, NULL };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	(void)setpgid(0, 0);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(127);
	for (int fd = 3; fd < 1024; fd++)
		(void)close(fd);
	snprintf(arg0, sizeof(arg0), "%s", u->name);
	/* lsinitrd --unpack IMAGE (image made absolute by the caller) in dir; unmkinitramfs IMAGE DIR. */
	snprintf(arg1, sizeof(arg1), "%s", u->in_cwd ? "--unpack" : image);
	snprintf(arg2, sizeof(arg2), "%s", u->in_cwd ? image : dir);
	if (u->in_cwd && chdir(dir) < 0)
		_exit(127);
	snprintf(path_env, sizeof(path_env), "PATH=%s", duress_child_path());
	/* Its temporary copy of the main archive lands in our directory, removed with it. */
	snprintf(tmp_env, sizeof(tmp_env), "TMPDIR=%s", tmp);
	execve(prog, argv, envp);
	_exit(127);
}

/* c->why: the unpacker's name, then what went wrong; -1. */
static int unpack_failed(struct compare *c, const struct unpacker *u, const char *what)
{
	snprintf(c->why_buf, sizeof(c->why_buf), "%s %s", u->name, what);
	c->why = c->why_buf;
	return -1;
}

/* Unpacks image into dir; 0, or -1 with c->why set. */
static int unpack(const struct unpacker *u, const char *image, const char *dir, const char *tmp,
		  struct compare *c)
{
	char prog[PATH_MAX];
	int status = 0, r;
	pid_t pid;

	if (!duress_find_program(u->name, prog, sizeof(prog))) {
		c->fix = u->install;
		return unpack_failed(c, u, "is not installed (not found in PATH)");
	}
	/* lsinitrd unpacks where it runs: a directory of ours, made first. */
	if (u->in_cwd && mkdir(dir, 0700) < 0)
		return unpack_failed(c, u, "has no directory to unpack into");
	pid = fork();
	if (pid < 0)
		return unpack_failed(c, u, "cannot be started");
	if (pid == 0)
		run_unpacker(u, prog, image, dir, tmp);
	(void)setpgid(pid, pid);
	r = duress_wait_bounded(pid, &status, UNPACK_TIMEOUT_MS);
	/* Whatever is left of its group (a decompressor, cpio) goes too. */
	(void)kill(-pid, SIGKILL);
	if (r == -ETIMEDOUT)
		return unpack_failed(c, u, "took longer than 60 s");
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return unpack_failed(c, u, "failed on it");
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
 * SHA-256 of an absolute path, no link followed at its end, as hash_at():
 * on this system when root is -1 (its directories as the system has them,
 * /bin a link on a merged /usr), else inside the unpacked initramfs at root
 * (no link followed anywhere).
 */
static int hash_file(int root, const char *path, unsigned char out[HASH_LEN], uint64_t *total)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd, r;

	if (!slash ||
	    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return -ENOENT;
	if (root >= 0)
		fd = *dir ? open_below(root, dir + 1, true) : dup(root);
	else if ((fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	r = hash_at(fd, slash + 1, out, total);
	if (fd >= 0)
		close(fd);
	return r;
}

/*
 * Where the hook puts a file it copies (duress_boot_files()): the boot
 * directory's own files under DURESS_BOOT_DIR, their name shown; a
 * companion elsewhere at its own path, shown whole.
 */
static void copy_place(const char *boot, const char *path, char *there, size_t size,
		       const char **shown)
{
	size_t len = strlen(boot);

	if (strncmp(path, boot, len) == 0 && path[len] == '/' && !strchr(path + len + 1, '/')) {
		*shown = path + len + 1;
		snprintf(there, size, "%s/%s", DURESS_BOOT_DIR, *shown);
	} else {
		*shown = path;
		snprintf(there, size, "%s", path);
	}
}

static int add_entry(struct compare *c, const char *name, enum state st)
{
	if (c->n >= c->max) {
		c->why = "more than 256 files to compare";
		c->fix = "keep the boot directory to its actions, signatures and configs";
		return -1;
	}
	c->e[c->n].name = strdup(name);
	if (!c->e[c->n].name) {
		c->why = "out of memory";
		c->fix = "try again";
		return -1;
	}
	c->e[c->n++].state = st;
	return 0;
}

/* Each file the hook copies (duress_boot_files()) against its copy. */
static int compare_listed(struct compare *c, const char *boot, const struct duress_boot_files *bf,
			  int root)
{
	for (size_t i = 0; i < bf->n; i++) {
		unsigned char mine[HASH_LEN], theirs[HASH_LEN];
		char there[PATH_MAX];
		const char *shown;
		int r = hash_file(-1, bf->paths[i], mine, &c->total);

		copy_place(boot, bf->paths[i], there, sizeof(there), &shown);
		if (r < 0) {
			c->why = r == -EFBIG ?
					 "the boot directory is over 16 MiB a file or 64 MiB" :
					 "a file of the boot directory cannot be read";
			c->fix = r == -EFBIG ? "keep the boot directory small" :
					       "run duress check as root";
			return -1;
		}
		if (known(c, shown))
			continue;
		r = hash_file(root, there, theirs, NULL);
		if (add_entry(c, shown,
			      r == -ENOENT                                 ? MISSING :
			      r < 0 || memcmp(mine, theirs, HASH_LEN) != 0 ? CHANGED :
									     SAME) < 0)
			return -1;
	}
	return 0;
}

/*
 * The copy's files in DURESS_BOOT_DIR that the list does not name: extra,
 * unless the boot directory has the same file (a data file some hook
 * copied: not extra while it is the same; changed when not).
 */
static int compare_leftovers(struct compare *c, int boot_fd, int copy_fd)
{
	int fd = dup(copy_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		c->why = "cannot list the initramfs's boot directory";
		c->fix = "run duress check as root";
		return -1;
	}
	while (r == 0 && (de = readdir(d))) {
		unsigned char mine[HASH_LEN], theirs[HASH_LEN];
		struct stat s;
		int h;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(copy_fd, de->d_name, &s, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(s.st_mode) || known(c, de->d_name))
			continue;
		h = hash_at(boot_fd, de->d_name, mine, &c->total);
		if (h == -ENOENT)
			r = add_entry(c, de->d_name, EXTRA);
		else if (h < 0 || hash_at(copy_fd, de->d_name, theirs, NULL) < 0 ||
			 memcmp(mine, theirs, HASH_LEN) != 0)
			r = add_entry(c, de->d_name, CHANGED);
	}
	closedir(d);
	return r;
}

/* Fills c: each file the hook copies against its copy, then the copies left over. */
static int compare_dirs(struct compare *c, const char *boot, int boot_fd, int root)
{
	struct duress_boot_files bf;
	int copy, r = duress_boot_files(boot, &bf);

	if (r < 0) {
		c->why = "cannot list the files the initramfs needs";
		c->fix = "run duress check as root";
		return -1;
	}
	c->max = bf.n + MAX_FILES;
	c->e = calloc(c->max, sizeof(*c->e));
	if (!c->e) {
		duress_boot_files_free(&bf);
		c->why = "out of memory";
		c->fix = "try again";
		return -1;
	}
	r = compare_listed(c, boot, &bf, root);
	duress_boot_files_free(&bf);
	copy = open_below(root, DURESS_BOOT_DIR + 1, true);
	if (r == 0 && copy >= 0)
		r = compare_leftovers(c, boot_fd, copy);
	if (copy >= 0)
		close(copy);
	if (r == 0)
		qsort(c->e, c->n, sizeof(*c->e), by_name);
	return r;
}

/*
 * The programs the hook copies with copy_exec() (the dracut module with
 * inst_multiple, the relay too), at the same path in the initramfs.
 */
static const char *const programs[] = { DURESS_UNLOCK_HELPER_PATH, DURESS_RUNNER_PATH,
					DURESS_UNLOCK_RELAY_PATH };
#define N_PROGRAMS (sizeof(programs) / sizeof(programs[0]))
#define N_PROGRAMS_INITRAMFS_TOOLS 2 /* its hook copies no relay */

/* A program this system has, against the initramfs's copy: SAME when the system has none. */
static enum state compare_program(int root_fd, const char *path)
{
	unsigned char mine[HASH_LEN], theirs[HASH_LEN];
	int r = hash_file(-1, path, mine, NULL);

	/* Not installed here (a test's build tree): nothing to compare with. */
	if (r == -ENOENT)
		return SAME;
	/* This system's copy cannot be read: no OK on what was not compared. */
	if (r < 0)
		return CHANGED;
	r = hash_file(root_fd, path, theirs, NULL);
	if (r == -ENOENT)
		return MISSING;
	return r < 0 || memcmp(mine, theirs, HASH_LEN) != 0 ? CHANGED : SAME;
}

static const char *state_word(enum state st)
{
	return st == CHANGED ? "changed" : st == MISSING ? "missing" : "extra";
}

static void print_stale(const char *image, const char *boot, const struct compare *c,
			const enum state *prog, size_t n_prog, const char *rebuild)
{
	char shown[SHOWN_SIZE];
	size_t said = 0, more = 0;

	printf("ERROR: the initramfs %s is older than %s (", image, boot);
	for (size_t i = 0; i < n_prog && i < N_PROGRAMS; i++) {
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
	printf("); fix: %s\n", rebuild);
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

static void free_entries(struct compare *c)
{
	for (size_t i = 0; c->e && i < c->n; i++)
		free(c->e[i].name);
	free(c->e);
	c->e = NULL;
}

/* An admin's UMASK= for mkinitramfs: the last one set, and where. */
struct umask_setting {
	char file[PATH_MAX];
	unsigned long mask;
	bool set;
};

/* The last UMASK= line of a shell config file (export, quotes allowed) into *u. */
static void umask_in(const char *path, struct umask_setting *u)
{
	char *buf = malloc(CONF_MAX + 1), *save = NULL;
	ssize_t len = buf ? duress_read_small_at(AT_FDCWD, path, 0, buf, CONF_MAX, NULL) : -1;

	if (len < 0) {
		free(buf);
		return;
	}
	buf[len] = '\0';
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *v, *end;

		l += strspn(l, " \t");
		if (strncmp(l, "export ", 7) == 0)
			l += 7 + strspn(l + 7, " \t");
		if (strncmp(l, "UMASK=", 6) != 0)
			continue;
		v = l + 6 + (l[6] == '"' || l[6] == '\'');
		u->mask = strtoul(v, &end, 8);
		u->set = end != v;
		snprintf(u->file, sizeof(u->file), "%s", path);
	}
	free(buf);
}

/* A conf.d name mkinitramfs reads: [[:alnum:]][[:alnum:]._-]*, no .dpkg-*. */
static int conf_d_name(const struct dirent *e)
{
	const char *n = e->d_name;

	return isalnum((unsigned char)n[0]) &&
	       n[strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
			   "opqrstuvwxyz0123456789._-")] == '\0' &&
	       !strstr(n, ".dpkg-");
}

/* The admin's UMASK: initramfs.conf's, then each conf.d file's in name order. */
static void admin_umask(struct umask_setting *u)
{
	struct dirent **names = NULL;
	int n = scandir(ITOOLS_CONF_D, &names, conf_d_name, alphasort);

	*u = (struct umask_setting){ 0 };
	umask_in(ITOOLS_CONF, u);
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), ITOOLS_CONF_D "/%s", names[i]->d_name) <
		    (int)sizeof(path))
			umask_in(path, u);
		free(names[i]);
	}
	free(names);
}

/*
 * An initramfs every user can read: mkinitramfs wrote it with umask 0022.
 * Our conf hook sets UMASK=0077 while the boot directory exists, unless
 * the admin set a UMASK: then that one is to change; else the image was
 * made before (the boot directory, or the package) and a new one is 0600.
 * dracut writes it with umask 077: something else opened it.
 */
static void warn_readable(const char *image, bool dracut_on)
{
	struct umask_setting u;
	char file[SHOWN_SIZE];
	struct stat st;

	printf("WARN: the initramfs %s is readable by every user, who can copy the boot "
	       "signatures and guess the passphrase offline; fix: ",
	       image);
	if (dracut_on) {
		printf("sudo chmod 600 %s\n", image);
		return;
	}
	admin_umask(&u);
	if (u.set && !(u.mask & S_IROTH))
		printf("UMASK=%04lo in %s lets every user read it: make it UMASK=0077, then sudo "
		       "update-initramfs -u\n",
		       u.mask, duress_escape(u.file, file, sizeof(file)));
	else if (u.set || stat(CONF_HOOK, &st) == 0)
		printf("sudo update-initramfs -u: it was made before UMASK=0077 applied (set by "
		       "%s)\n",
		       u.set ? duress_escape(u.file, file, sizeof(file)) :
			       CONF_HOOK " while " DURESS_BOOT_DIR " exists");
	else
		puts("add UMASK=0077 to " ITOOLS_CONF ", then sudo update-initramfs -u");
}

static void cannot_tell(const char *image, const char *why, const char *fix)
{
	printf("WARN: cannot tell whether the initramfs %s holds the current boot actions: %s; "
	       "fix: %s\n",
	       image, why, fix);
}

/* What a report needs besides the image: the builder's unpacker and fix, the programs. */
struct builder {
	const struct unpacker *u;
	const char *rebuild;
	size_t n_prog;  /* of programs[] */
	bool cryptroot; /* initramfs-tools: cryptsetup-initramfs's cryptroot/crypttab */
};

/* How the initramfs unlocks a disk whose crypttab line uses the keyscript. */
enum unlock {
	UNLOCK_ABSENT,    /* not in its cryptroot/crypttab: not unlocked there at all */
	UNLOCK_OTHERWISE, /* there, without our keyscript: made before the line named it */
	UNLOCK_BY_KEYSCRIPT,
};

/* What cryptsetup-initramfs put into the initramfs for the disks. */
struct cryptroot {
	bool table;     /* cryptroot/crypttab is there */
	bool keyscript; /* DURESS_KEYSCRIPT_PATH is there, a regular file */
	enum unlock disk[DURESS_KEYSCRIPT_DISKS];
};

/* Whether path (absolute) is a regular file in the unpacked initramfs at root. */
static bool regular_below(int root, const char *path)
{
	int fd = open_below(root, path + 1, false);
	struct stat st;
	bool is = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);

	if (fd >= 0)
		close(fd);
	return is;
}

/* Fills *cr from the unpacked initramfs at root, for each of the disks. */
static void read_cryptroot(int root, const struct duress_keyscript_disks *disks,
			   struct cryptroot *cr)
{
	int dir = open_below(root, "cryptroot", true);
	ssize_t len = -1;
	char *buf = dir >= 0 ? duress_crypttab_read(dir, "crypttab", O_NOFOLLOW, &len) : NULL;
	char *rest = buf, *f[4];

	*cr = (struct cryptroot){ .table = buf != NULL,
				  .keyscript = regular_below(root, DURESS_KEYSCRIPT_PATH) };
	if (dir >= 0)
		close(dir);
	while (buf && duress_crypttab_next(&rest, f))
		for (size_t i = 0; f[0] && i < disks->n; i++)
			if (strcmp(f[0], disks->name[i]) == 0)
				cr->disk[i] = f[3] && duress_crypttab_uses_keyscript(f[3]) ?
						      UNLOCK_BY_KEYSCRIPT :
						      UNLOCK_OTHERWISE;
	free(buf);
}

/*
 * A line per disk whose crypttab line uses the keyscript: whether the
 * initramfs unlocks it through the keyscript, from cryptsetup-initramfs's
 * cryptroot/crypttab in it.  That hook prints its errors at
 * update-initramfs (a source it cannot resolve, a disk it leaves out) and
 * goes on: the image is made all the same.  Returns the ERRORs.
 */
static int report_cryptroot(const char *image, const struct duress_keyscript_disks *disks,
			    const struct cryptroot *cr, const char *rebuild)
{
	char name[DURESS_ESCAPED_SIZE(DURESS_CRYPTTAB_NAME)];
	int problems = 0;

	if (!cr->table) {
		printf("initramfs %s: ERROR: it has no cryptroot/crypttab, so it unlocks no disk and "
		       "never runs the keyscript; fix: sudo apt install cryptsetup-initramfs, then "
		       "%s and read its cryptsetup: lines\n",
		       image, rebuild);
		return 1;
	}
	for (size_t i = 0; i < disks->n; i++) {
		duress_escape(disks->name[i], name, sizeof(name));
		if (cr->disk[i] == UNLOCK_ABSENT)
			printf("initramfs %s: ERROR: its cryptroot/crypttab has no line for %s, so it "
			       "does not unlock that disk and the keyscript never asks; fix: run %s "
			       "and read its cryptsetup: lines: the line's source must be the disk's "
			       "crypto_LUKS partition (lsblk -f), and a disk other than the root "
			       "filesystem's needs the initramfs option\n",
			       image, name, rebuild);
		else if (cr->disk[i] == UNLOCK_OTHERWISE)
			printf("initramfs %s: ERROR: it unlocks %s without the keyscript (it was made "
			       "before the crypttab line named it); fix: %s\n",
			       image, name, rebuild);
		else if (!cr->keyscript)
			printf("initramfs %s: ERROR: it unlocks %s through " DURESS_KEYSCRIPT_PATH
			       ", which is not in it, so that disk cannot be unlocked; fix: %s (with "
			       "the package installed)\n",
			       image, name, rebuild);
		else
			printf("initramfs %s: OK: it unlocks %s through the keyscript\n", image,
			       name);
		problems += cr->disk[i] != UNLOCK_BY_KEYSCRIPT || !cr->keyscript;
	}
	return problems;
}

/* Unpacks and compares; 0 with *c, prog[] and *cr filled, or -1 with c->why and c->fix. */
static int unpack_and_compare(const struct builder *b, const char *image, const char *tmp,
			      const char *boot, int boot_fd,
			      const struct duress_keyscript_disks *disks, struct compare *c,
			      enum state *prog, struct cryptroot *cr)
{
	char out[PATH_MAX + 8], scratch[PATH_MAX + 8];
	int root, r;

	snprintf(out, sizeof(out), "%s/x", tmp);
	snprintf(scratch, sizeof(scratch), "%s/t", tmp);
	if (strlen(tmp) + 3 > PATH_MAX || mkdir(scratch, 0700) < 0) {
		c->why = "cannot make a temporary directory";
		c->fix = "make room in the temporary directory";
		return -1;
	}
	c->fix = b->rebuild;
	if (unpack(b->u, image, out, scratch, c) < 0)
		return -1;
	root = open_root(out);
	if (root < 0)
		return unpack_failed(c, b->u, "left nothing");
	r = compare_dirs(c, boot, boot_fd, root);
	for (size_t i = 0; i < b->n_prog; i++)
		prog[i] = compare_program(root, programs[i]);
	if (b->cryptroot)
		read_cryptroot(root, disks, cr);
	close(root);
	return r;
}

/*
 * The running kernel's image: initramfs-tools' /boot/initrd.img-RELEASE;
 * with dracut Fedora's /boot/initramfs-RELEASE.img, else (Debian's dracut)
 * initrd.img-RELEASE when only that one exists.
 */
static void default_image(bool dracut_on, char *image, size_t size)
{
	struct utsname u;

	if (uname(&u) < 0) {
		snprintf(image, size, "/boot/initrd.img");
		return;
	}
	if (dracut_on) {
		snprintf(image, size, "/boot/initramfs-%s.img", u.release);
		if (access(image, F_OK) == 0)
			return;
		snprintf(image, size, "/boot/initrd.img-%s", u.release);
		if (access(image, F_OK) == 0)
			return;
		snprintf(image, size, "/boot/initramfs-%s.img", u.release);
		return;
	}
	snprintf(image, size, "/boot/initrd.img-%s", u.release);
}

/*
 * A relative image made absolute: lsinitrd runs in the directory it
 * unpacks into, and a name starting with "-" is no option to either.
 */
static void absolute_image(char *image, size_t size)
{
	char *abs;

	if (image[0] == '/')
		return;
	abs = realpath(image, NULL);
	if (abs && strlen(abs) < size)
		snprintf(image, size, "%s", abs);
	free(abs);
}

int duress_initramfs_report(const char *boot_dir, const char *initramfs,
			    const struct duress_dracut *d,
			    const struct duress_keyscript_disks *disks)
{
	char image[PATH_MAX], shown[SHOWN_SIZE], boot[SHOWN_SIZE], tmp[PATH_MAX];
	const struct builder b = { d->on ? &dracut : &initramfs_tools, duress_dracut_rebuild(d),
				   d->on ? N_PROGRAMS : N_PROGRAMS_INITRAMFS_TOOLS,
				   !d->builder && disks->n > 0 };
	struct cryptroot cr = { 0 };
	struct compare c = { 0 };
	enum state prog[N_PROGRAMS] = { SAME, SAME, SAME };
	/*
	 * sudo may keep the caller's TMPDIR: as root the unpacked tree is under
	 * /tmp, where no other user can replace what root then walks and removes.
	 */
	const char *base = geteuid() == 0 ? NULL : getenv("TMPDIR");
	struct stat st;
	int stale = 0;
	int boot_fd, r;

	if (initramfs)
		snprintf(image, sizeof(image), "%s", initramfs);
	else
		default_image(d->on, image, sizeof(image));
	duress_escape(image, shown, sizeof(shown));
	duress_escape(boot_dir, boot, sizeof(boot));
	if (access(image, R_OK) < 0) {
		cannot_tell(shown, strerror(errno),
			    errno == ENOENT ? b.rebuild : "run duress check as root");
		return 0;
	}
	absolute_image(image, sizeof(image));
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
	r = unpack_and_compare(&b, image, tmp, boot_dir, boot_fd, disks, &c, prog, &cr);
	remove_tree(tmp);
	close(boot_fd);
	if (r < 0) {
		cannot_tell(shown, c.why ? c.why : "out of memory", c.fix ? c.fix : "try again");
		free_entries(&c);
		return 0;
	}
	for (size_t i = 0; i < c.n; i++)
		stale |= c.e[i].state != SAME;
	for (size_t i = 0; i < b.n_prog; i++)
		stale |= prog[i] != SAME;
	if (stale)
		print_stale(shown, boot, &c, prog, b.n_prog, b.rebuild);
	else
		printf("OK: the initramfs %s holds the current boot actions\n", shown);
	free_entries(&c);
	if (b.cryptroot)
		stale += report_cryptroot(shown, disks, &cr, b.rebuild);
	if (stat(image, &st) == 0 && (st.st_mode & S_IROTH))
		warn_readable(shown, d->on);
	return stale;
}
