/* SPDX-License-Identifier: GPL-2.0-or-later */
/* "# Requires:" lines: what an action needs installed to work (requires.h). */
#include "cli/requires.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/runner.h"

#define PREFIX "# Requires: "
#define CONFIG_PREFIX "CONFIG="
/* The head of an action read for its header and CONFIG= line; all of a config. */
#define HEAD_MAX ((size_t)16 * 1024)
#define CONFIG_MAX ((size_t)64 * 1024)
#define LINE_MAX_LEN 512
#define MAX_ALTERNATIVES 8
#define WORD_SIZE 64
/* Where the examples look besides PATH: they add the sbin directories to theirs. */
#define EXTRA_PATH "/usr/sbin:/sbin"
#define APT_GET "/usr/bin/apt-get"

struct need {
	char program[MAX_ALTERNATIVES][WORD_SIZE];
	char package[MAX_ALTERNATIVES][WORD_SIZE];
	size_t n;
	char setting[WORD_SIZE];  /* the config's KEY of the condition; "": none */
	char words[LINE_MAX_LEN]; /* "a,b"; "": any value */
};

/* The next line of text from *pos (without its newline); false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, const char **line,
		      size_t *line_len)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*line = text + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*line_len = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *line_len + (nl != NULL);
	return true;
}

/* Whether s is a non-empty word of the characters allowed (no escape ever reaches a terminal). */
static bool is_word(const char *s, const char *extra)
{
	static const char alnum[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	for (const char *c = s; *c; c++)
		if (!strchr(alnum, *c) && !strchr(extra, *c))
			return false;
	return *s && strlen(s) < WORD_SIZE;
}

/* One alternative, "PROGRAM[:PACKAGE]", added to n; false when it is not of the form. */
static bool parse_alternative(char *alt, struct need *n)
{
	char *colon = strchr(alt, ':');
	const char *base;

	if (colon)
		*colon = '\0';
	if (n->n == MAX_ALTERNATIVES || !is_word(alt, "._+-/") ||
	    (strchr(alt, '/') && alt[0] != '/'))
		return false;
	base = strrchr(alt, '/') ? strrchr(alt, '/') + 1 : alt;
	if (colon ? !is_word(colon + 1, "._+-") : !*base)
		return false;
	snprintf(n->program[n->n], WORD_SIZE, "%s", alt);
	snprintf(n->package[n->n], WORD_SIZE, "%s", colon ? colon + 1 : base);
	n->n++;
	return true;
}

/* "KEY" or "KEY=WORD[,WORD]..." after "if"; false when it is not of the form. */
static bool parse_condition(char *cond, struct need *n)
{
	char *eq = strchr(cond, '=');

	if (eq)
		*eq = '\0';
	if (!is_word(cond, "_") || (eq && !is_word(eq + 1, "._+-,")))
		return false;
	snprintf(n->setting, sizeof(n->setting), "%s", cond);
	snprintf(n->words, sizeof(n->words), "%s", eq ? eq + 1 : "");
	return true;
}

/* A "# Requires: " line's text (after the prefix) into *n; false when it is not of the form. */
static bool parse_need(const char *text, size_t len, struct need *n)
{
	char buf[LINE_MAX_LEN], *save = NULL, *alt_save = NULL, *alts, *word, *cond;

	*n = (struct need){ 0 };
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, text, len);
	buf[len] = '\0';
	alts = strtok_r(buf, " \t", &save);
	for (char *a = alts ? strtok_r(alts, "|", &alt_save) : NULL; a;
	     a = strtok_r(NULL, "|", &alt_save))
		if (!parse_alternative(a, n))
			return false;
	word = strtok_r(NULL, " \t", &save);
	if (!word)
		return n->n > 0;
	cond = strtok_r(NULL, " \t", &save);
	return n->n > 0 && strcmp(word, "if") == 0 && cond && parse_condition(cond, n) &&
	       !strtok_r(NULL, " \t", &save);
}

