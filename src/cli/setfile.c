/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/setfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/escape.h"

bool duress_set_file_is_stdin(const char *spec)
{
	const char *eq = strchr(spec, '=');

	return eq && strcmp(eq + 1, "-") == 0;
}

/*
 * Reads from fd until a newline or DURESS_SET_FILE_MAX + 1 bytes: one byte
 * more than a value may have, so a longer first line is seen.  Returns the
 * number of bytes read (the first line is what comes before a newline), or
 * -errno.
 */
static ssize_t read_head(int fd, char *buf)
{
	size_t len = 0;

	while (len <= DURESS_SET_FILE_MAX && !memchr(buf, '\n', len)) {
		ssize_t n = read(fd, buf + len, DURESS_SET_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/* The first line's length in buf (n bytes read), or why it is refused (NULL: fine). */
static const char *first_line(const char *buf, size_t n, size_t *len)
{
	const char *nl = memchr(buf, '\n', n);

	*len = nl ? (size_t)(nl - buf) : n;
	if (*len > DURESS_SET_FILE_MAX)
		return "its first line is longer than 4096 bytes";
	if (memchr(buf, '\0', *len))
		return "its first line holds a NUL byte";
	return NULL;
}

/* Opens FILE for reading ("-": standard input, not closed); -errno if it cannot. */
static int open_value_file(const char *file)
{
	int fd;

	if (strcmp(file, "-") == 0)
		return STDIN_FILENO;
	/* A FIFO is fine: <(pass show KEY) gives one, and its writer is there. */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

char *duress_set_file_read(const char *spec)
{
	const char *eq = strchr(spec, '=');
	size_t key_len = (size_t)(eq - spec), len = 0;
	char buf[DURESS_SET_FILE_MAX + 2], shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	const char *why = NULL;
	char *set = NULL;
	int fd = open_value_file(eq + 1);
	ssize_t n = fd < 0 ? fd : read_head(fd, buf);

	if (fd > STDIN_FILENO)
		close(fd);
	if (n >= 0)
		why = first_line(buf, (size_t)n, &len);
	if (n >= 0 && !why && !(set = malloc(key_len + 1 + len + 1)))
		why = "out of memory";
	if (n < 0 || why) {
		fprintf(stderr, "duress add: --set-file %.*s=%s: %s\n", (int)key_len, spec,
			strcmp(eq + 1, "-") ? duress_escape(eq + 1, shown, sizeof(shown)) :
					      "- (standard input)",
			why ? why : strerror((int)-n));
	} else {
		memcpy(set, spec, key_len + 1);
		memcpy(set + key_len + 1, buf, len);
		set[key_len + 1 + len] = '\0';
	}
	sodium_memzero(buf, sizeof(buf));
	return set;
}

void duress_set_file_free(char *set)
{
	if (set)
		sodium_memzero(set, strlen(set));
	free(set);
}
