/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fault shim: an LD_PRELOAD library that fails the Nth call of one
 * function, made by pam_duress.so's code or by the action runner's, with
 * the errno a real failure of that call gives (test_faults.c drives it; the
 * interface is in shim.h).  Every other call, and every call before
 * duress_fault_arm(), goes straight to the real function.
 *
 * Only the caller's code is judged, by the return address: under ASan the
 * sanitizer's interceptor sits between the caller and this library, and the
 * caller is then found one step further down the stack.
 *
 * Failures are what the kernel or the library would do: close(), fclose()
 * and closedir() release the descriptor and then report EIO (as NFS can);
 * setfsuid() and setfsgid() cannot report a failure and leave the id as it
 * was; getgrouplist() says "more groups" without saying how many.
 *
 * The runner is started with an empty environment: the exec of the runner's
 * path in the module's spawn child adds LD_PRELOAD and the shim's variables,
 * so that its processes count (and fail) their calls too.
 *
 * A test double beside the faults: nss_wrapper answers getspnam() from
 * NSS_WRAPPER_SHADOW but not getspnam_r(), which the module and libpam use;
 * when that variable is set, getspnam_r() answers from nss_wrapper's
 * getspnam(), so that an account can be locked in "shadow" as usermod -L
 * does it.  And a login.defs of the suite's own (fopen() below).
 */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include <crypt.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <shadow.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/faults/shim.h"

/* --- which code called ---------------------------------------------------- */

#define SEGMENTS_MAX 16

/* An object's executable segments. */
struct object {
	uintptr_t lo[SEGMENTS_MAX], hi[SEGMENTS_MAX];
	int n;
};

static struct {
	struct duress_fault_counts *counts; /* NULL: not armed */
	int role;
	bool target_is_main;   /* the runner's program, not the module */
	char module[PATH_MAX]; /* the module's path, as dlopen() was given it */
	char runner[PATH_MAX]; /* the runner's path, as the module execs it */
	struct object target, asan, self;
	/* What the runner's exec gets added to its environment (built when armed). */
	char exec_env[6][PATH_MAX + 64];
	size_t n_exec_env;
} S;

/* Set while the shim itself works: what it calls then is never counted. */
static __thread int busy;

struct find {
	enum { BY_PATH, BY_SUBSTRING, MAIN, BY_ADDRESS } how;
	const char *name;
	uintptr_t addr;
	int seen;
	struct object *o;
};

static bool in_object(const struct object *o, uintptr_t a)
{
	for (int i = 0; i < o->n; i++)
		if (a >= o->lo[i] && a < o->hi[i])
			return true;
	return false;
}

static void take_segments(const struct dl_phdr_info *info, struct object *o)
{
	o->n = 0;
	for (int i = 0; i < info->dlpi_phnum && o->n < SEGMENTS_MAX; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		o->lo[o->n] = info->dlpi_addr + p->p_vaddr;
		o->hi[o->n] = o->lo[o->n] + p->p_memsz;
		o->n++;
	}
}

static int find_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	struct object probe;
	bool match = false;

	(void)size;
	switch (f->how) {
	case MAIN:
		match = f->seen == 0; /* the program comes first */
		break;
	case BY_PATH:
		match = strcmp(info->dlpi_name, f->name) == 0;
		break;
	case BY_SUBSTRING:
		match = strstr(info->dlpi_name, f->name) != NULL;
		break;
	case BY_ADDRESS:
		take_segments(info, &probe);
		match = in_object(&probe, f->addr);
		break;
	}
	f->seen++;
	if (match)
		take_segments(info, f->o);
	return match;
}

static void find_object(struct find f)
{
	busy++;
	dl_iterate_phdr(find_one, &f);
	busy--;
}

/* Whether the caller whose return address is ret is the code under test. */
static bool from_target(void *ret)
{
	uintptr_t a = (uintptr_t)ret;
	void *frames[16];
	int n;

	/* The module may be loaded after the arming: look until it is there. */
	if (S.target.n == 0 && !S.target_is_main)
		find_object((struct find){ .how = BY_PATH, .name = S.module, .o = &S.target });
	if (in_object(&S.target, a))
		return true;
	if (!in_object(&S.asan, a))
		return false;
	/* An ASan interceptor called us: its caller is the one that counts. */
	n = backtrace(frames, 16);
	for (int i = 0; i < n; i++) {
		uintptr_t f = (uintptr_t)frames[i];

		if (!in_object(&S.self, f) && !in_object(&S.asan, f))
			return in_object(&S.target, f);
	}
	return false;
}

