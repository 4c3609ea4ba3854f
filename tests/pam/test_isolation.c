/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 5, issue 7 item 3 and 4: nothing of the login program reaches the
 * actions.  The runner is its own program (its name in ps, no copy of the
 * password in its memory), the unprivileged user who typed the password into
 * a setuid program cannot signal it, actions get a new session keyring and
 * the system's limits and nice value, and a stopped per-user action does not
 * hold back the global ones.  Issue 17 item 7: no name the user can read in
 * /proc for any of these processes carries the project's name.
 *
 * The process tree while an action runs: the runner (its first process
 * exited at once), one chain process per chain, and the action:
 *   session-helper ─┬─ session-helper (per-user chain) ── action
 *                   └─ session-helper (global chain) ── action
 * Actions here write their pid and wait for a release file, so that the
 * tree can be looked at: the chain is the action's parent, the runner the
 * chain's.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/keyctl.h>
#include <security/pam_appl.h>

/*
 * The action's pid in results/NAME.pid, then it waits until results/release
 * exists: each test releases it, and so does its teardown, passed or failed.
 * The 600 s are only against a test process killed before either.
 */
static const char hold_pre[] =
	"echo $$ >\"$R/.$N.pid\" && mv \"$R/.$N.pid\" \"$R/$N.pid\"\n"
	"n=0; while [ ! -e \"$R/release\" ] && [ $n -lt 6000 ]; do sleep 0.1; n=$((n + 1)); done\n";

/* How long the test waits for what an action shows: only a hang gets there. */
static unsigned action_bound_ms(void)
{
	return hang_ms(60000, 240000);
}

static void script_action(const char *dir, const char *name, uid_t uid, const char *pre,
			  const char *password)
{
	char path[PATH_MAX];

	action_script(dir, name, uid, pre, true);
	pathf(path, "%s/%s", dir, name);
	action_sign(path, password);
}

/* Waits (bounded) for results/NAME.pid; returns the pid, or -1. */
static pid_t action_pid(const char *name)
{
	char path[PATH_MAX], *text;
	long pid;

	pathf(path, "%s/%s.pid", W.results, name);
	if (!wait_for_file(path, action_bound_ms()))
		return -1;
	text = read_file(path, NULL);
	pid = text ? strtol(text, NULL, 10) : -1;
	free(text);
	return pid > 0 ? (pid_t)pid : -1;
}

/* The parent of pid from /proc/PID/stat (after the name, which may hold anything). */
static pid_t parent_of(pid_t pid)
{
	char path[64], *text, *p;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = read_proc(path, NULL);
	p = text ? strrchr(text, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	free(text);
	return (pid_t)ppid;
}

/* The state letter of pid (R, S, T…), or '?'. */
static char state_of(pid_t pid)
{
	char path[64], *text, *p, state = '?';

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = read_proc(path, NULL);
	p = text ? strrchr(text, ')') : NULL;
	if (p && p[1] == ' ' && p[2])
		state = p[2];
	free(text);
	return state;
}

/* Waits (bounded) until pid is stopped. */
static bool wait_stopped(pid_t pid)
{
	for (unsigned waited = 0; waited < action_bound_ms(); waited += 20, sleep_ms(20))
		if (state_of(pid) == 'T')
			return true;
	return false;
}

struct tree {
	pid_t action, chain, runner;
};

static void find_tree(const char *name, struct tree *t)
{
	t->action = action_pid(name);
	assert_true(t->action > 0);
	t->chain = parent_of(t->action);
	t->runner = t->chain > 0 ? parent_of(t->chain) : -1;
	assert_true(t->chain > 1 && t->runner > 0);
}

/* Lets every held action finish and waits for their evidence. */
static void release(const char *const *names)
{
	char path[PATH_MAX];

	pathf(path, "%s/release", W.results);
	write_file(path, "", 0, 0, 0644);
	expect_runs(names, false);
}

/* ps: the runner is its own program, not a copy of the login program. */
static void runner_has_its_own_name(void **state)
{
	static const char want[] = "session-helper";
	struct tree t;
	char path[64], *cmdline;
	size_t len = 0;

	(void)state;
	script_action(U(ALICE)->dir, "held", U(ALICE)->uid, hold_pre, U(ALICE)->duress);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	find_tree("held", &t);
	for (const pid_t *p = (const pid_t[]){ t.runner, t.chain, 0 }; *p; p++) {
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)*p);
		cmdline = read_proc(path, &len);
		assert_non_null(cmdline);
		assert_int_equal(len, sizeof(want));
		assert_memory_equal(cmdline, want, sizeof(want));
		free(cmdline);
	}
	release(RUNS("held"));
}

