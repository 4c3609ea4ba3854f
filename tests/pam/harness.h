/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PAM-stack test world: a temporary directory with fake accounts
 * (nss_wrapper), service files (pam_wrapper), action directories and a
 * results directory that actions write their evidence into.
 *
 * Everything here drives the REAL libpam (through pam_wrapper), the real
 * pam_unix, the real module and the real `duress sign`.
 */
#pragma once

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sys/types.h>

#include <cmocka.h>

/*
 * Fake accounts.  Each password is the account name with a suffix.  toor is
 * a second uid-0 account (as on the BSDs): the module reads shadow entries
 * with getspnam_r(), which nss_wrapper does not wrap; the harness hides the
 * machine's shadow file as root, but NSS modules such as nss-systemd still
 * answer for "root" (locked, "!*"); toor has no entry anywhere.  sysacct is
 * a system account (uid below UID_MIN) with a password.
 */
enum { ALICE, BOB, CAROL, ROOT, TOOR, SYSACCT, N_USERS };

struct user {
	const char *name;
	const char *real;   /* the real password, checked by pam_unix */
	const char *duress; /* what tests sign this user's actions with */
	uid_t uid;
	gid_t gid;
	const char *shell;
	char home[PATH_MAX];
	char dir[PATH_MAX]; /* home/.duress: the default user_dir */
};

struct world {
	char tmp[PATH_MAX];     /* removed at the end */
	char global[PATH_MAX];  /* global_dir= of every service */
	char state[PATH_MAX];   /* state_dir= of every service: made by the module */
	char results[PATH_MAX]; /* this test's results: a fresh 1777 directory */
	char runs[PATH_MAX];    /* results/runs: one line per action run */
	const char *module;
	const char *cli;
	const char *runner; /* the build tree's runner (session-helper): runner= of every service */
	const char *elf;    /* a compiled action that records how it was run */
	bool root;
	bool valgrind;
	unsigned gen; /* test number: names this test's results directory */
	struct user users[N_USERS];
};

extern struct world W;

/* Shorthand for the accounts. */
#define U(i) (&W.users[(i)])

/* --- the world ---------------------------------------------------------- */

/* Creates the temp dir, accounts and service files; sets the wrappers' env. */
int world_init(void);
void world_destroy(void);
/* cmocka setup for every test: empty action dirs, a new results dir. */
int fresh_test(void **state);
/* For root-only tests: prints a SKIP line and skips unless running as root. */
void require_root(const char *why);
/* Likewise for what valgrind cannot emulate in the forked runner. */
void skip_under_valgrind(const char *why);

/* --- files -------------------------------------------------------------- */

