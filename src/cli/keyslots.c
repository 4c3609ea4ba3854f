/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/keyslots.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/escape.h"
#include "core/wait.h"

#define DUMP_MAX ((size_t)64 * 1024) /* bytes of luksDump's text read */
#define DUMP_TIMEOUT_MS 10000        /* a header is read in well under a second */
#define CRYPTSETUP_PATHS "/usr/sbin/cryptsetup", "/sbin/cryptsetup"

/* crypttab's source field as a device path; NULL when it names none we know. */
static const char *device_path(const char *source, char *out, size_t len)
{
	static const struct {
		const char *prefix, *dir;
	} sources[] = {
		{ "UUID=", "/dev/disk/by-uuid/" },
		{ "PARTUUID=", "/dev/disk/by-partuuid/" },
		{ "LABEL=", "/dev/disk/by-label/" },
	};

	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		size_t k = strlen(sources[i].prefix);

		if (strncmp(source, sources[i].prefix, k) == 0 && source[k] &&
		    !strchr(source + k, '/'))
			return snprintf(out, len, "%s%s", sources[i].dir, source + k) < (int)len ?
				       out :
				       NULL;
	}
	return source[0] == '/' && snprintf(out, len, "%s", source) < (int)len ? out : NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child: luksDump of dev on out, nothing else open, no shell. */
static _Noreturn void run_dump(int out, const char *dev)
{
	static const char *const paths[] = { CRYPTSETUP_PATHS };
	char arg0[] = "cryptsetup", arg1[] = "luksDump", arg2[PATH_MAX], lc[] = "LC_ALL=C";
	char *argv[] = { arg0, arg1, arg2, NULL };
	char *envp[] = { lc, NULL };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
		_exit(127);
	(void)close_range(3, ~0U, 0);
	snprintf(arg2, sizeof(arg2), "%s", dev);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		execve(paths[i], argv, envp);
	_exit(127);
}

/* Reads the child's output into buf until EOF or the deadline; the length, or -1. */
static ssize_t read_until(int fd, char *buf, size_t max, long long deadline)
{
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			if (errno == EINTR && left > 0)
				continue;
			return -1;
		}
		n = read(fd, buf + len, max - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (len += (size_t)n) == max)
			return n < 0 ? -1 : (ssize_t)len;
	}
}

/* luksDump's text of dev in buf (NUL-terminated); 0, or -1 with *why set. */
static int dump(const char *dev, char *buf, size_t max, const char **why)
{
	int pipefd[2], status = 0;
	ssize_t len;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		*why = "no pipe";
		return -1;
	}
	pid = fork();
	if (pid == 0)
		run_dump(pipefd[1], dev);
	close(pipefd[1]);
	len = pid < 0 ? -1 : read_until(pipefd[0], buf, max - 1, now_ms() + DUMP_TIMEOUT_MS);
	close(pipefd[0]);
	if (pid > 0) {
		if (len < 0)
			(void)kill(pid, SIGKILL);
		/* Its output ended, but it may not: bounded too. */
		(void)duress_wait_bounded(pid, &status, DUMP_TIMEOUT_MS);
	}
	if (len < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*why = len < 0 ?
			       "cryptsetup luksDump did not answer" :
		       WIFEXITED(status) && WEXITSTATUS(status) == 127 ?
			       "cryptsetup is not installed" :
			       "cryptsetup luksDump failed (not LUKS, or not readable: run as root)";
		return -1;
	}
	buf[len] = '\0';
	return 0;
}

/* Whether l is a slot's first line: "  N: TYPE". */
static bool slot_line(const char *l)
{
	char *end;

	l += strspn(l, " ");
	if (*l < '0' || *l > '9')
		return false;
	(void)strtoul(l, &end, 10);
	return end[0] == ':' && end[1] == ' ' && end[2] != '\0';
}

/* Counts the slots of the Keyslots section, and the preferred ones. */
static void count_slots(char *text, unsigned *slots, unsigned *preferred)
{
	char *save = NULL;
	bool in_slots = false;

	*slots = *preferred = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] != ' ' && l[0] != '\t')
			in_slots = strncmp(l, "Keyslots:", 9) == 0;
		else if (in_slots && slot_line(l))
			(*slots)++;
		else if (in_slots && strstr(l, "Priority:") && strstr(l, "preferred"))
			(*preferred)++;
	}
}

