/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lanes of the derivation cap (slots.c), through duress_authenticate()
 * in the world of auth_world.h: who can hold which slot, and what is left to
 * another user's duress login (issue 24, items 4, 5, 7 and 13).
 *
 * An attacker's callers are child processes that stop themselves at their
 * first derivation, their slot held, as a user stops a setuid su with
 * SIGSTOP (crypto_pwhash is wrapped at link time): whether a caller got that
 * far (stopped) or waited and was answered (ended) is a count, not a time.
 * Rows whose callers are root callers (PAM_RHOST or none) need root, as do
 * real uids of other users: without root they print SKIP.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth_world.h"
#include "fixture.h"
#include "tests/lib/kdf_cost.h"

/* Sources in different buckets of slots.c's hash (a row fails if two collide). */
#define SRC1 "192.0.2.10"
#define SRC2 "198.51.100.20"
#define SRC3 "203.0.113.30"
#define SRC4 "192.0.2.40"
#define SRC5 "192.0.2.60"
/* Another address in SRC1's bucket: two sources that hash alike. */
#define SRC1_TWIN "198.51.100.50"

/* Real uids of ordinary users that run a setuid su (no account needed). */
#define USER_RUID 30001U

/* --- the wraps -------------------------------------------------------------------- */

int __real_flock(int fd, int op);
int __wrap_flock(int fd, int op);

/* A caller that stops itself at its first derivation, holding its slot. */
static bool stop_in_derivation;
static unsigned derivations;
/* The locks this process held at its first derivation (/proc/locks): FLOCK WRITE ones, others. */
static unsigned flocks_held, other_locks_held;

/* The back-off row: after this many looks at a taken slot, its holder is told to let go. */
static unsigned release_at_look, looks;
static int release_fd = -1, released_fd = -1;

static void count_own_locks(void)
{
	char line[256], pid[16];
	FILE *f = fopen("/proc/locks", "re");

	flocks_held = other_locks_held = 0;
	assert_non_null(f);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	while (fgets(line, sizeof(line), f)) {
		char kind[16], mode[16], access[16], owner[16];

		/* "1: FLOCK  ADVISORY  WRITE 1234 00:2b:5678 0 EOF"; "->" lines wait for one */
		if (sscanf(line, "%*s %15s %15s %15s %15s", kind, mode, access, owner) != 4 ||
		    strcmp(owner, pid) != 0)
			continue;
		if (strcmp(kind, "FLOCK") == 0 && strcmp(access, "WRITE") == 0)
			flocks_held++;
		else
			other_locks_held++;
	}
	fclose(f);
}

/* Counts, stops on demand; the cheapest cost (tests/lib/kdf_cost.h). */
int __wrap_crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
			 unsigned long long passwdlen, const unsigned char *salt,
			 unsigned long long opslimit, size_t memlimit, int alg)
{
	if (derivations++ == 0)
		count_own_locks();
	if (stop_in_derivation)
		raise(SIGSTOP);
	kdf_cost_cheapest(&opslimit, &memlimit);
	return __real_crypto_pwhash(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
}

int __wrap_flock(int fd, int op)
{
	int r = __real_flock(fd, op);
	int saved = errno;
	char c = 'x';

	if (r < 0 && errno == EWOULDBLOCK && release_at_look && ++looks == release_at_look) {
		assert_int_equal(write(release_fd, &c, 1), 1);
		assert_int_equal(read(released_fd, &c, 1), 1);
	}
	errno = saved;
	return r;
}

/* --- callers ------------------------------------------------------------------------ */

/* The attacker's processes of the running test; the teardown kills what is left. */
static pid_t callers[16];
static size_t n_callers;
/* Log debug lines too: a process that is not root logs its refusals only with debug. */
static bool log_debug;

static enum duress_outcome auth_from(const struct duress_opts *o, const char *user,
				     const char *password, const char *rhost, bool before)
{
	const struct duress_request req = {
		.user = user,
		.password = password,
		.password_len = strlen(password),
		.items = { .user = user, .service = rhost ? "sshd" : "login", .rhost = rhost },
		.unix_follows = before,
	};
	const struct duress_log lg = { .debug = log_debug };

	derivations = 0;
	return duress_authenticate(o, &req, &lg);
}

struct caller {
	uid_t ruid; /* 0: a root caller; else setresuid(ruid, 0, 0), as a setuid su runs */
	const char *rhost;
	const char *user, *password;
};

/* Starts a caller that stops itself at its first derivation. */
static pid_t start_caller(const struct duress_opts *o, const struct caller *c)
{
	pid_t pid;

	assert_true(n_callers < sizeof(callers) / sizeof(callers[0]));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (c->ruid != 0 && setresuid(c->ruid, 0, 0) != 0)
			_exit(100);
		stop_in_derivation = true;
		_exit(auth_from(o, c->user ? c->user : "root", c->password ? c->password : WRONG_PW,
				c->rhost, false));
	}
	callers[n_callers++] = pid;
	return pid;
}

