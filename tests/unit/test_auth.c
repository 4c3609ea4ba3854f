/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flows of duress_authenticate() (auth.c), one named test per row: what
 * it answers for each account, password, option and directory state, and
 * exactly which chains and jobs it handed the runner (the stand-in
 * runner's report), an empty manifest for an attempt that derived and
 * matched nothing, or that it started nothing, why a match does not log in
 * (the trace's refusal), and how many Argon2id derivations it paid for
 * (crypto_pwhash is wrapped at link time and counted).  A failed runner is
 * an error for a match, and changes nothing for no match.  Rows that need
 * root (the global directory, other users' rights) print SKIP without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <crypt.h>

#include "auth_world.h"
#include "core/actions.h"
#include "fixture.h"
#include "tests/lib/fds.h"
#include "tests/lib/kdf_cost.h"

enum runner { FAKE, FAILING, MISSING };

struct auth_case {
	const char *name;
	const char *user; /* NULL: ualice */
	const char *password;
	const char *service;
	enum world_change change;
	/* options */
	bool deny, allow_root, no_global, no_user_dir;
	const char *group;
	enum runner runner;
	/* run as ualice (as root: in a child that has dropped to ualice's ids) */
	bool as_user;
	bool needs_root;
	enum duress_outcome outcome;
	enum duress_deny refused; /* why a match does not log in (what `duress test` says) */
	/*
	 * The runner's chain and job lines (EMPTY_MANIFEST: it ran with none);
	 * NULL: it must not have run.
	 */
	const char *chains;
	/*
	 * With count_kdf: the derivations paid for the user's scope and, as
	 * root, for the global one.  The fixture signs at a cost below the
	 * default, so a loaded user directory costs its key and the stand-in.
	 */
	bool count_kdf;
	unsigned kdf_user, kdf_global;
	/*
	 * before: the before-pam_unix placement; unix_hashes: the crypt_r()
	 * calls that pay for pam_unix's hash, all made after the runner started
	 * (where pam_unix hashes after a wrong password) and before it is
	 * released to run the actions.
	 */
	bool before;
	unsigned unix_hashes;
};

/*
 * crypt_r and the runner's start and release are wrapped too (meson.build):
 * when was the hash paid, and how often did the runner start?
 */
char *__real_crypt_r(const char *phrase, const char *setting, struct crypt_data *data);
char *__wrap_crypt_r(const char *phrase, const char *setting, struct crypt_data *data);
int __real_duress_spawn_hold(const char *runner_path, const struct duress_chain *chains,
			     size_t n_chains, unsigned wait_seconds,
			     const struct duress_spawn_io *io, const struct duress_log *lg,
			     struct duress_held *held);
int __wrap_duress_spawn_hold(const char *runner_path, const struct duress_chain *chains,
			     size_t n_chains, unsigned wait_seconds,
			     const struct duress_spawn_io *io, const struct duress_log *lg,
			     struct duress_held *held);
void __real_duress_spawn_release(struct duress_held *held);
void __wrap_duress_spawn_release(struct duress_held *held);

static unsigned hashes, starts, hashes_at_start, hashes_at_release;

/* getpwnam_r is wrapped too: it fails as a backend would for this name. */
#define FAILING_NAME "ev\nil: forged line \x1b[31m"
int __real_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size,
		      struct passwd **ret);
int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size,
		      struct passwd **ret);

int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size,
		      struct passwd **ret)
{
	if (name && strcmp(name, FAILING_NAME) == 0) {
		*ret = NULL;
		return EIO;
	}
	return __real_getpwnam_r(name, pw, buf, size, ret);
}

char *__wrap_crypt_r(const char *phrase, const char *setting, struct crypt_data *data)
{
	hashes++;
	return __real_crypt_r(phrase, setting, data);
}

int __wrap_duress_spawn_hold(const char *runner_path, const struct duress_chain *chains,
			     size_t n_chains, unsigned wait_seconds,
			     const struct duress_spawn_io *io, const struct duress_log *lg,
			     struct duress_held *held)
{
	starts++;
	hashes_at_start = hashes;
	return __real_duress_spawn_hold(runner_path, chains, n_chains, wait_seconds, io, lg, held);
}

void __wrap_duress_spawn_release(struct duress_held *held)
{
	hashes_at_release = hashes;
	__real_duress_spawn_release(held);
}

/*
 * The link-time wrap of libsodium's crypto_pwhash (meson.build): counts the
 * derivations, at the cheapest cost (tests/lib/kdf_cost.h).
 */
