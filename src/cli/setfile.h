/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The longest value --set-file reads: a URL, a token, a path. */
#define DURESS_SET_FILE_MAX 4096
/* The largest FILE it opens: a value, and perhaps a few lines of notes after it. */
#define DURESS_SET_FILE_MAX_SIZE ((uint64_t)64 * 1024)

/*
 * duress add --set-file KEY=FILE: reads the value of KEY from the first line
 * of FILE ("-": standard input), so that a secret never sits in argv, ps or
 * the shell's history.  Standard input at a terminal is read up to its end
 * (Ctrl-D, which a line on stderr asks for first), so that the Ctrl-D is
 * not left for the password prompt that follows.  spec is "KEY=FILE" with the key already checked.
 * Returns a new "KEY=VALUE" string (free with duress_set_file_free()), or
 * NULL after a one-line error: FILE is not a regular file (a symlink, FIFO,
 * directory, device or socket: never opened for reading, so nothing blocks),
 * is larger than DURESS_SET_FILE_MAX_SIZE, cannot be opened or read, or its
 * first line is longer than DURESS_SET_FILE_MAX or holds a NUL byte.
 */
char *duress_set_file_read(const char *spec);

/* Wipes (the value may be a secret) and frees what duress_set_file_read() returned. */
void duress_set_file_free(char *set);

/* Whether spec's FILE is "-", standard input. */
bool duress_set_file_is_stdin(const char *spec);