/* --- counting and failing -------------------------------------------------- */

/* Counts the call if the code under test made it; true if it is the one to fail. */
static bool fault(int fn, void *ret)
{
	struct duress_fault_counts *c = S.counts;
	bool mine;
	unsigned n;
	long seq = 0;

	if (!c || busy)
		return false;
	busy++;
	mine = from_target(ret);
	busy--;
	if (!mine)
		return false;
	n = atomic_fetch_add(&c->calls[S.role][fn], 1) + 1;
	if (S.role == FAULT_ROLE_MODULE || S.role == FAULT_ROLE_SPAWN)
		seq = atomic_fetch_add(&c->seq, 1) + 1;
	if (c->target_n != n || c->target_role != S.role || c->target_fn != fn)
		return false;
	c->fired_seq = seq;
	atomic_store(&c->fired, 1);
	return true;
}

#define FAULT(fn) fault(FAULT_FN_##fn, __builtin_return_address(0))

/* The next definition of name after this library's (libc's, or a wrapper's). */
#define REAL(name)                            \
	static __typeof__(name) *real_##name; \
	if (!real_##name)                     \
	real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* Where the module's own libraries are: not in the global scope that RTLD_NEXT searches. */
struct library_query {
	const char *name;
	char path[PATH_MAX];
};

static int library_named(struct dl_phdr_info *info, size_t size, void *data)
{
	struct library_query *q = data;

	(void)size;
	if (!strstr(info->dlpi_name, q->name))
		return 0;
	snprintf(q->path, sizeof(q->path), "%s", info->dlpi_name);
	return 1;
}

/* The real function of a library the module loaded (libsodium, libcrypt). */
static void *real_in(const char *library, const char *function)
{
	struct library_query q = { .name = library };
	void *f = dlsym(RTLD_NEXT, function), *lib;

	if (f || !dl_iterate_phdr(library_named, &q))
		return f;
	lib = dlopen(q.path, RTLD_LAZY | RTLD_NOLOAD);
	return lib ? dlsym(lib, function) : NULL;
}

#define REAL_IN(library, name)                \
	static __typeof__(name) *real_##name; \
	if (!real_##name)                     \
	real_##name = (__typeof__(name) *)real_in(library, #name)

static int fail(int e)
{
	errno = e;
	return -1;
}

static void *fail_null(int e)
{
	errno = e;
	return NULL;
}

/* A fork's child is one step further down (shim.h). */
static void became_child(void)
{
	static const int next[FAULT_N_ROLES] = {
		[FAULT_ROLE_MODULE] = FAULT_ROLE_SPAWN,  [FAULT_ROLE_SPAWN] = FAULT_ROLE_SPAWN,
		[FAULT_ROLE_RUNNER] = FAULT_ROLE_WORKER, [FAULT_ROLE_WORKER] = FAULT_ROLE_CHAIN,
		[FAULT_ROLE_CHAIN] = FAULT_ROLE_JOB,     [FAULT_ROLE_JOB] = FAULT_ROLE_JOB,
	};

	if (S.counts)
		S.role = next[S.role];
}

/* --- files and descriptors --------------------------------------------------- */

/* The fortified entry points, which no header declares without _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dir, const char *path, int flags);
int __openat64_2(int dir, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t size);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t at, size_t size);
int __asprintf_chk(char **ret, int flag, const char *fmt, ...);

static int mode_of(int flags, va_list ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? va_arg(ap, int) : 0;
}

#define OPEN_WRAPPER(name)                             \
	int name(const char *path, int flags, ...)     \
	{                                              \
		va_list ap;                            \
		int mode;                              \
		REAL(name);                            \
		va_start(ap, flags);                   \
		mode = mode_of(flags, ap);             \
		va_end(ap);                            \
		if (FAULT(open))                       \
			return fail(EMFILE);           \
		return real_##name(path, flags, mode); \
	}
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                \
	int name(int dir, const char *path, int flags, ...) \
	{                                                   \
		va_list ap;                                 \
		int mode;                                   \
		REAL(name);                                 \
		va_start(ap, flags);                        \
		mode = mode_of(flags, ap);                  \
		va_end(ap);                                 \
		if (FAULT(openat))                          \
			return fail(EMFILE);                \
		return real_##name(dir, path, flags, mode); \
	}
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

int __open_2(const char *path, int flags)
{
	REAL(__open_2);
	return FAULT(open) ? fail(EMFILE) : real___open_2(path, flags);
}

int __open64_2(const char *path, int flags)
{
	REAL(__open64_2);
	return FAULT(open) ? fail(EMFILE) : real___open64_2(path, flags);
}

int __openat_2(int dir, const char *path, int flags)
{
	REAL(__openat_2);
	return FAULT(openat) ? fail(EMFILE) : real___openat_2(dir, path, flags);
}

int __openat64_2(int dir, const char *path, int flags)
{
	REAL(__openat64_2);
	return FAULT(openat) ? fail(EMFILE) : real___openat64_2(dir, path, flags);
}

ssize_t read(int fd, void *buf, size_t n)
{
	REAL(read);
	return FAULT(read) ? fail(EIO) : real_read(fd, buf, n);
}

ssize_t __read_chk(int fd, void *buf, size_t n, size_t size)
{
	REAL(__read_chk);
	return FAULT(read) ? fail(EIO) : real___read_chk(fd, buf, n, size);
}

ssize_t pread(int fd, void *buf, size_t n, off_t at)
{
	REAL(pread);
	return FAULT(pread) ? fail(EIO) : real_pread(fd, buf, n, at);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t at)
{
	REAL(pread64);
	return FAULT(pread) ? fail(EIO) : real_pread64(fd, buf, n, at);
}

ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t at, size_t size)
{
	REAL(__pread64_chk);
	return FAULT(pread) ? fail(EIO) : real___pread64_chk(fd, buf, n, at, size);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write);
	return FAULT(write) ? fail(EIO) : real_write(fd, buf, n);
}

/* The descriptor is gone whatever close() reports (Linux): released, then EIO. */
int close(int fd)
{
	bool failing = FAULT(close);
	int r;

	REAL(close);
	r = real_close(fd);
	return failing ? fail(EIO) : r;
}

int close_range(unsigned first, unsigned last, int flags)
{
	REAL(close_range);
	return FAULT(close_range) ? fail(EINVAL) : real_close_range(first, last, flags);
}

int dup(int fd)
{
	REAL(dup);
	return FAULT(dup) ? fail(EMFILE) : real_dup(fd);
}

int dup2(int fd, int to)
{
	REAL(dup2);
	return FAULT(dup2) ? fail(EMFILE) : real_dup2(fd, to);
}

static int fcntl_errno(int cmd)
{
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return EMFILE;
	case F_ADD_SEALS:
		return EBUSY;
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return ENOLCK;
	default:
		return EINVAL;
	}
}

#define FCNTL_WRAPPER(name)                            \
	int name(int fd, int cmd, ...)                 \
	{                                              \
		va_list ap;                            \
		void *arg;                             \
		REAL(name);                            \
		va_start(ap, cmd);                     \
		arg = va_arg(ap, void *);              \
		va_end(ap);                            \
		if (FAULT(fcntl))                      \
			return fail(fcntl_errno(cmd)); \
		return real_##name(fd, cmd, arg);      \
	}
FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

int fstat(int fd, struct stat *st)
{
	REAL(fstat);
	return FAULT(fstat) ? fail(EIO) : real_fstat(fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	REAL(fstat64);
	return FAULT(fstat) ? fail(EIO) : real_fstat64(fd, st);
}

int fstatfs(int fd, struct statfs *st)
{
	REAL(fstatfs);
	return FAULT(fstatfs) ? fail(EIO) : real_fstatfs(fd, st);
}

int fstatfs64(int fd, struct statfs64 *st)
{
	REAL(fstatfs64);
	return FAULT(fstatfs) ? fail(EIO) : real_fstatfs64(fd, st);
}

DIR *fdopendir(int fd)
{
	REAL(fdopendir);
	return FAULT(fdopendir) ? fail_null(ENOMEM) : real_fdopendir(fd);
}

struct dirent *readdir(DIR *d)
{
	REAL(readdir);
	return FAULT(readdir) ? fail_null(EIO) : real_readdir(d);
}

struct dirent64 *readdir64(DIR *d)
{
	REAL(readdir64);
	return FAULT(readdir) ? fail_null(EIO) : real_readdir64(d);
}

int closedir(DIR *d)
{
	bool failing = FAULT(closedir);
	int r;

	REAL(closedir);
	r = real_closedir(d);
	return failing ? fail(EIO) : r;
}

/*
 * With DURESS_FAULT_LOGIN_DEFS set, the module reads that file for
 * /etc/login.defs: the host's (400 lines on Debian, each an fgets() call
 * to fail) would make the counts depend on the machine.
 */
static const char *login_defs(const char *path)
{
	const char *stand_in = getenv("DURESS_FAULT_LOGIN_DEFS");

	return stand_in && strcmp(path, "/etc/login.defs") == 0 ? stand_in : path;
}

FILE *fopen(const char *path, const char *mode)
{
	REAL(fopen);
	return FAULT(fopen) ? fail_null(EMFILE) : real_fopen(login_defs(path), mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	REAL(fopen64);
	return FAULT(fopen) ? fail_null(EMFILE) : real_fopen64(login_defs(path), mode);
}

char *fgets(char *s, int n, FILE *f)
{
	REAL(fgets);
	return FAULT(fgets) ? fail_null(EIO) : real_fgets(s, n, f);
}

int fclose(FILE *f)
{
	bool failing = FAULT(fclose);
	int r;

	REAL(fclose);
	r = real_fclose(f);
	return failing ? fail(EIO) : r;
}

int flock(int fd, int op)
{
	REAL(flock);
	return FAULT(flock) ? fail(ENOLCK) : real_flock(fd, op);
}

int mkdir(const char *path, mode_t mode)
{
	REAL(mkdir);
	return FAULT(mkdir) ? fail(ENOSPC) : real_mkdir(path, mode);
}

int mkdirat(int dir, const char *path, mode_t mode)
{
	REAL(mkdirat);
	return FAULT(mkdirat) ? fail(ENOSPC) : real_mkdirat(dir, path, mode);
}

int memfd_create(const char *name, unsigned flags)
{
	REAL(memfd_create);
	return FAULT(memfd_create) ? fail(EMFILE) : real_memfd_create(name, flags);
}

int pipe2(int fds[2], int flags)
{
	REAL(pipe2);
	return FAULT(pipe2) ? fail(EMFILE) : real_pipe2(fds, flags);
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	REAL(poll);
	return FAULT(poll) ? fail(ENOMEM) : real_poll(fds, n, timeout);
}

int fchmod(int fd, mode_t mode)
{
	REAL(fchmod);
	return FAULT(fchmod) ? fail(EIO) : real_fchmod(fd, mode);
}

int fchown(int fd, uid_t uid, gid_t gid)
{
	REAL(fchown);
	return FAULT(fchown) ? fail(EIO) : real_fchown(fd, uid, gid);
}

int futimens(int fd, const struct timespec times[2])
{
	REAL(futimens);
	return FAULT(futimens) ? fail(EIO) : real_futimens(fd, times);
}

int fsync(int fd)
{
	REAL(fsync);
	return FAULT(fsync) ? fail(EIO) : real_fsync(fd);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to)
{
	REAL(renameat);
	return FAULT(renameat) ? fail(EIO) : real_renameat(from_dir, from, to_dir, to);
}

int unlinkat(int dir, const char *path, int flags)
{
	REAL(unlinkat);
	return FAULT(unlinkat) ? fail(EIO) : real_unlinkat(dir, path, flags);
}

int chdir(const char *path)
{
	REAL(chdir);
	return FAULT(chdir) ? fail(EACCES) : real_chdir(path);
}

/* --- time ------------------------------------------------------------------- */

/* A signal came before any of it was slept. */
int nanosleep(const struct timespec *req, struct timespec *rem)
{
	REAL(nanosleep);
	if (!FAULT(nanosleep))
		return real_nanosleep(req, rem);
	if (rem)
		*rem = *req;
	return fail(EINTR);
}

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	REAL(clock_gettime);
	return FAULT(clock_gettime) ? fail(EINVAL) : real_clock_gettime(clock, ts);
}

/* --- processes ---------------------------------------------------------------- */

pid_t waitpid(pid_t pid, int *status, int options)
{
	struct duress_fault_counts *c = S.counts;
	int local;
	pid_t r;

	REAL(waitpid);
	if (FAULT(waitpid))
		return fail(EINTR);
	status = status ? status : &local;
	r = real_waitpid(pid, status, options);
	/* The module reaped its clone child, which says the runner started: it took over. */
	if (c && S.role == FAULT_ROLE_MODULE && r > 0 && r == c->clone_pid && WIFEXITED(*status) &&
	    WEXITSTATUS(*status) == 0)
		atomic_store(&c->runner_ok_seq, atomic_load(&c->seq));
	return r;
}

/*
 * The runner's exec (its environment is empty) gets the shim and its
 * variables, so that its processes count too.  No allocation: this runs
 * between fork and exec.
 */
static int exec_runner(const char *path, char *const argv[], char *const envp[])
{
	char *env[64];
	size_t n = 0;

	REAL(execve);
	for (size_t i = 0; i < S.n_exec_env; i++)
		env[n++] = S.exec_env[i];
	for (size_t i = 0; envp[i] && n + 1 < sizeof(env) / sizeof(env[0]); i++)
		env[n++] = envp[i];
	env[n] = NULL;
	return real_execve(path, argv, env);
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	REAL(execve);
	if (FAULT(execve))
		return fail(EACCES);
	if (S.counts && S.role == FAULT_ROLE_SPAWN && strcmp(path, S.runner) == 0)
		return exec_runner(path, argv, envp);
	return real_execve(path, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	REAL(fexecve);
	return FAULT(fexecve) ? fail(EACCES) : real_fexecve(fd, argv, envp);
}

pid_t fork(void)
{
	pid_t r;

	REAL(fork);
	if (FAULT(fork))
		return fail(EAGAIN);
	r = real_fork();
	if (r == 0)
		became_child();
	return r;
}

pid_t _Fork(void)
{
	pid_t r;

	REAL(_Fork);
	if (FAULT(_Fork))
		return fail(EAGAIN);
	r = real__Fork();
	if (r == 0)
		became_child();
	return r;
}

pid_t setsid(void)
{
	REAL(setsid);
	return FAULT(setsid) ? fail(EPERM) : real_setsid();
}

int setgroups(size_t n, const gid_t *groups)
{
	REAL(setgroups);
	return FAULT(setgroups) ? fail(EPERM) : real_setgroups(n, groups);
}

/* EAGAIN: the target user is at RLIMIT_NPROC. */
int setresuid(uid_t r, uid_t e, uid_t s)
{
	REAL(setresuid);
	return FAULT(setresuid) ? fail(EAGAIN) : real_setresuid(r, e, s);
}

int setresgid(gid_t r, gid_t e, gid_t s)
{
	REAL(setresgid);
	return FAULT(setresgid) ? fail(EPERM) : real_setresgid(r, e, s);
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	REAL(prctl);
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (FAULT(prctl))
		return fail(EINVAL);
	return real_prctl(option, a[0], a[1], a[2], a[3]);
}

#define PRLIMIT_WRAPPER(name, type)                                                          \
	int name(pid_t pid, __rlimit_resource_t r, const struct type *set, struct type *old) \
	{                                                                                    \
		REAL(name);                                                                  \
		return FAULT(prlimit) ? fail(EPERM) : real_##name(pid, r, set, old);         \
	}
PRLIMIT_WRAPPER(prlimit, rlimit)
PRLIMIT_WRAPPER(prlimit64, rlimit64)

#define GETRLIMIT_WRAPPER(name, type)                                       \
	int name(__rlimit_resource_t r, struct type *l)                     \
	{                                                                   \
		REAL(name);                                                 \
		return FAULT(getrlimit) ? fail(EINVAL) : real_##name(r, l); \
	}
GETRLIMIT_WRAPPER(getrlimit, rlimit)
GETRLIMIT_WRAPPER(getrlimit64, rlimit64)

#define SETRLIMIT_WRAPPER(name, type)                                      \
	int name(__rlimit_resource_t r, const struct type *l)              \
	{                                                                  \
		REAL(name);                                                \
		return FAULT(setrlimit) ? fail(EPERM) : real_##name(r, l); \
	}
SETRLIMIT_WRAPPER(setrlimit, rlimit)
SETRLIMIT_WRAPPER(setrlimit64, rlimit64)

int sched_setscheduler(pid_t pid, int policy, const struct sched_param *p)
{
	REAL(sched_setscheduler);
	return FAULT(sched_setscheduler) ? fail(EPERM) : real_sched_setscheduler(pid, policy, p);
}

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	REAL(sched_setaffinity);
	return FAULT(sched_setaffinity) ? fail(EINVAL) : real_sched_setaffinity(pid, size, set);
}

int setpriority(__priority_which_t which, id_t who, int prio)
{
	REAL(setpriority);
	return FAULT(setpriority) ? fail(EACCES) : real_setpriority(which, who, prio);
}

int sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
	REAL(sigaction);
	return FAULT(sigaction) ? fail(EINVAL) : real_sigaction(sig, sa, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	REAL(sigprocmask);
	return FAULT(sigprocmask) ? fail(EINVAL) : real_sigprocmask(how, set, old);
}

__sighandler_t signal(int sig, __sighandler_t handler)
{
	REAL(signal);
	if (FAULT(signal)) {
		errno = EINVAL;
		return SIG_ERR;
	}
	return real_signal(sig, handler);
}

/* --- raw system calls --------------------------------------------------------- */

static int syscall_function(long number)
{
	switch (number) {
	case SYS_clone:
		return FAULT_FN_SYS_clone;
	case SYS_setfsuid:
		return FAULT_FN_SYS_setfsuid;
	case SYS_setfsgid:
		return FAULT_FN_SYS_setfsgid;
	case SYS_setgroups:
		return FAULT_FN_SYS_setgroups;
	case SYS_getgroups:
		return FAULT_FN_SYS_getgroups;
	case SYS_capget:
		return FAULT_FN_SYS_capget;
	case SYS_capset:
		return FAULT_FN_SYS_capset;
	case SYS_ioprio_set:
		return FAULT_FN_SYS_ioprio_set;
	case SYS_keyctl:
		return FAULT_FN_SYS_keyctl;
	default:
		return -1;
	}
}

static long syscall_failure(long number)
{
	REAL(syscall);
	switch (number) {
	/* They cannot fail: the id stays what it was, and that is what they return. */
	case SYS_setfsuid:
	case SYS_setfsgid:
		return real_syscall(number, -1L);
	case SYS_clone:
		return fail(EAGAIN);
	case SYS_getgroups:
	case SYS_capget:
		return fail(EINVAL);
	case SYS_keyctl:
		return fail(EDQUOT);
	default:
		return fail(EPERM);
	}
}

long syscall(long number, ...)
{
	int fn = syscall_function(number);
	long a[6], r;
	va_list ap;

	REAL(syscall);
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (fn >= 0 && fault(fn, __builtin_return_address(0)))
		return syscall_failure(number);
	r = real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (number == SYS_clone && r == 0)
		became_child();
	else if (number == SYS_clone && r > 0 && S.counts && S.role == FAULT_ROLE_MODULE)
		S.counts->clone_pid = (pid_t)r;
	return r;
}

/* --- accounts ------------------------------------------------------------------ */

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **ret)
{
	REAL(getpwnam_r);
	if (!FAULT(getpwnam_r))
		return real_getpwnam_r(name, pw, buf, size, ret);
	*ret = NULL;
	return EIO;
}

int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **ret)
{
	REAL(getpwuid_r);
	if (!FAULT(getpwuid_r))
		return real_getpwuid_r(uid, pw, buf, size, ret);
	*ret = NULL;
	return EIO;
}

int getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **ret)
{
	REAL(getgrnam_r);
	if (!FAULT(getgrnam_r))
		return real_getgrnam_r(name, gr, buf, size, ret);
	*ret = NULL;
	return EIO;
}

/* Copies s into the caller's buffer; NULL when it does not fit. */
static char *copy_field(const char *s, char **at, size_t *left)
{
	size_t n = s ? strlen(s) + 1 : 0;
	char *copy = *at;

	if (!s || n > *left)
		return NULL;
	memcpy(copy, s, n);
	*at += n;
	*left -= n;
	return copy;
}

/* getspnam_r() from nss_wrapper's getspnam() (see the top of the file). */
static int wrapped_shadow(const char *name, struct spwd *sp, char *buf, size_t size,
			  struct spwd **ret)
{
	struct spwd *(*by_name)(const char *) = (struct spwd * (*)(const char *))
		dlsym(RTLD_NEXT, "getspnam");
	struct spwd *e = by_name ? by_name(name) : NULL;
	char *at = buf;
	size_t left = size;

	*ret = NULL;
	if (!e)
		return 0; /* no entry */
	*sp = *e;
	sp->sp_namp = copy_field(e->sp_namp, &at, &left);
	sp->sp_pwdp = copy_field(e->sp_pwdp, &at, &left);
	if (!sp->sp_namp || !sp->sp_pwdp)
		return ERANGE;
	*ret = sp;
	return 0;
}

