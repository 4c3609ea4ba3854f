/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fault suite's world: a temporary directory with fake accounts
 * (nss_wrapper: passwd, group, and a shadow file for the locked account),
 * PAM service files (pam_wrapper) for both placements, per-user and global
 * actions signed with the real `duress sign`, and a results directory that
 * the actions write their evidence into.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

/* Random per run: hex from getrandom(), with a prefix that says what it is. */
#define PASSWORD_MAX 64

struct fault_world {
	char tmp[PATH_MAX];      /* removed at the end */
	char evidence[PATH_MAX]; /* what an action writes: removed before each login */
	char log[PATH_MAX];      /* the PAM process's stderr (pam_wrapper's syslog lines) */
	char counts[PATH_MAX];   /* the shim's shared counters */
	char records[PATH_MAX];  /* state_dir=/once: the records of once actions that ran */
	/*
	 * What the service names start with, this run's own: every forked login
	 * sets pam_wrapper up again in a /tmp/pam.? directory of its own, and
	 * pam_wrapper, taking a directory another run's login is still filling
	 * for stale, can replace it with that run's files.  A login that reads
	 * another run's files then finds no service of that name and gets
	 * "other", which refuses: never another run's module options.
	 */
	char services[32];
	const char *module, *runner, *cli;
	char alice_real[PASSWORD_MAX], alice_duress[PASSWORD_MAX];
	char carol_duress[PASSWORD_MAX], global_duress[PASSWORD_MAX], wrong[PASSWORD_MAX];
	char once_duress[PASSWORD_MAX]; /* alice's once action's (duress sign --once) */
};

extern struct fault_world FW;

/* Builds the world and points the wrappers at it (bails out if it cannot). */
void fault_world_init(void);
/* How many once records there are; with remove, removes them (arming the once action again). */
unsigned fault_world_records(bool remove);
/* Removes it (DURESS_TEST_KEEP=1 keeps it and says where). */
void fault_world_destroy(void);

/* Stops the whole run: "Bail out!" (TAP) with the reason, and exit status 1. */
_Noreturn void bail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
