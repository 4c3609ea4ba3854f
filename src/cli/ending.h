/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <signal.h>

/*
 * The signals that end a command: Ctrl-C, Ctrl-\, kill's default, and a
 * terminal that hangs up.  A command that must not stop half way (a prompt
 * with echo off, duress add between its first write and its last) catches
 * them, finishes or undoes what it was doing, then ends with 128 + the
 * signal's number, as the shell reports a death by that signal.
 */
#define DURESS_N_ENDING 4

struct duress_ending {
	struct sigaction old[DURESS_N_ENDING];
};

/* Adds the ending signals to set. */
void duress_ending_add(sigset_t *set);

/*
 * Catches the ending signals (no SA_RESTART: a blocking call returns
 * EINTR), forgetting any caught before; one ignored when this is called
 * stays ignored (a job started with nohup keeps it so).  The old actions
 * go to e.
 */
void duress_ending_catch(struct duress_ending *e);

/* Puts back the actions duress_ending_catch() found. */
void duress_ending_restore(const struct duress_ending *e);

/* The last ending signal caught since duress_ending_catch(), or 0. */
int duress_ending_caught(void);
