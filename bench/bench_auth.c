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
 * Then what the actions' sizes and costs make a wrong password cost
 * (size_and_cost_cells(), issue 24 item 8), and what a match adds.
 * And the password stack's check of a new password (issue 26), taken and
 * not, beside a failed login's time.
 *
 * Usage: bench_auth PATH/TO/duress
 */
#include <errno.h>
#include <fcntl.h>
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

#include "core/actions.h"
#include "core/auth.h"
#include "core/opts.h"
#include "core/sig.h"

#include "clock.h"

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
		double start = bench_now_ms();

		if (one_check(o, user) != DURESS_NO_MATCH) {
			fprintf(stderr, "bench: unexpected outcome\n");
			exit(1);
		}
		t[i] = bench_now_ms() - start;
	}
	return bench_median(t, RUNS);
}

/*
 * The median time of duress_password_taken() (pam_sm_chauthtok's check
 * of a new password, which starts nothing) for new_pw, whose answer must
 * be want.
 */
static double change_ms(const struct duress_opts *o, const char *user, const char *new_pw, int want)
{
	struct duress_log lg = { 0 };
	struct duress_request req = { .user = user,
				      .password = new_pw,
				      .password_len = strlen(new_pw),
				      .items = { .user = user, .service = "passwd" } };
	double t[RUNS];

	for (int i = 0; i < RUNS; i++) {
		double start = bench_now_ms();

		if (duress_password_taken(o, &req, &lg) != want) {
			fprintf(stderr, "bench: unexpected answer of the password change check\n");
			exit(1);
		}
		t[i] = bench_now_ms() - start;
	}
	return bench_median(t, RUNS);
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
		double start = bench_now_ms();

		if (duress_derive_key(password, strlen(password), &p, key) < 0)
			exit(1);
		t[i] = bench_now_ms() - start;
	}
	sodium_memzero(key, sizeof(key));
	return bench_median(t, RUNS);
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

/* --- what the actions' sizes and costs make a wrong password cost ------------------- */

#define BIG_ACTION ((size_t)15 * 1000 * 1000) /* the 15 MB */
#define CELL_ROUNDS 21