static long session_keyring(void)
{
	return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}

/* The login program's session keyring does not reach an action: it gets its own. */
static void new_session_keyring(void **state)
{
	struct evidence ev;
	char path[PATH_MAX], ours[32];
	const char *theirs;

	(void)state;
	skip_under_valgrind("fexecve() of an ELF memfd");
	assert_true(session_keyring() > 0);
	snprintf(ours, sizeof(ours), "%ld", session_keyring());
	action_elf(U(ALICE)->dir, "keys", U(ALICE)->uid, U(ALICE)->duress);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("keys"), false);
	evidence_path(path, "keys");
	evidence_load(&ev, path);
	theirs = evidence_get(&ev, "keyring");
	assert_non_null(theirs);
	assert_true(strtol(theirs, NULL, 10) > 0);
	assert_string_not_equal(theirs, ours);
	evidence_free(&ev);
}

/* Records the action's file size limit and nice value, as /proc shows them. */
static const char limits_pre[] =
	"grep '^Max file size' /proc/$$/limits >\"$R/$N.limits\"\n"
	"cut -d ')' -f 2 /proc/$$/stat | cut -d ' ' -f 18 >\"$R/$N.nice\"\n";

/* Whether we may raise a hard limit (a container may lack it). */
static bool have_sys_resource(void)
{
	char *status = read_proc("/proc/self/status", NULL), *eff = strstr(status, "CapEff:");
	bool have = eff && (strtoull(eff + 7, NULL, 16) >> 24 & 1); /* CAP_SYS_RESOURCE */

	free(status);
	return have;
}

static int auth_with_low_limits(const void *password)
{
	struct rlimit fsize;

	/*
	 * As `prlimit --fsize=20000 nice -n 15 su …` would; only the soft limit
	 * when nobody here could raise the hard one again.
	 */
	if (getrlimit(RLIMIT_FSIZE, &fsize) != 0)
		return 2;
	fsize.rlim_cur = 20000;
	if (have_sys_resource())
		fsize.rlim_max = 20000;
	if (setrlimit(RLIMIT_FSIZE, &fsize) != 0 || setpriority(PRIO_PROCESS, 0, 15) != 0)
		return 2;
	return auth_quick("after", "alice", password) == PAM_SUCCESS ? 0 : 1;
}

static void expect_recorded(const char *what, const char *init_text)
{
	char path[PATH_MAX], *text;

	pathf(path, "%s/g.%s", W.results, what);
	text = read_file(path, NULL);
	assert_non_null(text);
	assert_string_equal(text, init_text);
	free(text);
}

/*
 * Root's actions get the system's limits (PID 1's) and the default nice
 * value, 0 (PID 1 itself may run at another), not the caller's.
 */
static void limits_and_nice_reset(void **state)
{
	const char *pw = "global-duress";
	char *limits, *init, *end;

	(void)state;
	require_root("global actions run only as root");
	script_action(W.global, "g", 0, limits_pre, pw);
	assert_int_equal(in_child(auth_with_low_limits, pw), 0);
	expect_runs(RUNS("g"), false);
	init = read_proc("/proc/1/limits", NULL);
	assert_non_null(init);
	limits = strstr(init, "Max file size");
	assert_non_null(limits);
	end = strchr(limits, '\n');
	assert_non_null(end);
	end[1] = '\0';
	expect_recorded("limits", limits);
	free(init);
	expect_recorded("nice", "0\n");
}

