/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The manifest the module hands the runner: round trip, bounds, every
 * truncation refused, and each field the reader checks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/manifest.h"

static char env_user[] = "USER=alice", env_home[] = "HOME=/home/alice\nwith a newline";
static char *user_env[] = { env_user, env_home, NULL };
static char env_root[] = "USER=root";
static char *root_env[] = { env_root, NULL };
static gid_t user_groups[] = { 1000, 20010, 20011 };
static gid_t root_groups[] = { 0 };
static const struct duress_target user = { 1000, 1000, user_groups, 3, user_env };
static const struct duress_target root = { 0, 0, root_groups, 1, root_env };
static char name1[] = "10-wipe", name2[] = "x\nsshd[1]: Accepted", name3[] = "alert";
static const struct duress_job user_jobs[] = { { 40, false, name1 }, { 41, true, name2 } };
static const struct duress_job root_jobs[] = { { 42, false, name3 } };
static const struct duress_chain chains[] = {
	{ &user, user_jobs, 2 },
	{ &root, root_jobs, 1 },
};

static void expect_target(const struct duress_target *got, const struct duress_target *want)
{
	size_t n = 0;

	assert_int_equal(got->uid, want->uid);
	assert_int_equal(got->gid, want->gid);
	assert_int_equal(got->n_groups, want->n_groups);
	assert_memory_equal(got->groups, want->groups, want->n_groups * sizeof(gid_t));
	for (; want->envp[n]; n++)
		assert_string_equal(got->envp[n], want->envp[n]);
	assert_null(got->envp[n]);
}

/* What the reader gets is what was written; job descriptors are the runner's fixed ones. */
static void round_trip(void **state)
{
	struct duress_manifest m;
	int fd = duress_manifest_write(chains, 2, DURESS_RUN_WAIT);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(duress_manifest_read(fd, &m), 0);
	close(fd);
	assert_int_equal(m.flags, DURESS_RUN_WAIT);
	assert_int_equal(m.n_chains, 2);
	for (size_t c = 0; c < 2; c++) {
		expect_target(m.chains[c].target, chains[c].target);
		assert_int_equal(m.chains[c].n_jobs, chains[c].n_jobs);
		for (size_t i = 0; i < chains[c].n_jobs; i++) {
			assert_string_equal(m.chains[c].jobs[i].name, chains[c].jobs[i].name);
			assert_int_equal(m.chains[c].jobs[i].elf, chains[c].jobs[i].elf);
		}
	}
	assert_int_equal(m.chains[0].jobs[0].memfd, DURESS_RUNNER_FIRST_JOB_FD);
	assert_int_equal(m.chains[0].jobs[1].memfd, DURESS_RUNNER_FIRST_JOB_FD + 1);
	assert_int_equal(m.chains[1].jobs[0].memfd, DURESS_RUNNER_FIRST_JOB_FD + 2);
	duress_manifest_free(&m);
}

