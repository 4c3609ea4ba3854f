/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The directory scan on real files (dir.c, verify.c): which directories are
 * refused and why, which entries are actions, in which order, why each is
 * skipped at load or at verify, that the right password arms exactly the
 * armed ones and a wrong one none, and that the destructor takes zeroed and
 * freed directories.  Each table row is its own test, named.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "core/actions.h"
#include "fixture.h"
#include "tests/lib/fds.h"

#define RIGHT "right horse"
#define WRONG "wrong horse"
#define SCRIPT "#!/bin/sh\necho duress\n"
#define MAX_ENTRIES 8

enum kind {
	SIGNED,   /* an executable with a valid NAME.sig */
	UNSIGNED, /* a file, no signature */
	SIG_TEXT, /* an executable whose NAME.sig holds `text` */
	LEGACY,   /* an executable with a valid NAME.sha256 */
	SYMLINK,  /* a symlink to `text` */
	SUBDIR,
	FIFO,
	BIG, /* an executable of `size` bytes, signed */
};

/* Parameter sets: three cheap ones with their own salts, one over the caps, one below the minimum. */
enum { SET_A, SET_B, SET_C, SET_COSTLY, SET_WEAK, N_SETS };

struct entry {
	const char *name;
	enum kind kind;
	mode_t mode;           /* 0: 0700 */
	const char *text;      /* content (default SCRIPT), link target, or signature text */
	int set;               /* SIGNED, BIG: which parameter set signs it */
	const char *signed_as; /* SIGNED: the content the signature is for (default: text) */
	const char *password;  /* SIGNED: NULL is RIGHT */
	size_t size;           /* BIG */
};

/* One action as the scan must see it: its skip after load, after verify, and the match. */
struct want {
	const char *name;
	enum duress_skip load, verified;
	bool matches;
};

#define WANT(n, load, verified, matches)           \
	{                                          \
		(n), (load), (verified), (matches) \
	}
#define ARMED(n) WANT(n, DURESS_SKIP_NONE, DURESS_SKIP_NONE, true)
#define SKIP(n, s) WANT(n, s, s, false)
#define LATER(n, s) WANT(n, DURESS_SKIP_NONE, s, false)
#define UNMATCHED(n) WANT(n, DURESS_SKIP_NONE, DURESS_SKIP_NONE, false)

enum where { A_DIR, MISSING, A_FILE, A_LINK };

struct dir_case {
	const char *name;
	struct entry entries[MAX_ENTRIES];
	enum where where;
	mode_t dir_mode;         /* 0: 0700 */
	struct duress_caps caps; /* fields left 0 take the test's caps */
	bool legacy_ok;
	int load_result;
	size_t n_params;
	struct want want[MAX_ENTRIES]; /* every listed action, in order */
};

#define E(n, k, ...)                                  \
	{                                             \
		.name = (n), .kind = (k), __VA_ARGS__ \
	}
#define EXE 0700
#define DATA 0600