/* Whether the caller stopped in a derivation (true) or was answered without one (false). */
static bool stopped(pid_t pid)
{
	int st;

	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	if (WIFSTOPPED(st))
		return true;
	assert_true(WIFEXITED(st));
	/* Never a derivation, so never a match: it waited, and was answered as a wrong password. */
	assert_int_equal(WEXITSTATUS(st), DURESS_NO_MATCH);
	for (size_t i = 0; i < n_callers; i++)
		if (callers[i] == pid)
			callers[i] = 0;
	return false;
}

/* Starts n callers at once; how many of them stopped in a derivation. */
static unsigned start_callers(const struct duress_opts *o, const struct caller *c, unsigned n)
{
	pid_t pids[16];
	unsigned k = 0;

	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		pids[i] = start_caller(o, c);
	for (unsigned i = 0; i < n; i++)
		k += stopped(pids[i]);
	return k;
}

static void end_callers(void)
{
	for (size_t i = 0; i < n_callers; i++) {
		if (callers[i] <= 0)
			continue;
		kill(callers[i], SIGKILL);
		(void)waitpid(callers[i], NULL, 0);
	}
	n_callers = 0;
}

/* --- the world ---------------------------------------------------------------------- */

static char real_slots[PATH_MAX + 16], held_file[PATH_MAX + 16];

static int build(void **state)
{
	(void)state;
	world_build(WORLD_AS_USUAL);
	snprintf(real_slots, sizeof(real_slots), "%s/slots-real", W.tmp);
	snprintf(held_file, sizeof(held_file), "%s/held", W.tmp);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	end_callers();
	stop_in_derivation = false;
	release_at_look = looks = 0;
	fx_remove_tree(real_slots);
	(void)unlink(held_file);
	return world_teardown(state);
}

static void require_root(void)
{
	if (!W.root) {
		printf("SKIP: needs root (root callers, other users' real uids)\n");
		skip();
	}
}

/* The usual world's options with n machine-wide slots, a one-second wait. */
static void lane_opts(struct duress_opts *o, unsigned n)
{
	world_opts(o);
	o->max_derivations = n;
	o->max_wait = 1;
}

/* Whether slot_dir=/name is locked by someone (a look with a lock of our own, given back). */
static bool held(const char *name)
{
	char path[PATH_MAX + 32];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", W.slots, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false; /* never made: nobody holds it */
	r = __real_flock(fd, LOCK_EX | LOCK_NB);
	close(fd);
	return r != 0;
}

/* ualice's own duress password from rhost (NULL: at the console): a match, her action started. */
static void expect_match(const struct duress_opts *o, const char *rhost)
{
	char got[4096], chain[256];

	if (auth_from(o, "ualice", USER_PW, rhost, false) != DURESS_MATCH)
		fail_msg("ualice's duress login from %s was not answered as a match",
			 rhost ? rhost : "the console");
	assert_true(world_report(NULL, got, sizeof(got)));
	world_expand("chain uid=@U@ ", chain, sizeof(chain));
	assert_non_null(strstr(got, chain));
	assert_non_null(strstr(got, "name=10-user"));
}

