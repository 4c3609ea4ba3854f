/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/tells.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/escape.h"
#include "core/sig.h"

#define NAME "duress"
/* A config is a page of KEY=VALUE lines: a larger companion is data, not scanned. */
#define TEXT_MAX ((size_t)65536)
#define SYSFS_VALUE_MAX 64

int duress_machine_parse(const char *s, enum duress_machine *ret)
{
	static const char *const names[] = { "auto", "laptop", "server" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum duress_machine)i;
			return 0;
		}
	return -1;
}

/* The first line of a small sysfs file, or "" if it cannot be read. */
static const char *sysfs_value(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? (size_t)n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* SMBIOS chassis types that travel: portable, laptop, notebook, sub notebook,
 * hand held, tablet, convertible, detachable. */
static bool portable_chassis(void)
{
	static const long portable[] = { 8, 9, 10, 11, 14, 30, 31, 32 };
	char buf[SYSFS_VALUE_MAX], *end = NULL;
	long type =
		strtol(sysfs_value("/sys/class/dmi/id/chassis_type", buf, sizeof(buf)), &end, 10);

	if (end == buf || *end != '\0')
		return false; /* no DMI (a VM, an ARM board): the batteries decide */
	for (size_t i = 0; i < sizeof(portable) / sizeof(portable[0]); i++)
		if (type == portable[i])
			return true;
	return false;
}

/* A battery that powers the system: a wireless mouse's says scope=Device. */
static bool system_battery(void)
{
	DIR *d = opendir("/sys/class/power_supply");
	char path[PATH_MAX], buf[SYSFS_VALUE_MAX];
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/power_supply/%s/type", e->d_name);
		if (strcmp(sysfs_value(path, buf, sizeof(buf)), "Battery") != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/class/power_supply/%s/scope", e->d_name);
		found = strcmp(sysfs_value(path, buf, sizeof(buf)), "Device") != 0;
	}
	if (d)
		closedir(d);
	return found;
}

bool duress_machine_is_laptop(enum duress_machine m)
{
	if (m != DURESS_MACHINE_AUTO)
		return m == DURESS_MACHINE_LAPTOP;
	return portable_chassis() || system_battery();
}

bool duress_in_home(const char *path, const char *home)
{
	size_t len = strlen(home);

	while (len > 1 && home[len - 1] == '/')
		len--;
	if (len <= 1 || home[0] != '/')
		return false;
	return strncmp(path, home, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

/* Whether the project's name is in s[0, len), any case. */
static bool names_it(const char *s, size_t len)
{
	for (size_t i = 0; i + strlen(NAME) <= len; i++)
		if (strncasecmp(s + i, NAME, strlen(NAME)) == 0)
			return true;
	return false;
}

void duress_tell_home_dir(const char *shown, const char *user)
{
	char who[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)];

	printf("%s: WARN: inside %s's home, where whoever browses the home finds it; fix: "
	       "keep the actions outside the home: sudo pam-auth-update --enable duress-laptop "
	       "(or user_dir=/var/lib/duress/%%u on the module line), then move them there\n",
	       shown, duress_escape(user, who, sizeof(who)));
}

void duress_tell_after_placement(const char *at, bool debian_profile)
{
	printf("WARN: %s is after pam_unix on a laptop: a duress login leaves a pam_unix failure "
	       "line and takes longer; fix: %s\n",
	       at,
	       debian_profile ?
		       "sudo pam-auth-update --enable duress-laptop (or duress-before)" :
		       "put the pam_duress.so line before pam_unix.so (docs/configuration.md, Before "
		       "pam_unix instead)");
}

/* "duress" in a file's name (shown: its escaped path). */
static void tell_name(const char *shown)
{
	printf("%s: WARN: \"" NAME "\" in the file name, which whoever lists the directory sees; "
	       "fix: rename it (an action with its .sig; a companion file, then sign its action "
	       "again with --also)\n",
	       shown);
}

/* The length of the KEY of a "KEY=..." line, or 0. */
static size_t key_of(const char *line, size_t len)
{
	size_t k = 0;

	while (k < len &&
	       (line[k] == '_' || (line[k] >= 'A' && line[k] <= 'Z') ||
		(line[k] >= 'a' && line[k] <= 'z') || (k > 0 && line[k] >= '0' && line[k] <= '9')))
		k++;
	return k > 0 && k < len && line[k] == '=' ? k : 0;
}

/*
 * A companion's text: a WARN for each KEY=VALUE line that names the project,
 * and one for the first other line that does (a comment, usually).
 */
static void tell_text(const char *shown, const char *text, size_t len)
{
	size_t pos = 0, other = 0;

	for (size_t n = 1; pos < len; n++) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - line) : len - pos, k = key_of(line, l);

		pos += l + 1;
		if (!names_it(line, l))
			continue;
		if (k)
			printf("%s: WARN: %.*s= names the project, which whoever reads this file, or "
			       "what the action sends, sees; fix: choose a neutral value, then sign "
			       "the action again\n",
			       shown, (int)k, line);
		else if (!other)
			other = n;
	}
	if (other)
		printf("%s: WARN: line %zu names the project, which whoever reads this file sees; "
		       "fix: reword or delete the lines that do, then sign the action again\n",
		       shown, other);
}

