/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 2, issue 7 item 1: nothing a user named is opened by root.  A
 * per-user directory, its actions, signatures and companion files are
 * opened with the user's rights, and with O_PATH + fstat() before any open
 * for reading: a root-only file is no oracle, a FIFO writer stays blocked, a
 * device is never opened, and each of them simply disarms the action.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/securebits.h>
#include <security/pam_appl.h>
#include <sodium.h>

#include "core/sig.h"

#define COMPANION_PSEUDO_FS "a companion file (--also) is on a pseudo-filesystem (/proc, /sys...)"
#define COMPANION_UNREADABLE "a companion file (--also) is missing or unreadable"
#define COMPANION_UNSAFE                                                                   \
	"a companion file (--also) is a symlink, not a regular file, has a bad owner, is " \
	"writable by group or others, or is too large"

/* A fresh directory only root can enter, like /root. */
static void root_only_dir(char out[PATH_MAX])
{
	pathf(out, "%s/rootonly", W.tmp);
	remove_tree(out);
	make_dir(out, 0, 0700);
}

/* alice's action `name`, signed by root's CLI with companion bound. */
static void action_with_companion(const char *name, const char *companion, char path[PATH_MAX])
{
	action_script(U(ALICE)->dir, name, U(ALICE)->uid, "", true);
	pathf(path, "%s/%s", U(ALICE)->dir, name);
	action_sign_also(path, U(ALICE)->duress, companion);
}

/* Swaps a signed regular file for a FIFO or device node: the binding stays. */
static void replace_by_node(const char *path, mode_t mode, dev_t dev, uid_t uid)
{
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mknod(path, mode, dev), 0);
	assert_int_equal(chown(path, uid, uid), 0);
	assert_int_equal(chmod(path, mode & 07777), 0);
}

/* An inotify watch for any open of path; an O_PATH open is none. */
static int watch_opens(const char *path)
{
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, path, IN_OPEN) >= 0);
	return in;
}

static bool was_opened(int in)
{
	char buf[4096];

	return read(in, buf, sizeof(buf)) > 0;
}

struct writer {
	pid_t pid;
	int report; /* readable once the writer's open() returned */
};

/* A process blocked in open(O_WRONLY) on a FIFO until someone opens it for reading. */
static struct writer start_writer(const char *fifo)
{
	struct writer w;
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	w.pid = fork();
	assert_true(w.pid >= 0);
	if (w.pid == 0) {
		int fd = open(fifo, O_WRONLY | O_CLOEXEC);

		(void)!write(p[1], fd >= 0 ? "o" : "e", 1);
		_exit(0);
	}
	close(p[1]);
	w.report = p[0];
	return w;
}

/* Asserts the writer is still blocked, then ends it. */
static void expect_still_blocked(struct writer *w)
{
	struct pollfd pfd = { .fd = w->report, .events = POLLIN };

	/* A reader's open wakes the writer at once: a generous bound, not a guess. */
	assert_int_equal(poll(&pfd, 1, 500), 0);
	assert_int_equal(waitpid(w->pid, NULL, WNOHANG), 0);
	kill(w->pid, SIGKILL);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(w->report);
}

/* This thread has root's own rights again: fsuid 0, and the same groups. */
static void expect_own_rights(int n_groups)
{
	assert_int_equal((uid_t)syscall(SYS_setfsuid, (uid_t)-1), 0);
	assert_int_equal((gid_t)syscall(SYS_setfsgid, (gid_t)-1), getegid());
	assert_int_equal(getgroups(0, NULL), n_groups);
}

