/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "log.h"

/* PAM items passed to actions as PAM_* variables; NULL ones are left out. */
struct duress_pam_items {
	const char *user;
	const char *service;
	const char *rhost;
	const char *ruser;
	const char *tty;
};

/* Who an action runs as, with everything prepared before any fork. */
struct duress_target {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	char **envp;
};

/* The kernel reads no more of a #! line than this (BINPRM_BUF_SIZE). */
#define DURESS_SHEBANG_MAX 256

struct duress_job {
	int memfd;        /* sealed copy of the verified bytes; not owned */
	bool elf;
	char *name;       /* argv[0]; not owned */
	const struct duress_target *target;
	/* Filled by duress_job_prepare(), before any fork. */
	char line[DURESS_SHEBANG_MAX + 1]; /* the #! line, split in place */
	char *interp;     /* the #! interpreter, or NULL: execute the memfd itself */
	char *interp_arg; /* its optional argument, or NULL */
};

/*
 * Reads the #! line of the job's memfd, so that a script can be started as
 * `interpreter [arg] /dev/fd/3` with argv[0] the action's name (the kernel
 * would put the interpreter's path there).
 */
void duress_job_prepare(struct duress_job *job);

/*
 * Moves fd above 0-2 (close-on-exec) if the application had closed one of
 * them and fd took its place; returns the descriptor to use, or -1.
 */
int duress_fd_above_stdio(int fd);

/* The account's groups, primary one included (getgrouplist); free *ret.  0 or -errno. */
int duress_user_groups(const struct passwd *pw, gid_t **ret, size_t *n);

/* Returns 0 or -errno.  pw is the account the action runs as. */
int duress_target_init(struct duress_target *t, const struct passwd *pw,
		       const struct duress_pam_items *items);
void duress_target_free(struct duress_target *t);

/*
 * Runs the jobs one after another, in order, in a runner process that is
 * fully detached from the caller: the caller gets no SIGCHLD, keeps no zombie,
 * and may be multithreaded (the children use async-signal-safe calls only).
 * Waits up to wait_seconds for the runner to finish.  The actions' stdout
 * and stderr go to /dev/null, or with lg->debug to syslog (authpriv.debug,
 * tag pam_duress) through logger(1).  Returns 0 once the runner exists, or
 * -errno if it could not be started.
 */
int duress_spawn(const struct duress_job *jobs, size_t n_jobs, unsigned wait_seconds,
		 const struct duress_log *lg);