/*
 * A source that names no device of this system: for the keyscript's disk an
 * ERROR (cryptsetup-initramfs's hook prints "Couldn't resolve device" and
 * the initramfs cannot find the disk); else a WARN (a disk not attached).
 */
static int report_absent(const char *prefix, const char *shown, bool keyscript_disk)
{
	if (!keyscript_disk) {
		printf("%s: WARN: cannot tell the key slots of %s: it does not exist (a disk not "
		       "attached?); fix: check them by hand once it is (docs/boot.md, Timing)\n",
		       prefix, shown);
		return 0;
	}
	printf("%s: ERROR: %s does not exist, so the initramfs cannot find the disk of the line "
	       "that uses the keyscript (update-initramfs says: cryptsetup: ERROR: Couldn't "
	       "resolve device); fix: correct the line's source (2nd field): the UUID= of the "
	       "disk's crypto_LUKS partition, which lsblk -f shows, then sudo update-initramfs -u\n",
	       prefix, shown);
	return 1;
}

/* The line on the key slots luksDump's text (changed) shows of dev (shown). */
static void report_slots(const char *prefix, const char *shown, char *text)
{
	unsigned slots, preferred;

	count_slots(text, &slots, &preferred);
	/*
	 * The preferred slot is the duress passphrase's (docs/boot.md,
	 * Timing): when it is the only one left (luksChangeKey or
	 * luksKillSlot took the real one), every unlock is a duress unlock.
	 */
	if (slots == 1 && preferred == 1)
		printf("%s: WARN: the only key slot of %s is the preferred one, the duress "
		       "passphrase's: every unlock runs the boot actions; fix: sudo cryptsetup "
		       "luksAddKey %s (the real passphrase) (docs/boot.md, Changing a passphrase)\n",
		       prefix, shown, shown);
	else if (preferred > 0)
		printf("%s: OK: %s tries its preferred key slot first\n", prefix, shown);
	else if (slots == 1)
		printf("%s: WARN: %s has one key slot, so a duress passphrase opens nothing and "
		       "only before-unlock actions can run; fix: sudo cryptsetup luksAddKey %s (the "
		       "duress passphrase), then prefer its slot (docs/boot.md, Timing)\n",
		       prefix, shown, shown);
	else if (slots > 1)
		printf("%s: WARN: %s has %u key slots and none is preferred: cryptsetup tries them in "
		       "order, so a passphrase in a later slot unlocks a whole key derivation later, "
		       "which a stopwatch sees; fix: sudo cryptsetup config --priority prefer "
		       "--key-slot N %s, N the duress passphrase's slot\n",
		       prefix, shown, slots, shown);
	else
		printf("%s: WARN: cannot tell the key slots of %s: no LUKS2 key slot in cryptsetup "
		       "luksDump's output (LUKS1?); fix: check them by hand (docs/boot.md, Timing)\n",
		       prefix, shown);
}

int duress_keyslots_report(const char *prefix, const char *source, bool keyscript_disk)
{
	char dev[PATH_MAX], shown[DURESS_ESCAPED_SIZE(PATH_MAX)], *text;
	const char *why = "no memory";
	struct stat st;

	if (!device_path(source, dev, sizeof(dev))) {
		printf("%s: WARN: cannot tell the key slots of %s: not a device path, UUID=, "
		       "PARTUUID= or LABEL=; fix: check them by hand (docs/boot.md, Timing)\n",
		       prefix, duress_escape(source, shown, sizeof(shown)));
		return 0;
	}
	duress_escape(dev, shown, sizeof(shown));
	if (stat(dev, &st) < 0 && (errno == ENOENT || errno == ENOTDIR))
		return report_absent(prefix, shown, keyscript_disk);
	text = malloc(DUMP_MAX);
	if (!text || dump(dev, text, DUMP_MAX, &why) < 0)
		printf("%s: WARN: cannot tell the key slots of %s: %s; fix: run duress check as "
		       "root, with cryptsetup installed\n",
		       prefix, shown, why);
	else
		report_slots(prefix, shown, text);
	free(text);
	return 0;
}
