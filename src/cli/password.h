/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* PAM never hands a module a longer answer (PAM_MAX_RESP_SIZE). */
#define DURESS_PASSWORD_MAX 512

/* A password in guarded, locked memory (sodium_malloc). */
struct duress_password {
	size_t len;
	char text[DURESS_PASSWORD_MAX + 1];
};

/*
 * From standard input (exactly one line, newline removed, no confirmation)
 * or from the terminal without echo (twice when confirm).  Refuses an empty
 * password.  Prints a one-line error and returns -1 on failure.
 *
 * At a terminal prompt (here and in duress_read_answer()), SIGINT, SIGTERM,
 * SIGQUIT or SIGHUP ends the process at once with status 128 + its number,
 * the terminal restored and what was typed wiped.
 */
int duress_read_password(bool from_stdin, bool confirm, struct duress_password **ret);

/*
 * One answer to a PAM prompt: the next line of standard input, or typed on
 * the terminal after `text` (echoed only if echo).  May be empty.  Prints a
 * one-line error and returns -1 on failure.
 */
int duress_read_answer(bool from_stdin, const char *text, bool echo, struct duress_password **ret);

void duress_password_free(struct duress_password *pw);
