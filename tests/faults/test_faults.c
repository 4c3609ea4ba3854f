/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Syscall fault injection through the real PAM stack (issue 24, SPEC 7):
 * the real libpam (pam_wrapper), the real pam_unix, the built module and
 * runner, fake accounts (nss_wrapper), and the fault shim (shim.c) that
 * fails the Nth call of one function made by the module's or the runner's
 * code.
 *
 * For one scenario (argv[1]: wrong, real, duress-user, duress-global,
 * duress-once, locked; or a password change, pam_chauthtok: change-duress,
 * change-global, whose duress password as the new one must never be taken), in both placements (or in the one argv[2] names: the sanitizer
 * step's cut, tests/faults/meson.build): a clean login counts every call each role
 * makes (shim.h); then each of those calls is failed in turn, one login per
 * fault, each in a fresh fork of this process.  Every login must:
 *  - never return PAM_SUCCESS for a wrong password or a locked account;
 *  - end: no crash, no hang (bounded; killed and reported);
 *  - leave the process's descriptors, uids, gids, fsuid, fsgid,
 *    supplementary groups and capabilities as they were before pam_start;
 *  - leave no child: what the module forks it reaps, and what the runner
 *    leaves behind (the process is a subreaper) ends by itself;
 * or else end the process with status 1 before pam_authenticate returns,
 * having logged "cannot restore": the module's answer when it cannot give
 * the caller its identity back, counted apart.
 *
 * A duress login that returns PAM_SUCCESS although its action never ran is
 * counted: acceptable when the fault came after the runner took over (its
 * first process had exited 0: the login cannot know), or for a once action
 * that left no record (one that cannot be made does not run: at most
 * once), a failure otherwise.
 *
 * Output: TAP, one line per (scenario, placement, role/function).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <shadow.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "tests/faults/shim.h"
#include "tests/faults/world.h"
#include "tests/pam/conv.h"

/* How long a login may take, and then what the runner left behind, before it is a hang. */
#define LOGIN_BOUND_S 60
#define RUNNER_BOUND_S 20
#define TEXT_MAX 1024

/* --- scenarios ------------------------------------------------------------ */

enum { AFTER, BEFORE, N_PLACEMENTS };
static const char *const placement_names[N_PLACEMENTS] = { "after", "before" };

struct scenario {
	const char *name;
	const char *user;
	const char *password;
	bool may_log_in; /* false: PAM_SUCCESS is a failure, faulted or not */
	bool logs_in;    /* the answer of a clean login */
	bool acts;       /* a clean login runs the action */
	const char *services[N_PLACEMENTS];
	bool change; /* pam_chauthtok, password the new one: "logs in" is "taken" */
};

static const struct scenario scenarios[] = {
	{ "wrong", "alice", FW.wrong, false, false, false, { "after", "before" }, false },
	{ "real", "alice", FW.alice_real, true, true, false, { "after", "before" }, false },
	/* With wait=: the module also waits on the runner's pipe (pipe2, poll, read). */
	{ "duress-user",
	  "alice",
	  FW.alice_duress,
	  true,
	  true,
	  true,
	  { "after-wait", "before-wait" },
	  false },
	{ "duress-global",
	  "alice",
	  FW.global_duress,
	  true,
	  true,
	  true,
	  { "after", "before" },
	  false },
	/*
	 * Issue 26: a once action, armed again before each login.  Its record
	 * made, it runs; a record that cannot be made keeps it from running
	 * while the login succeeds (at most once): allowed when no record is left.
	 */
	{ "duress-once", "alice", FW.once_duress, true, true, true, { "after", "before" }, false },
	/* Locked in shadow ("!" hash): the actions run, the login fails (SPEC 4). */
	{ "locked", "carol", FW.carol_duress, false, false, true, { "after", "before" }, false },
	/* The password stack (issue 26): a duress password is never taken as the new one. */
	{ "change-duress",
	  "alice",
	  FW.alice_duress,
	  false,
	  false,
	  false,
	  { "after", "before" },
	  true },
	{ "change-global",
	  "alice",
	  FW.global_duress,
	  false,
	  false,
	  false,
	  { "after", "before" },
	  true },
};

/* --- what the login process reports (shared memory) ------------------------ */

struct outcome {
	bool returned; /* pam_authenticate returned */
	int code;
	bool evidence;    /* the action ran */
	bool refused_new; /* the conversation was told BAD PASSWORD (a password change) */
	char problems[TEXT_MAX];
};

static struct outcome *OUT;
/* The application ignores SIGCHLD (some daemons do): the kernel reaps its children itself. */
static bool ignore_sigchld;
static struct duress_fault_counts *COUNTS;
static duress_fault_arm_fn *arm;

__attribute__((format(printf, 2, 3))) static void append(char text[TEXT_MAX], const char *fmt, ...)
{
	size_t used = strlen(text);
	va_list ap;

	if (used + 3 >= TEXT_MAX)
		return;
	if (used)
		used += (size_t)snprintf(text + used, TEXT_MAX - used, "; ");
	va_start(ap, fmt);
	vsnprintf(text + used, TEXT_MAX - used, fmt, ap);
	va_end(ap);
}

/* A bound against a hang, times DURESS_TIMEOUT_FACTOR (docs/testing.md), as the PAM suite's. */
static double hang_bound(double seconds)
{
	const char *env = getenv("DURESS_TIMEOUT_FACTOR");
	char *end = NULL;
	unsigned long factor = env ? strtoul(env, &end, 10) : 1;

	if (!env || end == env || *end || factor < 1 || factor > 100)
		factor = 1;
	return seconds * (double)factor;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- identity ----------------------------------------------------------------- */

#define GROUPS_MAX 256

struct identity {
	uid_t uid[3];
	gid_t gid[3];
	uid_t fsuid;
	gid_t fsgid;
	int n_groups;
	gid_t groups[GROUPS_MAX];
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
};

/* This thread's, as the module sees and changes it (fsuid and caps are per thread). */
static void identity_take(struct identity *id)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	memset(id, 0, sizeof(*id));
	getresuid(&id->uid[0], &id->uid[1], &id->uid[2]);
	getresgid(&id->gid[0], &id->gid[1], &id->gid[2]);
	id->fsuid = (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
	id->fsgid = (gid_t)syscall(SYS_setfsgid, (gid_t)-1);
	id->n_groups = (int)syscall(SYS_getgroups, GROUPS_MAX, id->groups);
	(void)syscall(SYS_capget, &h, id->caps);
}

static void groups_text(const struct identity *id, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < id->n_groups && used + 12 < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%u", i ? "," : "",
					 (unsigned)id->groups[i]);
}

static void identity_compare(const struct identity *a, const struct identity *b, char *problems)
{
	char ga[256], gb[256];

	if (memcmp(a->uid, b->uid, sizeof(a->uid)) != 0)
		append(problems, "uids %u/%u/%u became %u/%u/%u", a->uid[0], a->uid[1], a->uid[2],
		       b->uid[0], b->uid[1], b->uid[2]);
	if (memcmp(a->gid, b->gid, sizeof(a->gid)) != 0)
		append(problems, "gids %u/%u/%u became %u/%u/%u", a->gid[0], a->gid[1], a->gid[2],
		       b->gid[0], b->gid[1], b->gid[2]);
	if (a->fsuid != b->fsuid)
		append(problems, "fsuid %u became %u", a->fsuid, b->fsuid);
	if (a->fsgid != b->fsgid)
		append(problems, "fsgid %u became %u", a->fsgid, b->fsgid);
	groups_text(a, ga, sizeof(ga));
	groups_text(b, gb, sizeof(gb));
	if (strcmp(ga, gb) != 0)
		append(problems, "groups [%s] became [%s]", ga, gb);
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (memcmp(&a->caps[i], &b->caps[i], sizeof(a->caps[i])) != 0)
			append(problems,
			       "capabilities (word %d) effective %08x permitted %08x "
			       "inheritable %08x became %08x %08x %08x",
			       i, a->caps[i].effective, a->caps[i].permitted,
			       a->caps[i].inheritable, b->caps[i].effective, b->caps[i].permitted,
			       b->caps[i].inheritable);
}

/* --- descriptors -------------------------------------------------------------- */

#define FDS_MAX 128

struct fds {
	int n;
	int fd[FDS_MAX];
	char target[FDS_MAX][96];
};

static void fds_take(struct fds *f)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	f->n = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && f->n < FDS_MAX) {
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		len = readlinkat(dirfd(d), e->d_name, f->target[f->n], sizeof(f->target[0]) - 1);
		f->target[f->n][len > 0 ? len : 0] = '\0';
		f->fd[f->n++] = fd;
	}
	closedir(d);
}