/* The same login answered as a wrong password: it never derived, nothing started. */
static void expect_no_match(const struct duress_opts *o, const char *rhost)
{
	char got[4096];

	if (auth_from(o, "ualice", USER_PW, rhost, false) != DURESS_NO_MATCH)
		fail_msg("ualice's duress login from %s got a slot", rhost ? rhost : "the console");
	assert_int_equal(derivations, 0);
	assert_false(world_report(NULL, got, sizeof(got)));
}

/* --- item 4: nobody holds the machine's slots by stopping a setuid program ------------------ */

/*
 * Four su-like callers (other users' real uids, euid 0) stopped in the
 * middle of a derivation hold their own lanes only: every machine-wide slot
 * stays free, and another user's duress login (a root caller) matches.
 */
static void stopped_su_holds_only_its_lane(void **state)
{
	struct duress_opts o;
	char name[32];

	(void)state;
	require_root();
	lane_opts(&o, 4);
	for (unsigned i = 0; i < 4; i++) {
		const struct caller su = { .ruid = USER_RUID + i };

		assert_true(stopped(start_caller(&o, &su)));
	}
	expect_match(&o, NULL);
	expect_match(&o, SRC1);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "uid.%u", USER_RUID + i);
		assert_true(held(name));
		snprintf(name, sizeof(name), "slot.%u", i);
		assert_false(held(name));
	}
}

/*
 * The same user's second su, while the first is stopped mid-derivation,
 * waits on that user's lane: answered as a wrong password (even with a
 * duress password of ualice's), no derivation; root's callers still match.
 */
static void stopped_su_blocks_its_own_user(void **state)
{
	const struct caller su = { .ruid = USER_RUID };
	const struct caller again = { .ruid = USER_RUID, .user = "ualice", .password = USER_PW };
	struct duress_opts o;

	(void)state;
	require_root();
	lane_opts(&o, 4);
	assert_true(stopped(start_caller(&o, &su)));
	assert_false(stopped(start_caller(&o, &again)));
	expect_match(&o, NULL);
}

/* --- item 5: a spray holds its source's share; the console keeps a slot ------------------ */

/*
 * Eight concurrent attempts from one source hold one slot (the share of
 * one source with 4 slots: half of the 3 open to the network); the source's
 * own next login waits behind them, another source's matches, and so does
 * a local one.
 */
static void one_source_holds_its_share(void **state)
{
	const struct caller spray = { .rhost = SRC1 };
	struct duress_opts o;

	(void)state;
	require_root();
	lane_opts(&o, 4);
	assert_int_equal(start_callers(&o, &spray, 8), 1);
	expect_no_match(&o, SRC1);
	expect_match(&o, SRC2);
	expect_match(&o, NULL);
}

/* With 8 slots a source's share is 3 (half of the 7 open to the network). */
static void the_share_grows_with_the_cap(void **state)
{
	const struct caller spray = { .rhost = SRC1 };
	struct duress_opts o;

	(void)state;
	require_root();
	lane_opts(&o, 8);
	assert_int_equal(start_callers(&o, &spray, 8), 3);
	expect_match(&o, SRC2);
}

/*
 * One stopped attempt from each of four sources (a botnet): three hold the
 * three slots open to the network, the fourth waits and is answered as a
 * wrong password; a fifth source's login too.  The last slot stays for a
 * local login, which matches.
 */
static void network_never_takes_the_last_slot(void **state)
{
	static const char *const sources[] = { SRC1, SRC2, SRC3, SRC4 };
	struct duress_opts o;
	unsigned k = 0;

	(void)state;
	require_root();
	lane_opts(&o, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct caller bot = { .rhost = sources[i] };

		k += stopped(start_caller(&o, &bot));
	}
	assert_int_equal(k, 3);
	expect_no_match(&o, SRC5);
	expect_match(&o, NULL);
}

/* One slot: nothing to keep back; the network may take it. */
static void one_slot_is_everyones(void **state)
{
	const struct caller bot = { .rhost = SRC1 };
	struct duress_opts o;

	(void)state;
	require_root();
	lane_opts(&o, 1);
	assert_true(stopped(start_caller(&o, &bot)));
	expect_no_match(&o, NULL);
}