static int memfd_of(const void *bytes, size_t len)
{
	int fd = memfd_create("test", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	return fd;
}

static int read_bytes(const void *bytes, size_t len)
{
	struct duress_manifest m;
	int fd = memfd_of(bytes, len), r = duress_manifest_read(fd, &m);

	close(fd);
	if (r == 0)
		duress_manifest_free(&m);
	return r;
}

/* Every prefix of a valid manifest, and one with a byte more, is refused. */
static void truncations_refused(void **state)
{
	int fd = duress_manifest_write(chains, 2, 0);
	off_t size = lseek(fd, 0, SEEK_END);
	char *bytes = malloc((size_t)size + 1);

	(void)state;
	assert_true(fd >= 0 && size > 0 && bytes);
	assert_int_equal(pread(fd, bytes, (size_t)size, 0), size);
	close(fd);
	assert_int_equal(read_bytes(bytes, (size_t)size), 0);
	for (off_t n = 0; n < size; n++)
		assert_int_equal(read_bytes(bytes, (size_t)n), -EBADMSG);
	bytes[size] = 'x';
	assert_int_equal(read_bytes(bytes, (size_t)size + 1), -EBADMSG);
	free(bytes);
}

/* Counts are checked before anything is allocated for them. */
static void counts_bounded(void **state)
{
	static const char magic[16] = "duress-runner-1";
	uint32_t head[8] = { 0, 1, 1000, 1000, UINT32_MAX };
	char bytes[sizeof(magic) + sizeof(head)];

	(void)state;
	memcpy(bytes, magic, sizeof(magic));
	/* flags 0, one chain, uid, gid, then 2^32-1 groups in 12 bytes. */
	memcpy(bytes + sizeof(magic), head, sizeof(head));
	assert_int_equal(read_bytes(bytes, sizeof(bytes)), -EBADMSG);
	/* Three chains. */
	head[1] = 3;
	memcpy(bytes + sizeof(magic), head, sizeof(head));
	assert_int_equal(read_bytes(bytes, sizeof(bytes)), -EBADMSG);
	/* uid -1 would mean "unchanged" to setresuid(). */
	head[1] = 1;
	head[2] = UINT32_MAX;
	head[4] = 0;
	memcpy(bytes + sizeof(magic), head, sizeof(head));
	assert_int_equal(read_bytes(bytes, sizeof(bytes)), -EBADMSG);
}

/* More chains than the runner has, or more groups than the bound: not written. */
static void writer_bounded(void **state)
{
	struct duress_target many = root;
	const struct duress_chain big = { &many, root_jobs, 1 };

	(void)state;
	assert_int_equal(duress_manifest_write(chains, DURESS_CHAINS + 1, 0), -E2BIG);
	many.n_groups = DURESS_MANIFEST_MAX_GROUPS + 1;
	many.groups = calloc(many.n_groups, sizeof(gid_t));
	assert_non_null(many.groups);
	assert_int_equal(duress_manifest_write(&big, 1, 0), -E2BIG);
	free(many.groups);
}

/* --- the reader's checks, one field wrong at a time ----------------------- */

/* A manifest of one or two chains, each of one job. */
struct fields {
	uint32_t flags, n_chains, gid, n_env;
	const char *env;
	uint32_t fd, second_fd, elf;
	const char *name;
};

/* The one field a row changes in the good manifest. */
enum field { NOTHING, FLAGS, N_CHAINS, GID, ENV, N_ENV, FD, SECOND_FD, ELF, NAME };

static const struct {
	const char *what;
	enum field field;
	uint32_t value;   /* for the numbers */
	const char *text; /* for the strings */
	int result;
} field_rows[] = {
	{ "the good one", NOTHING, 0, NULL, 0 },
	{ "two chains, jobs numbered on", N_CHAINS, 2, NULL, 0 },
	{ "an unknown flag", FLAGS, 16, NULL, -EBADMSG },
	{ "wait= and report share a descriptor", FLAGS, 6, NULL, -EBADMSG },
	{ "gid -1", GID, UINT32_MAX, NULL, -EBADMSG },
	{ "a variable without =", ENV, 0, "USER", -EBADMSG },
	{ "more variables than the bound", N_ENV, DURESS_MANIFEST_MAX_ENV + 1, NULL, -EBADMSG },
	{ "a job at another descriptor", FD, DURESS_RUNNER_FIRST_JOB_FD + 1, NULL, -EBADMSG },
	{ "the second chain numbering from the start", SECOND_FD, DURESS_RUNNER_FIRST_JOB_FD, NULL,
	  -EBADMSG },
	{ "elf neither 0 nor 1", ELF, 2, NULL, -EBADMSG },
	{ "an empty job name", NAME, 0, "", -EBADMSG },
};

static struct fields fields_of(enum field field, uint32_t value, const char *text)
{
	struct fields f = {
		.flags = DURESS_RUN_DEBUG,
		.n_chains = field == SECOND_FD ? 2 : 1,
		.gid = 1000,
		.n_env = 1,
		.env = "USER=a",
		.fd = DURESS_RUNNER_FIRST_JOB_FD,
		.second_fd = DURESS_RUNNER_FIRST_JOB_FD + 1,
		.name = "job",
	};
	uint32_t *numbers[] = {
		[FLAGS] = &f.flags, [N_CHAINS] = &f.n_chains,   [GID] = &f.gid, [N_ENV] = &f.n_env,
		[FD] = &f.fd,       [SECOND_FD] = &f.second_fd, [ELF] = &f.elf
	};

	if (field == ENV)
		f.env = text;
	else if (field == NAME)
		f.name = text;
	else if (field != NOTHING)
		*numbers[field] = value;
	return f;
}

struct buf {
	char bytes[8192];
	size_t len;
};

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->bytes));
	memcpy(b->bytes + b->len, p, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v)
{
	put_bytes(b, &v, sizeof(v));
}

static void put_chain(struct buf *b, const struct fields *f, uint32_t fd)
{
	put_u32(b, 1000);
	put_u32(b, f->gid);
	put_u32(b, 1);
	put_u32(b, f->gid);
	put_u32(b, f->n_env);
	for (uint32_t i = 0; i < f->n_env; i++)
		put_bytes(b, f->env, strlen(f->env) + 1);
	put_u32(b, 1);
	put_u32(b, fd);
	put_u32(b, f->elf);
	put_bytes(b, f->name, strlen(f->name) + 1);
}