static bool fds_has(const struct fds *f, int fd, const char *target)
{
	for (int i = 0; i < f->n; i++)
		if (f->fd[i] == fd && strcmp(f->target[i], target) == 0)
			return true;
	return false;
}

static void fds_compare(const struct fds *a, const struct fds *b, char *problems)
{
	for (int i = 0; i < b->n; i++)
		if (!fds_has(a, b->fd[i], b->target[i]))
			append(problems, "descriptor %d (%s) left open", b->fd[i], b->target[i]);
	for (int i = 0; i < a->n; i++)
		if (!fds_has(b, a->fd[i], a->target[i]))
			append(problems, "the application's descriptor %d (%s) was closed",
			       a->fd[i], a->target[i]);
}

/* --- children ----------------------------------------------------------------- */

#define CHILDREN_MAX 64

static int children_of_self(pid_t out[CHILDREN_MAX])
{
	char path[64];
	long pid;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < CHILDREN_MAX && fscanf(f, "%ld", &pid) == 1)
		out[n++] = (pid_t)pid;
	fclose(f);
	return n;
}

static void comm_of(pid_t pid, char out[32])
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	out[0] = '\0';
	f = fopen(path, "re");
	if (f) {
		if (fgets(out, 32, f))
			out[strcspn(out, "\n")] = '\0';
		fclose(f);
	}
}