/* A per-user action that stops itself; root's action does not wait for it. */
static void stopped_user_action(void **state)
{
	const char *pw = "both-duress";
	char path[PATH_MAX];
	bool was_stopped, global_ran, still_stopped;
	pid_t stopped;

	(void)state;
	require_root("global actions run only as root");
	script_action(U(ALICE)->dir, "10-stop", U(ALICE)->uid,
		      "echo $$ >\"$R/.stop.pid\" && mv \"$R/.stop.pid\" \"$R/stop.pid\"\n"
		      "kill -STOP $$\n",
		      pw);
	action_add(W.global, "20-global", 0, pw);
	assert_int_equal(auth_quick("after", "alice", pw), PAM_SUCCESS);
	stopped = action_pid("stop");
	was_stopped = stopped > 0 && wait_stopped(stopped);
	evidence_path(path, "20-global");
	global_ran = wait_for_file(path, action_bound_ms());
	still_stopped = stopped > 0 && state_of(stopped) == 'T';
	/* Clean up first (once it has stopped): a failed assertion must not leave it stopped. */
	if (stopped > 0)
		kill(stopped, SIGCONT);
	assert_true(was_stopped);
	assert_true(global_ran);
	assert_true(still_stopped);
	expect_runs(RUNS("10-stop", "20-global"), false);
}

/* Copies of needle in buf[0..n) that start before offset `starts`. */
static long copies_in(const char *buf, size_t n, size_t starts, const char *needle, size_t len)
{
	long count = 0;

	for (const char *p = buf;
	     (p = memmem(p, n - (size_t)(p - buf), needle, len)) && (size_t)(p - buf) < starts; p++)
		count++;
	return count;
}

/*
 * Copies of needle in the readable memory of pid (its mappings, through
 * /proc/PID/mem), or -1 if none of it could be read.  Each read reaches
 * len - 1 bytes into the next chunk: a copy across a boundary counts once.
 * Mappings past MAPPING_MAX are reserved, not used: ASan's shadow memory
 * (the asan build's runner has it) would take hours to read.
 */
#define MAPPING_MAX (1UL << 30)

static long copies_in_memory(pid_t pid, const char *needle)
{
	const size_t len = strlen(needle), chunk = 1 << 20;
	char path[64], line[512], *buf = malloc(chunk + len);
	long count = 0, chunks_read = 0;
	FILE *maps;
	int mem;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	assert_non_null(buf);
	while (maps && mem >= 0 && fgets(line, sizeof(line), maps)) {
		unsigned long start, end;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3 || perms[0] != 'r' ||
		    end - start > MAPPING_MAX)
			continue;
		for (unsigned long at = start; at < end; at += chunk) {
			size_t want = end - at < chunk + len - 1 ? end - at : chunk + len - 1;
			ssize_t n = pread(mem, buf, want, (off_t)at);

			if (n > 0)
				count += copies_in(buf, (size_t)n, chunk, needle, len);
			chunks_read += n > 0;
		}
	}
	if (maps)
		fclose(maps);
	if (mem >= 0)
		close(mem);
	free(buf);
	return chunks_read ? count : -1;
}

/*
 * A shell that has read the password from a pipe (it says so) and waits
 * for a second line, as a login program holds what it read: the scanner's
 * control.  Closing *feed ends it.
 */
static pid_t start_control(const char *password, int *feed)
{
	char sh[] = "/bin/sh", c[] = "-c", script[] = "read -r pw && echo && read -r more";
	char *const argv[] = { sh, c, script, NULL };
	char *const envp[] = { NULL };
	int in[2], out[2];
	char ready;
	pid_t pid;

	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(in[0], 0) == 0 && dup2(out[1], 1) == 1)
			execve(sh, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	assert_int_equal(write(in[1], password, strlen(password)), (ssize_t)strlen(password));
	assert_int_equal(write(in[1], "\n", 1), 1);
	assert_int_equal(read(out[0], &ready, 1), 1);
	close(out[0]);
	*feed = in[1];
	return pid;
}

