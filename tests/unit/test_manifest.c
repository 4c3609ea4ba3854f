/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The manifest the module hands the runner: round trip, bounds, and every truncation refused. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(truncations_refused),
		cmocka_unit_test(counts_bounded),
		cmocka_unit_test(writer_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