/* The next word of text (len bytes) from *pos, split at the characters of seps; false at the end. */
static bool next_word(const char *text, size_t len, const char *seps, size_t *pos,
		      const char **word, size_t *word_len)
{
	while (*pos < len && strchr(seps, text[*pos]))
		(*pos)++;
	if (*pos >= len)
		return false;
	*word = text + *pos;
	while (*pos < len && !strchr(seps, text[*pos]))
		(*pos)++;
	*word_len = (size_t)(text + *pos - *word);
	return true;
}

/* Whether value (len bytes) has one of the comma-separated words among its own (commas, blanks). */
static bool has_word(const char *value, size_t len, const char *words)
{
	size_t vpos = 0, vlen = 0, wlen = 0, n = strlen(words);
	const char *v = NULL, *w = NULL;

	/* strchr() finds the NUL too: a NUL in the value splits it as a blank does. */
	while (next_word(value, len, ", \t\r", &vpos, &v, &vlen))
		for (size_t wpos = 0; next_word(words, n, ",", &wpos, &w, &wlen);)
			if (wlen == vlen && memcmp(v, w, vlen) == 0)
				return true;
	return false;
}

/* Whether the value (len bytes) has a character other than blanks. */
static bool has_value(const char *value, size_t len)
{
	size_t pos = 0, l = 0;
	const char *w = NULL;

	return next_word(value, len, " \t\r", &pos, &w, &l);
}

/* Whether n counts for this config (NULL: unknown, so it does). */
static bool condition_holds(const struct need *n, const char *config, size_t len)
{
	size_t pos = 0, l = 0, slen = strlen(n->setting);
	const char *line = NULL;

	if (!*n->setting || !config)
		return true;
	while (next_line(config, len, &pos, &line, &l))
		if (l > slen && memcmp(line, n->setting, slen) == 0 && line[slen] == '=' &&
		    (*n->words ? has_word(line + slen + 1, l - slen - 1, n->words) :
				 has_value(line + slen + 1, l - slen - 1)))
			return true;
	return false;
}