static const struct dir_case cases[] = {
	{ .name = "empty directory" },
	{ .name = "missing directory", .where = MISSING, .load_result = -ENOENT },
	{ .name = "a file instead of a directory", .where = A_FILE, .load_result = -ENOTDIR },
	{ .name = "a symlink to a directory", .where = A_LINK, .load_result = -ENOTDIR },
	{ .name = "group-writable directory", .dir_mode = 0770, .load_result = -EPERM },
	{ .name = "world-writable directory", .dir_mode = 01707, .load_result = -EPERM },
	{ .name = "readable by others is fine",
	  .dir_mode = 0755,
	  .entries = { E("a", SIGNED) },
	  .n_params = 1,
	  .want = { ARMED("a") } },
	{ .name = "entries at max_entries",
	  .caps = { .max_entries = 3 },
	  .entries = { E("a", SIGNED), E("notes", UNSIGNED, DATA) },
	  .n_params = 1,
	  .want = { ARMED("a"), SKIP("notes", DURESS_SKIP_NOT_AN_ACTION) } },
	{ .name = "one entry over max_entries",
	  .caps = { .max_entries = 3 },
	  .entries = { E("a", SIGNED), E("notes", UNSIGNED, DATA), E(".hidden", UNSIGNED) },
	  .load_result = -E2BIG },
	{ .name = "name order, not creation order",
	  .entries = { E("c", SIGNED), E("a", SIGNED), E("B", SIGNED), E("b", SIGNED) },
	  .n_params = 1,
	  .want = { ARMED("B"), ARMED("a"), ARMED("b"), ARMED("c") } },
	{ .name = "hidden files, signatures and editor leftovers are not actions",
	  .caps = { .max_entries = 16 },
	  .entries = { E("run", SIGNED), E(".hidden", UNSIGNED), E("run~", UNSIGNED),
		       E(".#run", UNSIGNED), E("run.swp", UNSIGNED), E("#run#", UNSIGNED),
		       E("x.sha256", UNSIGNED, DATA), E("run.dpkg-old", UNSIGNED) },
	  .n_params = 1,
	  .want = { ARMED("run") } },
	{ .name = "unsigned executable",
	  .entries = { E("a", UNSIGNED) },
	  .want = { SKIP("a", DURESS_SKIP_NO_SIG) } },
	{ .name = "unsigned data file is not an action",
	  .entries = { E("a.conf", UNSIGNED, DATA) },
	  .want = { SKIP("a.conf", DURESS_SKIP_NOT_AN_ACTION) } },
	{ .name = "signed but not executable",
	  .entries = { E("a", SIGNED, DATA) },
	  .want = { SKIP("a", DURESS_SKIP_NOT_EXECUTABLE) } },
	{ .name = "malformed signature",
	  .entries = { E("a", SIG_TEXT, .text = "$duress$v=1$m=8,t=1,p=1$AAAA\n") },
	  .want = { SKIP("a", DURESS_SKIP_SIG_MALFORMED) } },
	{ .name = "empty signature",
	  .entries = { E("a", SIG_TEXT, .text = "") },
	  .want = { SKIP("a", DURESS_SKIP_SIG_MALFORMED) } },
	{ .name = "symlink action",
	  .entries = { E("a", SYMLINK, .text = "/bin/true") },
	  .want = { SKIP("a", DURESS_SKIP_SYMLINK) } },
	{ .name = "directory and FIFO entries",
	  .entries = { E("d", SUBDIR), E("f", FIFO) },
	  .want = { SKIP("d", DURESS_SKIP_NOT_REGULAR), SKIP("f", DURESS_SKIP_NOT_REGULAR) } },
	{ .name = "group-writable action",
	  .entries = { E("a", SIGNED, 0770) },
	  .want = { SKIP("a", DURESS_SKIP_WRITABLE) } },
	{ .name = "action at max_file_size, and one byte over",
	  .entries = { E("a", BIG, .size = 1024), E("b", BIG, .size = 1025) },
	  .n_params = 1,
	  .want = { ARMED("a"), SKIP("b", DURESS_SKIP_TOO_LARGE) } },
	{ .name = "actions together over max_total",
	  .caps = { .max_total = 1500 },
	  .entries = { E("a", BIG, .size = 1000), E("b", BIG, .size = 1000) },
	  .n_params = 1,
	  .want = { ARMED("a"), LATER("b", DURESS_SKIP_TOTAL_TOO_LARGE) } },
	/*
	 * b does not fit in what a left (500 bytes), c does: b is refused for
	 * its size before it is read, and a refusal spends none of the budget,
	 * so c is armed.  Refusing b only past twice the budget would read 500
	 * bytes of it, spend them, and leave nothing for c.
	 */
	{ .name = "a large action refused, a small one after it still fits in max_total",
	  .caps = { .max_total = 1500 },
	  .entries = { E("a", BIG, .size = 1000), E("b", BIG, .size = 1000),
		       E("c", BIG, .size = 100) },
	  .n_params = 1,
	  .want = { ARMED("a"), LATER("b", DURESS_SKIP_TOTAL_TOO_LARGE), ARMED("c") } },
	/* The second ends exactly at the budget, the third is past it: twice the budget would arm it. */
	{ .name = "three actions: the second ends at max_total, the third is past it",
	  .caps = { .max_total = 2000 },
	  .entries = { E("a", BIG, .size = 1000), E("b", BIG, .size = 1000),
		       E("c", BIG, .size = 1000) },
	  .n_params = 1,
	  .want = { ARMED("a"), ARMED("b"), LATER("c", DURESS_SKIP_TOTAL_TOO_LARGE) } },
	{ .name = "one cost set shared by two actions",
	  .entries = { E("a", SIGNED, .set = SET_B), E("b", SIGNED, .set = SET_B) },
	  .n_params = 1,
	  .want = { ARMED("a"), ARMED("b") } },
	{ .name = "too many distinct cost sets",
	  .entries = { E("a", SIGNED, .set = SET_A), E("b", SIGNED, .set = SET_B),
		       E("c", SIGNED, .set = SET_C), E("d", SIGNED, .set = SET_A) },
	  .n_params = 2,
	  .want = { ARMED("a"), ARMED("b"), SKIP("c", DURESS_SKIP_TOO_MANY_PARAMS), ARMED("d") } },
	{ .name = "signature cost over the caps",
	  .entries = { E("a", SIGNED, .set = SET_COSTLY) },
	  .want = { SKIP("a", DURESS_SKIP_SIG_COST) } },
	{ .name = "signature cost below libsodium's minimum",
	  .entries = { E("a", SIGNED, .set = SET_WEAK) },
	  .want = { SKIP("a", DURESS_SKIP_SIG_WEAK_COST) } },
	{ .name = "changed since signing",
	  .entries = { E("a", SIGNED, .signed_as = "#!/bin/sh\necho other\n") },
	  .n_params = 1,
	  .want = { LATER("a", DURESS_SKIP_CHANGED) } },
	{ .name = "another password's action is armed but not matched",
	  .entries = { E("a", SIGNED, .password = "a third horse"), E("b", SIGNED) },
	  .n_params = 1,
	  .want = { UNMATCHED("a"), ARMED("b") } },
	{ .name = "legacy signature without legacy_sha256",
	  .entries = { E("a", LEGACY) },
	  .want = { SKIP("a", DURESS_SKIP_LEGACY_DISABLED) } },
	{ .name = "legacy signature with legacy_sha256",
	  .legacy_ok = true,
	  .entries = { E("a", LEGACY) },
	  .want = { ARMED("a") } },
};