/* The runner holds no copy of the login program's memory, hence of the password. */
static void no_password_in_memory(void **state)
{
	const char *pw = U(ALICE)->duress;
	struct tree t;
	long in_control;
	int feed;
	pid_t control;

	(void)state;
	require_root("reading other processes' memory");
	script_action(U(ALICE)->dir, "held", U(ALICE)->uid, hold_pre, pw);
	assert_int_equal(auth_quick("after", "alice", pw), PAM_SUCCESS);
	find_tree("held", &t);
	/* The scanner finds the password where it is: in a process that holds it. */
	control = start_control(pw, &feed);
	in_control = copies_in_memory(control, pw);
	close(feed);
	waitpid(control, NULL, 0);
	assert_true(in_control >= 1);
	assert_int_equal(copies_in_memory(t.action, pw), 0);
	assert_int_equal(copies_in_memory(t.chain, pw), 0);
	assert_int_equal(copies_in_memory(t.runner, pw), 0);
	release(RUNS("held"));
}

/* Authenticates as su does: the real uid is the user who typed, the effective uid root. */
static int auth_as_setuid_program(const void *password)
{
	if (setresuid(U(ALICE)->uid, 0, 0) != 0)
		return 2;
	return auth_quick("after", "bob", password) == PAM_SUCCESS ? 0 : 1;
}

/* Whether alice gets EPERM for signal 0 to each of the pids (0-terminated). */
static int alice_cannot_signal(const void *pids)
{
	if (setgroups(0, NULL) != 0 ||
	    setresgid(U(ALICE)->gid, U(ALICE)->gid, U(ALICE)->gid) != 0 ||
	    setresuid(U(ALICE)->uid, U(ALICE)->uid, U(ALICE)->uid) != 0)
		return 2;
	for (const pid_t *p = pids; *p; p++)
		if (kill(*p, 0) == 0 || errno != EPERM)
			return 1;
	return 0;
}

/*
 * The user who typed the password into a setuid program cannot signal the
 * runner or root's actions.
 */
static void runner_not_signalled_by_caller(void **state)
{
	const char *pw = "global-duress";
	struct tree t;

	(void)state;
	require_root("a setuid-like caller");
	script_action(W.global, "held", 0, hold_pre, pw);
	assert_int_equal(in_child(auth_as_setuid_program, pw), 0);
	find_tree("held", &t);
	assert_int_equal(in_child(alice_cannot_signal,
				  (const pid_t[]){ t.runner, t.chain, t.action, 0 }),
			 0);
	release(RUNS("held"));
}

/*
 * runner= names the program; if it cannot start, the login fails closed and
 * nothing runs.  A wrong password starts it too (with nothing to run): the
 * same line, and still a refusal, never a success.
 */
static void missing_runner_fails_closed(void **state)
{
	char *log;

	(void)state;
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	log = auth_logged("no-runner", "alice", U(ALICE)->duress, PAM_AUTH_ERR);
	assert_non_null(strstr(log, "no-such-runner failed to start"));
	free(log);
	log = auth_logged("no-runner", "alice", "wrong", PAM_AUTH_ERR);
	assert_non_null(strstr(log, "no-such-runner failed to start"));
	free(log);
	expect_runs(NONE, false);
	assert_int_equal(auth_quick("no-runner", "alice", U(ALICE)->real), PAM_SUCCESS);
}

/*
 * Every process of the runner's session (it calls setsid: the runner, its
 * chains, the syslog forwarder with debug, the actions), as this user sees
 * it in /proc: one "pid" line and then what it could read; then the keys
 * this user may see (the action's new session keyring among them).  Waits
 * for the held global action first, so that root's chain is in the listing.
 */