/* Whether path is an executable regular file. */
static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Whether program (a name, or an absolute path) is installed where the action looks. */
static bool installed(const char *program, bool as_root)
{
	char search[PATH_MAX], path[PATH_MAX], *save = NULL;

	if (program[0] == '/')
		return executable(program);
	snprintf(search, sizeof(search), "%s:" EXTRA_PATH, duress_action_path(as_root));
	for (char *d = strtok_r(search, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if (snprintf(path, sizeof(path), "%s/%s", d, program) < (int)sizeof(path) &&
		    executable(path))
			return true;
	return false;
}

/* Appends sep and word to the text in buf (cut at its size). */
static void append(char *buf, size_t size, const char *sep, const char *word)
{
	size_t used = strlen(buf);

	snprintf(buf + used, size - used, "%s%s", sep, word);
}

/* Adds a need none of whose programs is installed to m. */
static void add_missing(const struct need *n, struct duress_missing *m)
{
	for (size_t i = 0; i < n->n; i++) {
		const char *sep = i ? " or " : m->n ? ", " : "";

		append(m->programs, sizeof(m->programs), sep, n->program[i]);
	}
	append(m->packages, sizeof(m->packages), m->n ? " " : "", n->package[0]);
	m->n++;
}

void duress_requires_missing(const char *script, size_t len, const char *config, size_t config_len,
			     bool as_root, struct duress_missing *m)
{
	size_t pos = 0, l = 0, plen = strlen(PREFIX);
	const char *line = NULL;

	*m = (struct duress_missing){ 0 };
	/* The opening comment block: from the #! line on, every line a comment. */
	while (next_line(script, len, &pos, &line, &l) && l > 0 && line[0] == '#') {
		struct need n;
		bool met = false;

		if (l < plen || memcmp(line, PREFIX, plen) != 0 ||
		    !parse_need(line + plen, l - plen, &n) ||
		    !condition_holds(&n, config, config_len))
			continue;
		for (size_t i = 0; i < n.n && !met; i++)
			met = installed(n.program[i], as_root);
		if (!met)
			add_missing(&n, m);
	}
}

const char *duress_missing_say(const struct duress_missing *m, char *buf, size_t size)
{
	bool apt = executable(APT_GET);

	snprintf(buf, size, "%s: %s; fix: %s%s",
		 m->n > 1 ? "programs it needs are missing" : "a program it needs is missing",
		 m->programs, apt ? "sudo apt-get install " : "install ",
		 apt ? m->packages : m->programs);
	return buf;
}

#define UNREADABLE (-2)

/*
 * Up to size bytes of name (at at_fd), opened as kind with dir's rights and
 * judged as the module judges it: the length; UNREADABLE; or -1 when the
 * rights cannot be taken (an internal error).
 */
static ssize_t read_judged(const struct duress_dir *dir, int at_fd, const char *name,
			   enum duress_file_kind kind, char *buf, size_t size)
{
	struct duress_trust t = duress_dir_trust(
		dir, kind == DURESS_FILE_ACTION ? dir->caps->max_file_size : CONFIG_MAX);
	struct duress_file f;
	size_t len = 0;
	ssize_t n = 1;
	int r = duress_open_file(at_fd, name, kind, &t, true, &f);
	bool opened = r == 0 && f.fd >= 0;

	while (opened && len < size && n > 0) {
		n = read(f.fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			n = 1;
		else if (n > 0)
			len += (size_t)n;
	}
	duress_file_close(&f);
	if (r < 0)
		return -1;
	return !opened || n < 0 ? UNREADABLE : (ssize_t)len;
}

/* The path on the script's first CONFIG= line (absolute, unquoted) into buf, or NULL. */
static const char *config_path(const char *script, size_t len, char *buf, size_t size)
{
	size_t pos = 0, l = 0, plen = strlen(CONFIG_PREFIX);
	const char *line = NULL;

	while (next_line(script, len, &pos, &line, &l))
		if (l > plen && memcmp(line, CONFIG_PREFIX, plen) == 0)
			return line[plen] == '/' && l - plen < size &&
					       snprintf(buf, size, "%.*s", (int)(l - plen),
							line + plen) > 0 ?
				       buf :
				       NULL;
	return NULL;
}

int duress_requires_of_action(const struct duress_dir *dir, const struct duress_action *a,
			      struct duress_missing *m)
{
	char *head = malloc(HEAD_MAX), *config = malloc(CONFIG_MAX), path[PATH_MAX];
	ssize_t len = -1, config_len = 0; /* no CONFIG= line: an empty config */

	*m = (struct duress_missing){ 0 };
	if (head && config)
		len = read_judged(dir, dir->fd, a->name, DURESS_FILE_ACTION, head, HEAD_MAX);
	if (len > 0 && config_path(head, (size_t)len, path, sizeof(path)))
		config_len =
			read_judged(dir, AT_FDCWD, path, DURESS_FILE_COMPANION, config, CONFIG_MAX);
	/* A config that cannot be read meets every condition. */
	if (len > 0 && config_len != -1)
		duress_requires_missing(head, (size_t)len, config_len >= 0 ? config : NULL,
					config_len >= 0 ? (size_t)config_len : 0, dir->owner == 0,
					m);
	free(head);
	free(config);
	return len == -1 || config_len == -1 ? -1 : 0;
}

void duress_requires_warn(const char *name, bool as_root, const char *script, size_t len,
			  const char *config, size_t config_len)
{
	struct duress_missing m;
	char say[2 * DURESS_MISSING_TEXT + 64];

	duress_requires_missing(script, len, config, config_len, as_root, &m);
	if (m.n)
		fprintf(stderr, "duress add: warning: %s will not work: %s\n", name,
			duress_missing_say(&m, say, sizeof(say)));
}