void pathf(char out[PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void make_dir(const char *path, uid_t uid, mode_t mode);
void write_file(const char *path, const void *data, size_t len, uid_t uid, mode_t mode);
/* The whole file, NUL-terminated (free it), or NULL if it does not exist. */
char *read_file(const char *path, size_t *len);
/* A /proc file (its size says 0: read_file() cannot), NUL-terminated, or NULL; free it. */
char *read_proc(const char *path, size_t *len);
void remove_tree(const char *path);
bool file_exists(const char *path);

/* --- actions ------------------------------------------------------------ */

/*
 * Writes dir/name, an sh script (0700, owned by uid) that runs `pre` (shell
 * text, may be "") and then records how it was run into results/name and
 * appends its name to results/runs.  With shebang false it has no #! line.
 */
void action_script(const char *dir, const char *name, uid_t uid, const char *pre, bool shebang);
/* Signs with the real CLI (cheap Argon2id cost); asserts that it worked. */
void action_sign(const char *path, const char *password);
/* The same at the default cost (libsodium INTERACTIVE: 64 MiB, about 60 ms). */
void action_sign_default(const char *path, const char *password);
/* The same with --once: the action runs at its first match only. */
void action_sign_once(const char *path, const char *password);
/* The same, binding a companion file (duress sign --also). */
void action_sign_also(const char *path, const char *password, const char *also);
/*
 * Runs the real CLI (argv[0] is its name) with stdin /dev/null; its stdout
 * and stderr (free them).
 */
char *cli_output(char *const argv[], int *status);
/* action_script + action_sign in dir, owned by uid. */
void action_add(const char *dir, const char *name, uid_t uid, const char *password);
/* Copies the compiled evidence program (W.elf) into dir as an action and signs it. */
void action_elf(const char *dir, const char *name, uid_t uid, const char *password);
/* Path of the evidence an action named `name` leaves in results. */
void evidence_path(char out[PATH_MAX], const char *name);
/* Writes a nuvious-style NAME.sha256 for the action at path. */
void legacy_sign(const char *path, const char *password, uid_t uid);

/* --- authentication ----------------------------------------------------- */

struct auth {
	const char *service;
	const char *user;
	const char *password;
	const char *rhost, *ruser, *tty; /* PAM items, set only when not NULL */
	int prompts;                     /* out: password prompts answered */
	double seconds;                  /* out: time in pam_authenticate */
};

/* pam_start / pam_set_item / pam_authenticate / pam_end; returns the PAM code. */
int auth_run(struct auth *a);
/* auth_run with just service, user, password; fails the test if it hung (hang_ms: 30 s). */
int auth_quick(const char *service, const char *user, const char *password);
/*
 * auth_quick, asserting the result, with the module's pam_syslog() lines
 * captured (pam_wrapper prints them); returns those lines (free them).
 * Not for threads: it redirects stderr.
 */
char *auth_logged(const char *service, const char *user, const char *password, int expected);
/*
 * Runs fn(arg) in a child process (so that its limits, ids or mounts stay
 * there) and returns fn's result, 0-255.  The result comes through a pipe,
 * not the exit status: under valgrind a forked child exits with valgrind's
 * own code.
 */
int in_child(int (*fn)(const void *arg), const void *arg);
/* How many lines of log (auth_logged()'s) hold needle. */
size_t lines_with(const char *log, const char *needle);
double now(void);
void sleep_ms(unsigned ms);
/*
 * A bound against a hang, never a measurement: ms, or valgrind_ms under
 * valgrind, times DURESS_TIMEOUT_FACTOR (a whole number, default 1) on a
 * slow machine.  Each caller's is ten times or more what its wait takes on
 * a machine at load 8: a test asserts orders and counts, not the clock.
 */
unsigned hang_ms(unsigned ms, unsigned valgrind_ms);

/* --- evidence ----------------------------------------------------------- */

/* Polls for a file, up to timeout_ms. */
bool wait_for_file(const char *path, unsigned timeout_ms);
/*
 * Waits until every action started so far has ended (wait_actions), then
 * asserts that results/runs holds exactly the expected lines: NULL-terminated
 * list; in that order if ordered, else as a multiset.  An empty list asserts
 * that nothing ran.
 */
void expect_runs(const char *const *expected, bool ordered);
/* expect_runs' lists: nothing ran; these ran. */
#define NONE ((const char *const[]){ NULL })
#define RUNS(...) ((const char *const[]){ __VA_ARGS__, NULL })
/* Number of lines in results/runs. */
size_t runs_count(void);

/* --- what the module started (reaper.c) ---------------------------------- */

/* Makes the test process a child subreaper: it adopts what the runner leaves. */
int reaper_init(void);
/*
 * Waits (hang_ms: 15 s, 60 s under valgrind) until no process the module
 * started is left, reaping them; past the bound kills them and fails the
 * test naming them.  Returns how many processes it reaped.
 */
size_t wait_actions(void);
/* The same, but never fails: what is left is killed.  Returns how many were. */
size_t end_actions(void);

struct evidence {
	char *text;
	size_t n;
	char **lines;
};

/* Loads key-value evidence ("key value" lines); asserts the file exists. */
void evidence_load(struct evidence *ev, const char *path);
void evidence_free(struct evidence *ev);
/* Value of the first line "key value", or NULL. */
const char *evidence_get(const struct evidence *ev, const char *key);
/*
 * A copy of our environment (free the array only) without the entries that
 * start with drop, and with add (if not NULL) first.
 */
char **env_edited(const char *drop, char *add);

/* Value of environment variable name (from "env NAME=value"), or NULL. */
const char *evidence_env(const struct evidence *ev, const char *name);

/* --- the test groups ---------------------------------------------------- */

struct test_group {
	const char *name;
	const struct CMUnitTest *tests;
	size_t n;
};

extern const struct test_group basic_group, env_group, root_group, hostile_group, runner_group,
	elevation_group, privilege_group, isolation_group, timing_group, chauthtok_group,
	once_group;