static void reader_checks_each_field(void **state)
{
	static const char magic[16] = "duress-runner-1";

	(void)state;
	for (size_t i = 0; i < sizeof(field_rows) / sizeof(field_rows[0]); i++) {
		const struct fields fields = fields_of(field_rows[i].field, field_rows[i].value,
						       field_rows[i].text),
				    *f = &fields;
		struct buf b = { .len = 0 };
		int r;

		put_bytes(&b, magic, sizeof(magic));
		put_u32(&b, f->flags);
		put_u32(&b, f->n_chains);
		put_chain(&b, f, f->fd);
		if (f->n_chains == 2)
			put_chain(&b, f, f->second_fd);
		r = read_bytes(b.bytes, b.len);
		if (r != field_rows[i].result)
			fail_msg("%s: read gave %d, expected %d", field_rows[i].what, r,
				 field_rows[i].result);
	}
}

/* Only a regular file (the sealed memfd) is a manifest: not a pipe's stream. */
static void reader_wants_a_file(void **state)
{
	struct duress_manifest m;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "duress-runner-1", 16), 16);
	close(p[1]);
	assert_int_equal(duress_manifest_read(p[0], &m), -EBADMSG);
	close(p[0]);
}

/* duress test's report flag goes through; with WAIT (the same descriptor) it is refused. */
static void report_flag(void **state)
{
	struct duress_manifest m;
	int fd = duress_manifest_write(chains, 2, DURESS_RUN_REPORT);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(duress_manifest_read(fd, &m), 0);
	close(fd);
	assert_int_equal(m.flags, DURESS_RUN_REPORT);
	assert_int_equal(m.chains[0].n_jobs, 2);
	duress_manifest_free(&m);
	/* The boot actions' flag goes through too (busybox's argv[0]). */
	fd = duress_manifest_write(chains, 2, DURESS_RUN_WAIT | DURESS_RUN_INTERP_ARGV0);
	assert_true(fd >= 0);
	assert_int_equal(duress_manifest_read(fd, &m), 0);
	close(fd);
	assert_int_equal(m.flags, DURESS_RUN_WAIT | DURESS_RUN_INTERP_ARGV0);
	duress_manifest_free(&m);
	fd = duress_manifest_write(chains, 2, DURESS_RUN_WAIT | DURESS_RUN_REPORT);
	assert_true(fd >= 0);
	assert_int_equal(duress_manifest_read(fd, &m), -EBADMSG);
	close(fd);
	fd = duress_manifest_write(chains, 2, 16U);
	assert_true(fd >= 0);
	assert_int_equal(duress_manifest_read(fd, &m), -EBADMSG);
	close(fd);
}

/* A record says what the runner saw, a hostile name included, and nothing else parses. */
static void report_round_trip(void **state)
{
	static const char *const bad[] = {
		"",
		"1000 exit 3 410",
		"1000 exit 3 410 ",
		"x exit 3 410 a",
		"1000 quit 3 410 a",
		"1000 exit 256 410 a",
		"-1 exit 3 410 a",
		"4294967295 exit 0 1 a",
		"1000 exit 3 a",
	};
	char rec[DURESS_REPORT_MAX];
	struct duress_report r;
	size_t len;

	(void)state;
	len = duress_report_format(rec, 1000, 3 << 8, 410, name2);
	assert_int_equal(duress_report_parse(rec, len, &r), 0);
	assert_int_equal(r.uid, 1000);
	assert_false(r.signaled);
	assert_int_equal(r.code, 3);
	assert_int_equal(r.ms, 410);
	assert_string_equal(r.name, name2);
	len = duress_report_format(rec, 0, 9, 7, name3); /* killed by SIGKILL */
	assert_int_equal(duress_report_parse(rec, len, &r), 0);
	assert_true(r.signaled);
	assert_int_equal(r.code, 9);
	assert_int_equal(r.uid, 0);
	/* Without its NUL, or with one inside, it is no record. */
	assert_int_equal(duress_report_parse(rec, len - 1, &r), -EBADMSG);
	assert_int_equal(duress_report_parse("0 exit 0 1 a\0b", 15, &r), -EBADMSG);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(duress_report_parse(bad[i], strlen(bad[i]) + 1, &r), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncations_refused),
		cmocka_unit_test(counts_bounded),
		cmocka_unit_test(writer_bounded),
		cmocka_unit_test(reader_checks_each_field),
		cmocka_unit_test(reader_wants_a_file),
		cmocka_unit_test(report_flag),
		cmocka_unit_test(report_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