static unsigned derivations;

int __wrap_crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
			 unsigned long long passwdlen, const unsigned char *salt,
			 unsigned long long opslimit, size_t memlimit, int alg)
{
	derivations++;
	kdf_cost_cheapest(&opslimit, &memlimit);
	return __real_crypto_pwhash(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
}

#define JOB(fd, name) "job fd=" #fd " elf=0 name=" name " content=#!/bin/sh\\x0a# " name "\\x0a\n"
#define USER_CHAIN "chain uid=@U@ gid=@G@ groups=@G@,20010\n"
#define ROOT_CHAIN "chain uid=0 gid=0 groups=0\n"
/* The runner ran, and was handed no chain: an attempt that derived and matched nothing. */
#define EMPTY_MANIFEST ""

static const struct auth_case cases[] = {
	{ .name = "unknown user: no derivation at all",
	  .user = "nosuchuser",
	  .password = USER_PW,
	  .outcome = DURESS_UNKNOWN_USER,
	  .count_kdf = true },
	{ .name = "wrong password: each scope pays, and the runner starts with nothing to run",
	  .password = WRONG_PW,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST,
	  .count_kdf = true,
	  .kdf_user = 2,
	  .kdf_global = 1 },
	{ .name = "no global directory: no global derivation",
	  .password = GLOBAL_PW,
	  .change = WORLD_NO_GLOBAL_DIR,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST,
	  .count_kdf = true,
	  .kdf_user = 2 },
	{ .name = "a global directory with nothing armed: no global derivation",
	  .password = GLOBAL_PW,
	  .change = WORLD_GLOBAL_DIR_UNARMED,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST,
	  .count_kdf = true,
	  .kdf_user = 2 },
	{ .name = "the only derivation slot taken: no match, nothing derived, nothing ran",
	  .password = USER_PW,
	  .change = WORLD_SLOTS_TAKEN,
	  .outcome = DURESS_NO_MATCH,
	  .count_kdf = true },
	{ .name = "every slot taken: an unknown user is answered at once",
	  .user = "nosuchuser",
	  .password = USER_PW,
	  .change = WORLD_SLOTS_TAKEN,
	  .outcome = DURESS_UNKNOWN_USER },
	{ .name = "the user's duress password",
	  .password = USER_PW,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "the global duress password",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "one password for both: two chains, the user's first",
	  .password = BOTH_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "20-both") ROOT_CHAIN JOB(6, "60-both") },
	{ .name = "before pam_unix: a duress login pays pam_unix's hash, before the actions are released",
	  .password = USER_PW,
	  .before = true,
	  .unix_hashes = 2, /* pam_unix hashes a $6$ twice (kdf.c) */
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "before pam_unix, deny: a refused match leaves the hash to pam_unix",
	  .password = USER_PW,
	  .before = true,
	  .deny = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .refused = DURESS_DENY_OPTION,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "before pam_unix: a wrong password leaves the hash to pam_unix, starts the runner",
	  .password = WRONG_PW,
	  .before = true,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST },
	{ .name = "after pam_unix: it hashed already",
	  .password = USER_PW,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "deny: the actions run, the login fails",
	  .password = USER_PW,
	  .deny = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .refused = DURESS_DENY_OPTION,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "an elevation service: the actions run, sudo fails",
	  .password = USER_PW,
	  .service = "sudo",
	  .outcome = DURESS_MATCH_DENIED,
	  .refused = DURESS_DENY_ELEVATION,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "a locked account: the global actions run, the login fails",
	  .user = "ucarol",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .refused = DURESS_DENY_LOCKED,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "no password (\"*\"): the global actions run, the login fails",
	  .user = "udave",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .refused = DURESS_DENY_LOCKED,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	/*
	 * toor, not root: the host's shadow entry for root is often "*" (locked),
	 * which would refuse it whatever the uid-0 rule says.  toor is not locked
	 * (the next row logs it in), so only that rule refuses it here.
	 */
	{ .name = "uid 0 without allow_root: the global actions run, the login fails",
	  .user = "toor",
	  .password = GLOBAL_PW,
	  .needs_root = true,
	  .outcome = DURESS_MATCH_DENIED,
	  .refused = DURESS_DENY_ROOT,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "uid 0 with allow_root: logs in (toor is not locked)",
	  .user = "toor",
	  .password = GLOBAL_PW,
	  .allow_root = true,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = ROOT_CHAIN JOB(5, "50-global") },
	{ .name = "a runner that fails is an error",
	  .password = USER_PW,
	  .runner = FAILING,
	  .outcome = DURESS_ERROR },
	{ .name = "no runner is an error",
	  .password = USER_PW,
	  .runner = MISSING,
	  .outcome = DURESS_ERROR },
	{ .name = "a wrong password with a runner that fails: still no match",
	  .password = WRONG_PW,
	  .runner = FAILING,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "a wrong password with no runner: still no match",
	  .password = WRONG_PW,
	  .runner = MISSING,
	  .outcome = DURESS_NO_MATCH },
	{ .name = "group=: not a member, no per-user actions (the stand-in still pays)",
	  .password = USER_PW,
	  .group = "uother",
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST,
	  .count_kdf = true,
	  .kdf_user = 1,
	  .kdf_global = 1 },
	{ .name = "group=: a member",
	  .password = USER_PW,
	  .group = "uduressers",
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "10-user") },
	{ .name = "group=: no such group",
	  .password = USER_PW,
	  .group = "nosuchgroup",
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST },
	{ .name = "a group-writable user directory is skipped",
	  .password = USER_PW,
	  .change = WORLD_USER_DIR_WRITABLE,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST },
	{ .name = "an action changed since signing does not run",
	  .password = USER_PW,
	  .change = WORLD_USER_ACTION_CHANGED,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST },
	{ .name = "a global directory not root's is skipped, and costs nothing",
	  .password = GLOBAL_PW,
	  .change = WORLD_GLOBAL_DIR_NOT_ROOTS,
	  .needs_root = true,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST,
	  .count_kdf = true,
	  .kdf_user = 2 },
	{ .name = "global_dir= empty: no global actions",
	  .password = GLOBAL_PW,
	  .no_global = true,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST,
	  .count_kdf = true,
	  .kdf_user = 2 },
	{ .name = "user_dir= empty: only the global chain, and only its derivation",
	  .password = BOTH_PW,
	  .no_user_dir = true,
	  .needs_root = true,
	  .outcome = DURESS_MATCH,
	  .chains = ROOT_CHAIN JOB(5, "60-both"),
	  .count_kdf = true,
	  .kdf_global = 1 },
	{ .name = "not root: the global directory is not checked",
	  .password = GLOBAL_PW,
	  .as_user = true,
	  .outcome = DURESS_NO_MATCH,
	  .chains = EMPTY_MANIFEST },
	{ .name = "not root: the user's own actions still run",
	  .password = BOTH_PW,
	  .as_user = true,
	  .outcome = DURESS_MATCH,
	  .chains = USER_CHAIN JOB(5, "20-both") },
};

