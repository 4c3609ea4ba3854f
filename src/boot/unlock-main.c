/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unlock-helper: duress at the disk-unlock prompt (unlock.h, docs/boot.md).
 *
 *   unlock-helper [DIR]               at the prompt, in the initramfs: the
 *                                     passphrase on stdin (never argv or the
 *                                     environment), from unlock-keyscript
 *   unlock-helper --after-boot [DIR]  once after boot, from unlock-finish.service
 *   unlock-helper --list-files [DIR]  for the initramfs-tools hook: the files
 *                                     the initramfs needs (duress_boot_files())
 *
 * DIR defaults to DURESS_BOOT_DIR.  Exit status 0 whatever happened (the
 * unlock goes on as usual), 2 for a usage error; --list-files: 1 when the
 * list cannot be made.  Nothing on stdout (the
 * keyscript's stdout is cryptsetup's key); one line per problem, never one
 * for a match: at the prompt to the kernel log (log_to_kmsg()), after boot
 * on stderr (the journal).  Its file name, which the console and `ps` show,
 * does not name the project.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "boot/unlock.h"
#include "core/boot.h"
#include "core/escape.h"
#include "core/actions.h"

/* The runner the helper starts; a test build names the build tree's. */
#ifndef UNLOCK_RUNNER_PATH
#define UNLOCK_RUNNER_PATH DURESS_RUNNER_PATH
#endif

/*
 * A bound on the whole of a try, whatever hangs: the prompt must go on.
 * One derivation at the highest cost the caps allow, the before-unlock
 * actions' wait, and room to spare.
 */
#define UNLOCK_WATCHDOG_SECONDS (UNLOCK_WAIT_SECONDS + 60)

/*
 * At the prompt stderr is the console, which a coercer may watch, and
 * every line would name the boot directory (and so the project): the lines
 * go to the kernel log instead, at warning level (<4>), which the console
 * does not show under the usual `quiet` but dmesg and, after boot, the
 * journal do.  One write per line (line-buffered): one kernel log record
 * each.  Only when stderr is a terminal (the console): a test's stderr stays
 * its own.
 */
static const char *log_to_kmsg(void)
{
	static char buf[4096];
	int fd;

	if (!isatty(STDERR_FILENO))
		return "unlock-helper";
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return "unlock-helper";
	if (fd != STDERR_FILENO && dup2(fd, STDERR_FILENO) < 0) {
		close(fd);
		return "unlock-helper";
	}
	if (fd != STDERR_FILENO)
		close(fd);
	setvbuf(stderr, buf, _IOLBF, sizeof(buf));
	return "<4>unlock-helper";
}

static int usage(void)
{
	fputs("usage: unlock-helper [--after-boot | --list-files] [DIR]\n", stderr);
	return 2;
}

/*
 * --list-files: each file the initramfs needs for dir, NUL-terminated on
 * stdout (a path is any bytes but NUL); a directory the prompt would skip
 * whole lists nothing, with one line on stderr saying why.  0, or 1 (one
 * line on stderr) when the list cannot be made: the hook then fails.
 */
static int list_files(const char *dir)
{
	struct duress_boot_files f;
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], buf[128];
	int r = duress_boot_files(dir, &f);

	duress_escape(dir, shown, sizeof(shown));
	if (r < 0) {
		fprintf(stderr,
			"unlock-helper: %s: cannot list the files the initramfs needs: %s\n", shown,
			duress_dir_problem(r, buf, sizeof(buf)));
		return 1;
	}
	if (f.skipped && f.skipped != -ENOENT)
		fprintf(stderr, "unlock-helper: %s: %s: the prompt skips it, nothing to copy\n",
			shown, duress_dir_problem(f.skipped, buf, sizeof(buf)));
	for (size_t i = 0; i < f.n; i++)
		fwrite(f.paths[i], 1, strlen(f.paths[i]) + 1, stdout);
	duress_boot_files_free(&f);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "unlock-helper: cannot write the list: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * Reads the passphrase: at most UNLOCK_PASS_MAX bytes kept, the rest read
 * and dropped (so the writer never blocks).  *too_long when there was more.
 */
static size_t read_pass(char *pass, bool *too_long)
{
	char drop[256];
	size_t len = 0;
	ssize_t n;

	*too_long = false;
	while (len < UNLOCK_PASS_MAX) {
		n = read(STDIN_FILENO, pass + len, UNLOCK_PASS_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return len;
		len += (size_t)n;
	}
	while ((n = read(STDIN_FILENO, drop, sizeof(drop))) != 0) {
		if (n < 0 && errno != EINTR)
			break;
		*too_long = *too_long || n > 0;
	}
	sodium_memzero(drop, sizeof(drop));
	return len;
}

int main(int argc, char **argv)
{
	struct duress_log lg = { .tag = "unlock-helper" };
	struct unlock_paths p = {
		.dir = DURESS_BOOT_DIR,
		.record_dir = DURESS_BOOT_RECORD_DIR,
		.record = DURESS_BOOT_RECORD,
		.runner = UNLOCK_RUNNER_PATH,
		.wait_seconds = UNLOCK_WAIT_SECONDS,
	};
	bool after_boot = false, list = false, too_long = false;
	char *pass;
	size_t len;
	int i = 1;

	/* No core dump and no ptrace by anyone but root of this process's memory: the passphrase. */
	(void)prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
	umask(077);
	if (i < argc && strcmp(argv[i], "--after-boot") == 0) {
		after_boot = true;
		i++;
	} else if (i < argc && strcmp(argv[i], "--list-files") == 0) {
		list = true;
		i++;
	}
	if (i < argc && argv[i][0] == '-')
		return usage();
	if (i < argc)
		p.dir = argv[i++];
	if (i < argc || p.dir[0] != '/')
		return usage();
	if (sodium_init() < 0) {
		duress_log(&lg, LOG_ERR, "cannot initialise libsodium");
		return 0;
	}
	if (list)
		return list_files(p.dir);
	if (after_boot) {
		(void)unlock_after_boot(&p, &lg);
		return 0;
	}
	alarm(UNLOCK_WATCHDOG_SECONDS);
	lg.tag = log_to_kmsg();
	/* Locked in memory, wiped when freed. */
	pass = sodium_malloc(UNLOCK_PASS_MAX + 1);
	if (!pass) {
		duress_log(&lg, LOG_ERR, "out of memory");
		return 0;
	}
	len = read_pass(pass, &too_long);
	(void)unlock_at_prompt(&p, pass, len, too_long, &lg);
	sodium_free(pass);
	return 0;
}
