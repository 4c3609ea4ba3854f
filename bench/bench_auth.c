/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a failed login costs inside pam_duress: the median time of
 * duress_authenticate() (everything pam_sm_authenticate does after reading
 * the PAM items) with a wrong password, for 1 and for 10 signed per-user
 * actions at the default cost, the ratio of the two, the size of a
 * signature, and the peak memory of one check.  Then the pieces of the
 * constant work: one Argon2id at the default cost, an account without a
 * directory (a dummy derivation), and, as root, a per-user and a global
 * directory derived at once, beside their sum one after the other.
 *
 * Usage: bench_auth PATH/TO/duress
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/auth.h"
#include "core/opts.h"
#include "core/sig.h"

#define RUNS 10

static const char password[] = "Bench-duress-pw-7";

static int sign_actions(const char *duress, const char *dir, int count)
{
	for (int i = 0; i < count; i++) {
		char path[4096], cmd[8192];
		FILE *f;

		snprintf(path, sizeof(path), "%s/action%02d", dir, i);
		f = fopen(path, "w");
		if (!f)
			return -1;
		fprintf(f, "#!/bin/sh\necho action %d\n", i);
		fclose(f);
		chmod(path, 0700);
		snprintf(cmd, sizeof(cmd), "echo '%s' | '%s' sign --stdin '%s' >/dev/null 2>&1",
			 password, duress, path);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static enum duress_outcome one_check(const struct duress_opts *o, const char *user)
{
	struct duress_log lg = { 0 };
	struct duress_request req = {
		.user = user,
		.password = "not-the-duress-password",
		.password_len = strlen("not-the-duress-password"),
		.items = { .user = user, .service = "bench" },
	};

	return duress_authenticate(o, &req, &lg);
}

static double median_ms(const struct duress_opts *o, const char *user)
{
	double t[RUNS];

	for (int i = 0; i < RUNS; i++) {
		double start = now_ms();

		if (one_check(o, user) != DURESS_NO_MATCH) {
			fprintf(stderr, "bench: unexpected outcome\n");
			exit(1);
		}
		t[i] = now_ms() - start;
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	return (t[RUNS / 2 - 1] + t[RUNS / 2]) / 2;
}

static double median_of(double *t)
{
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	return (t[RUNS / 2 - 1] + t[RUNS / 2]) / 2;
}

/* One Argon2id at libsodium's INTERACTIVE cost, the default of `duress sign`. */
static double derivation_ms(void)
{
	unsigned char key[DURESS_KEY_LEN];
	struct duress_params p;
	double t[RUNS];

	duress_params_new(&p, crypto_pwhash_MEMLIMIT_INTERACTIVE,
			  crypto_pwhash_OPSLIMIT_INTERACTIVE);
	for (int i = 0; i < RUNS; i++) {
		double start = now_ms();

		if (duress_derive_key(password, strlen(password), &p, key) < 0)
			exit(1);
		t[i] = now_ms() - start;
	}
	sodium_memzero(key, sizeof(key));
	return median_of(t);
}

/* Peak resident memory of a fresh process doing one check, in KiB. */
static long peak_kib(const struct duress_opts *o, const char *user)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(one_check(o, user) == DURESS_NO_MATCH ? 0 : 1);
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || status != 0)
		return -1;
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/duress-bench.XXXXXX";
	char one[64], ten[64], global[64], none[64], sig[128];
	struct passwd *pw = getpwuid(getuid());
	struct duress_opts o;
	struct stat st;
	double t1, t10, kdf, t;

	if (argc != 2 || !pw || sodium_init() < 0 || !mkdtemp(tmpl))
		return 2;
	snprintf(one, sizeof(one), "%s/one", tmpl);
	snprintf(ten, sizeof(ten), "%s/ten", tmpl);
	snprintf(global, sizeof(global), "%s/global", tmpl);
	snprintf(none, sizeof(none), "%s/none", tmpl);
	if (mkdir(one, 0700) < 0 || mkdir(ten, 0700) < 0 || mkdir(global, 0700) < 0 ||
	    sign_actions(argv[1], one, 1) < 0 || sign_actions(argv[1], ten, 10) < 0 ||
	    sign_actions(argv[1], global, 1) < 0) {
		fprintf(stderr, "bench: cannot prepare actions\n");
		return 2;
	}
	duress_opts_default(&o);
	o.global_dir = "";
	o.user_dir = one;
	t1 = median_ms(&o, pw->pw_name);
	printf("1 action:   median %.1f ms per failed login (%d runs)\n", t1, RUNS);
	printf("1 action:   peak memory of one check %ld KiB\n", peak_kib(&o, pw->pw_name));
	o.user_dir = ten;
	t10 = median_ms(&o, pw->pw_name);
	printf("10 actions: median %.1f ms per failed login (%d runs)\n", t10, RUNS);
	printf("10 actions: peak memory of one check %ld KiB\n", peak_kib(&o, pw->pw_name));
	printf("ratio 10/1: %.2f\n", t10 / t1);
	kdf = derivation_ms();
	printf("one Argon2id at the default cost: median %.1f ms\n", kdf);
	o.user_dir = none;
	printf("no per-user directory (a dummy derivation): median %.1f ms\n",
	       median_ms(&o, pw->pw_name));
	if (geteuid() == 0) {
		o.user_dir = one;
		o.global_dir = global;
		t = median_ms(&o, pw->pw_name);
		printf("per-user + global directory, derived at once: median %.1f ms "
		       "(one after the other: about %.1f ms), peak memory %ld KiB\n",
		       t, t1 + kdf, peak_kib(&o, pw->pw_name));
	}
	snprintf(sig, sizeof(sig), "%s/action00.sig", one);
	if (stat(sig, &st) == 0)
		printf("signature file: %lld bytes\n", (long long)st.st_size);
	snprintf(sig, sizeof(sig), "rm -rf '%s'", tmpl);
	return system(sig) == 0 ? 0 : 1;
}