static void case_opts(const struct auth_case *c, struct duress_opts *o)
{
	world_opts(o);
	o->deny = c->deny;
	o->allow_root = c->allow_root;
	o->group = c->group;
	if (c->no_global)
		o->global_dir = "";
	if (c->no_user_dir)
		o->user_dir = "";
	if (c->runner == FAILING)
		o->runner = W.false_runner;
	else if (c->runner == MISSING)
		o->runner = "/nonexistent/session-helper";
}

/* As root: authenticates in a child that has become ualice, its report in her home. */
static enum duress_outcome auth_as_user(const struct duress_opts *o, const struct auth_case *c)
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(W.gid, W.gid, W.gid) != 0 ||
		    setresuid(W.uid, W.uid, W.uid) != 0 || chdir(W.home) != 0)
			_exit(100);
		_exit(world_auth(o, "ualice", c->password, c->service));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) < 100);
	return (enum duress_outcome)WEXITSTATUS(status);
}

static const char *outcome_name(enum duress_outcome out)
{
	static const char *const names[] = {
		[DURESS_NO_MATCH] = "no match",
		[DURESS_MATCH] = "match",
		[DURESS_MATCH_DENIED] = "match, denied",
		[DURESS_UNKNOWN_USER] = "unknown user",
		[DURESS_ERROR] = "error",
	};

	return (size_t)out < sizeof(names) / sizeof(names[0]) ? names[out] : "?";
}

/* What the trace of a row's authentication was told: why a match was refused. */
struct refusal {
	int calls;
	enum duress_deny deny;
};

static void on_refusal(const struct duress_trace_report *r, void *data)
{
	struct refusal *seen = data;

	seen->calls++;
	seen->deny = r->deny;
}