/* Writes dir/name (mode 0700) and its NAME.sig for password at p, in-process: no CLI floor. */
static int write_signed(const char *dir, const char *name, const char *content, size_t len,
			const struct duress_params *p)
{
	struct duress_sig sig = { .params = *p };
	unsigned char key[DURESS_KEY_LEN];
	char path[4096], line[DURESS_SIG_MAX + 1];
	int n, fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (fd < 0 || write(fd, content, len) != (ssize_t)len || close(fd) < 0)
		return -1;
	crypto_hash_sha256(sig.content_hash, (const unsigned char *)content, len);
	if (duress_derive_key(password, strlen(password), p, key) < 0)
		return -1;
	duress_tag(key, &sig, sig.content_hash, sig.tag);
	sodium_memzero(key, sizeof(key));
	n = duress_sig_format(&sig, line, sizeof(line));
	snprintf(path, sizeof(path), "%s/%s.sig", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (n < 0 || fd < 0 || write(fd, line, (size_t)n) != n || close(fd) < 0)
		return -1;
	return 0;
}

/* One action of len bytes (a script and padding), signed at mem bytes and ops passes. */
static int make_cell_dir(const char *dir, size_t len, uint64_t mem, uint64_t ops)
{
	static const char head[] = "#!/bin/sh\nexit 0\n";
	struct duress_params p;
	char *content = malloc(len);
	int r;

	if (!content || mkdir(dir, 0700) < 0) {
		free(content);
		return -1;
	}
	memset(content, '#', len);
	memcpy(content, head, sizeof(head) - 1);
	duress_params_new(&p, mem, ops);
	r = write_signed(dir, "alert", content, len, &p);
	free(content);
	return r;
}

/* This process's CPU time, in ms: the rest of the machine's load counts less than in wall time. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A wrong password's times, round by round, for one per-user directory. */
struct cell {
	const char *dir;
	double wall[CELL_ROUNDS], cpu[CELL_ROUNDS];
};

static void time_wrong(struct duress_opts *o, const char *user, struct cell *c, int round)
{
	double start = bench_now_ms(), start_cpu = cpu_ms();

	o->user_dir = c->dir;
	if (one_check(o, user) != DURESS_NO_MATCH) {
		fprintf(stderr, "bench: unexpected outcome\n");
		exit(1);
	}
	c->cpu[round] = cpu_ms() - start_cpu;
	c->wall[round] = bench_now_ms() - start;
}

/* duress_dir_verify() of dir alone (no derivation timed), with the key of pw. */
static double verify_ms(const char *dir, const char *pw, int want)
{
	unsigned char key[1][DURESS_KEY_LEN];
	struct duress_caps caps;
	struct duress_dir d;
	double start, t;

	duress_user_caps_default(&caps);
	if (duress_dir_load(&d, dir, DURESS_SCOPE_USER, getuid(), &caps, false, NULL) < 0 ||
	    d.n_params != 1 || duress_derive_key(pw, strlen(pw), &d.params[0], key[0]) < 0)
		exit(1);
	start = bench_now_ms();
	if (duress_dir_verify(&d, (const unsigned char(*)[DURESS_KEY_LEN])key, pw, strlen(pw)) !=
	    want) {
		fprintf(stderr, "bench: unexpected verify result\n");
		exit(1);
	}
	t = bench_now_ms() - start;
	sodium_memzero(key, sizeof(key));
	duress_dir_free(&d);
	return t;
}

/* One cell's medians, and their ratios over the account without actions. */
static void print_cell(const char *what, struct cell *c, double none_wall, double none_cpu)
{
	double wall = bench_median(c->wall, CELL_ROUNDS), cpu = bench_median(c->cpu, CELL_ROUNDS);

	printf("wrong password, %s: median %.1f ms wall, %.1f ms CPU; over no actions: "
	       "wall %.3f, CPU %.3f\n",
	       what, wall, cpu, wall / none_wall, cpu / none_cpu);
}

/*
 * A wrong password for an account with one 15 MB action, and for one with
 * a small action signed at --memlimit 32M --opslimit 2, each over an
 * account without actions (a missing per-user directory): medians of
 * interleaved rounds, so that the machine's load hits all three alike, in
 * wall and in CPU time.  Then what a match adds in the before-pam_unix
 * placement: the copy and hash of the matched 15 MB action
 * (duress_dir_verify, right password over wrong).
 */
static int size_and_cost_cells(const char *base, const char *user)
{
	char d_none[256], d_big[256], d_low[256];
	struct cell none = { .dir = d_none }, big = { .dir = d_big }, low = { .dir = d_low };
	struct cell *const order[] = { &none, &big, &low };
	double hit[CELL_ROUNDS], miss[CELL_ROUNDS], none_wall, none_cpu;
	struct duress_opts o;

	snprintf(d_none, sizeof(d_none), "%s/cell-none", base);
	snprintf(d_big, sizeof(d_big), "%s/cell-big", base);
	snprintf(d_low, sizeof(d_low), "%s/cell-low", base);
	if (make_cell_dir(d_big, BIG_ACTION, crypto_pwhash_MEMLIMIT_INTERACTIVE,
			  crypto_pwhash_OPSLIMIT_INTERACTIVE) < 0 ||
	    make_cell_dir(d_low, 64, 32U << 20, 2) < 0)
		return -1;
	duress_opts_default(&o);
	o.global_dir = "";
	o.slot_dir = ""; /* the work, not a wait for a slot that other logins on the machine hold */
	for (int i = 0; i < CELL_ROUNDS; i++) {
		/* Each cell first in a third of the rounds: what comes before one does not count. */
		for (int k = 0; k < 3; k++)
			time_wrong(&o, user, order[(i + k) % 3], i);
		miss[i] = verify_ms(d_big, "not-the-duress-password", 0);
		hit[i] = verify_ms(d_big, password, 1);
	}
	none_wall = bench_median(none.wall, CELL_ROUNDS);
	none_cpu = bench_median(none.cpu, CELL_ROUNDS);
	printf("size and cost cells, %d interleaved rounds:\n", CELL_ROUNDS);
	print_cell("no actions", &none, none_wall, none_cpu);
	print_cell("one 15 MB action (target 0.97-1.03)", &big, none_wall, none_cpu);
	print_cell("an action signed at 32M/2", &low, none_wall, none_cpu);
	printf("checking a directory with one 15 MB action (no derivation): wrong password "
	       "%.2f ms, right password %.2f ms (the copy and hash a match adds)\n",
	       bench_median(miss, CELL_ROUNDS), bench_median(hit, CELL_ROUNDS));
	return 0;
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
	o.user_dir = one;
	t = change_ms(&o, pw->pw_name, password, 1);
	printf("password change, 1 action, the duress password (refused): median %.1f ms, "
	       "%.2f x a failed login\n",
	       t, t / t1);
	t = change_ms(&o, pw->pw_name, "another-new-password", 0);
	printf("password change, 1 action, another password (taken): median %.1f ms, "
	       "%.2f x a failed login\n",
	       t, t / t1);
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
	if (size_and_cost_cells(tmpl, pw->pw_name) < 0)
		fprintf(stderr, "bench: cannot prepare the size and cost cells\n");
	snprintf(sig, sizeof(sig), "rm -rf '%s'", tmpl);
	return system(sig) == 0 ? 0 : 1;
}
