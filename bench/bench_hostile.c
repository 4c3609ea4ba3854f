/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a wrong password costs when the per-user directory holds something
 * hostile, as a ratio of the same directory without it, all measured in
 * this one run: the numbers the PAM tests once asserted as time bounds
 * (pam-hostile's 1 s and 5 s, pam-timing's 0.9-1.9), which a loaded machine
 * broke without a bug.  The tests now assert what was refused and in which
 * order; this says how long it took.
 *
 * Each directory holds "good", signed at the default cost, plus one
 * hostile item: a FIFO or a symbolic link as an action, a signature line
 * padded to 64 KiB, a signature claiming 4 GiB of memory or 2^32-1 passes
 * (over the module's caps: refused before any derivation), an action one
 * byte over max_file_size.  Then a missing and an empty directory (the
 * stand-in derivation).  Every ratio should be near 1.00: the derivation
 * at the default cost is the work, whatever the directory holds.
 *
 * Usage: bench_hostile PATH/TO/duress
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/auth.h"
#include "core/opts.h"

#include "clock.h"

#define RUNS 10
#define BIG_SIG 65536

static const char password[] = "Bench-hostile-pw-7";
static char top[] = "/tmp/duress-bench-hostile.XXXXXX";
/* Where messages go: the core's lines for each skipped entry go to stderr, made /dev/null. */
static int say_fd = STDERR_FILENO;

static void die(const char *what)
{
	dprintf(say_fd, "bench_hostile: %s\n", what);
	exit(2);
}

static void path_in(char out[PATH_MAX], const char *dir, const char *name)
{
	if ((size_t)snprintf(out, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		die("path too long");
}

static void write_text(const char *path, const char *text, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fchmod(fd, mode) < 0 || close(fd) < 0)
		die("cannot write a file");
}

/* dir/name, a small script signed with the real CLI at its default cost. */
static void signed_action(const char *duress, const char *dir, const char *name)
{
	char path[PATH_MAX], cmd[3 * PATH_MAX];

	path_in(path, dir, name);
	write_text(path, "#!/bin/sh\necho hello\n", 21, 0700);
	snprintf(cmd, sizeof(cmd), "echo '%s' | '%s' sign --stdin '%s' >/dev/null 2>&1", password,
		 duress, path);
	if (system(cmd) != 0)
		die("duress sign failed");
}

/* A fresh directory named name holding good; its path in out. */
static void directory(const char *duress, const char *name, char out[PATH_MAX])
{
	path_in(out, top, name);
	if (mkdir(out, 0700) < 0)
		die("cannot make a directory");
	signed_action(duress, out, "good");
}

static char *read_text(const char *path)
{
	static char text[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);

	if (n <= 0)
		die("cannot read a signature");
	close(fd);
	text[n] = '\0';
	return text;
}

/* dir/evil.sig: good's signature with its cost replaced by cost. */
static void evil_sig(const char *dir, const char *cost)
{
	char path[PATH_MAX], out[512];
	const char *sig, *at;

	path_in(path, dir, "good.sig");
	sig = read_text(path);
	at = strstr(sig, "m=65536,t=2,");
	if (!at)
		die("the default cost is not m=65536,t=2 any more");
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - sig), sig, cost,
		 at + strlen("m=65536,t=2,"));
	path_in(path, dir, "evil.sig");
	write_text(path, out, strlen(out), 0600);
}

/* dir/evil, a small script, with a signature of cost. */
static void evil_costing(const char *dir, const char *cost)
{
	char path[PATH_MAX];

	path_in(path, dir, "evil");
	write_text(path, "#!/bin/sh\n", 10, 0700);
	evil_sig(dir, cost);
}

static void fifo_action(const char *dir)
{
	char path[PATH_MAX];

	path_in(path, dir, "evil");
	if (mkfifo(path, 0700) < 0)
		die("mkfifo");
}

static void symlinked_action(const char *dir)
{
	char path[PATH_MAX], target[PATH_MAX];

	path_in(path, dir, "evil");
	path_in(target, dir, "good");
	if (symlink(target, path) < 0)
		die("symlink");
}