/* Reads a small text companion with the directory's rights; -1: rights not taken. */
static int scan_companion(const struct duress_dir *dir, const char *path, const char *shown)
{
	struct duress_trust t = duress_dir_trust(dir, TEXT_MAX);
	struct duress_file f;
	char *buf = NULL;
	ssize_t n = -1;

	if (duress_open_file(AT_FDCWD, path, DURESS_FILE_COMPANION, &t, true, &f) < 0)
		return -1;
	if (f.fd >= 0 && (buf = malloc(TEXT_MAX + 1)))
		n = read(f.fd, buf, TEXT_MAX + 1);
	duress_file_close(&f);
	/* A NUL byte: not a text file, nothing a person reads as words. */
	if (n > 0 && (size_t)n <= TEXT_MAX && !memchr(buf, '\0', (size_t)n))
		tell_text(shown, buf, (size_t)n);
	free(buf);
	return 0;
}

bool duress_binds(const struct duress_action *a, const char *path)
{
	/* A malformed signature's fields are whatever the parse left: no paths to trust. */
	if (a->legacy || a->skip == DURESS_SKIP_SIG_MALFORMED)
		return false;
	for (const char *p = NULL; (p = duress_sig_next_also(&a->sig, p));)
		if (strcmp(p, path) == 0)
			return true;
	return false;
}

/* Whether an earlier action of dir (before index i) binds path too: told once. */
static bool seen_before(const struct duress_dir *dir, size_t i, const char *path)
{
	for (size_t j = 0; j < i; j++)
		if (duress_binds(&dir->actions[j], path))
			return true;
	return false;
}

/* Whether path is directly in the directory (its entry's name is told there). */
static bool in_dir(const struct duress_dir *dir, const char *path)
{
	size_t len = strlen(dir->path);

	return strncmp(path, dir->path, len) == 0 && path[len] == '/' &&
	       !strchr(path + len + 1, '/');
}

static int tell_companions(const struct duress_dir *dir, size_t i, const char *home,
			   const char *user)
{
	const struct duress_action *a = &dir->actions[i];
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], who[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)];

	/* A malformed signature's fields are whatever the parse left: no paths to trust. */
	bool bound = !a->legacy && a->skip != DURESS_SKIP_SIG_MALFORMED;

	for (const char *p = NULL; bound && (p = duress_sig_next_also(&a->sig, p));) {
		const char *base = strrchr(p, '/');

		if (seen_before(dir, i, p))
			continue;
		duress_escape(p, shown, sizeof(shown));
		if (!in_dir(dir, p) && base && names_it(base + 1, strlen(base + 1)))
			tell_name(shown);
		if (home && !duress_in_home(dir->path, home) && duress_in_home(p, home))
			printf("%s: WARN: a companion file inside %s's home, where whoever browses "
			       "the home finds it; fix: move it next to its action, then sign the "
			       "action again with --also naming the new place\n",
			       shown, duress_escape(user, who, sizeof(who)));
		if (scan_companion(dir, p, shown) < 0)
			return -1;
	}
	return 0;
}

int duress_tells_dir(const char *shown, const struct duress_dir *dir, const char *home,
		     const char *user)
{
	char path[DURESS_ESCAPED_SIZE(PATH_MAX + NAME_MAX + 1)],
		name[DURESS_ESCAPED_SIZE(NAME_MAX)];

	for (size_t i = 0; i < dir->n_actions; i++) {
		const char *n = dir->actions[i].name;

		if (names_it(n, strlen(n))) {
			snprintf(path, sizeof(path), "%s/%s", shown,
				 duress_escape(n, name, sizeof(name)));
			tell_name(path);
		}
	}
	for (size_t i = 0; i < dir->n_actions; i++)
		if (tell_companions(dir, i, home, user) < 0)
			return -1;
	return 0;
}
