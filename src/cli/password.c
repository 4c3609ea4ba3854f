/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/password.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <sodium.h>

/* Reads one line from fd byte by byte, so that nothing past it is consumed. */
static int read_line(int fd, char *buf, size_t *len)
{
	size_t n = 0;

	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0 || c == '\n')
			break;
		if (n == DURESS_PASSWORD_MAX)
			return -E2BIG;
		buf[n++] = c;
	}
	buf[n] = '\0';
	*len = n;
	return 0;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Prompts on the terminal, with echo off unless asked, restoring it whatever happens. */
static int prompt(int tty, const char *text, bool echo, char *buf, size_t *len)
{
	struct termios old, noecho;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	int r;

	if (tcgetattr(tty, &old) < 0)
		return -errno;
	noecho = old;
	if (!echo)
		noecho.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	noecho.c_lflag |= ICANON;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (write(tty, text, strlen(text)) < 0 || tcsetattr(tty, TCSAFLUSH, &noecho) < 0) {
		r = -errno;
	} else {
		r = read_line(tty, buf, len);
		(void)tcsetattr(tty, TCSAFLUSH, &old);
		if (!echo)
			(void)!write(tty, "\n", 1);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (interrupted)
		raise(interrupted);
	return r;
}

/* -EINVAL was reported where it happened. */
static int report(int r)
{
	if (r == -E2BIG)
		fprintf(stderr, "duress: password longer than %d bytes\n", DURESS_PASSWORD_MAX);
	else if (r < 0 && r != -EINVAL)
		fprintf(stderr, "duress: cannot read the password: %s\n", strerror(-r));
	return r < 0 ? -1 : 0;
}

static int read_from_tty(bool confirm, struct duress_password *pw)
{
	struct duress_password *again = NULL;
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	int r;

	if (tty < 0) {
		fputs("duress: no terminal to ask for the password on; use --stdin\n", stderr);
		return -1;
	}
	r = prompt(tty, "Duress password: ", false, pw->text, &pw->len);
	if (r == 0 && confirm) {
		again = sodium_malloc(sizeof(*again));
		if (!again)
			r = -ENOMEM;
		else
			r = prompt(tty, "Again: ", false, again->text, &again->len);
		if (r == 0 && (again->len != pw->len ||
			       sodium_memcmp(again->text, pw->text, pw->len) != 0)) {
			fputs("duress: the passwords do not match\n", stderr);
			r = -EINVAL;
		}
		sodium_free(again);
	}
	close(tty);
	return report(r);
}

static int read_from_stdin(struct duress_password *pw)
{
	return report(read_line(STDIN_FILENO, pw->text, &pw->len));
}

int duress_read_password(bool from_stdin, bool confirm, struct duress_password **ret)
{
	struct duress_password *pw = sodium_malloc(sizeof(*pw));
	int r;

	if (!pw) {
		fputs("duress: out of memory\n", stderr);
		return -1;
	}
	pw->len = 0;
	r = from_stdin ? read_from_stdin(pw) : read_from_tty(confirm, pw);
	if (r == 0 && pw->len == 0) {
		fputs("duress: empty password refused\n", stderr);
		r = -1;
	}
	if (r == 0 && memchr(pw->text, '\0', pw->len)) {
		fputs("duress: password contains a NUL byte\n", stderr);
		r = -1;
	}
	if (r < 0) {
		sodium_free(pw);
		return -1;
	}
	*ret = pw;
	return 0;
}

void duress_password_free(struct duress_password *pw)
{
	sodium_free(pw);
}

int duress_read_answer(bool from_stdin, const char *text, bool echo, struct duress_password **ret)
{
	struct duress_password *pw = sodium_malloc(sizeof(*pw));
	int tty = -1;
	int r;

	if (!pw) {
		fputs("duress: out of memory\n", stderr);
		return -1;
	}
	pw->len = 0;
	if (from_stdin) {
		r = read_line(STDIN_FILENO, pw->text, &pw->len);
	} else if ((tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		fputs("duress: no terminal to answer on; use --stdin\n", stderr);
		r = -EINVAL;
	} else {
		r = prompt(tty, text, echo, pw->text, &pw->len);
		close(tty);
	}
	if (report(r) < 0) {
		sodium_free(pw);
		return -1;
	}
	*ret = pw;
	return 0;
}