/*
 * A source is an IPv4 address (also written IPv4-mapped), an IPv6 /64, or
 * two sources whose hashes collide: they share one share.
 */
static void what_one_source_is(void **state)
{
	const struct caller v4 = { .rhost = SRC1 }, v6 = { .rhost = "2001:db8:1:2::a" };
	struct duress_opts o;

	(void)state;
	require_root();
	lane_opts(&o, 4);
	assert_true(stopped(start_caller(&o, &v4)));
	assert_true(stopped(start_caller(&o, &v6)));
	expect_no_match(&o, "::ffff:" SRC1);
	expect_no_match(&o, SRC1_TWIN);
	expect_no_match(&o, "2001:db8:1:2::b");
	expect_match(&o, "2001:db8:1:3::b");
}

/* --- item 7: the same locks for a real and a duress login before pam_unix ------------------ */

/* The locks held at the derivation of ualice's real password, then of her duress one. */
static void locks_of_real_and_duress(const struct duress_opts *o, const char *rhost, unsigned want)
{
	unsigned real_flocks, real_others;
	char got[4096];

	assert_int_equal(auth_from(o, "ualice", REAL_PW, rhost, true), DURESS_NO_MATCH);
	real_flocks = flocks_held;
	real_others = other_locks_held;
	/* The real login started the runner too, with nothing to run (issue 24, item 6). */
	assert_true(world_report(NULL, got, sizeof(got)));
	assert_string_equal(got, "");
	assert_int_equal(auth_from(o, "ualice", USER_PW, rhost, true), DURESS_MATCH);
	assert_true(world_report(NULL, got, sizeof(got)));
	if (real_flocks != flocks_held || real_others != other_locks_held)
		fail_msg("from %s: real login %u flock(s) + %u other, duress %u + %u",
			 rhost ? rhost : "the console", real_flocks, real_others, flocks_held,
			 other_locks_held);
	if (flocks_held != want || other_locks_held != 0)
		fail_msg("from %s: %u flock(s) + %u other lock(s), expected %u flock(s)",
			 rhost ? rhost : "the console", flocks_held, other_locks_held, want);
}

/* As a user's setuid su (in a child with that real uid): its counts through the exit status. */
static void locks_of_a_user(const struct duress_opts *o)
{
	char got[4096];
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char report[PATH_MAX];
		unsigned r[2];

		if (setresuid(USER_RUID, 0, 0) != 0)
			_exit(100);
		(void)auth_from(o, "ualice", REAL_PW, NULL, true);
		r[0] = flocks_held;
		/* The real login's runner report (nothing to run), out of the duress one's way. */
		snprintf(report, sizeof(report), "%s/runner.out", W.tmp);
		(void)unlink(report);
		if (auth_from(o, "ualice", USER_PW, NULL, true) != DURESS_MATCH)
			_exit(101);
		r[1] = flocks_held;
		_exit(r[0] == r[1] && other_locks_held == 0 ? (int)r[1] : 99);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_true(world_report(NULL, got, sizeof(got)));
}

/*
 * In the before-pam_unix placement every login derives: a real one and a
 * duress one hold the same locks while they do (what /proc/locks shows a
 * coercer): one flock at the console and for a user's su (its own lane),
 * two from the network (the source's token and a slot).
 */
static void same_locks_real_and_duress(void **state)
{
	struct duress_opts o;

	(void)state;
	lane_opts(&o, 4);
	if (!W.root) {
		/* We are a user: our own lane. */
		locks_of_real_and_duress(&o, NULL, 1);
		return;
	}
	locks_of_real_and_duress(&o, NULL, 1);
	locks_of_real_and_duress(&o, SRC1, 2);
	locks_of_a_user(&o);
}

/* --- item 13: an unsafe slot file or directory is refused ----------------------------------- */

/* The file the test's own logins take: its lane (root: the only machine slot). */
static void lane_file(char *out, size_t size)
{
	if (W.root)
		snprintf(out, size, "slot.0");
	else
		snprintf(out, size, "uid.%u", (unsigned)getuid());
}