static const char look_pre[] =
	"n=0; while [ ! -e \"$R/g.pid\" ] && [ $n -lt 6000 ]; do sleep 0.1; n=$((n + 1)); done\n"
	"sid=$(cut -d ')' -f 2 /proc/$$/stat | cut -d ' ' -f 5)\n"
	"for d in /proc/[0-9]*; do\n"
	"  s=$(cut -d ')' -f 2 \"$d/stat\" 2>/dev/null | cut -d ' ' -f 5)\n"
	"  [ \"$s\" = \"$sid\" ] || continue\n"
	"  echo \"pid ${d#/proc/}\"; echo \"comm $(cat \"$d/comm\")\"\n"
	"  echo \"cmdline $(tr '\\0' ' ' <\"$d/cmdline\")\"\n"
	"  echo \"exe $(readlink \"$d/exe\")\"; grep -h '^Name' \"$d/status\"\n"
	"  for f in \"$d\"/fd/*; do echo \"fd $(readlink \"$f\")\"; done\n"
	"  awk '$6 != \"\" { print \"map \" $6 }' \"$d/maps\" | uniq\n"
	"  tr '\\0' '\\n' <\"$d/environ\" | sed 's/^/env /'\n"
	"done >\"$R/.$N.proc\" 2>/dev/null\n"
	"sed 's/^/key /' /proc/keys >>\"$R/.$N.proc\" 2>/dev/null\n"
	"mv \"$R/.$N.proc\" \"$R/$N.proc\"\n";

/*
 * Prints and counts in *bad the lines of results/name that carry the
 * project's name, once the test world's own directory (the test named it,
 * not the module) is taken out; returns how many lines start with `count`.
 */
static size_t names_in(const char *name, const char *count, size_t *bad)
{
	char path[PATH_MAX], *text, *line, *next;
	const size_t tmp_len = strlen(W.tmp);
	size_t counted = 0;

	pathf(path, "%s/%s", W.results, name);
	text = read_file(path, NULL);
	assert_non_null(text);
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		for (char *t; (t = strstr(line, W.tmp));)
			memmove(t, t + tmp_len, strlen(t + tmp_len) + 1);
		if (strcasestr(line, "duress") && ++*bad)
			printf("# %s: a name carries the project's: \"%s\"\n", name, line);
		counted += strncmp(line, count, strlen(count)) == 0;
	}
	free(text);
	return counted;
}

/*
 * Issue 17 item 7: no name a user can read in /proc carries the project's
 * name.  A duress login with debug (so that the actions' output has its
 * syslog helper) starts a per-user ELF action, which records its own exe,
 * comm, maps and descriptors, then a per-user script that lists, as the
 * user, every process of the runner's session while root's chain holds a
 * global action: the runner, both chains, the helper, root's action.
 */
static void proc_names_are_neutral(void **state)
{
	const char *pw = "both-duress";
	char path[PATH_MAX];
	size_t bad = 0;

	(void)state;
	require_root("global actions run only as root");
	skip_under_valgrind("fexecve() of an ELF memfd");
	action_elf(U(ALICE)->dir, "10-elf", U(ALICE)->uid, pw);
	script_action(U(ALICE)->dir, "20-look", U(ALICE)->uid, look_pre, pw);
	script_action(W.global, "g", 0, hold_pre, pw);
	assert_int_equal(auth_quick("debug", "alice", pw), PAM_SUCCESS);
	pathf(path, "%s/20-look.proc", W.results);
	assert_true(wait_for_file(path, action_bound_ms()));
	release(RUNS("10-elf", "20-look", "g"));
	assert_int_equal(names_in("10-elf", "exe /memfd:", &bad), 1);
	names_in("20-look", "", &bad);
	/* The runner, two chains, root's action and this script at least. */
	assert_true(names_in("20-look.proc", "pid ", &bad) >= 5);
	assert_int_equal(bad, 0);
	/* The script's own descriptor 3 was read: the listing is not empty of links. */
	assert_true(names_in("20-look.proc", "fd /memfd:", &bad) >= 1);
}

/* After each test, passed or failed: no held action waits out its bound. */
static int release_held(void **state)
{
	char path[PATH_MAX];

	(void)state;
	pathf(path, "%s/release", W.results);
	write_file(path, "", 0, 0, 0644);
	return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, fresh_test, release_held)

static const struct CMUnitTest tests[] = {
	T(runner_has_its_own_name),     T(new_session_keyring),
	T(limits_and_nice_reset),       T(stopped_user_action),
	T(no_password_in_memory),       T(runner_not_signalled_by_caller),
	T(missing_runner_fails_closed), T(proc_names_are_neutral),
};

const struct test_group isolation_group = { "pam_isolation", tests,
					    sizeof(tests) / sizeof(tests[0]) };