static void huge_sig(const char *dir)
{
	char path[PATH_MAX], *line = malloc(BIG_SIG + 1);

	if (!line)
		die("no memory");
	memset(line, 'A', BIG_SIG);
	line[BIG_SIG] = '\n';
	path_in(path, dir, "evil");
	write_text(path, "#!/bin/sh\n", 10, 0700);
	path_in(path, dir, "evil.sig");
	write_text(path, line, BIG_SIG + 1, 0600);
	free(line);
}

static void memory_over_cap(const char *dir)
{
	evil_costing(dir, "m=4194304,t=2,");
}

static void ops_over_cap(const char *dir)
{
	evil_costing(dir, "m=65536,t=4294967295,");
}

/* One byte over the per-user max_file_size, signed (its content never matches). */
static void oversized(const char *dir)
{
	char path[PATH_MAX];
	size_t size = DURESS_USER_MAX_FILE_SIZE + 1;
	char *text = malloc(size);

	if (!text)
		die("no memory");
	memset(text, '#', size);
	memcpy(text, "#!/bin/sh\n", 10);
	path_in(path, dir, "evil");
	write_text(path, text, size, 0700);
	free(text);
	evil_sig(dir, "m=65536,t=2,");
}

/* One wrong password against the per-user directory dir; its time in ms. */
static double one_check_ms(const char *dir, const char *user)
{
	const struct duress_log lg = { 0 };
	const struct duress_request req = {
		.user = user,
		.password = "not the duress password",
		.password_len = strlen("not the duress password"),
		.items = { .user = user, .service = "bench" },
	};
	struct duress_opts o;
	double start;

	duress_opts_default(&o);
	o.global_dir = "";
	o.user_dir = dir;
	start = bench_now_ms();
	if (duress_authenticate(&o, &req, &lg) != DURESS_NO_MATCH)
		die("unexpected outcome");
	return bench_now_ms() - start;
}

static const struct {
	const char *name;
	void (*make)(const char *dir); /* NULL: the clean directory */
} items[] = {
	{ "one action at the default cost (the reference)", NULL },
	{ "+ a FIFO as an action", fifo_action },
	{ "+ a symbolic link as an action", symlinked_action },
	{ "+ a signature line of 64 KiB", huge_sig },
	{ "+ a signature claiming 4 GiB (over max_memory)", memory_over_cap },
	{ "+ a signature claiming 2^32-1 passes (over max_ops)", ops_over_cap },
	{ "+ an action over max_file_size", oversized },
	{ "no directory (the stand-in)", NULL },
	{ "an empty directory (the stand-in)", NULL },
};

enum { N_ITEMS = sizeof(items) / sizeof(items[0]), MISSING = N_ITEMS - 2, EMPTY = N_ITEMS - 1 };

static void make_dirs(const char *duress, char dirs[N_ITEMS][PATH_MAX])
{
	for (size_t i = 0; i < N_ITEMS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "dir%zu", i);
		if (i == MISSING || i == EMPTY) {
			path_in(dirs[i], top, name);
			if (i == EMPTY && mkdir(dirs[i], 0700) < 0)
				die("cannot make a directory");
			continue;
		}
		directory(duress, name, dirs[i]);
		if (items[i].make)
			items[i].make(dirs[i]);
	}
}

int main(int argc, char **argv)
{
	static char dirs[N_ITEMS][PATH_MAX];
	static double t[N_ITEMS][RUNS];
	struct passwd *pw = getpwuid(getuid());
	char cmd[PATH_MAX + 16];
	double ref;

	if (argc != 2 || !pw || sodium_init() < 0 || !mkdtemp(top))
		return 2;
	make_dirs(argv[1], dirs);
	say_fd = dup(STDERR_FILENO);
	if (say_fd < 0 || !freopen("/dev/null", "w", stderr))
		die("cannot silence stderr");
	/* Round robin, each round starting one further: load changes spread over every item. */
	for (int r = 0; r < RUNS; r++)
		for (size_t k = 0; k < N_ITEMS; k++) {
			size_t i = (k + (size_t)r) % N_ITEMS;

			t[i][r] = one_check_ms(dirs[i], pw->pw_name);
		}
	printf("a wrong password against a per-user directory, median of %d runs each, "
	       "interleaved:\n",
	       RUNS);
	ref = bench_median(t[0], RUNS);
	for (size_t i = 0; i < N_ITEMS; i++) {
		double m = bench_median(t[i], RUNS);

		printf("  %-55s %7.1f ms  ratio %.2f\n", items[i].name, m, m / ref);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : 1;
}