/* Makes path a regular file (mode, owner) and locks it from a descriptor kept in the world. */
static void hold_file(const char *path, mode_t mode, uid_t owner)
{
	int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0);
	if (owner != (uid_t)-1)
		assert_int_equal(fchown(fd, owner, (gid_t)-1), 0);
	assert_int_equal(__real_flock(fd, LOCK_EX | LOCK_NB), 0);
	W.slot_holder = fd; /* closed by world_clear() */
}

enum unsafe {
	SAFE,             /* the control: a safe lane file, held: the login waits */
	DIR_SYMLINK,      /* slot_dir= a symlink to a safe directory with the lane file held */
	DIR_GROUP_WRITE,  /* slot_dir= mode 0770, lane file held */
	DIR_OTHER_WRITE,  /* slot_dir= mode 0707 */
	DIR_NOT_OURS,     /* slot_dir= owned by another uid */
	FILE_SYMLINK,     /* the lane file a symlink to a safe file, held */
	FILE_GROUP_WRITE, /* the lane file mode 0620, held */
	FILE_OTHER_WRITE, /* mode 0602 */
	FILE_NOT_OURS,    /* owned by another uid */
};

struct unsafe_row {
	const char *name;
	enum unsafe what;
	bool needs_root;
	const char *logged; /* the refusal; NULL: the control */
};

#define DIR_REFUSED "is not a directory of ours alone (or a symlink); no cap on derivations"
#define FILE_REFUSED "is not ours alone (or a symlink); no cap on derivations"

static const struct unsafe_row unsafe_rows[] = {
	{ "a safe lane file held: the login waits, no match", SAFE, false, NULL },
	{ "a slot directory that is a symlink: refused, no cap", DIR_SYMLINK, false, DIR_REFUSED },
	{ "a group-writable slot directory: refused, no cap", DIR_GROUP_WRITE, false, DIR_REFUSED },
	{ "a world-writable slot directory: refused, no cap", DIR_OTHER_WRITE, false, DIR_REFUSED },
	{ "a slot directory of another uid: refused, no cap", DIR_NOT_OURS, true, DIR_REFUSED },
	{ "a slot file that is a symlink: refused, no cap", FILE_SYMLINK, false, FILE_REFUSED },
	{ "a group-writable slot file: refused, no cap", FILE_GROUP_WRITE, false, FILE_REFUSED },
	{ "a world-writable slot file: refused, no cap", FILE_OTHER_WRITE, false, FILE_REFUSED },
	{ "a slot file of another uid: refused, no cap", FILE_NOT_OURS, true, FILE_REFUSED },
};

/*
 * Builds the slot directory as the row says, with the lane file (or what a
 * symlink points to) locked by someone else: code that did not refuse it
 * would find the slot taken and answer no match.
 */
static void build_unsafe(enum unsafe what)
{
	const char *dir = what == DIR_SYMLINK ? real_slots : W.slots;
	char name[32], path[PATH_MAX + 64];

	lane_file(name, sizeof(name));
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (what == DIR_SYMLINK)
		assert_int_equal(symlink(real_slots, W.slots), 0);
	if (what == DIR_GROUP_WRITE || what == DIR_OTHER_WRITE)
		assert_int_equal(chmod(dir, what == DIR_GROUP_WRITE ? 0770 : 0707), 0);
	if (what == DIR_NOT_OURS)
		assert_int_equal(chown(dir, USER_RUID, (gid_t)-1), 0);
	if (what == FILE_SYMLINK) {
		hold_file(held_file, 0600, (uid_t)-1);
		assert_int_equal(symlink(held_file, path), 0);
		return;
	}
	hold_file(path,
		  what == FILE_GROUP_WRITE ? 0620 :
		  what == FILE_OTHER_WRITE ? 0602 :
					     0600,
		  what == FILE_NOT_OURS ? USER_RUID : (uid_t)-1);
}

/* duress_authenticate() with what it writes to stderr (the core's log without PAM) in log. */
static enum duress_outcome auth_logged(const struct duress_opts *o, char *log, size_t size)
{
	char path[PATH_MAX + 16];
	enum duress_outcome out;
	int fd, saved;