/*
 * A child that is still this program (its comm) is one the module forked
 * and did not reap: the runner's processes have exec'd.
 */
static void check_module_children(char *problems)
{
	pid_t kids[CHILDREN_MAX];
	char self[32], comm[32];
	int n = children_of_self(kids);

	comm_of(getpid(), self);
	for (int i = 0; i < n; i++) {
		comm_of(kids[i], comm);
		if (strcmp(comm, self) == 0)
			append(problems, "child %d left by the module", (int)kids[i]);
	}
}

/*
 * Reaps every child until none is left or seconds have passed; then kills
 * what is left (and what those leave), and says what it was.
 */
static void reap_all(double seconds, char *problems, const char *what)
{
	double deadline = now() + seconds;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	for (int killing = 0; killing < 10;) {
		pid_t kids[CHILDREN_MAX];
		int n;

		if (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
			continue;
		n = children_of_self(kids);
		if (n == 0)
			return;
		if (now() < deadline) {
			struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };

			(void)sigtimedwait(&chld, NULL, &ts);
			continue;
		}
		for (int i = 0; i < n; i++) {
			char comm[32];

			comm_of(kids[i], comm);
			if (killing == 0)
				append(problems, "%s %d (%s) still running after %.0f s", what,
				       (int)kids[i], comm, seconds);
			kill(kids[i], SIGKILL);
		}
		killing++;
		deadline = now() + 5;
	}
}

/* --- one login ---------------------------------------------------------------- */

/* In a fresh fork: one login, then the checks; the outcome goes to OUT. */
static _Noreturn void login(const struct scenario *sc, const char *service)
{
	char said[256] = "";
	struct conv_password answer = { .password = sc->password,
					.said = said,
					.said_size = sizeof(said) };
	const struct pam_conv conv = { conv_password, &answer };
	struct identity before, after;
	struct fds fds_before, fds_after;
	pam_handle_t *h = NULL;
	sigset_t none;
	char name[64];
	int fd = open(FW.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int r;

	/* An application's ordinary state: no signal blocked, stderr where the log is read. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0 || close(fd) != 0 ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL) != 0 || arm() != 0) {
		append(OUT->problems, "the test could not set the login up: %s", strerror(errno));
		_exit(3);
	}
	identity_take(&before);
	fds_take(&fds_before);
	signal(SIGCHLD, ignore_sigchld ? SIG_IGN : SIG_DFL);
	snprintf(name, sizeof(name), "%s-%s", FW.services, service);
	r = pam_start(name, sc->user, &conv, &h);
	if (r == PAM_SUCCESS)
		r = sc->change ? pam_chauthtok(h, 0) : pam_authenticate(h, 0);
	OUT->code = r;
	OUT->returned = true;
	OUT->refused_new = strstr(said, "BAD PASSWORD") != NULL;
	pam_end(h, r);
	signal(SIGCHLD, SIG_DFL);
	identity_take(&after);
	fds_take(&fds_after);
	identity_compare(&before, &after, OUT->problems);
	fds_compare(&fds_before, &fds_after, OUT->problems);
	check_module_children(OUT->problems);
	reap_all(hang_bound(RUNNER_BOUND_S), OUT->problems, "runner process");
	OUT->evidence = access(FW.evidence, F_OK) == 0;
	/* Not exit(): pam_wrapper's destructor would remove the parent's copy of its files. */
	_exit(0);
}

struct result {
	int status;
	bool hung;
	struct outcome out;
	bool fired;
	int fired_role;
	bool after_runner; /* the fault came after the runner had taken over */
	bool record;       /* a once action's record was left */
	char leftovers[TEXT_MAX];
};

/* Waits for the login process, at most LOGIN_BOUND_S; false (and killed) past it. */
static bool wait_login(pid_t pid, int *status)
{
	double deadline = now() + hang_bound(LOGIN_BOUND_S);
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (waitpid(pid, status, WNOHANG | __WALL) == 0) {
		double left = deadline - now();
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000 * 1000 };

		if (left <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, status, __WALL);
			return false;
		}
		(void)sigtimedwait(&chld, NULL, &ts);
	}
	return true;
}