/* `duress check --user alice`, run by root, says "path: SKIPPED: reason". */
static void check_says(const char *action, const char *reason)
{
	char a0[] = "duress", a1[] = "check", a2[] = "--user", a3[] = "alice",
	     a4[] = "--global-dir", a5[] = "";
	char *const argv[] = { a0, a1, a2, a3, a4, a5, NULL };
	char line[PATH_MAX + 256];
	int status = 0;
	char *out = cli_output(argv, &status);

	assert_non_null(out);
	snprintf(line, sizeof(line), "%s: SKIPPED: %s\n", action, reason);
	if (!strstr(out, line))
		fail_msg("duress check --user alice: no line \"%s\" in:\n%s", action, out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	free(out);
}

/* A root-only file bound by alice is no oracle on its content. */
static void companion_oracle(void **state)
{
	char secret_dir[PATH_MAX], secret[PATH_MAX], action[PATH_MAX];
	static const char guess[] = "the guess is right\n";
	int n_groups = getgroups(0, NULL);

	(void)state;
	require_root("a root-only companion");
	root_only_dir(secret_dir);
	pathf(secret, "%s/secret", secret_dir);
	write_file(secret, guess, sizeof(guess) - 1, 0, 0600);
	/* Root's CLI can read it: the binding has the right content hash. */
	action_with_companion("oracle", secret, action);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	expect_own_rights(n_groups);
	check_says(action, COMPANION_UNREADABLE);
	/* The binding itself is good: where alice may read the file, it fires. */
	assert_int_equal(chmod(secret_dir, 0755), 0);
	assert_int_equal(chmod(secret, 0644), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("oracle"), false);
	expect_own_rights(n_groups);
}

/* A root-owned FIFO in a root-only directory, bound by alice: no login opens it. */
static void companion_fifo(void **state)
{
	char dir[PATH_MAX], fifo[PATH_MAX], action[PATH_MAX];
	struct writer w;
	int in;

	(void)state;
	require_root("a root-only FIFO");
	root_only_dir(dir);
	pathf(fifo, "%s/fifo", dir);
	write_file(fifo, "x", 1, 0, 0600);
	action_with_companion("fifo-bound", fifo, action);
	replace_by_node(fifo, S_IFIFO | 0600, 0, 0);
	in = watch_opens(fifo);
	w = start_writer(fifo);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_still_blocked(&w);
	assert_false(was_opened(in));
	expect_runs(NONE, false);
	close(in);
}

/* alice's own FIFOs in her directory, as a signature and as an action: never opened. */
static void fifo_in_user_dir(void **state)
{
	char sig[PATH_MAX], action[PATH_MAX];
	struct writer w_sig, w_action;
	int in_sig, in_action;

	(void)state;
	require_root("FIFOs owned by another user");
	action_script(U(ALICE)->dir, "piped", U(ALICE)->uid, "", true);
	pathf(sig, "%s/piped.sig", U(ALICE)->dir);
	assert_int_equal(mkfifo(sig, 0600), 0);
	assert_int_equal(chown(sig, U(ALICE)->uid, U(ALICE)->gid), 0);
	pathf(action, "%s/pipe-action", U(ALICE)->dir);
	assert_int_equal(mkfifo(action, 0700), 0);
	assert_int_equal(chown(action, U(ALICE)->uid, U(ALICE)->gid), 0);
	in_sig = watch_opens(sig);
	in_action = watch_opens(action);
	w_sig = start_writer(sig);
	w_action = start_writer(action);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_still_blocked(&w_action);
	expect_still_blocked(&w_sig);
	assert_false(was_opened(in_sig));
	assert_false(was_opened(in_action));
	expect_runs(NONE, false);
	close(in_sig);
	close(in_action);
}

/* A device bound as a companion (here /dev/null's numbers, root's, 0644) disarms, unopened. */
static void companion_device(void **state)
{
	char node[PATH_MAX], action[PATH_MAX];
	int in;

	(void)state;
	require_root("a device node");
	pathf(node, "%s/null", U(ALICE)->home);
	write_file(node, "", 0, 0, 0644);
	action_with_companion("device-bound", node, action);
	replace_by_node(node, S_IFCHR | 0644, makedev(1, 3), 0);
	in = watch_opens(node);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	assert_false(was_opened(in));
	expect_runs(NONE, false);
	check_says(action, COMPANION_UNSAFE);
	assert_false(was_opened(in));
	close(in);
	assert_int_equal(unlink(node), 0);
}

/* Regression: a companion alice owns and can read still binds and fires. */
static void companion_of_the_user(void **state)
{
	char conf[PATH_MAX], action[PATH_MAX];

	(void)state;
	pathf(conf, "%s/alert.conf", U(ALICE)->home);
	write_file(conf, "KEY=1\n", 6, U(ALICE)->uid, 0600);
	action_with_companion("with-conf", conf, action);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("with-conf"), false);
	/* Still bound: a changed companion disarms. */
	write_file(conf, "KEY=2\n", 6, U(ALICE)->uid, 0600);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(RUNS("with-conf"), false);
	assert_int_equal(unlink(conf), 0);
}

/*
 * The rule, for actions too: root's 0700 executable in alice's directory
 * (trusted by owner, as a hard link of a root-only program would be) is
 * read with alice's rights, so it is unreadable and skipped.
 */
static void root_action_unreadable(void **state)
{
	char path[PATH_MAX];

	(void)state;
	require_root("a root-only file in a user's directory");
	action_add(U(ALICE)->dir, "root-only", 0, U(ALICE)->duress);
	pathf(path, "%s/root-only.sig", U(ALICE)->dir);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	pathf(path, "%s/root-only", U(ALICE)->dir);
	check_says(path, "unreadable");
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(auth_quick("after", "alice", U(ALICE)->duress), PAM_SUCCESS);
	expect_runs(RUNS("root-only"), false);
}

