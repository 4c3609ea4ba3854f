/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "log.h"
#include "manifest.h"

/* PAM items passed to actions as PAM_* variables; NULL ones are left out. */
struct duress_pam_items {
	const char *user;
	const char *service;
	const char *rhost;
	const char *ruser;
	const char *tty;
};

/*
 * Moves fd, just returned by a call that opens one (-1: it failed, errno
 * says why), above 0-2 (close-on-exec) if the application had closed one of
 * them and fd took its place.  Returns the descriptor to use, or -errno.
 */
int duress_fd_above_stdio(int fd);

/*
 * The PATH an action gets: root's (global and boot actions) or a user's.
 * duress check looks up what an action needs in it (cli/requires.h).
 */
static inline const char *duress_action_path(bool as_root)
{
	return as_root ? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" :
			 "/usr/local/bin:/usr/bin:/bin";
}

/* The variable a rehearsal adds to the actions' environment (docs/rehearsal.md). */
#define DURESS_REHEARSE_ENV "DURESS_REHEARSE=1"

/*
 * Returns 0 or -errno.  pw is the account the action runs as; rehearse
 * (only ever from `duress test --rehearse`) adds DURESS_REHEARSE_ENV.
 */
int duress_target_init(struct duress_target *t, const struct passwd *pw,
		       const struct duress_pam_items *items, bool rehearse);

/*
 * Where a traced run (`duress test`) wants what the actions print and how
 * each ended; the module passes none.  -1: not wanted.
 */
struct duress_spawn_io {
	int output_fd;     /* the actions' stdout and stderr instead of /dev/null */
	int report_fd;     /* a pipe's write end for the report records (manifest.h) */
	bool interp_argv0; /* DURESS_RUN_INTERP_ARGV0: boot actions (manifest.h) */
};

/*
 * A runner started by duress_spawn_hold(): it has taken the manifest, and
 * its chains wait for duress_spawn_release().  Zeroed with -1 descriptors
 * ({ .release = -1, .done = -1 }), or after a failed hold, it holds nothing.
 */
struct duress_held {
	/*
	 * The other end of the runner's stdin: the byte sent there at the
	 * release starts its chains; an end without it (the module failed or
	 * died first) starts none.
	 */
	int release;
	int done; /* with wait=: the read end of the pipe the runner closes when done, or -1 */
	unsigned wait_seconds;
};

/*
 * Starts the runner program at runner_path (src/runner) in a fresh process
 * image, handing it the chains (a manifest, see manifest.h; none is an
 * empty one, which runs nothing) and the jobs' memfds; it runs each chain
 * independently of the others, fully detached from the caller: the caller
 * gets no SIGCHLD, keeps no zombie, and may be multithreaded (between clone
 * and execve only async-signal-safe calls).  What the caller starts and
 * reaps is the same whatever the manifest holds (the runner's first
 * process forks before it reads it).  Returns 0 once the runner has taken
 * the manifest, with *held filled: its chains start at
 * duress_spawn_release(), not before; or -errno (logged) if it could not be
 * started, *held then holding nothing.  With lg->debug the actions' output
 * goes to syslog, unless io->output_fd.
 */
int duress_spawn_hold(const char *runner_path, const struct duress_chain *chains, size_t n_chains,
		      unsigned wait_seconds, const struct duress_spawn_io *io,
		      const struct duress_log *lg, struct duress_held *held);

/*
 * Lets the held runner's chains start, then waits up to the wait_seconds
 * given to duress_spawn_hold() for every chain to finish (not with
 * io->report_fd: the caller reads the report instead).  A runner with
 * nothing to run ends at once.  Accepts a held that holds nothing.  Never
 * raises SIGPIPE.
 */
void duress_spawn_release(struct duress_held *held);

/* duress_spawn_hold(), then duress_spawn_release() at once: 0 or -errno. */
int duress_spawn(const char *runner_path, const struct duress_chain *chains, size_t n_chains,
		 unsigned wait_seconds, const struct duress_spawn_io *io,
		 const struct duress_log *lg);