/* role -1: a clean login (the count pass). */
static void run_login(const struct scenario *sc, int placement, int role, int fn, unsigned n,
		      struct result *res)
{
	char spec[128];
	pid_t pid;

	memset(res, 0, sizeof(*res));
	memset(OUT, 0, sizeof(*OUT));
	if (role >= 0) {
		snprintf(spec, sizeof(spec), "%s/%s:%u", duress_fault_role_names[role],
			 duress_fault_function_names[fn], n);
		setenv("DURESS_FAULT", spec, 1);
	} else {
		unsetenv("DURESS_FAULT");
	}
	(void)unlink(FW.evidence);
	(void)fault_world_records(true);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (pid == 0)
		login(sc, sc->services[placement]);
	res->hung = !wait_login(pid, &res->status);
	/* What the login left (it is dead, so it is ours now): allowed to end, then killed. */
	reap_all(hang_bound(RUNNER_BOUND_S), res->leftovers, "process");
	res->out = *OUT;
	res->record = fault_world_records(false) > 0;
	res->fired = atomic_load(&COUNTS->fired) != 0;
	res->fired_role = role;
	res->after_runner = role == FAULT_ROLE_WORKER || role == FAULT_ROLE_CHAIN ||
			    role == FAULT_ROLE_JOB ||
			    (role == FAULT_ROLE_MODULE && atomic_load(&COUNTS->runner_ok_seq) > 0 &&
			     COUNTS->fired_seq > atomic_load(&COUNTS->runner_ok_seq));
}

/* --- judging ------------------------------------------------------------------ */

struct tally {
	unsigned calls, unfired, logged_in, refused, restore_exits, silent_after, unrecorded,
		failures;
	char note[96];
	char detail[4 * TEXT_MAX];
};

static bool log_has(const char *needle)
{
	char buf[16384];
	ssize_t n;
	int fd = open(FW.log, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, needle) != NULL;
}

/* The module ended the process rather than return with another identity: allowed. */
static bool restore_exit(const struct result *r)
{
	return !r->out.returned && WIFEXITED(r->status) && WEXITSTATUS(r->status) == EXIT_FAILURE &&
	       log_has("cannot restore");
}

/* What is wrong with this login, in v (empty: nothing). */
static void judge(const struct scenario *sc, const struct result *r, struct tally *t, char *v)
{
	bool success = r->out.returned && r->out.code == PAM_SUCCESS;

	if (r->hung)
		append(v, "the login hung (killed after %.0f s)", hang_bound(LOGIN_BOUND_S));
	else if (WIFSIGNALED(r->status))
		append(v, "the login process was killed by signal %d", WTERMSIG(r->status));
	else if (restore_exit(r))
		t->restore_exits++;
	else if (!r->out.returned)
		append(v, "the login process exited (status %d) before pam_authenticate returned",
		       WEXITSTATUS(r->status));
	else if (WEXITSTATUS(r->status) != 0)
		append(v, "the login process ended with status %d", WEXITSTATUS(r->status));
	if (r->out.problems[0])
		append(v, "%s", r->out.problems);
	if (r->leftovers[0])
		append(v, "%s", r->leftovers);
	if (!r->out.returned)
		return;
	success ? t->logged_in++ : t->refused++;
	if (success && !sc->may_log_in)
		append(v, "PAM_SUCCESS for the %s login", sc->name);
	if (success && sc->acts && !r->out.evidence) {
		if (r->after_runner)
			t->silent_after++;
		else if (sc->password == FW.once_duress && !r->record)
			t->unrecorded++;
		else
			append(v, "PAM_SUCCESS but the action never ran, and the fault came before "
				  "the runner took over");
	}
}

