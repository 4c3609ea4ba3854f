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
 *   flags                DURESS_RUN_DEBUG | DURESS_RUN_WAIT | DURESS_RUN_REPORT |
 *                        DURESS_RUN_INTERP_ARGV0
 *                        (WAIT and REPORT share a descriptor: never both)
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
/*
 * With DURESS_RUN_WAIT: closed when every chain is done.  With
 * DURESS_RUN_REPORT: the report pipe, which the chain processes keep (no
 * action inherits it) and write one record to per job that ends.
 */
#define DURESS_RUNNER_DONE_FD 4
#define DURESS_RUNNER_FIRST_JOB_FD 5

#define DURESS_RUN_DEBUG 1U /* the actions' output goes to syslog */
#define DURESS_RUN_WAIT 2U  /* DURESS_RUNNER_DONE_FD is open */
/* DURESS_RUNNER_DONE_FD is a report pipe (only `duress test` asks for one; never the module). */
#define DURESS_RUN_REPORT 4U
/*
 * A script's interpreter gets its own path as argv[0], as the kernel gives
 * it, instead of the action's name: for boot actions (boot.h), whose /bin/sh
 * in the initramfs is busybox, a multi-call binary that picks its applet by
 * argv[0] ("initramfs-wipe: applet not found").  Login actions keep their
 * name, which is what `ps` shows of them.
 */
#define DURESS_RUN_INTERP_ARGV0 8U

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

/*
 * A record of the report pipe: how one job ended.  Written in one write()
 * of at most DURESS_REPORT_MAX bytes (< PIPE_BUF: the two chains' records
 * never interleave) as "UID exit|signal N MS NAME\0": NUL-terminated, as
 * a name can hold a newline but no NUL.  The uid tells the chains apart
 * (one name may be in both directories).
 */
#define DURESS_REPORT_MAX 512

struct duress_report {
	uid_t uid;
	bool signaled; /* code is the signal that ended it, else its exit status */
	int code;
	unsigned long ms; /* from its fork to its end */
	const char *name; /* points into the record */
};

/*
 * Formats the record into buf (DURESS_REPORT_MAX bytes) from a waitpid()
 * status; returns its length, NUL included.
 */
size_t duress_report_format(char *buf, uid_t uid, int status, unsigned long ms, const char *name);

/* Parses one record of len bytes (its NUL included); 0 or -EBADMSG. */
int duress_report_parse(const char *rec, size_t len, struct duress_report *r);
