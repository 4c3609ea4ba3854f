/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/ending.h"

static const int ending_signals[DURESS_N_ENDING] = { SIGINT, SIGTERM, SIGQUIT, SIGHUP };

/* Set by the handler; read once the work it must not cut short is over. */
static volatile sig_atomic_t caught;

static void on_ending(int sig)
{
	caught = sig;
}

void duress_ending_add(sigset_t *set)
{
	for (int i = 0; i < DURESS_N_ENDING; i++)
		sigaddset(set, ending_signals[i]);
}

void duress_ending_catch(struct duress_ending *e)
{
	struct sigaction sa = { .sa_handler = on_ending };

	sigemptyset(&sa.sa_mask);
	caught = 0;
	for (int i = 0; i < DURESS_N_ENDING; i++) {
		sigaction(ending_signals[i], NULL, &e->old[i]);
		if (e->old[i].sa_handler != SIG_IGN)
			sigaction(ending_signals[i], &sa, NULL);
	}
}

void duress_ending_restore(const struct duress_ending *e)
{
	for (int i = 0; i < DURESS_N_ENDING; i++)
		sigaction(ending_signals[i], &e->old[i], NULL);
}

int duress_ending_caught(void)
{
	return caught;
}