/* A per-user directory must be readable by its user: root's 0700 one is skipped. */
static void user_dir_read_as_user(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX];

	(void)state;
	require_root("a root-owned per-user directory");
	pathf(dir, "%s/var/alice", W.tmp);
	make_dir(dir, 0, 0700);
	action_add(dir, "var-root", 0, "alice-var-duress");
	pathf(path, "%s/var-root", dir);
	assert_int_equal(chmod(path, 0755), 0);
	pathf(path, "%s/var-root.sig", dir);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(auth_quick("var-userdir", "alice", "alice-var-duress"), PAM_AUTH_ERR);
	expect_runs(NONE, false);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(auth_quick("var-userdir", "alice", "alice-var-duress"), PAM_SUCCESS);
	expect_runs(RUNS("var-root"), false);
}

/* A root process asleep in the kernel (its wchan names where), until the test's teardown. */
static pid_t sleeper = -1;

static pid_t start_sleeper(void)
{
	sleeper = fork();
	assert_true(sleeper >= 0);
	if (sleeper == 0) {
		pause();
		_exit(0);
	}
	return sleeper;
}

/* Also when the test failed: the harness waits for its children. */
static int end_sleeper(void **state)
{
	(void)state;
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		while (waitpid(sleeper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	sleeper = -1;
	return 0;
}

/* What alice reads at path: a child that becomes her, with no capability left. */
static char *read_as_alice(const char *path)
{
	char *text = calloc(1, 4096);
	int p[2];
	ssize_t n, len = 0;
	pid_t pid;

	assert_non_null(text);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *seen;

		if (setgroups(0, NULL) < 0 ||
		    setresgid(U(ALICE)->gid, U(ALICE)->gid, U(ALICE)->gid) ||
		    setresuid(U(ALICE)->uid, U(ALICE)->uid, U(ALICE)->uid))
			_exit(1);
		seen = read_proc(path, NULL);
		_exit(seen && write(p[1], seen, strlen(seen)) >= 0 ? 0 : 1);
	}
	close(p[1]);
	while ((n = read(p[0], text + len, 4095 - (size_t)len)) > 0)
		len += n;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* What came through the pipe, not the exit status: under valgrind a forked child exits with valgrind's code. */
	assert_true(len > 0);
	return text;
}

/*
 * What alice can compute alone, without the CLI: a signature of her action
 * `name` bound to the companion `also` as if its content were `content`.
 */
static void sign_bound_to(const char *name, const struct duress_params *params, const char *also,
			  const char *content)
{
	unsigned char action_hash[DURESS_HASH_LEN], also_hash[1][DURESS_HASH_LEN];
	unsigned char key[DURESS_KEY_LEN];
	struct duress_sig sig = { .params = *params };
	char path[PATH_MAX], line[DURESS_SIG_MAX];
	size_t len = 0;
	char *text;
	int n;

	pathf(path, "%s/%s", U(ALICE)->dir, name);
	text = read_file(path, &len);
	assert_non_null(text);
	crypto_hash_sha256(action_hash, (const unsigned char *)text, len);
	free(text);
	crypto_hash_sha256(also_hash[0], (const unsigned char *)content, strlen(content));
	assert_int_equal(duress_sig_add_also(&sig, also), 0);
	duress_bound_hash(&sig, action_hash, (const unsigned char(*)[DURESS_HASH_LEN])also_hash,
			  sig.content_hash);
	assert_int_equal(duress_derive_key(U(ALICE)->duress, strlen(U(ALICE)->duress), params, key),
			 0);
	duress_tag(key, &sig, sig.content_hash, sig.tag);
	sodium_memzero(key, sizeof(key));
	n = duress_sig_format(&sig, line, sizeof(line));
	assert_true(n > 0);
	pathf(path, "%s/%s.sig", U(ALICE)->dir, name);
	write_file(path, line, (size_t)n, U(ALICE)->uid, 0600);
}

/*
 * Issue 17 item 6: /proc is no companion.  /proc/PID/wchan of a root process
 * shows root where it sleeps and anyone else "0", when it is read.  alice
 * binds one action to each view; the module read with root's capabilities
 * (the fsuid alone keeps CAP_SYS_PTRACE) and ran the first: a yes/no oracle
 * on what only root may see.  Neither runs now, and check says why.
 */
static void companion_on_proc(void **state)
{
	char wchan[PATH_MAX], action[PATH_MAX];
	struct duress_params params;
	char *root_view, *user_view;
	int r;

	(void)state;
	require_root("a root process's /proc file");
	pathf(wchan, "/proc/%d/wchan", (int)start_sleeper());
	/* "0" until it sleeps in pause(), and always where the kernel hides wchan. */
	for (int i = 0;; i++) {
		sleep_ms(10);
		root_view = read_proc(wchan, NULL);
		assert_non_null(root_view);
		if (strcmp(root_view, "0") != 0 || i == 100)
			break;
		free(root_view);
	}
	user_view = read_as_alice(wchan);
	if (strcmp(root_view, user_view) == 0) {
		free(root_view);
		free(user_view);
		printf("SKIP: companion_on_proc: this kernel shows everyone the same wchan\n");
		skip();
	}
	duress_params_new(&params, crypto_pwhash_MEMLIMIT_MIN, crypto_pwhash_OPSLIMIT_MIN);
	action_script(U(ALICE)->dir, "root-view", U(ALICE)->uid, "", true);
	sign_bound_to("root-view", &params, wchan, root_view);
	action_script(U(ALICE)->dir, "user-view", U(ALICE)->uid, "", true);
	sign_bound_to("user-view", &params, wchan, user_view);
	r = auth_quick("after", "alice", U(ALICE)->duress);
	/* Which one ran, if one did, first: that is the oracle's answer. */
	expect_runs(NONE, false);
	assert_int_equal(r, PAM_AUTH_ERR);
	pathf(action, "%s/root-view", U(ALICE)->dir);
	check_says(action, COMPANION_PSEUDO_FS);
	pathf(action, "%s/user-view", U(ALICE)->dir);
	check_says(action, COMPANION_PSEUDO_FS);
	free(root_view);
	free(user_view);
}

/* The capability sets of the action and of its chain (its parent), as /proc shows them. */
static const char caps_pre[] = "grep '^Cap' /proc/$$/status >\"$R/$N.caps\"\n"
			       "grep '^Cap' /proc/$PPID/status >\"$R/$N.chain-caps\"\n";

/* The set `name` (CapEff...) in a /proc status text; fails the test if it is not there. */
static unsigned long long cap_set(const char *text, const char *name)
{
	char key[16];
	const char *at;
	unsigned long long v = 0;

	snprintf(key, sizeof(key), "%s:", name);
	at = strstr(text, key);
	if (!at || sscanf(at + strlen(key), "%llx", &v) != 1)
		fail_msg("no %s line in:\n%s", name, text);
	return v;
}

/*
 * A caller that keeps its capabilities across a change of uid, as a PAM
 * application may (SECBIT_NO_SETUID_FIXUP), and holds one in its ambient
 * set, which survives an exec: the runner's change to alice then clears
 * nothing by itself.
 */
static int auth_keeping_caps(const void *password)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &h, data) != 0)
		return 2;
	data[0].inheritable |= 1U << CAP_DAC_READ_SEARCH;
	if (syscall(SYS_capset, &h, data) != 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_READ_SEARCH, 0, 0) != 0 ||
	    prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) != 0)
		return 2;
	return auth_quick("after", "alice", password) == PAM_SUCCESS ? 0 : 1;
}

