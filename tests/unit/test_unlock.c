/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk-unlock prompt's runtime (boot/unlock.c), one named test per
 * row: exactly one Argon2id derivation per try whatever the boot directory
 * holds (crypto_pwhash is wrapped at link time and counted), exactly the
 * record a match of an after-boot action leaves (format, modes), the
 * before-unlock actions handed to the runner with a wait, nothing for no
 * match or a skipped action; and the after-boot run, once, by hash.
 * duress_spawn is wrapped too: what it was handed is recorded and nothing
 * runs (tests/boot runs the real runner).  Root only: the boot directory
 * is a global one, root's.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "boot/unlock.h"
#include "core/boot.h"
#include "core/runner.h"
#include "fixture.h"
#include "tests/lib/kdf_cost.h"

int __wrap_duress_spawn(const char *runner_path, const struct duress_chain *chains, size_t n_chains,
			unsigned wait_seconds, const struct duress_spawn_io *io,
			const struct duress_log *lg);

static unsigned derivations;
static char spawned[4096]; /* "wait=N uid=U name name...;" per call */

int __wrap_crypto_pwhash(unsigned char *out, unsigned long long outlen, const char *passwd,
			 unsigned long long passwdlen, const unsigned char *salt,
			 unsigned long long opslimit, size_t memlimit, int alg)
{
	derivations++;
	return __real_crypto_pwhash(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
}

int __wrap_duress_spawn(const char *runner_path, const struct duress_chain *chains, size_t n_chains,
			unsigned wait_seconds, const struct duress_spawn_io *io,
			const struct duress_log *lg)
{
	size_t at = strlen(spawned);

	(void)runner_path;
	(void)lg;
	assert_int_equal(n_chains, 1);
	/* Busybox, the initramfs's sh, picks its applet by argv[0]. */
	assert_true(io && io->interp_argv0);
	at += (size_t)snprintf(spawned + at, sizeof(spawned) - at, "wait=%u uid=%u", wait_seconds,
			       (unsigned)chains[0].target->uid);
	for (size_t i = 0; i < chains[0].n_jobs; i++) {
		int seals = fcntl(chains[0].jobs[i].memfd, F_GET_SEALS);

		assert_true(seals >= 0 && (seals & F_SEAL_WRITE));
		at += (size_t)snprintf(spawned + at, sizeof(spawned) - at, " %s",
				       chains[0].jobs[i].name);
	}
	snprintf(spawned + at, sizeof(spawned) - at, ";");
	return 0;
}

#define DURESS_PW "duress boot passphrase"
#define OTHER_PW "another boot passphrase"
#define ALERT "#!/bin/sh\n# alert\n"
#define NUKE "#!/bin/sh\n# nuke\n"
#define NOTIFY "#!/bin/sh\n# notify\n"

enum dir_state {
	MISSING,
	EMPTY,
	UNARMED,      /* an action without a signature */
	ARMED,        /* alert and initramfs-nuke, one (salt, cost) set */
	TWO_SETS,     /* alert and initramfs-nuke, each its own salt */
	EDITED,       /* alert changed after signing */
	OVERSIZED,    /* alert past the global max_file_size */
	SIG_WRITABLE, /* alert.sig writable by others */
	TWO_PW,       /* ARMED, and notify signed with OTHER_PW (the same set) */
};

struct prompt_case {
	const char *name;
	enum dir_state state;
	const char *pass;
	bool too_long;
	int matches;
	const char *record;  /* the record's names, space-separated; NULL: no record */
	const char *spawned; /* what the runner was handed; "" nothing */
};

static const struct prompt_case prompt_cases[] = {
	{ "missing directory: one derivation, nothing else", MISSING, DURESS_PW, false, 0, NULL,
	  "" },
	{ "empty directory: one derivation", EMPTY, DURESS_PW, false, 0, NULL, "" },
	{ "unarmed directory: one derivation", UNARMED, DURESS_PW, false, 0, NULL, "" },
	{ "no match: one derivation, no record, nothing run", ARMED, OTHER_PW, false, 0, NULL, "" },
	{ "a match: one derivation, the record, the before-unlock action waited for", ARMED,
	  DURESS_PW, false, 2, "alert", "wait=30 uid=0 initramfs-nuke;" },
	{ "two cost sets: the directory is skipped, still one derivation", TWO_SETS, DURESS_PW,
	  false, 0, NULL, "" },
	{ "edited action: skipped, the other still matches", EDITED, DURESS_PW, false, 1, NULL,
	  "wait=30 uid=0 initramfs-nuke;" },
	{ "oversized action: skipped", OVERSIZED, DURESS_PW, false, 1, NULL,
	  "wait=30 uid=0 initramfs-nuke;" },
	{ "signature writable by others: skipped", SIG_WRITABLE, DURESS_PW, false, 1, NULL,
	  "wait=30 uid=0 initramfs-nuke;" },
	{ "passphrase too long: matches nothing, one derivation", ARMED, DURESS_PW, true, 0, NULL,
	  "" },
};

struct world {
	char tmp[PATH_MAX];
	char dir[PATH_MAX + 16];
	char record_dir[PATH_MAX + 16];
	char record[PATH_MAX + 32];
	struct unlock_paths paths;
};

static struct world w;

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	fx_tmpdir(w.tmp, sizeof(w.tmp), "unlock");
	snprintf(w.dir, sizeof(w.dir), "%s/boot.d", w.tmp);
	snprintf(w.record_dir, sizeof(w.record_dir), "%s/run-unlock", w.tmp);
	snprintf(w.record, sizeof(w.record), "%s/record", w.record_dir);
	w.paths = (struct unlock_paths){ .dir = w.dir,
					 .record_dir = w.record_dir,
					 .record = w.record,
					 .runner = "/nonexistent",
					 .wait_seconds = UNLOCK_WAIT_SECONDS };
	spawned[0] = '\0';
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (geteuid() == 0)
		fx_remove_tree(w.tmp);
	return 0;
}