/* A match (not in a child, whose trace we cannot see): the trace was told exactly why. */
static void expect_refusal(const struct auth_case *c, const struct refusal *seen)
{
	if (c->as_user || (c->outcome != DURESS_MATCH && c->outcome != DURESS_MATCH_DENIED))
		return;
	if (seen->calls != 1 || seen->deny != c->refused)
		fail_msg("%s: %d trace(s), refused because \"%s\"; expected one, \"%s\"", c->name,
			 seen->calls, duress_deny_words(seen->deny), duress_deny_words(c->refused));
}

static void run_case(void **state)
{
	const struct auth_case *c = *state;
	char got[4096], want[4096];
	struct duress_opts o;
	struct refusal seen = { 0 };
	/* Output and report as without a trace: only the callback is added. */
	const struct duress_trace trace = { .output_fd = -1,
					    .report_fd = -1,
					    .checked = on_refusal,
					    .data = &seen };
	enum duress_outcome out;
	size_t fds = count_open_fds();
	bool ran;

	if (c->needs_root && !W.root) {
		printf("SKIP: needs root\n");
		skip();
	}
	case_opts(c, &o);
	derivations = 0;
	hashes = starts = hashes_at_start = hashes_at_release = 0;
	W.before = c->before;
	W.trace = &trace;
	if (c->as_user && W.root)
		out = auth_as_user(&o, c);
	else
		out = world_auth(&o, c->user ? c->user : "ualice", c->password, c->service);
	if (out != c->outcome)
		fail_msg("%s: answered \"%s\", expected \"%s\"", c->name, outcome_name(out),
			 outcome_name(c->outcome));
	W.before = false;
	W.trace = NULL;
	expect_refusal(c, &seen);
	/* One start, match or not, before any hash; every hash before the release. */
	if (!c->as_user && c->runner == FAKE && starts != (c->chains != NULL))
		fail_msg("%s: the runner was started %u times, expected %u", c->name, starts,
			 c->chains != NULL);
	if (!c->as_user && (hashes != c->unix_hashes ||
			    (c->chains && (hashes_at_start != 0 || hashes_at_release != hashes))))
		fail_msg("%s: %u crypt_r() calls, %u before the runner started, %u before its "
			 "release; expected %u, 0, all",
			 c->name, hashes, hashes_at_start, hashes_at_release, c->unix_hashes);
	if (c->count_kdf && derivations != c->kdf_user + (W.root ? c->kdf_global : 0))
		fail_msg("%s: %u derivations, expected %u", c->name, derivations,
			 c->kdf_user + (W.root ? c->kdf_global : 0));
	ran = world_report(c->as_user && W.root ? W.home : NULL, got, sizeof(got));
	if (!c->chains) {
		if (ran)
			fail_msg("%s: the runner ran:\n%s", c->name, got);
	} else {
		assert_true(ran);
		world_expand(c->chains, want, sizeof(want));
		assert_string_equal(got, want);
	}
	/* Nothing of the authentication stays open. */
	assert_int_equal(count_open_fds(), fds);
}

/* What a trace's callback saw. */
struct seen {
	int calls;
	bool runner_ran; /* by the time of the callback */
	enum duress_outcome outcome;
	enum duress_deny deny;
	const char *states; /* one letter per user action: m(atched) a(rmed) s(kipped) */
	char user_states[16];
	bool global_checked;
};

static void on_checked(const struct duress_trace_report *r, void *data)
{
	struct seen *s = data;
	char report[4096];
	size_t n = 0;

	s->calls++;
	s->runner_ran = world_report(NULL, report, sizeof(report));
	s->outcome = r->outcome;
	s->deny = r->deny;
	for (size_t i = 0; r->user.dir && i < r->user.dir->n_actions && n < 15; i++) {
		const struct duress_action *a = &r->user.dir->actions[i];

		s->user_states[n++] = a->matched ? 'm' : a->skip == DURESS_SKIP_NONE ? 'a' : 's';
	}
	s->user_states[n] = '\0';
	s->global_checked = r->global.dir != NULL;
}

/*
 * duress_authenticate() as duress test calls it: with a trace whose
 * callback fills *seen, and a report pipe whose read end is *report (close
 * it) once the core has returned and our write end is closed.
 */
static enum duress_outcome auth_traced(const struct duress_opts *o, const char *password,
				       struct seen *seen, int *report)
{
	struct duress_trace trace = { .output_fd = -1, .checked = on_checked, .data = seen };
	struct duress_request req = { .user = "ualice",
				      .password = password,
				      .password_len = strlen(password),
				      .items = { .user = "ualice", .service = "login" },
				      .trace = &trace };
	const struct duress_log lg = { 0 };
	enum duress_outcome out;
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	trace.report_fd = p[1];
	out = duress_authenticate(o, &req, &lg);
	close(p[1]);
	*report = p[0];
	return out;
}