	snprintf(path, sizeof(path), "%s/stderr", W.tmp);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0 && dup2(fd, 2) == 2);
	log_debug = true;
	out = auth_from(o, "ualice", USER_PW, NULL, false);
	log_debug = false;
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_true(fx_read_all(fd, log, size) >= 0);
	close(fd);
	assert_int_equal(unlink(path), 0);
	return out;
}

static void unsafe_is_refused(void **state)
{
	const struct unsafe_row *row = *state;
	struct duress_opts o;
	char log[8192], got[4096];
	enum duress_outcome out;

	if (row->needs_root)
		require_root();
	world_opts(&o); /* one slot, no wait */
	build_unsafe(row->what);
	out = auth_logged(&o, log, sizeof(log));
	if (!row->logged) {
		assert_int_equal(out, DURESS_NO_MATCH);
		assert_int_equal(derivations, 0);
		assert_false(world_report(NULL, got, sizeof(got)));
		return;
	}
	if (out != DURESS_MATCH || !strstr(log, row->logged))
		fail_msg("%s: answered %d, logged:\n%s", row->name, (int)out, log);
	assert_true(world_report(NULL, got, sizeof(got)));
}

/* --- item 13: the back-off ----------------------------------------------------------- */

/*
 * A login that finds its slot taken looks again and again (1 ms, doubled up
 * to 50 ms) within max_wait=3: the holder, another process, lets go after
 * the tenth look (about 200 ms), and the eleventh look takes the slot.  A
 * waiter that slept through its whole max_wait would look twice and give up.
 */
static void backs_off_and_catches_a_freed_slot(void **state)
{
	int go[2], done[2];
	struct duress_opts o;
	char name[32], path[PATH_MAX + 64], c;
	pid_t holder;

	(void)state;
	world_opts(&o);
	o.max_wait = 3;
	lane_file(name, sizeof(name));
	assert_int_equal(mkdir(W.slots, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", W.slots, name);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(done, O_CLOEXEC), 0);
	fflush(NULL);
	holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0 || __real_flock(fd, LOCK_EX | LOCK_NB) != 0 ||
		    write(done[1], "h", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		close(fd);
		_exit(write(done[1], "r", 1) == 1 ? 0 : 1);
	}
	callers[n_callers++] = holder;
	assert_int_equal(read(done[0], &c, 1), 1); /* it holds the slot */
	release_fd = go[1];
	released_fd = done[0];
	release_at_look = 10;
	assert_int_equal(auth_from(&o, "ualice", USER_PW, NULL, false), DURESS_MATCH);
	release_at_look = 0;
	assert_int_equal(looks, 10);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

int main(void)
{
	const struct CMUnitTest fixed[] = {
		cmocka_unit_test_setup_teardown(stopped_su_holds_only_its_lane, build, teardown),
		cmocka_unit_test_setup_teardown(stopped_su_blocks_its_own_user, build, teardown),
		cmocka_unit_test_setup_teardown(one_source_holds_its_share, build, teardown),
		cmocka_unit_test_setup_teardown(the_share_grows_with_the_cap, build, teardown),
		cmocka_unit_test_setup_teardown(network_never_takes_the_last_slot, build, teardown),
		cmocka_unit_test_setup_teardown(one_slot_is_everyones, build, teardown),
		cmocka_unit_test_setup_teardown(what_one_source_is, build, teardown),
		cmocka_unit_test_setup_teardown(same_locks_real_and_duress, build, teardown),
		cmocka_unit_test_setup_teardown(backs_off_and_catches_a_freed_slot, build,
						teardown),
	};
	enum { N_FIXED = sizeof(fixed) / sizeof(fixed[0]) };
	struct CMUnitTest tests[N_FIXED + sizeof(unsafe_rows) / sizeof(unsafe_rows[0])];

	memcpy(tests, fixed, sizeof(fixed));
	FX_ROW_TESTS(tests + N_FIXED, unsafe_rows, unsafe_is_refused, build, teardown);
	return cmocka_run_group_tests(tests, world_group_setup, world_group_teardown);
}