/* --- TAP ---------------------------------------------------------------------- */

static unsigned tap_count;
static bool any_failed;

__attribute__((format(printf, 2, 3))) static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %u - ", ok ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	any_failed |= !ok;
}

/* Every detail line as a TAP comment. */
static void tap_detail(const char *text)
{
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n");

		printf("#   %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
}

/* The clean login: the answer and the action as the scenario says, and nothing wrong. */
static bool clean_login(const struct scenario *sc, int placement)
{
	struct tally t = { 0 };
	struct result r;
	char v[TEXT_MAX] = "";
	bool success;

	run_login(sc, placement, -1, -1, 0, &r);
	judge(sc, &r, &t, v);
	success = r.out.returned && r.out.code == PAM_SUCCESS;
	if (r.out.returned && success != sc->logs_in)
		append(v, "PAM result %d, expected %s", r.out.code,
		       sc->logs_in ? "PAM_SUCCESS" : "a refusal");
	if (r.out.returned && r.out.evidence != sc->acts)
		append(v, "the action %s", sc->acts ? "did not run" : "ran");
	/* Refused, and by the module's check, not for another reason. */
	if (r.out.returned && sc->change && !r.out.refused_new)
		append(v, "no BAD PASSWORD: the module did not refuse it as a duress password");
	tap(!v[0], "%s/%s clean login: %s, the action %s", sc->name, placement_names[placement],
	    success ? "logged in" : "refused", r.out.evidence ? "ran" : "did not run");
	if (v[0])
		tap_detail(v);
	return !v[0];
}

static void note_failure(struct tally *t, const char *role, const char *fn, unsigned n,
			 const char *v)
{
	size_t used = strlen(t->detail);

	t->failures++;
	if (used + 200 < sizeof(t->detail))
		snprintf(t->detail + used, sizeof(t->detail) - used, "%s%s/%s call %u: %s",
			 used ? "\n" : "", role, fn, n, v);
}

/* ", N without the once action (no record could be made)", or "", in t->note. */
static const char *once_note(struct tally *t)
{
	t->note[0] = '\0';
	if (t->unrecorded)
		snprintf(t->note, sizeof(t->note),
			 ", %u without the once action (no record could be made)", t->unrecorded);
	return t->note;
}

/* How many times a login is run before a call that never came counts as such. */
#define FIRE_TRIES 3

struct totals {
	unsigned long injections, restore_exits, silent_after, unrecorded, failures;
};

/* Fails each of the calls of role/fn in turn; one TAP line. */
static void fail_each_call(const struct scenario *sc, int placement, int role, int fn,
			   unsigned calls, struct totals *all)
{
	const char *rname = duress_fault_role_names[role], *fname = duress_fault_function_names[fn];
	struct tally t = { .calls = calls };

	for (unsigned n = 1; n <= calls; n++) {
		/*
		 * A login whose Nth call never came (a count that another
		 * process's timing moved, seen with two suites at once) is
		 * judged like any other and tried again, up to FIRE_TRIES.
		 */
		for (unsigned try = 0; try < FIRE_TRIES; try++) {
			struct result r;
			char v[TEXT_MAX] = "";

			run_login(sc, placement, role, fn, n, &r);
			judge(sc, &r, &t, v);
			if (v[0])
				note_failure(&t, rname, fname, n, v);
			if (r.fired)
				break;
			if (try + 1 == FIRE_TRIES)
				t.unfired++;
		}
	}
	tap(t.failures == 0 && t.unfired == 0,
	    "%s/%s %s/%s: %u calls failed one at a time: %u logged in, %u refused, "
	    "%u restore exits, %u logged in without the action (after the runner took over)%s%s",
	    sc->name, placement_names[placement], rname, fname, calls, t.logged_in, t.refused,
	    t.restore_exits, t.silent_after, once_note(&t),
	    t.unfired ? ", SOME CALLS NEVER CAME" : "");
	if (t.unfired)
		printf("#   %u of the %u calls counted in the clean login never came: the logins "
		       "are not the same every time\n",
		       t.unfired, calls);
	if (t.failures)
		tap_detail(t.detail);
	all->injections += calls;
	all->restore_exits += t.restore_exits;
	all->silent_after += t.silent_after;
	all->unrecorded += t.unrecorded;
	all->failures += t.failures;
}

/*
 * In an application that ignores SIGCHLD, a runner that cannot be started
 * (its exec fails) must still fail the login: its exit status must not be
 * lost to the kernel's reaping.
 */
static void runner_status_kept(const struct scenario *sc, int placement)
{
	struct tally t = { 0 };
	struct result r;
	char v[TEXT_MAX] = "";

	ignore_sigchld = true;
	run_login(sc, placement, FAULT_ROLE_SPAWN, FAULT_FN_execve, 1, &r);
	ignore_sigchld = false;
	judge(sc, &r, &t, v);
	if (!r.fired)
		append(v, "the runner's exec never came");
	tap(!v[0], "%s/%s with SIGCHLD ignored, the runner's exec failing: %s", sc->name,
	    placement_names[placement],
	    r.out.returned && r.out.code == PAM_SUCCESS ? "logged in" : "refused");
	if (v[0])
		tap_detail(v);
}

static void run_placement(const struct scenario *sc, int placement, struct totals *all)
{
	unsigned calls[FAULT_N_ROLES][FAULT_N_FUNCTIONS];
	char unused[2048] = "";
	size_t used = 0;

	if (!clean_login(sc, placement))
		return;
	/* The clean login's counts: every call that one makes is failed once. */
	for (int role = 0; role < FAULT_N_ROLES; role++)
		for (int fn = 0; fn < FAULT_N_FUNCTIONS; fn++)
			calls[role][fn] = atomic_load(&COUNTS->calls[role][fn]);
	for (int role = 0; role < FAULT_N_ROLES; role++)
		for (int fn = 0; fn < FAULT_N_FUNCTIONS; fn++)
			if (calls[role][fn])
				fail_each_call(sc, placement, role, fn, calls[role][fn], all);
	for (int fn = 0; fn < FAULT_N_FUNCTIONS; fn++) {
		bool called = false;

		for (int role = 0; role < FAULT_N_ROLES; role++)
			called |= calls[role][fn] > 0;
		if (!called && used + 32 < sizeof(unused))
			used += (size_t)snprintf(unused + used, sizeof(unused) - used, " %s",
						 duress_fault_function_names[fn]);
	}
	printf("# %s/%s: not called:%s\n", sc->name, placement_names[placement], unused);
	if (sc->acts && sc->may_log_in)
		runner_status_kept(sc, placement);
}

/* --- setup -------------------------------------------------------------------- */

static void *shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bail("mmap: %s", strerror(errno));
	return p;
}