int getspnam_r(const char *name, struct spwd *sp, char *buf, size_t size, struct spwd **ret)
{
	REAL(getspnam_r);
	if (FAULT(getspnam_r)) {
		*ret = NULL;
		return EIO;
	}
	if (getenv("NSS_WRAPPER_SHADOW"))
		return wrapped_shadow(name, sp, buf, size, ret);
	return real_getspnam_r(name, sp, buf, size, ret);
}

/* The backend failed: "more than that", with no count (the caller must give up). */
int getgrouplist(const char *user, gid_t group, gid_t *groups, int *n)
{
	REAL(getgrouplist);
	return FAULT(getgrouplist) ? fail(ENOMEM) : real_getgrouplist(user, group, groups, n);
}

/* --- memory, randomness, hashing ------------------------------------------------ */

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
	REAL(getrandom);
	return FAULT(getrandom) ? fail(EAGAIN) : real_getrandom(buf, n, flags);
}

char *strdup(const char *s)
{
	REAL(strdup);
	return FAULT(strdup) ? fail_null(ENOMEM) : real_strdup(s);
}

int asprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int r;

	REAL(vasprintf);
	if (FAULT(asprintf))
		return fail(ENOMEM);
	va_start(ap, fmt);
	r = real_vasprintf(ret, fmt, ap);
	va_end(ap);
	return r;
}

