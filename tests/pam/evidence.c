/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Authenticating through the wrapped libpam, and reading what actions left. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "conv.h"

/*
 * Our own pam_start flow rather than libpamtest's: it sets PAM_RHOST,
 * PAM_RUSER and PAM_TTY, times pam_authenticate alone, and keeps all its
 * state on the stack so that threads can use it.
 */
int auth_run(struct auth *a)
{
	struct conv_password s = { .password = a->password };
	const struct pam_conv pc = { conv_password, &s };
	const struct {
		int type;
		const char *value;
	} items[] = { { PAM_RHOST, a->rhost }, { PAM_RUSER, a->ruser }, { PAM_TTY, a->tty } };
	pam_handle_t *ph = NULL;
	double t0;
	int r = pam_start(a->service, a->user, &pc, &ph);

	if (r != PAM_SUCCESS)
		return r;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		if (items[i].value &&
		    pam_set_item(ph, items[i].type, items[i].value) != PAM_SUCCESS)
			r = PAM_SYSTEM_ERR;
	if (r == PAM_SUCCESS) {
		t0 = now();
		r = pam_authenticate(ph, 0);
		a->seconds = now() - t0;
	}
	pam_end(ph, r);
	a->prompts = s.prompts;
	return r;
}

int auth_quick(const char *service, const char *user, const char *password)
{
	struct auth a = { .service = service, .user = user, .password = password };
	int r = auth_run(&a);

	/* Nothing a file in an action directory does may make a login hang. */
	if (a.seconds * 1000 >= hang_ms(30000, 120000))
		fail_msg("%s/%s hung: %.2f s", service, user, a.seconds);
	return r;
}

/* Keeps the pam_syslog() lines of pam_wrapper's output, without their pid. */
static char *syslog_lines(char *text)
{
	char *out = calloc(1, strlen(text) + 1);
	size_t used = 0;

	assert_non_null(out);
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		if (strstr(l, "SYSLOG("))
			used += (size_t)sprintf(out + used, "%s\n", strstr(l, "SYSLOG("));
	return out;
}

char *auth_logged(const char *service, const char *user, const char *password, int expected)
{
	char path[PATH_MAX], *text, *out;
	int saved, fd, rc;

	pathf(path, "%s/stderr.log", W.results);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
	close(fd);
	/* pam_wrapper prints pam_syslog() lines to stderr from this level on. */
	setenv("PAM_WRAPPER_DEBUGLEVEL", "2", 1);
	rc = auth_quick(service, user, password);
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(rc, expected);
	text = read_file(path, NULL);
	assert_non_null(text);
	out = syslog_lines(text);
	free(text);
	return out;
}

int in_child(int (*fn)(const void *arg), const void *arg)
{
	unsigned char result = 255;
	int p[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		result = (unsigned char)fn(arg);
		_exit(write(p[1], &result, 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &result, 1) != 1)
		result = 255;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return result;
}

size_t lines_with(const char *log, const char *needle)
{
	size_t n = 0;

	for (const char *l = log; *l;) {
		const char *end = strchrnul(l, '\n');
		const char *hit = strstr(l, needle);

		n += hit && hit < end;
		l = *end ? end + 1 : end;
	}
	return n;
}

bool wait_for_file(const char *path, unsigned timeout_ms)
{
	double deadline = now() + timeout_ms / 1000.0;

	for (;;) {
		if (file_exists(path))
			return true;
		if (now() > deadline)
			return false;
		sleep_ms(20);
	}
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (const char *p = text; p && *p; p++)
		n += *p == '\n';
	return n;
}

size_t runs_count(void)
{
	char *text = read_file(W.runs, NULL);
	size_t n = count_lines(text);

	free(text);
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits text into lines in place; returns them (free the array). */
static char **split_lines(char *text, size_t *n)
{
	size_t cap = count_lines(text) + 1, used = 0;
	char **lines = calloc(cap, sizeof(char *));
	char *save = NULL;

	assert_non_null(lines);
	for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save))
		lines[used++] = l;
	*n = used;
	return lines;
}

static void print_runs(const char *const *expected, char **got, size_t n)
{
	printf("expected runs:");
	for (size_t i = 0; expected[i]; i++)
		printf(" %s", expected[i]);
	printf("\nactual runs:  ");
	for (size_t i = 0; i < n; i++)
		printf(" %s", got[i]);
	printf("\n");
}

void expect_runs(const char *const *expected, bool ordered)
{
	size_t want = 0, n = 0;
	const char **sorted;
	char *text, **got;
	bool same;

	while (expected[want])
		want++;
	/* Nothing is still to come: what runs holds now is all it will hold. */
	wait_actions();
	text = read_file(W.runs, NULL);
	got = split_lines(text, &n);
	sorted = calloc(want + 1, sizeof(char *));
	assert_non_null(sorted);
	memcpy(sorted, expected, want * sizeof(char *));
	if (!ordered) {
		qsort(sorted, want, sizeof(char *), cmp_str);
		qsort(got, n, sizeof(char *), cmp_str);
	}
	same = n == want;
	for (size_t i = 0; same && i < n; i++)
		same = strcmp(got[i], sorted[i]) == 0;
	if (!same)
		print_runs(sorted, got, n);
	free(sorted);
	free(got);
	free(text);
	assert_true(same);
}

void evidence_load(struct evidence *ev, const char *path)
{
	ev->text = read_file(path, NULL);
	if (!ev->text)
		fail_msg("no evidence at %s", path);
	ev->lines = split_lines(ev->text, &ev->n);
}

void evidence_free(struct evidence *ev)
{
	free(ev->lines);
	free(ev->text);
	*ev = (struct evidence){ 0 };
}

const char *evidence_get(const struct evidence *ev, const char *key)
{
	size_t k = strlen(key);

	for (size_t i = 0; i < ev->n; i++)
		if (strncmp(ev->lines[i], key, k) == 0 && ev->lines[i][k] == ' ')
			return ev->lines[i] + k + 1;
	return NULL;
}

const char *evidence_env(const struct evidence *ev, const char *name)
{
	size_t k = strlen(name);

	for (size_t i = 0; i < ev->n; i++) {
		const char *l = ev->lines[i];

		if (strncmp(l, "env ", 4) == 0 && strncmp(l + 4, name, k) == 0 && l[4 + k] == '=')
			return l + 5 + k;
	}
	return NULL;
}
