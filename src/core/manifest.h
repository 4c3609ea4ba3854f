/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What the module hands the runner program (src/runner): everything the
 * runner needs to start the actions without looking anything up, in a
 * sealed memfd at descriptor DURESS_RUNNER_MANIFEST_FD.
 *
 * Format (integers are uint32_t in host byte order: writer and reader are
 * built together and run on one machine; strings are NUL-terminated, as
 * neither file names nor environment strings can hold a NUL):
 *
 *   "duress-runner-1\0"  magic, 16 bytes
 *   flags                DURESS_RUN_DEBUG | DURESS_RUN_WAIT
 *   n_chains             at most DURESS_CHAINS
 *   per chain:
 *     uid gid n_groups group...   the ids the chain's actions run with
 *     n_env string...             their whole environment
 *     n_jobs, per job: fd elf name   in run order; fd is where the runner
 *                                    finds the job's sealed memfd, name is argv[0]
 *
 * Job descriptors are numbered from DURESS_RUNNER_FIRST_JOB_FD up, in
 * manifest order; the reader checks that, and every count and length
 * against what is left of the manifest.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DURESS_RUNNER_MANIFEST_FD 3
#define DURESS_RUNNER_DONE_FD 4 /* with DURESS_RUN_WAIT: closed when every chain is done */
#define DURESS_RUNNER_FIRST_JOB_FD 5

#define DURESS_RUN_DEBUG 1U /* the actions' output goes to syslog */
#define DURESS_RUN_WAIT 2U  /* DURESS_RUNNER_DONE_FD is open */

#define DURESS_CHAINS 2                     /* per-user, global */
#define DURESS_MANIFEST_MAX (16U << 20)     /* bytes */
#define DURESS_MANIFEST_MAX_JOBS (1U << 17) /* two directories of max_entries */
#define DURESS_MANIFEST_MAX_GROUPS (1U << 16)
#define DURESS_MANIFEST_MAX_ENV 64U

/* Who a chain's actions run as, with everything prepared before any fork. */
struct duress_target {
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	char **envp;
};

void duress_target_free(struct duress_target *t);

struct duress_job {
	int memfd;  /* sealed copy of the verified bytes */
	bool elf;   /* an ELF binary: needs no descriptor of its own once started */
	char *name; /* argv[0]; not owned */
};

/* Actions run one after another, in order, as one target. */
struct duress_chain {
	const struct duress_target *target;
	const struct duress_job *jobs;
	size_t n_jobs;
};

/*
 * Writes the manifest for chains into a new sealed memfd (close-on-exec).
 * The job descriptors it names are the runner's numbers, not the jobs'
 * memfd.  Returns the memfd or -errno (-E2BIG past the bounds above).
 */
int duress_manifest_write(const struct duress_chain *chains, size_t n_chains, unsigned flags);

struct duress_manifest {
	unsigned flags;
	size_t n_chains;
	struct duress_chain chains[DURESS_CHAINS];
	struct duress_target targets[DURESS_CHAINS]; /* chains[i].target */
	struct duress_job *jobs[DURESS_CHAINS];      /* chains[i].jobs */
	char *text; /* the manifest's bytes: job names point into it */
};

/* Reads and checks the manifest from fd.  0, -EBADMSG if malformed, or another -errno. */
int duress_manifest_read(int fd, struct duress_manifest *m);
void duress_manifest_free(struct duress_manifest *m);
