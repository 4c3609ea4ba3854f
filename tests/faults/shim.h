/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fault shim (shim.c, LD_PRELOADed) and its driver (test_faults.c)
 * share this: the functions it can fail, the processes it tells apart,
 * and the counters both read in a shared file.
 *
 * A call is counted, and may be failed, only when pam_duress.so's own code
 * made it (in the PAM application and in the child that starts the runner)
 * or the runner program's own code (in each of its processes): what libc,
 * libpam, pam_unix or the wrappers call themselves is passed through.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Every function the shim can fail.  SYS_* are raw syscall(2) calls by
 * number; the others are libc (and libsodium, libcrypt) entry points, under
 * every name they have (open64, __open64_2...).
 */
/* One row per kind of call, as docs/testing.md lists them. */
/* clang-format off */
#define DURESS_FAULT_FUNCTIONS(X) \
	X(open) X(openat) X(read) X(pread) X(write) X(close) X(close_range) X(dup) X(dup2) \
	X(fcntl) X(fstat) X(fstatfs) X(fdopendir) X(readdir) X(closedir) \
	X(fopen) X(fgets) X(fclose) X(flock) X(mkdir) X(mkdirat) X(memfd_create) X(pipe2) X(poll) \
	X(nanosleep) X(clock_gettime) \
	X(waitpid) X(execve) X(fexecve) X(fork) X(_Fork) \
	X(getpwnam_r) X(getpwuid_r) X(getgrnam_r) X(getspnam_r) X(getgrouplist) \
	X(getrandom) X(strdup) X(asprintf) X(crypto_pwhash) X(sodium_malloc) \
	X(sodium_allocarray) X(crypt_r) \
	X(fchmod) X(fchown) X(futimens) X(fsync) X(renameat) X(unlinkat) \
	X(setsid) X(setgroups) X(setresuid) X(setresgid) X(prctl) X(prlimit) X(getrlimit) \
	X(setrlimit) X(sched_setscheduler) X(sched_setaffinity) X(setpriority) X(sigaction) \
	X(sigprocmask) X(signal) X(chdir) \
	X(SYS_clone) X(SYS_setfsuid) X(SYS_setfsgid) X(SYS_setgroups) X(SYS_getgroups) \
	X(SYS_capget) X(SYS_capset) X(SYS_ioprio_set) X(SYS_keyctl)
/* clang-format on */

#define DURESS_FAULT_ENUM(name) FAULT_FN_##name,
enum { DURESS_FAULT_FUNCTIONS(DURESS_FAULT_ENUM) FAULT_N_FUNCTIONS };
#undef DURESS_FAULT_ENUM

/*
 * Which process made the call.  Each fork moves its child one step on:
 * the module's clone child and its _Fork grandchild (until execve) are
 * "spawn"; the runner's first process is "runner", the one it leaves
 * behind "worker", the worker's one process per chain "chain", and a
 * chain's child until the action's exec "job".  Counting them apart keeps
 * the numbering the same in every run although they run side by side.
 */
enum {
	FAULT_ROLE_MODULE,
	FAULT_ROLE_SPAWN,
	FAULT_ROLE_RUNNER,
	FAULT_ROLE_WORKER,
	FAULT_ROLE_CHAIN,
	FAULT_ROLE_JOB,
	FAULT_N_ROLES
};

#define DURESS_FAULT_MAGIC 0x64666c74U

/* The shared file (DURESS_FAULT_COUNTS): zeroed by duress_fault_arm(). */
struct duress_fault_counts {
	uint32_t magic;
	/* What to fail: the target_n-th call of target_fn in target_role (n 0: none). */
	int target_role, target_fn;
	unsigned target_n;
	atomic_uint calls[FAULT_N_ROLES][FAULT_N_FUNCTIONS];
	/* The module's calls in the application, in order: when things happened. */
	atomic_long seq;
	/* Set when the fault was injected. */
	atomic_int fired;
	long fired_seq; /* seq then (module and spawn roles) */
	/* seq when the module reaped its clone child, which exited 0: the runner took over. */
	atomic_long runner_ok_seq;
	pid_t clone_pid; /* the module's clone child */
};

/*
 * Exported by the shim (found with dlsym): reads DURESS_FAULT
 * ("role/function:N", or unset to count only), DURESS_FAULT_COUNTS (the
 * shared file, created and zeroed here), DURESS_FAULT_MODULE (the module's
 * path) and DURESS_FAULT_RUNNER (the runner's path, whose exec carries the
 * shim on), and counts from now on in this process and its children.
 * 0, or -1 when the environment is wrong (a line on stderr).
 */
typedef int duress_fault_arm_fn(void);

/* Names, for both sides. */
extern const char *const duress_fault_function_names[FAULT_N_FUNCTIONS];
extern const char *const duress_fault_role_names[FAULT_N_ROLES];