/* Each set of what results/file recorded: none, and the bounding set the caller's. */
static void expect_no_caps(const char *file, unsigned long long bounding)
{
	static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapAmb" };
	char path[PATH_MAX], *text;

	pathf(path, "%s/%s", W.results, file);
	text = read_file(path, NULL);
	assert_non_null(text);
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if (cap_set(text, sets[i]) != 0)
			fail_msg("%s: %s is not empty:\n%s", file, sets[i], text);
	assert_true(cap_set(text, "CapBnd") == bounding);
	free(text);
}

/*
 * Whatever the caller's securebits, a per-user action and its chain run with
 * no capability at all (effective, permitted, inheritable, ambient); the
 * bounding set is the caller's, as any process of the user's gets it.
 */
static void no_caps_whatever_the_securebits(void **state)
{
	char *status = read_proc("/proc/self/status", NULL), path[PATH_MAX];
	unsigned long long bounding;

	(void)state;
	require_root("securebits and capabilities of a root caller");
	assert_non_null(status);
	bounding = cap_set(status, "CapBnd");
	free(status);
	action_script(U(ALICE)->dir, "caps", U(ALICE)->uid, caps_pre, true);
	pathf(path, "%s/caps", U(ALICE)->dir);
	action_sign(path, U(ALICE)->duress);
	assert_int_equal(in_child(auth_keeping_caps, U(ALICE)->duress), 0);
	expect_runs(RUNS("caps"), false);
	expect_no_caps("caps.caps", bounding);
	expect_no_caps("caps.chain-caps", bounding);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(companion_oracle),
	T(companion_fifo),
	T(fifo_in_user_dir),
	T(companion_device),
	T(companion_of_the_user),
	T(root_action_unreadable),
	T(user_dir_read_as_user),
	cmocka_unit_test_setup_teardown(companion_on_proc, fresh_test, end_sleeper),
	T(no_caps_whatever_the_securebits),
};

const struct test_group privilege_group = { "pam_privilege", tests,
					    sizeof(tests) / sizeof(tests[0]) };