/* Small caps, so that every limit is reached with small files. */
static struct duress_caps caps_of(const struct dir_case *c)
{
	struct duress_caps caps = {
		.max_memory = 64ULL << 10,
		.max_ops = 2,
		.max_file_size = 1024,
		.max_total = 4096,
		.max_entries = MAX_ENTRIES,
		.max_params = 2,
	};

	if (c->caps.max_entries)
		caps.max_entries = c->caps.max_entries;
	if (c->caps.max_total)
		caps.max_total = c->caps.max_total;
	return caps;
}

static struct duress_params sets[N_SETS];
static char tmp[PATH_MAX / 2], path[PATH_MAX];

static const char *content_of(const struct entry *e, char *buf, size_t size)
{
	if (e->kind != BIG)
		return e->text ? e->text : SCRIPT;
	assert_true(e->size < size);
	memset(buf, '#', e->size);
	buf[e->size] = '\0';
	return buf;
}

static void write_legacy_sig(int fd, const char *name, const char *content)
{
	unsigned char both[DURESS_HASH_LEN + sizeof(RIGHT) - 1], sum[DURESS_HASH_LEN];

	crypto_hash_sha256(both, (const unsigned char *)content, strlen(content));
	memcpy(both + DURESS_HASH_LEN, RIGHT, sizeof(RIGHT) - 1);
	crypto_hash_sha256(sum, both, sizeof(both));
	fx_write_beside(fd, name, DURESS_LEGACY_SUFFIX, sum, sizeof(sum), 0600, (uid_t)-1,
			(gid_t)-1);
}

static void write_sig_text(int fd, const char *name, const char *text)
{
	fx_write_beside(fd, name, DURESS_SIG_SUFFIX, text, strlen(text), 0600, (uid_t)-1,
			(gid_t)-1);
}

/* A cost below libsodium's minimum derives no key: such a line has a tag of zeros. */
static void write_unkeyed_sig(int fd, const char *name, const char *content,
			      const struct duress_params *p)
{
	struct duress_sig s = { .params = *p };
	char line[DURESS_SIG_MAX + 1];

	crypto_hash_sha256(s.content_hash, (const unsigned char *)content, strlen(content));
	assert_true(duress_sig_format(&s, line, sizeof(line)) > 0);
	write_sig_text(fd, name, line);
}