static void make_dir(enum dir_state s)
{
	struct duress_params p, q;
	int fd;

	if (s == MISSING)
		return;
	assert_int_equal(mkdir(w.dir, 0700), 0);
	fd = open(w.dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	fx_fast_params(&p);
	fx_fast_params(&q);
	if (s == UNARMED)
		fx_write_text(fd, "alert", ALERT, 0700);
	if (s >= ARMED) {
		fx_write_text(fd, "alert", ALERT, 0700);
		fx_write_text(fd, "initramfs-nuke", NUKE, 0700);
		fx_sign(fd, "alert", ALERT, DURESS_PW, &p, (uid_t)-1, (gid_t)-1);
		fx_sign(fd, "initramfs-nuke", NUKE, DURESS_PW, s == TWO_SETS ? &q : &p, (uid_t)-1,
			(gid_t)-1);
	}
	if (s == EDITED)
		fx_write_text(fd, "alert", ALERT "echo more\n", 0700);
	if (s == OVERSIZED) {
		int a = openat(fd, "alert", O_WRONLY | O_APPEND);

		assert_true(a >= 0);
		assert_int_equal(ftruncate(a, (off_t)DURESS_DEFAULT_MAX_FILE_SIZE + 1), 0);
		close(a);
	}
	if (s == TWO_PW) {
		fx_write_text(fd, "notify", NOTIFY, 0700);
		fx_sign(fd, "notify", NOTIFY, OTHER_PW, &p, (uid_t)-1, (gid_t)-1);
	}
	if (s == SIG_WRITABLE)
		assert_int_equal(fchmodat(fd, "alert.sig", 0666, 0), 0);
	close(fd);
}

/* The record's names in order, space-separated, after checking each entry's hash. */
static void read_record(char *names, size_t size)
{
	char buf[4096];
	int fd = open(w.record, O_RDONLY);
	ssize_t n;
	struct stat st;
	size_t at = 0;

	names[0] = '\0';
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0 && buf[n - 1] == '\0');
	while (at < (size_t)n) {
		const char *name = buf + at + UNLOCK_HASH_HEX + 1;
		unsigned char want[32];
		char hex[UNLOCK_HASH_HEX + 1];

		assert_int_equal(buf[at + UNLOCK_HASH_HEX], ' ');
		const char *content = strcmp(name, "notify") == 0 ? NOTIFY : ALERT;

		assert_true(strcmp(name, "alert") == 0 || strcmp(name, "notify") == 0);
		crypto_hash_sha256(want, (const unsigned char *)content, strlen(content));
		sodium_bin2hex(hex, sizeof(hex), want, sizeof(want));
		assert_memory_equal(buf + at, hex, UNLOCK_HASH_HEX);
		if (names[0])
			strncat(names, " ", size - strlen(names) - 1);
		strncat(names, name, size - strlen(names) - 1);
		at += UNLOCK_HASH_HEX + 1 + strlen(name) + 1;
	}
	assert_int_equal(stat(w.record_dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
}

static void test_prompt(void **state)
{
	const struct prompt_case *c = *state;
	const struct duress_log lg = { .tag = "test" };
	char names[256];

	if (geteuid() != 0)
		skip();
	setup(NULL);
	make_dir(c->state);
	derivations = 0;
	assert_int_equal(unlock_at_prompt(&w.paths, c->pass, strlen(c->pass), c->too_long, &lg),
			 c->matches);
	assert_int_equal(derivations, 1);
	assert_string_equal(spawned, c->spawned);
	if (c->record) {
		read_record(names, sizeof(names));
		assert_string_equal(names, c->record);
	} else {
		assert_int_equal(access(w.record, F_OK), -1);
		assert_int_equal(errno, ENOENT);
	}
	teardown(NULL);
}

/* After boot: N actions started, the runner's jobs WANT, the record's directory gone. */
static void expect_after_boot(const struct duress_log *lg, int n, const char *want)
{
	spawned[0] = '\0';
	assert_int_equal(unlock_after_boot(&w.paths, lg), n);
	assert_string_equal(spawned, want);
	assert_int_equal(access(w.record_dir, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

/* A later matching try keeps what an earlier one recorded, each entry once. */
static void test_two_tries(void **state)
{
	const struct duress_log lg = { .tag = "test" };
	char names[256];

	(void)state;
	if (geteuid() != 0)
		skip();
	setup(NULL);
	make_dir(TWO_PW);
	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	assert_int_equal(unlock_at_prompt(&w.paths, "wrong", 5, false, &lg), 0);
	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	read_record(names, sizeof(names));
	assert_string_equal(names, "alert");
	assert_int_equal(unlock_at_prompt(&w.paths, OTHER_PW, strlen(OTHER_PW), false, &lg), 1);
	read_record(names, sizeof(names));
	assert_string_equal(names, "alert notify");
	expect_after_boot(&lg, 2, "wait=0 uid=0 alert notify;");
	teardown(NULL);
}

/* After boot: run once, by hash; then nothing; the directory goes. */
static void test_after_boot(void **state)
{
	const struct duress_log lg = { .tag = "test" };

	(void)state;
	if (geteuid() != 0)
		skip();
	setup(NULL);
	make_dir(ARMED);
	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	derivations = 0;
	expect_after_boot(&lg, 1, "wait=0 uid=0 alert;");
	assert_int_equal(derivations, 0);
	expect_after_boot(&lg, 0, "");
	teardown(NULL);
}

/* A recorded action that changed since the prompt is skipped. */
static void test_after_boot_changed(void **state)
{
	const struct duress_log lg = { .tag = "test" };
	struct duress_params p;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	setup(NULL);
	make_dir(ARMED);
	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	/* Re-signed with other bytes: signed, but not what the prompt verified. */
	fd = open(w.dir, O_RDONLY | O_DIRECTORY);
	fx_fast_params(&p);
	fx_write_text(fd, "alert", ALERT "echo other\n", 0700);
	fx_sign(fd, "alert", ALERT "echo other\n", DURESS_PW, &p, (uid_t)-1, (gid_t)-1);
	close(fd);
	expect_after_boot(&lg, 0, "");
	teardown(NULL);
}

/* Records that are not to be read: all skipped, the directory removed. */
static void test_after_boot_bad_record(void **state)
{
	static const struct {
		const char *data;
		size_t len;
	} bad[] = {
		{ "nothex alert", 13 },
		{ "0000000000000000000000000000000000000000000000000000000000000000 alert", 70 },
		{ "0000000000000000000000000000000000000000000000000000000000000000 a/b", 69 },
		{ "0000000000000000000000000000000000000000000000000000000000000000 ", 66 },
	};
	const struct duress_log lg = { .tag = "test" };

	(void)state;
	if (geteuid() != 0)
		skip();
	setup(NULL);
	make_dir(ARMED);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd;

		assert_int_equal(mkdir(w.record_dir, 0700), 0);
		fd = open(w.record, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, bad[i].data, bad[i].len), (ssize_t)bad[i].len);
		close(fd);
		expect_after_boot(&lg, 0, "");
	}
	teardown(NULL);
}

/*
 * A well-formed record that group or others may read, or a link to one:
 * not what the prompt wrote (root's 0600 file), so nothing runs.
 */
static void test_after_boot_record_not_ours(void **state)
{
	const struct duress_log lg = { .tag = "test" };
	char real[PATH_MAX];

	(void)state;
	if (geteuid() != 0)
		skip();
	setup(NULL);
	make_dir(ARMED);
	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	assert_int_equal(chmod(w.record, 0644), 0);
	expect_after_boot(&lg, 0, "");

	assert_int_equal(unlock_at_prompt(&w.paths, DURESS_PW, strlen(DURESS_PW), false, &lg), 2);
	assert_true(snprintf(real, sizeof(real), "%s.real", w.record_dir) < (int)sizeof(real));
	assert_int_equal(rename(w.record, real), 0);
	assert_int_equal(symlink(real, w.record), 0);
	expect_after_boot(&lg, 0, "");
	assert_int_equal(unlink(real), 0);
	teardown(NULL);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(prompt_cases) / sizeof(prompt_cases[0]) + 5];
	size_t n = sizeof(prompt_cases) / sizeof(prompt_cases[0]);

	if (sodium_init() < 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		tests[i] =
			(struct CMUnitTest){ .name = prompt_cases[i].name,
					     .test_func = test_prompt,
					     .initial_state = (void *)(uintptr_t)&prompt_cases[i] };
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_two_tries);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_after_boot);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_after_boot_changed);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_after_boot_bad_record);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_after_boot_record_not_ours);
	return _cmocka_run_group_tests("unlock", tests, n, NULL, NULL);
}
