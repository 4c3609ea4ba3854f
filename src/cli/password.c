/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/password.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/ending.h"
#include "core/write.h"

/*
 * Reads one line from fd byte by byte, so that nothing past it is consumed.
 * The signals of interest are blocked outside ppoll(), which opens wait_mask
 * (NULL: no change) only while it waits: a signal cannot slip in between a
 * look at duress_ending_caught() and a read() that would then block until
 * the next key.
 */
static int read_line(int fd, const sigset_t *wait_mask, char *buf, size_t *len)
{
	size_t n = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;
		ssize_t r;

		if (ppoll(&p, 1, NULL, wait_mask) < 0) {
			if (errno == EINTR && !duress_ending_caught())
				continue;
			return -errno;
		}
		r = read(fd, &c, 1);
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

/* The signal state a prompt changes, to put back whatever happens. */
struct prompt_guard {
	sigset_t old_mask;
	sigset_t wait_mask; /* while waiting for a key: the old one, and Ctrl-Z held */
	struct duress_ending ending;
};

/*
 * Blocks the ending signals and catches them (cli/ending.h), so that a
 * signal cannot slip in between a check and a read() that would then wait
 * for the next key.  Ctrl-Z (SIGTSTP) stays pending until the prompt is
 * over: a shell does not give a stopped job its terminal modes back, so a
 * password typed after `fg` would be echoed.
 */
static void guard_signals(struct prompt_guard *g)
{
	sigset_t block;

	sigemptyset(&block);
	duress_ending_add(&block);
	sigaddset(&block, SIGTSTP);
	sigprocmask(SIG_BLOCK, &block, &g->old_mask);
	g->wait_mask = g->old_mask;
	sigaddset(&g->wait_mask, SIGTSTP);
	duress_ending_catch(&g->ending);
}

/* Unblocking first: a signal still pending is caught, not given its default action. */
static void unguard_signals(const struct prompt_guard *g)
{
	sigprocmask(SIG_SETMASK, &g->old_mask, NULL);
	duress_ending_restore(&g->ending);
}

/*
 * Prompts on the terminal, echo off (unless asked) before the prompt is
 * shown, and restores the terminal whatever happens.  -EINTR when an ending
 * signal came (the buffer wiped): the caller ends the command.
 */
static int prompt(int tty, const char *text, bool echo, char *buf, size_t *len)
{
	struct termios old, quiet;
	struct prompt_guard g;
	int r;

	if (tcgetattr(tty, &old) < 0)
		return -errno;
	quiet = old;
	if (!echo)
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	quiet.c_lflag |= ICANON;
	guard_signals(&g);
	r = tcsetattr(tty, TCSAFLUSH, &quiet) < 0 ? -errno :
						    duress_write_all(tty, text, strlen(text));
	if (r == 0) {
		r = read_line(tty, &g.wait_mask, buf, len);
		if (!echo)
			(void)duress_write_all(tty, "\n", 1);
	}
	(void)tcsetattr(tty, TCSAFLUSH, &old);
	unguard_signals(&g);
	if (duress_ending_caught()) {
		sodium_memzero(buf, DURESS_PASSWORD_MAX + 1);
		r = -EINTR;
	}
	return r;
}

/* Ends the command as the signal asked, with the shell's status for it (128 + N). */
static _Noreturn void end_interrupted(struct duress_password *pw)
{
	sodium_free(pw);
	exit(128 + duress_ending_caught());
}

/* -EINVAL was reported where it happened, -EINTR needs no words. */
static int report(int r)
{
	if (r == -E2BIG)
		fprintf(stderr, "duress: password longer than %d bytes\n", DURESS_PASSWORD_MAX);
	else if (r < 0 && r != -EINVAL && r != -EINTR)
		fprintf(stderr, "duress: cannot read the password: %s\n", strerror(-r));
	return r;
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
		if (r == 0 &&
		    (again->len != pw->len || sodium_memcmp(again->text, pw->text, pw->len) != 0)) {
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
	return report(read_line(STDIN_FILENO, NULL, pw->text, &pw->len));
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
	if (r == -EINTR)
		end_interrupted(pw);
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
		r = read_line(STDIN_FILENO, NULL, pw->text, &pw->len);
	} else if ((tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		fputs("duress: no terminal to answer on; use --stdin\n", stderr);
		r = -EINVAL;
	} else {
		r = prompt(tty, text, echo, pw->text, &pw->len);
		close(tty);
	}
	if (r == -EINTR)
		end_interrupted(pw);
	if (report(r) < 0) {
		sodium_free(pw);
		return -1;
	}
	*ret = pw;
	return 0;
}