static void make_entry(int fd, const struct entry *e)
{
	static char big[4096];
	const char *content = content_of(e, big, sizeof(big));
	mode_t mode = e->mode ? e->mode : EXE;

	switch (e->kind) {
	case SYMLINK:
		assert_int_equal(symlinkat(e->text, fd, e->name), 0);
		return;
	case SUBDIR:
		assert_int_equal(mkdirat(fd, e->name, 0700), 0);
		return;
	case FIFO:
		assert_int_equal(mkfifoat(fd, e->name, 0700), 0);
		return;
	case SIG_TEXT:
		fx_write_text(fd, e->name, SCRIPT, mode);
		write_sig_text(fd, e->name, e->text);
		return;
	default:
		fx_write_text(fd, e->name, content, mode);
	}
	if (e->kind == LEGACY)
		write_legacy_sig(fd, e->name, content);
	else if (e->set == SET_WEAK)
		write_unkeyed_sig(fd, e->name, content, &sets[e->set]);
	else if (e->kind == SIGNED || e->kind == BIG)
		fx_sign(fd, e->name, e->signed_as ? e->signed_as : content,
			e->password ? e->password : RIGHT, &sets[e->set], (uid_t)-1, (gid_t)-1);
}

/* Builds the case's directory at path, as the current user: a user scope of ours. */
static void make_dir(const struct dir_case *c)
{
	char real[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/d", tmp);
	if (c->where == MISSING)
		return;
	if (c->where == A_FILE) {
		fx_write_text(AT_FDCWD, path, SCRIPT, 0700);
		return;
	}
	snprintf(real, sizeof(real), "%s/real", tmp);
	assert_int_equal(mkdir(c->where == A_LINK ? real : path, 0700), 0);
	if (c->where == A_LINK)
		assert_int_equal(symlink(real, path), 0);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (const struct entry *e = c->entries; e->name; e++)
		make_entry(fd, e);
	assert_int_equal(fchmod(fd, c->dir_mode ? c->dir_mode : 0700), 0);
	close(fd);
}

/* A matched action's memfd holds exactly the file's bytes. */
static void expect_memfd(int dir_fd, const struct duress_action *a)
{
	static char want[4096], got[4096];
	int fd = openat(dir_fd, a->name, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(fx_read_all(fd, want, sizeof(want)) >= 0);
	close(fd);
	assert_true(fx_read_all(a->memfd, got, sizeof(got)) >= 0);
	assert_string_equal(got, want);
	assert_true(fcntl(a->memfd, F_GET_SEALS) & F_SEAL_WRITE);
}

static void load(struct duress_dir *d, const struct dir_case *c, const struct duress_caps *caps)
{
	int r = duress_dir_load(d, path, DURESS_SCOPE_USER, getuid(), caps, c->legacy_ok, NULL);

	if (r != c->load_result)
		fail_msg("%s: load gave %d, expected %d", c->name, r, c->load_result);
}

static size_t n_wanted(const struct dir_case *c)
{
	size_t n = 0;

	while (n < MAX_ENTRIES && c->want[n].name)
		n++;
	return n;
}

static void expect_loaded(const struct duress_dir *d, const struct dir_case *c)
{
	assert_int_equal(d->n_actions, n_wanted(c));
	assert_int_equal(d->n_params, c->n_params);
	for (size_t i = 0; i < d->n_actions; i++) {
		assert_string_equal(d->actions[i].name, c->want[i].name);
		if (d->actions[i].skip != c->want[i].load)
			fail_msg("%s: at load got \"%s\", expected \"%s\"", d->actions[i].name,
				 duress_skip_reason(d->actions[i].skip),
				 duress_skip_reason(c->want[i].load));
	}
}

static void verify(struct duress_dir *d, const struct dir_case *c, const char *password)
{
	unsigned char keys[MAX_ENTRIES][DURESS_KEY_LEN];
	bool right = strcmp(password, RIGHT) == 0;
	int matches = 0;

	for (size_t i = 0; i < d->n_params; i++)
		assert_int_equal(
			duress_derive_key(password, strlen(password), &d->params[i], keys[i]), 0);
	for (size_t i = 0; i < d->n_actions; i++)
		matches += right && c->want[i].matches;
	assert_int_equal(duress_dir_verify(d, (const unsigned char(*)[DURESS_KEY_LEN])keys,
					   password, strlen(password)),
			 matches);
	for (size_t i = 0; i < d->n_actions; i++) {
		const struct duress_action *a = &d->actions[i];
		bool want_match = right && c->want[i].matches;

		if (a->skip != c->want[i].verified)
			fail_msg("%s: after verify got \"%s\", expected \"%s\"", a->name,
				 duress_skip_reason(a->skip),
				 duress_skip_reason(c->want[i].verified));
		assert_int_equal(a->matched, want_match);
		if (want_match)
			expect_memfd(d->fd, a);
		else
			assert_int_equal(a->memfd, -1);
	}
}

static void run_case(void **state)
{
	const struct dir_case *c = *state;
	struct duress_caps caps = caps_of(c);
	size_t fds = count_open_fds();
	struct duress_dir d;

	make_dir(c);
	load(&d, c, &caps);
	if (c->load_result < 0) {
		/* A failed load leaves nothing to free, and nothing open. */
		assert_false(duress_dir_loaded(&d));
		assert_int_equal(count_open_fds(), fds);
		return;
	}
	expect_loaded(&d, c);
	verify(&d, c, RIGHT);
	duress_dir_free(&d);
	load(&d, c, &caps);
	verify(&d, c, WRONG);
	duress_dir_free(&d);
	assert_int_equal(count_open_fds(), fds);
}

static int make_tmp(void **state)
{
	(void)state;
	fx_tmpdir(tmp, sizeof(tmp), "test_dir");
	return 0;
}

static int remove_tmp(void **state)
{
	(void)state;
	fx_remove_tree(tmp);
	return 0;
}

/* --- the name filter, the destructor and the check without a password ---- */

static void action_names(void **state)
{
	static const char *const actions[] = { "alert", "10-wipe", "a.sh",        "#",
					       "#half", "half#",   "a.signature", "sig" };
	static const char *const others[] = {
		"",           ".hidden",     ".#alert",    "#alert#",      "alert~",
		"alert.swp",  "alert.bak",   "alert.sig",  "alert.sha256", "a.dpkg-old",
		"a.dpkg-new", "a.dpkg-dist", "a.dpkg-tmp", "a.rpmnew",     "a.rpmsave",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!duress_is_action_name(actions[i]))
			fail_msg("\"%s\" should be an action name", actions[i]);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (duress_is_action_name(others[i]))
			fail_msg("\"%s\" should not be an action name", others[i]);
}

/* A zeroed directory owns nothing: freeing it must not close descriptor 0. */
static void free_zeroed(void **state)
{
	struct duress_dir d = { 0 };

	(void)state;
	if (fcntl(0, F_GETFD) < 0)
		assert_int_equal(open("/dev/null", O_RDONLY), 0);
	duress_dir_free(&d);
	assert_true(fcntl(0, F_GETFD) >= 0);
	assert_false(duress_dir_loaded(&d));
}

/* Freed twice: the second is nothing, and nothing of the first stays open. */
static void free_twice(void **state)
{
	const struct dir_case *c = &cases[0];
	struct duress_caps caps = caps_of(c);
	size_t fds = count_open_fds();
	struct duress_dir d;

	(void)state;
	make_dir(c);
	load(&d, c, &caps);
	assert_true(duress_dir_loaded(&d));
	assert_int_equal(count_open_fds(), fds + 1);
	duress_dir_free(&d);
	assert_false(duress_dir_loaded(&d));
	assert_int_equal(count_open_fds(), fds);
	if (fcntl(0, F_GETFD) < 0)
		assert_int_equal(open("/dev/null", O_RDONLY), 0);
	duress_dir_free(&d);
	assert_true(fcntl(0, F_GETFD) >= 0);
}

/* A directory on /proc or /sys is refused whole, in words of its own. */
static void pseudo_filesystem_dir(void **state)
{
	static const char *const dirs[] = { "/proc/sys", "/proc/self/fd", "/sys/kernel" };
	struct duress_caps caps;
	struct duress_dir d;
	char buf[128];

	(void)state;
	duress_user_caps_default(&caps);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		assert_int_equal(duress_dir_load(&d, dirs[i], DURESS_SCOPE_USER, geteuid(), &caps,
						 false, NULL),
				 -EMEDIUMTYPE);
		assert_false(duress_dir_loaded(&d));
	}
	assert_string_equal(duress_dir_problem(-EMEDIUMTYPE, buf, sizeof(buf)),
			    "on a pseudo-filesystem (/proc, /sys...)");
}

/* `duress check`: hashes without a password, flags a change, leaves legacy ones alone. */
static void hash_without_password(void **state)
{
	static const struct dir_case c = {
		.name = "check",
		.legacy_ok = true,
		.entries = { E("a", SIGNED), E("b", SIGNED, .signed_as = "#!/bin/sh\n"),
			     E("c", LEGACY) },
	};
	struct duress_caps caps = caps_of(&c);
	struct duress_dir d;

	(void)state;
	make_dir(&c);
	load(&d, &c, &caps);
	assert_int_equal(duress_dir_hash(&d), 0);
	assert_int_equal(d.n_actions, 3);
	assert_int_equal(d.actions[0].skip, DURESS_SKIP_NONE);
	assert_memory_equal(d.actions[0].content_hash, d.actions[0].sig.content_hash,
			    DURESS_HASH_LEN);
	assert_int_equal(d.actions[0].memfd, -1);
	assert_int_equal(d.actions[1].skip, DURESS_SKIP_CHANGED);
	assert_true(d.actions[2].legacy);
	assert_int_equal(d.actions[2].skip, DURESS_SKIP_NONE);
	duress_dir_free(&d);
}

/*
 * `duress check` spends the same max_total budget as the module: with three
 * actions of 1000 bytes the third is past it, whether the second ends
 * exactly at the budget (2000) or leaves less than the third (2500).
 */
static void hash_over_max_total(void **state)
{
	static const enum duress_skip want[] = { DURESS_SKIP_NONE, DURESS_SKIP_NONE,
						 DURESS_SKIP_TOTAL_TOO_LARGE };
	struct dir_case c = {
		.name = "check, three actions",
		.entries = { E("a", BIG, .size = 1000), E("b", BIG, .size = 1000),
			     E("c", BIG, .size = 1000) },
	};

	(void)state;
	make_dir(&c);
	for (uint64_t total = 2000; total <= 2500; total += 500) {
		struct duress_caps caps;
		struct duress_dir d;

		c.caps.max_total = total;
		caps = caps_of(&c);
		load(&d, &c, &caps);
		assert_int_equal(duress_dir_hash(&d), 0);
		assert_int_equal(d.n_actions, 3);
		for (size_t i = 0; i < 3; i++)
			if (d.actions[i].skip != want[i])
				fail_msg("max_total=%llu: %s: got \"%s\", expected \"%s\"",
					 (unsigned long long)total, d.actions[i].name,
					 duress_skip_reason(d.actions[i].skip),
					 duress_skip_reason(want[i]));
		duress_dir_free(&d);
	}
}

int main(void)
{
	enum { N_CASES = sizeof(cases) / sizeof(cases[0]), N_OTHERS = 5 };
	struct CMUnitTest tests[N_CASES + N_OTHERS] = {
		cmocka_unit_test(action_names),
		cmocka_unit_test(free_zeroed),
		cmocka_unit_test(pseudo_filesystem_dir),
		cmocka_unit_test_setup_teardown(free_twice, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(hash_without_password, make_tmp, remove_tmp),
		cmocka_unit_test_setup_teardown(hash_over_max_total, make_tmp, remove_tmp),
	};

	if (sodium_init() < 0)
		return 1;
	for (int i = 0; i < N_SETS; i++)
		fx_fast_params(&sets[i]);
	sets[SET_COSTLY].mem_kib = 128; /* caps: 64 KiB */
	sets[SET_WEAK].mem_kib = 4;     /* libsodium: at least 8 KiB */
	FX_ROW_TESTS(tests + N_OTHERS, cases, run_case, make_tmp, remove_tmp);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
