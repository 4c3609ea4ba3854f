/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/setfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/escape.h"
#include "core/safe_open.h"

bool duress_set_file_is_stdin(const char *spec)
{
	const char *eq = strchr(spec, '=');

	return eq && strcmp(eq + 1, "-") == 0;
}

/*
 * Reads from fd until a newline or DURESS_SET_FILE_MAX + 1 bytes: one byte
 * more than a value may have, so a longer first line is seen.  Returns the
 * number of bytes read (the first line is what comes before a newline), or
 * -errno; *eof tells whether the end of the input was reached.
 */
static ssize_t read_head(int fd, char *buf, bool *eof)
{
	size_t len = 0;

	*eof = false;
	while (len <= DURESS_SET_FILE_MAX && !memchr(buf, '\n', len)) {
		ssize_t n = read(fd, buf + len, DURESS_SET_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			*eof = true;
			break;
		}
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/*
 * Reads the rest of fd up to its end, dropping it: at a terminal, the
 * Ctrl-D that ends the value.  Left unread, it would be the next thing the
 * terminal gives: an empty answer to the password prompt, or, after an
 * error, the end of the user's shell.  The notes after the first line are
 * read too, and wiped.
 */
static void drain(int fd)
{
	char rest[256];
	ssize_t n;

	while ((n = read(fd, rest, sizeof(rest))) > 0 || (n < 0 && errno == EINTR))
		;
	sodium_memzero(rest, sizeof(rest));
}

/*
 * The value of "-": standard input's first line.  At a terminal it ends
 * with Ctrl-D, as the one line said before it tells.
 */
static ssize_t read_stdin(const char *spec, size_t key_len, char *buf)
{
	bool tty = isatty(STDIN_FILENO), eof;
	ssize_t n;

	if (tty)
		fprintf(stderr,
			"duress add: %.*s: paste or type the value, then Enter and Ctrl-D\n",
			(int)key_len, spec);
	n = read_head(STDIN_FILENO, buf, &eof);
	if (tty && !eof)
		drain(STDIN_FILENO);
	return n;
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

/* Why the one helper did not open FILE: one line's end. */
static const char *refusal(const struct duress_file *f, char *buf, size_t size)
{
	/* What <(command) and a named pipe give: standard input is the way for those. */
	static const char piped[] = ", not a regular file (a command's output: KEY=- and "
				    "standard input)";

	if (f->error)
		return strerror_r(f->error, buf, size);
	if (f->skip == DURESS_SKIP_SYMLINK)
		snprintf(buf, size, "a symlink%s", piped);
	else if (f->skip == DURESS_SKIP_TOO_LARGE)
		snprintf(buf, size, "larger than %llu KiB: not a file of one value",
			 (unsigned long long)(DURESS_SET_FILE_MAX_SIZE / 1024));
	else if (f->skip != DURESS_SKIP_NOT_REGULAR)
		return duress_skip_reason(f->skip);
	else if (S_ISFIFO(f->st.st_mode))
		snprintf(buf, size, "a FIFO%s", piped);
	else
		snprintf(buf, size, "%s, not a regular file",
			 S_ISDIR(f->st.st_mode)  ? "a directory" :
			 S_ISSOCK(f->st.st_mode) ? "a socket" :
						   "a device");
	return buf;
}

/*
 * Opens FILE for reading ("-": standard input, not closed): through the one
 * helper, so a regular file of at most DURESS_SET_FILE_MAX_SIZE bytes, its
 * name not a symlink, opened only after an O_PATH fstat (a FIFO or device
 * is never opened, so nothing blocks); -1 with *why set if not.
 */
static int open_value_file(const char *file, const char **why, char *buf, size_t size)
{
	const struct duress_trust t = { .max_size = DURESS_SET_FILE_MAX_SIZE };
	struct duress_file f;
	int r;

	if (strcmp(file, "-") == 0)
		return STDIN_FILENO;
	r = duress_open_file(AT_FDCWD, file, DURESS_FILE_INPUT, &t, true, &f);
	if (r < 0)
		*why = strerror_r(-r, buf, size);
	else if (f.fd < 0)
		*why = refusal(&f, buf, size);
	/* Our own rights: nothing to give back, and the descriptor is the caller's. */
	duress_file_release(&f);
	return *why ? -1 : f.fd;
}

char *duress_set_file_read(const char *spec)
{
	const char *eq = strchr(spec, '=');
	size_t key_len = (size_t)(eq - spec), len = 0;
	char buf[DURESS_SET_FILE_MAX + 2], shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	char reason[128];
	const char *why = NULL;
	char *set = NULL;
	int fd = open_value_file(eq + 1, &why, reason, sizeof(reason));
	bool eof;
	ssize_t n = fd < 0             ? -1 :
		    fd == STDIN_FILENO ? read_stdin(spec, key_len, buf) :
					 read_head(fd, buf, &eof);

	if (fd > STDIN_FILENO)
		close(fd);
	if (n < 0 && !why)
		why = strerror_r((int)-n, reason, sizeof(reason));
	if (n >= 0)
		why = first_line(buf, (size_t)n, &len);
	if (!why && !(set = malloc(key_len + 1 + len + 1)))
		why = "out of memory";
	if (why) {
		fprintf(stderr, "duress add: --set-file %.*s=%s: %s\n", (int)key_len, spec,
			strcmp(eq + 1, "-") ? duress_escape(eq + 1, shown, sizeof(shown)) :
					      "- (standard input)",
			why);
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
