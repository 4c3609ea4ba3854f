/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SPEC 4, constant work: what a login costs must not tell a prober whether
 * the account has actions, exists at all, or typed a duress password.
 * Proved without timing anything: the peak memory of one authentication
 * in a fresh process (auth_child, exec'd so that it starts small) shows
 * which Argon2id derivations ran, and whether two were in flight at once.
 * An Argon2id at the default cost fills 64 MiB; the rest of such a process
 * stays under 8 MiB.
 */
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crypt.h>
#include <security/pam_appl.h>

#define MIB 1024L /* ru_maxrss counts KiB */
/* One derivation at the default cost in flight: its 64 MiB. */
#define ONE_DERIVATION (64 * MIB)
/*
 * Two at once would be 128 MiB and the process.  One after the other peaks
 * at 64 MiB and the process (about 67 MiB here): 96 MiB lies well between.
 */
#define TWO_AT_ONCE (96 * MIB)

extern char **environ;

/*
 * Under ASan the figure is the sanitizer's (shadow memory, quarantine), and
 * auth_child, loading the instrumented module under the preloaded wrappers,
 * does not start: these tests prove nothing there.  valgrind does not
 * follow the child, so they run under it as they are.
 */
static void require_true_peak(const char *why)
{
	require_root(why);
#ifdef __SANITIZE_ADDRESS__
	printf("SKIP: %s: peak memory under ASan is the sanitizer's\n", why);
	fflush(stdout);
	skip();
#endif
}

struct child {
	int status; /* the PAM result */
	long peak;  /* KiB */
};

/* Runs auth_child SERVICE USER PASSWORD with envp (NULL: ours). */
static struct child auth_in_child(const char *service, const char *user, const char *password,
				  char **envp)
{
	const char *prog = getenv("DURESS_AUTH_CHILD");
	struct child c = { .status = -1 };
	struct rusage ru;
	int status;
	pid_t pid;

	assert_non_null(prog);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { strdup(prog), strdup(service), strdup(user), strdup(password),
				 NULL };

		execve(prog, argv, envp ? envp : environ);
		_exit(126);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		assert_int_equal(errno, EINTR);
	assert_true(WIFEXITED(status));
	c.status = WEXITSTATUS(status);
	c.peak = ru.ru_maxrss;
	printf("# %s/%s: PAM result %d, peak %ld KiB\n", service, user, c.status, c.peak);
	fflush(stdout);
	return c;
}

/* No per-user directory at all, an empty global one: still a derivation each. */
static void no_directory_costs_a_derivation(void **state)
{
	struct child c;

	(void)state;
	require_true_peak("the global directory is root's");
	remove_tree(U(ALICE)->dir);
	c = auth_in_child("after", "alice", "wrong-password", NULL);
	assert_int_equal(c.status, PAM_AUTH_ERR);
	assert_true(c.peak >= ONE_DERIVATION);
}

/* Outside group=, bob's actions are not even read: the same work as anyone's. */
static void outside_group_costs_a_derivation(void **state)
{
	struct child c;

	(void)state;
	require_true_peak("the global directory is root's");
	action_add(U(BOB)->dir, "act", U(BOB)->uid, U(BOB)->duress);
	c = auth_in_child("group", "bob", U(BOB)->duress, NULL);
	assert_int_equal(c.status, PAM_AUTH_ERR);
	assert_true(c.peak >= ONE_DERIVATION);
	expect_runs((const char *const[]){ NULL }, false);
}

/*
 * A user nobody has: pam_unix answers at once for such a name, so a
 * derivation would hide nothing and cost 64 MiB a guess in a spray.
 */
static void unknown_user_costs_nothing(void **state)
{
	struct child base, c;

	(void)state;
	require_true_peak("the global directory is root's");
	/*
	 * Against a service that ignores the module at once (services=): under
	 * valgrind the child's peak includes valgrind's own, from before exec.
	 */
	base = auth_in_child("svc-other", "nosuchuser", "wrong-password", NULL);
	c = auth_in_child("after", "nosuchuser", "wrong-password", NULL);
	assert_int_not_equal(c.status, PAM_SUCCESS);
	assert_true(c.peak < base.peak + ONE_DERIVATION / 2);
}

/* A script action in dir, signed at the default cost. */
static void default_action(const char *dir, const char *name, uid_t uid, const char *password)
{
	char path[PATH_MAX];

	action_script(dir, name, uid, "", true);
	pathf(path, "%s/%s", dir, name);
	action_sign_default(path, password);
}

/*
 * A per-user and a global signature at the default cost: derived one after
 * the other, so that a login holds one derivation's memory at most.
 */
static void scopes_derived_one_at_a_time(void **state)
{
	struct child c;

	(void)state;
	require_true_peak("the global directory is root's");
	default_action(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	default_action(W.global, "gact", 0, "global-duress");
	c = auth_in_child("after", "alice", "wrong-password", NULL);
	assert_int_equal(c.status, PAM_AUTH_ERR);
	assert_true(c.peak >= ONE_DERIVATION && c.peak < TWO_AT_ONCE);
	/* And both still match, each for itself. */
	c = auth_in_child("after", "alice", U(ALICE)->duress, NULL);
	assert_int_equal(c.status, PAM_SUCCESS);
	c = auth_in_child("after", "alice", "global-duress", NULL);
	assert_int_equal(c.status, PAM_SUCCESS);
	expect_runs((const char *const[]){ "act", "gact", NULL }, false);
}

/* yescrypt at 256 MiB: a crypt() that shows in the peak above any Argon2id here. */
#define HEAVY_HASH_ROUNDS 9
#define HEAVY_HASH (256 * MIB)

/* A copy of the accounts with alice's hash replaced by a 256 MiB yescrypt of `real`. */
static void heavy_accounts(char out[PATH_MAX], const char *real)
{
	char src[PATH_MAX], salt[CRYPT_GENSALT_OUTPUT_SIZE], *text, *rest, *buf = NULL;
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *hash;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(cd);
	assert_non_null(f);
	assert_non_null(crypt_gensalt_rn("$y$", HEAVY_HASH_ROUNDS, NULL, 0, salt, sizeof(salt)));
	hash = crypt_r(real, salt, cd);
	assert_true(hash && strncmp(hash, "$y$", 3) == 0);
	pathf(src, "%s/passwd", W.tmp);
	text = read_file(src, NULL);
	assert_non_null(text);
	for (char *l = strtok_r(text, "\n", &rest); l; l = strtok_r(NULL, "\n", &rest)) {
		char *colon = strchr(l, ':'), *after;

		assert_non_null(colon);
		after = strchr(colon + 1, ':');
		assert_non_null(after);
		if (strncmp(l, "alice:", 6) == 0)
			fprintf(f, "alice:%s%s\n", hash, after);
		else
			fprintf(f, "%s\n", l);
	}
	fclose(f);
	pathf(out, "%s/passwd-heavy", W.tmp);
	write_file(out, buf, len, 0, 0644);
	free(buf);
	free(text);
	free(cd);
}

/* Our environment with NSS_WRAPPER_PASSWD=passwd (free the array and its first entry). */
static char **env_with_passwd(const char *passwd)
{
	char *set;

	assert_true(asprintf(&set, "NSS_WRAPPER_PASSWD=%s", passwd) > 0);
	return env_edited("NSS_WRAPPER_PASSWD=", set);
}

/*
 * Before pam_unix, a duress login skips pam_unix's hash: the module hashes
 * the password against the account's hash itself.  With a 256 MiB yescrypt
 * as alice's hash, that crypt() shows in the peak; no Argon2id here comes
 * near it.  The real and a wrong password still get pam_unix's answer.
 */
static void before_placement_pays_the_unix_hash(void **state)
{
	char passwd[PATH_MAX];
	char **envp;
	struct child c;

	(void)state;
	require_true_peak("the per-user action runs as alice");
	action_add(U(ALICE)->dir, "act", U(ALICE)->uid, U(ALICE)->duress);
	heavy_accounts(passwd, U(ALICE)->real);
	envp = env_with_passwd(passwd);
	c = auth_in_child("before", "alice", U(ALICE)->duress, envp);
	assert_int_equal(c.status, PAM_SUCCESS);
	assert_true(c.peak >= HEAVY_HASH);
	expect_runs((const char *const[]){ "act", NULL }, false);
	c = auth_in_child("before", "alice", U(ALICE)->real, envp);
	assert_int_equal(c.status, PAM_SUCCESS);
	c = auth_in_child("before", "alice", "wrong-password", envp);
	assert_int_equal(c.status, PAM_AUTH_ERR);
	/* After pam_unix, which hashed already, the module does not hash again. */
	c = auth_in_child("after", "alice", U(ALICE)->duress, envp);
	assert_int_equal(c.status, PAM_SUCCESS);
	expect_runs((const char *const[]){ "act", "act", NULL }, false);
	free(envp[0]);
	free(envp);
}

#define T(f) cmocka_unit_test_setup(f, fresh_test)

static const struct CMUnitTest tests[] = {
	T(no_directory_costs_a_derivation),     T(outside_group_costs_a_derivation),
	T(unknown_user_costs_nothing),          T(scopes_derived_one_at_a_time),
	T(before_placement_pays_the_unix_hash),
};

const struct test_group timing_group = { "pam_timing", tests, sizeof(tests) / sizeof(tests[0]) };