/*
 * duress test's trace: the callback comes once, before the runner starts,
 * with the user's actions as verified (10-user, edited, is another
 * password's and so not read: armed; 20-both matched), the outcome and why
 * it is refused; the runner gets the report pipe and writes one record per
 * job.
 */
static void trace_reports_before_start(void **state)
{
	struct seen seen = { 0 };
	struct duress_opts o;
	char got[4096];
	int report;

	(void)state;
	world_opts(&o);
	o.deny = true;
	assert_int_equal(auth_traced(&o, BOTH_PW, &seen, &report), DURESS_MATCH_DENIED);
	close(report);
	assert_int_equal(seen.calls, 1);
	assert_false(seen.runner_ran);
	assert_int_equal(seen.outcome, DURESS_MATCH_DENIED);
	assert_int_equal(seen.deny, DURESS_DENY_OPTION);
	assert_string_equal(seen.user_states, "am");
	assert_int_equal(seen.global_checked, W.root);
	assert_true(world_report(NULL, got, sizeof(got)));
	assert_non_null(strstr(got, "20-both"));
}

/*
 * duress test with a wrong password: the callback comes once, before the
 * runner starts; the runner then gets the report pipe and an empty
 * manifest, and the pipe ends with no record once it is done.
 */
static void trace_without_match(void **state)
{
	struct seen seen = { 0 };
	char got[4096], rec[DURESS_REPORT_MAX];
	struct duress_opts o;
	int report;

	(void)state;
	world_opts(&o);
	o.wait_seconds = 5; /* ignored with a trace: the report is read instead */
	assert_int_equal(auth_traced(&o, WRONG_PW, &seen, &report), DURESS_NO_MATCH);
	assert_int_equal(read(report, rec, sizeof(rec)), 0);
	close(report);
	assert_int_equal(seen.calls, 1);
	assert_false(seen.runner_ran);
	assert_int_equal(seen.outcome, DURESS_NO_MATCH);
	assert_true(world_report(NULL, got, sizeof(got)));
	assert_string_equal(got, EMPTY_MANIFEST);
}

/*
 * A lookup error refuses, derives nothing, and logs the typed name escaped:
 * the name reaches root's log from whoever typed it, a newline or an escape
 * sequence in it must not forge a line or colour a terminal.
 */
static void lookup_error_logs_escaped_name(void **state)
{
	struct duress_request req = { .user = FAILING_NAME,
				      .password = USER_PW,
				      .password_len = strlen(USER_PW),
				      .items = { .user = FAILING_NAME, .service = "login" } };
	const struct duress_log lg = { 0 };
	struct duress_opts o;
	char got[512] = "";
	FILE *err = tmpfile();
	int saved = dup(STDERR_FILENO);
	enum duress_outcome out;
	size_t n;

	(void)state;
	assert_non_null(err);
	assert_true(saved >= 0);
	world_opts(&o);
	derivations = 0;
	fflush(stderr);
	assert_int_equal(dup2(fileno(err), STDERR_FILENO), STDERR_FILENO);
	out = duress_authenticate(&o, &req, &lg);
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	rewind(err);
	n = fread(got, 1, sizeof(got) - 1, err);
	fclose(err);
	got[n] = '\0';
	assert_int_equal(out, DURESS_ERROR);
	assert_int_equal(derivations, 0);
	assert_string_equal(got, "duress: cannot look up user ev\\x0ail: forged line "
				 "\\x1b[31m: Input/output error\n");
}

static int build_changed(void **state)
{
	(void)state;
	world_build(WORLD_USER_ACTION_CHANGED);
	return 0;
}

static int build(void **state)
{
	const struct auth_case *c = *state;

	world_build(c->change);
	return 0;
}

static int build_usual(void **state)
{
	(void)state;
	world_build(WORLD_AS_USUAL);
	return 0;
}

int main(void)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 3];

	FX_ROW_TESTS(tests, cases, run_case, build, world_teardown);
	tests[n] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(
		trace_reports_before_start, build_changed, world_teardown);
	tests[n + 1] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(
		trace_without_match, build_usual, world_teardown);
	tests[n + 2] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(
		lookup_error_logs_escaped_name, build_usual, world_teardown);
	return cmocka_run_group_tests(tests, world_group_setup, world_group_teardown);
}