static void map_counts(void)
{
	int fd = open(FW.counts, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || ftruncate(fd, sizeof(*COUNTS)) != 0)
		bail("%s: %s", FW.counts, strerror(errno));
	COUNTS = mmap(NULL, sizeof(*COUNTS), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (COUNTS == MAP_FAILED)
		bail("mmap %s: %s", FW.counts, strerror(errno));
}

/*
 * Once here, not in every fork: the module stays loaded (libpam's dlopen()
 * finds it).  pam_wrapper sets itself up again in each fork all the same
 * (world.h, services).
 */
static void warm_up(void)
{
	struct conv_password answer = { .password = "" };
	const struct pam_conv conv = { conv_password, &answer };
	pam_handle_t *h = NULL;
	char name[64];
	sigset_t chld;

	gid_t groups[GROUPS_MAX];
	int n_groups = GROUPS_MAX;

	/* nss_wrapper keeps its files open once read: open before the logins count descriptors. */
	if (!getpwnam("alice") || !getgrnam("extra") || !getspnam("carol") ||
	    getgrouplist("alice", 0, groups, &n_groups) < 0)
		bail("the fake accounts cannot be read");
	if (!dlopen(FW.module, RTLD_NOW))
		bail("dlopen %s: %s", FW.module, dlerror());
	snprintf(name, sizeof(name), "%s-after", FW.services);
	if (pam_start(name, "alice", &conv, &h) != PAM_SUCCESS)
		bail("pam_start failed");
	pam_end(h, PAM_SUCCESS);
	/* What a dead login leaves is ours; SIGCHLD is waited for, not handled. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL) != 0)
		bail("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
}

static const struct scenario *scenario_named(const char *name)
{
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (strcmp(scenarios[i].name, name) == 0)
			return &scenarios[i];
	return NULL;
}

/* The placement named NAME, or N_PLACEMENTS for none. */
static int placement_named(const char *name)
{
	for (int p = 0; p < N_PLACEMENTS; p++)
		if (strcmp(name, placement_names[p]) == 0)
			return p;
	return N_PLACEMENTS;
}

/* "role/function:N" into its parts, by the names shim.h gives them; false if it is not one. */
static bool parse_fault(const char *spec, int *role, int *fn, unsigned *n)
{
	char rname[32], fname[64];

	*role = *fn = -1;
	if (sscanf(spec, "%31[^/]/%63[^:]:%u", rname, fname, n) != 3 || *n == 0)
		return false;
	for (int r = 0; r < FAULT_N_ROLES; r++)
		if (strcmp(rname, duress_fault_role_names[r]) == 0)
			*role = r;
	for (int f = 0; f < FAULT_N_FUNCTIONS; f++)
		if (strcmp(fname, duress_fault_function_names[f]) == 0)
			*fn = f;
	return *role >= 0 && *fn >= 0;
}

/*
 * One login with one fault, to look at a failure again (meson test
 * faults-SCENARIO --test-args 'PLACEMENT role/function:N'): the verdict and
 * the module's log lines.
 */
static void run_one(const struct scenario *sc, const char *placement, const char *spec)
{
	int p = placement_named(placement), role, fn;
	struct tally t = { 0 };
	struct result r;
	char v[TEXT_MAX] = "", log[8192];
	unsigned n;
	ssize_t len;
	int fd;

	if (!parse_fault(spec, &role, &fn, &n) || p == N_PLACEMENTS)
		bail("usage: test_faults SCENARIO after|before role/function:N");
	run_login(sc, p, role, fn, n, &r);
	judge(sc, &r, &t, v);
	tap(!v[0], "%s/%s %s: %s, the action %s%s", sc->name, placement, spec,
	    !r.out.returned           ? "no answer" :
	    r.out.code == PAM_SUCCESS ? "logged in" :
					"refused",
	    r.out.evidence ? "ran" : "did not run", r.fired ? "" : " (that call never came)");
	if (v[0])
		tap_detail(v);
	fd = open(FW.log, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, log, sizeof(log) - 1) : -1;
	log[len > 0 ? len : 0] = '\0';
	if (fd >= 0)
		close(fd);
	tap_detail(log);
}

int main(int argc, char **argv)
{
	const struct scenario *sc = argc >= 2 && argc <= 4 ? scenario_named(argv[1]) : NULL;
	int only = argc == 3 ? placement_named(argv[2]) : -1;
	struct totals all = { 0 };
	double start = now();

	if (!sc || only == N_PLACEMENTS)
		bail("usage: test_faults wrong|real|duress-user|duress-global|duress-once|locked "
		     "[after|before [role/function:N]]");
	if (geteuid() != 0) {
		printf("1..0 # SKIP fault injection needs root (identity switches, global actions)\n");
		return 0;
	}
	arm = (duress_fault_arm_fn *)dlsym(RTLD_DEFAULT, "duress_fault_arm");
	if (!arm || !getenv("PAM_WRAPPER"))
		bail("run through meson test: the fault shim and pam_wrapper must be preloaded");
	fault_world_init();
	setenv("PAM_WRAPPER_DEBUGLEVEL", "2", 1);    /* the module's log lines, on stderr */
	setenv("DURESS_FAULT_CHEAP_ARGON2", "1", 1); /* the stand-in's cost (shim.c) */
	map_counts();
	OUT = shared(sizeof(*OUT));
	warm_up();
	if (argc == 4)
		run_one(sc, argv[2], argv[3]);
	for (int p = 0; p < N_PLACEMENTS && argc <= 3; p++)
		if (only < 0 || p == only)
			run_placement(sc, p, &all);
	printf("1..%u\n", tap_count);
	if (argc <= 3)
		printf("# %s: %lu injections in %.1f s: %lu restore exits, %lu logins with no action "
		       "after the runner took over, %lu with no once action (no record), "
		       "%lu failures\n",
		       sc->name, all.injections, now() - start, all.restore_exits, all.silent_after,
		       all.unrecorded, all.failures);
	fault_world_destroy();
	return any_failed ? 1 : 0;
}