int __asprintf_chk(char **ret, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	(void)flag;
	REAL(vasprintf);
	if (FAULT(asprintf))
		return fail(ENOMEM);
	va_start(ap, fmt);
	r = real_vasprintf(ret, fmt, ap);
	va_end(ap);
	return r;
}

/* libsodium's, as its header declares them (not included: no build dependency here). */
int crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
		  unsigned long long passwdlen, const unsigned char *salt,
		  unsigned long long opslimit, size_t memlimit, int alg);
void *sodium_malloc(size_t size);
void *sodium_allocarray(size_t count, size_t size);

/* libsodium's lowest cost: what the suite signs with. */
#define CHEAP_OPS 1ULL
#define CHEAP_MEMORY 8192U

/*
 * Out of memory for the Argon2id arena: libsodium's only failure at sane
 * parameters.  With DURESS_FAULT_CHEAP_ARGON2 set, a derivation above the
 * lowest cost runs at it: the suite signs every action at that cost, so
 * only the module's stand-in derivation (whose key is never used) costs
 * more, and thousands of logins cannot each pay 64 MiB.
 */
int crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
		  unsigned long long passwdlen, const unsigned char *salt,
		  unsigned long long opslimit, size_t memlimit, int alg)
{
	REAL_IN("libsodium", crypto_pwhash);
	if (FAULT(crypto_pwhash))
		return fail(ENOMEM);
	if (getenv("DURESS_FAULT_CHEAP_ARGON2") && memlimit > CHEAP_MEMORY) {
		opslimit = CHEAP_OPS;
		memlimit = CHEAP_MEMORY;
	}
	return real_crypto_pwhash(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
}

void *sodium_malloc(size_t size)
{
	REAL_IN("libsodium", sodium_malloc);
	return FAULT(sodium_malloc) ? fail_null(ENOMEM) : real_sodium_malloc(size);
}

void *sodium_allocarray(size_t count, size_t size)
{
	REAL_IN("libsodium", sodium_allocarray);
	return FAULT(sodium_allocarray) ? fail_null(ENOMEM) : real_sodium_allocarray(count, size);
}

/* libxcrypt's failure: a "*0" token that no hash equals. */
char *crypt_r(const char *phrase, const char *setting, struct crypt_data *data)
{
	REAL_IN("libcrypt", crypt_r);
	if (!FAULT(crypt_r))
		return real_crypt_r(phrase, setting, data);
	snprintf(data->output, sizeof(data->output), "*0");
	errno = ENOMEM;
	return data->output;
}

/* --- arming -------------------------------------------------------------------- */

static int parse_target(const char *spec, struct duress_fault_counts *c)
{
	const char *slash = spec ? strchr(spec, '/') : NULL;
	const char *colon = slash ? strchr(slash, ':') : NULL;
	char *end;
	unsigned long n;

	c->target_role = c->target_fn = -1;
	if (!spec || !*spec)
		return 0;
	if (!slash || !colon)
		return -1;
	for (int r = 0; r < FAULT_N_ROLES; r++)
		if (strlen(duress_fault_role_names[r]) == (size_t)(slash - spec) &&
		    strncmp(spec, duress_fault_role_names[r], (size_t)(slash - spec)) == 0)
			c->target_role = r;
	for (int f = 0; f < FAULT_N_FUNCTIONS; f++)
		if (strlen(duress_fault_function_names[f]) == (size_t)(colon - slash - 1) &&
		    strncmp(slash + 1, duress_fault_function_names[f],
			    (size_t)(colon - slash - 1)) == 0)
			c->target_fn = f;
	errno = 0;
	n = strtoul(colon + 1, &end, 10);
	if (c->target_role < 0 || c->target_fn < 0 || errno || *end || n == 0 || n > UINT_MAX)
		return -1;
	c->target_n = (unsigned)n;
	return 0;
}

/* The shared counters; zeroed when the module's process arms. */
static struct duress_fault_counts *map_counts(const char *path, bool fresh)
{
	struct duress_fault_counts *c;
	int fd = open(path, O_RDWR | O_CLOEXEC | (fresh ? O_CREAT : 0), 0600);

	if (fd < 0)
		return NULL;
	if (fresh && ftruncate(fd, sizeof(*c)) != 0) {
		close(fd);
		return NULL;
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return c == MAP_FAILED ? NULL : c;
}

__attribute__((format(printf, 1, 2))) static void add_exec_env(const char *fmt, ...)
{
	va_list ap;

	if (S.n_exec_env == sizeof(S.exec_env) / sizeof(S.exec_env[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(S.exec_env[S.n_exec_env++], sizeof(S.exec_env[0]), fmt, ap);
	va_end(ap);
}

/* What the runner's exec adds: the shim (after ASan's runtime if any) and our variables. */
static void build_exec_env(const char *counts)
{
	static const char *const passed[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS" };
	const char *asan = getenv("DURESS_PRELOAD_ASAN");
	Dl_info self;

	S.n_exec_env = 0;
	if (!dladdr((void *)build_exec_env, &self) || !self.dli_fname)
		return;
	/* ASan's runtime first, as everywhere (tests/meson.build). */
	if (asan && *asan)
		add_exec_env("LD_PRELOAD=%s %s", asan, self.dli_fname);
	else
		add_exec_env("LD_PRELOAD=%s", self.dli_fname);
	add_exec_env("DURESS_FAULT_COUNTS=%s", counts);
	add_exec_env("DURESS_FAULT_ROLE=runner");
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		if (getenv(passed[i]))
			add_exec_env("%s=%s", passed[i], getenv(passed[i]));
}

static void find_helpers(void)
{
	void *warm[2];

	find_object(
		(struct find){ .how = BY_ADDRESS, .addr = (uintptr_t)find_helpers, .o = &S.self });
	find_object((struct find){ .how = BY_SUBSTRING, .name = "libasan.so", .o = &S.asan });
	/* backtrace() loads its unwinder at the first call: not between a fork and an exec. */
	if (S.asan.n)
		(void)backtrace(warm, 2);
}

__attribute__((visibility("default"))) int duress_fault_arm(void);

int duress_fault_arm(void)
{
	const char *counts = getenv("DURESS_FAULT_COUNTS"), *module = getenv("DURESS_FAULT_MODULE");
	const char *runner = getenv("DURESS_FAULT_RUNNER");
	struct duress_fault_counts *c;

	if (!counts || !module || !runner) {
		fputs("fault shim: DURESS_FAULT_COUNTS, DURESS_FAULT_MODULE and DURESS_FAULT_RUNNER "
		      "must be set\n",
		      stderr);
		return -1;
	}
	c = map_counts(counts, true);
	if (!c)
		return -1;
	memset(c, 0, sizeof(*c));
	c->magic = DURESS_FAULT_MAGIC;
	if (parse_target(getenv("DURESS_FAULT"), c) < 0) {
		fprintf(stderr, "fault shim: DURESS_FAULT=%s is not role/function:N\n",
			getenv("DURESS_FAULT"));
		munmap(c, sizeof(*c));
		return -1;
	}
	snprintf(S.module, sizeof(S.module), "%s", module);
	snprintf(S.runner, sizeof(S.runner), "%s", runner);
	S.role = FAULT_ROLE_MODULE;
	S.target_is_main = false;
	find_helpers();
	build_exec_env(counts);
	S.counts = c;
	return 0;
}

/* In the runner, which the module's spawn child exec'd with our variables. */
__attribute__((constructor)) static void arm_runner(void)
{
	const char *role = getenv("DURESS_FAULT_ROLE"), *counts = getenv("DURESS_FAULT_COUNTS");
	struct duress_fault_counts *c;

	if (!role || strcmp(role, "runner") != 0 || !counts)
		return;
	c = map_counts(counts, false);
	if (!c || c->magic != DURESS_FAULT_MAGIC)
		return;
	S.role = FAULT_ROLE_RUNNER;
	S.target_is_main = true;
	find_object((struct find){ .how = MAIN, .o = &S.target });
	find_helpers();
	S.counts = c;
}
