/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a duress login costs beside a login that does not match, through the
 * real libpam (pam_wrapper), the real pam_unix and the real runner, with
 * nss_wrapper's fake account: the ratio of the median times of
 * pam_start..pam_end, and the page faults of the children each attempt
 * reaps (what the login process's /proc/PID/stat shows as cminflt) and
 * its own (minflt).  Two
 * stacks, each with one per-user action that keeps a CPU busy for a while
 * (a shell loop), signed at the default cost:
 *
 *   module only     pam_duress, then pam_deny: the duress password against
 *                   a wrong one.  The module prompts, so it takes itself
 *                   for the line before pam_unix and pays pam_unix's hash
 *                   for a match: this account's hash is in a shadow file
 *                   that has no entry for it, which makes that hash free,
 *                   and leaves the module's own work
 *   before pam_unix pam_duress, then pam_unix try_first_pass: the duress
 *                   password against the real one (docs/configuration.md's
 *                   placement for coercion)
 *
 * Attempts alternate (ABBA), and each starts once the previous one's actions
 * have ended.  The ratio is the median of the pairs' ratios (each pair is
 * one duress and one other attempt next to each other in time, which
 * cancels most of what the rest of a shared machine does), beside the
 * ratio of the medians.  Each attempt starts after the previous one's
 * actions ended: this process is a child subreaper, and reaps the runner's
 * worker before the next attempt.  The derivation slots are the bench's
 * own (slot_dir=), not shared with whatever else the machine runs.
 * Target: ratios 0.97-1.03 (issue 24).
 *
 * Then once actions (issue 26, item 2), before pam_unix, with the busy
 * action signed --once in a directory of its own: a real login, a first
 * duress login (its record removed before, untimed: the action runs) and a
 * spent one (the record there: nothing runs), interleaved in rotating
 * order; the ratios of the medians of the rounds' ratios.  As root only
 * (not root, a once action never runs).
 *
 * Usage: bench_match MODULE RUNNER DURESS_CLI [PAIRS]
 * (under pam_wrapper and nss_wrapper: meson's benchmark sets LD_PRELOAD)
 */
#include <crypt.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "tests/pam/conv.h"

#include "clock.h"

#define PAIRS_DEFAULT 21
#define PAIRS_MAX 200
#define BENCH_UID 20001 /* the fake account's, as root (its files are chowned to it) */

static const char real_pw[] = "Bench-real-pw-1", duress_pw[] = "Bench-duress-pw-2",
		  wrong_pw[] = "Bench-wrong-pw-3";

/* About a quarter of a second of one CPU in dash; long enough to compete with anything. */
static const char busy_action[] = "#!/bin/sh\n"
				  "i=0\n"
				  "while [ $i -lt 200000 ]; do i=$((i + 1)); done\n";

struct bench {
	char tmp[64];
	char home[128];
	const char *module, *runner;
	uid_t uid;
};

static int write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	return chmod(path, mode);
}

/* passwd and group for nss_wrapper: the account's real password hashed as the system would. */
static int write_accounts(const struct bench *b)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE], path[256], text[1024];
	struct crypt_data cd = { 0 };
	const char *hash;

	if (!crypt_gensalt_rn(NULL, 0, NULL, 0, salt, sizeof(salt)) ||
	    !(hash = crypt_r(real_pw, salt, &cd)) || *hash == '*')
		return -1;
	snprintf(text, sizeof(text),
		 "root:x:0:0:root:/root:/bin/sh\nbencher:%s:%u:%u::%s:/bin/sh\n"
		 "shadowed:x:%u:%u::%s:/bin/sh\n",
		 hash, (unsigned)b->uid, (unsigned)b->uid, b->home, (unsigned)b->uid,
		 (unsigned)b->uid, b->home);
	snprintf(path, sizeof(path), "%s/passwd", b->tmp);
	if (write_text(path, text, 0644) < 0 || setenv("NSS_WRAPPER_PASSWD", path, 1) < 0)
		return -1;
	snprintf(text, sizeof(text), "root:x:0:\nbencher:x:%u:\nshadowed:x:%u:\n", (unsigned)b->uid,
		 (unsigned)b->uid);
	snprintf(path, sizeof(path), "%s/group", b->tmp);
	return write_text(path, text, 0644) < 0 || setenv("NSS_WRAPPER_GROUP", path, 1) < 0 ? -1 :
											      0;
}

/* What follows the module line before pam_unix: pam_unix try_first_pass, then the answer. */
#define UNIX_AFTER                                                             \
	"auth [success=1 default=ignore] pam_unix.so nodelay try_first_pass\n" \
	"auth requisite pam_deny.so\nauth required pam_permit.so\n"            \
	"account required pam_permit.so\n"

/* dir/name: the module line, reading home/subdir, then rest. */
static int write_service(const struct bench *b, const char *dir, const char *name,
			 const char *subdir, const char *rest)
{
	char path[256], text[2048];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text),
		 "auth [success=done default=ignore] %s user_dir=%s/%s global_dir= runner=%s "
		 "slot_dir=%s/slots state_dir=%s/state\n%s",
		 b->module, b->home, subdir, b->runner, b->tmp, b->tmp, rest);
	return write_text(path, text, 0644);
}

/*
 * The services and other, in a directory pam_wrapper reads instead of
 * /etc/pam.d: the module alone, and before pam_unix with the plain action
 * (.duress) and with the once one (.once).
 */
static int write_services(const struct bench *b)
{
	char dir[128], path[256];

	snprintf(dir, sizeof(dir), "%s/pam.d", b->tmp);
	if (mkdir(dir, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/other", dir);
	if (write_text(path, "auth required pam_deny.so\naccount required pam_deny.so\n", 0644) <
		    0 ||
	    write_service(b, dir, "bench-only", ".duress",
			  "auth requisite pam_deny.so\naccount required pam_permit.so\n") < 0 ||
	    write_service(b, dir, "bench-before", ".duress", UNIX_AFTER) < 0 ||
	    write_service(b, dir, "bench-once", ".once", UNIX_AFTER) < 0)
		return -1;
	return setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1) < 0 ? -1 : 0;
}

/* The busy action in home/subdir, signed by the real CLI at the default cost (with sign_opts). */
static int write_action_in(const struct bench *b, const char *cli, const char *subdir,
			   const char *sign_opts)
{
	char dir[256], path[512], cmd[2048];

	snprintf(dir, sizeof(dir), "%s/%s", b->home, subdir);
	snprintf(path, sizeof(path), "%s/busy", dir);
	if (mkdir(dir, 0700) < 0 || write_text(path, busy_action, 0700) < 0)
		return -1;
	/* pam_wrapper and nss_wrapper are for this process, not for the CLI. */
	snprintf(cmd, sizeof(cmd),
		 "echo '%s' | env -u LD_PRELOAD '%s' sign --stdin %s '%s' >/dev/null 2>&1",
		 duress_pw, cli, sign_opts, path);
	return system(cmd) == 0 ? 0 : -1;
}

/* The busy action, plain and once, owned by the account. */
static int write_action(const struct bench *b, const char *cli)
{
	char cmd[2048];

	if (mkdir(b->home, 0755) < 0 || write_action_in(b, cli, ".duress", "") < 0 ||
	    write_action_in(b, cli, ".once", "--once") < 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "chown -R %u:%u '%s'", (unsigned)b->uid, (unsigned)b->uid,
		 b->home);
	return system(cmd) == 0 ? 0 : -1;
}

/* Until every process the runner left (adopted here) has ended. */
static void reap_adopted(void)
{
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

struct attempt {
	double seconds;
	long children_minflt; /* what the attempt's reaped children added to cminflt */
	long own_minflt;      /* the attempt's own page faults (minflt) */
	int result;
};

static struct attempt attempt(const char *service, const char *user, const char *password)
{
	struct conv_password s = { .password = password };
	const struct pam_conv pc = { conv_password, &s };
	struct rusage before, after, self_before, self_after;
	struct attempt a;
	pam_handle_t *ph = NULL;
	double t0;

	getrusage(RUSAGE_CHILDREN, &before);
	getrusage(RUSAGE_SELF, &self_before);
	t0 = bench_now_ms();
	a.result = pam_start(service, user, &pc, &ph);
	if (a.result == PAM_SUCCESS)
		a.result = pam_authenticate(ph, 0);
	pam_end(ph, a.result);
	a.seconds = (bench_now_ms() - t0) / 1e3;
	getrusage(RUSAGE_SELF, &self_after);
	getrusage(RUSAGE_CHILDREN, &after);
	a.children_minflt = after.ru_minflt - before.ru_minflt;
	a.own_minflt = self_after.ru_minflt - self_before.ru_minflt;
	reap_adopted();
	return a;
}

/*
 * pairs attempts of each password, ABBA; prints the medians, their ratio
 * and the children's page faults.  0, or -1 if an answer was not the
 * expected one.
 */
static int compare(const char *what, const char *service, const char *user, const char *other_pw,
		   const char *other_name, int other_result, int pairs)
{
	double t_duress[PAIRS_MAX], t_other[PAIRS_MAX], f_duress[PAIRS_MAX], f_other[PAIRS_MAX],
		o_duress[PAIRS_MAX], o_other[PAIRS_MAX], ratios[PAIRS_MAX];
	double md, mo;

	for (int i = 0; i < 2 * pairs; i++) {
		bool duress = (i % 4 == 0 || i % 4 == 3);
		struct attempt a = attempt(service, user, duress ? duress_pw : other_pw);

		if (a.result != (duress ? PAM_SUCCESS : other_result)) {
			fprintf(stderr, "bench_match: %s: unexpected PAM result %d\n", what,
				a.result);
			return -1;
		}
		(duress ? t_duress : t_other)[i / 2] = a.seconds;
		(duress ? f_duress : f_other)[i / 2] = (double)a.children_minflt;
		(duress ? o_duress : o_other)[i / 2] = (double)a.own_minflt;
	}
	for (int k = 0; k < pairs; k++)
		ratios[k] = t_duress[k] / t_other[k];
	md = bench_median(t_duress, (size_t)pairs);
	mo = bench_median(t_other, (size_t)pairs);
	printf("%s: duress %.1f ms, %s %.1f ms (medians of %d); ratio %.3f, of the medians %.3f "
	       "(target 0.97-1.03)\n",
	       what, md * 1e3, other_name, mo * 1e3, pairs, bench_median(ratios, (size_t)pairs),
	       md / mo);
	printf("  page faults per attempt (medians): reaped children's: duress %.0f, %s %.0f; "
	       "own: duress %.0f, %s %.0f\n",
	       bench_median(f_duress, (size_t)pairs), other_name,
	       bench_median(f_other, (size_t)pairs), bench_median(o_duress, (size_t)pairs),
	       other_name, bench_median(o_other, (size_t)pairs));
	return 0;
}

/* Removes every once record: the once action runs at its next match again. */
static int rearm(const struct bench *b)
{
	char path[128];
	struct dirent *de;
	int r = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/state/once", b->tmp);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	while (r == 0 && (de = readdir(d)))
		if (de->d_name[0] != '.' && unlinkat(dirfd(d), de->d_name, 0) < 0)
			r = -1;
	closedir(d);
	return r;
}

enum { REAL, FIRST, SPENT, N_KINDS };

/*
 * A real login, a first and a spent duress login with a once action, before
 * pam_unix, in rounds whose order rotates; prints the medians and the
 * medians of the rounds' ratios.  0, or -1 if an answer was not a login.
 */
static int compare_once(const struct bench *b, int rounds)
{
	static const char *const names[N_KINDS] = { "real", "first duress", "spent duress" };
	double t[N_KINDS][PAIRS_MAX], f[N_KINDS][PAIRS_MAX], r_first[PAIRS_MAX], r_spent[PAIRS_MAX],
		r_spent_first[PAIRS_MAX];

	/* The first record, so that a spent attempt before the first in round 0 is spent. */
	(void)attempt("bench-once", "bencher", duress_pw);
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < N_KINDS; k++) {
			int kind = (i + k) % N_KINDS;
			struct attempt a;

			if (kind == FIRST && rearm(b) < 0)
				return -1;
			a = attempt("bench-once", "bencher", kind == REAL ? real_pw : duress_pw);
			if (a.result != PAM_SUCCESS) {
				fprintf(stderr, "bench_match: once: %s: PAM result %d\n",
					names[kind], a.result);
				return -1;
			}
			t[kind][i] = a.seconds;
			f[kind][i] = (double)a.children_minflt;
		}
		r_first[i] = t[FIRST][i] / t[REAL][i];
		r_spent[i] = t[SPENT][i] / t[REAL][i];
		r_spent_first[i] = t[SPENT][i] / t[FIRST][i];
	}
	printf("once action, before pam_unix (%d rounds): real %.1f ms, first duress %.1f ms, "
	       "spent duress %.1f ms (medians)\n",
	       rounds, bench_median(t[REAL], (size_t)rounds) * 1e3,
	       bench_median(t[FIRST], (size_t)rounds) * 1e3,
	       bench_median(t[SPENT], (size_t)rounds) * 1e3);
	printf("  ratios (medians of the rounds'): first/real %.3f, spent/real %.3f, spent/first "
	       "%.3f (target 0.97-1.03)\n",
	       bench_median(r_first, (size_t)rounds), bench_median(r_spent, (size_t)rounds),
	       bench_median(r_spent_first, (size_t)rounds));
	printf("  page faults of reaped children per attempt (medians): real %.0f, first %.0f, "
	       "spent %.0f\n",
	       bench_median(f[REAL], (size_t)rounds), bench_median(f[FIRST], (size_t)rounds),
	       bench_median(f[SPENT], (size_t)rounds));
	return 0;
}

static int set_up(struct bench *b, const char *cli)
{
	strcpy(b->tmp, "/tmp/duress-bench-match.XXXXXX");
	if (!mkdtemp(b->tmp) || chmod(b->tmp, 0755) < 0)
		return -1;
	snprintf(b->home, sizeof(b->home), "%s/home", b->tmp);
	b->uid = geteuid() == 0 ? BENCH_UID : geteuid();
	return write_accounts(b) < 0 || write_services(b) < 0 || write_action(b, cli) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct bench b = { .module = argc > 1 ? argv[1] : NULL,
			   .runner = argc > 2 ? argv[2] : NULL };
	int pairs = argc > 4 ? atoi(argv[4]) : PAIRS_DEFAULT, r;
	char cmd[128];

	if (argc < 4 || argc > 5 || pairs < 1 || pairs > PAIRS_MAX) {
		fputs("usage: bench_match MODULE RUNNER DURESS_CLI [PAIRS]\n", stderr);
		return 2;
	}
	if (!getenv("PAM_WRAPPER") || prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL) < 0) {
		fputs("bench_match: run under pam_wrapper (meson benchmark)\n", stderr);
		return 2;
	}
	if (set_up(&b, argv[3]) < 0) {
		fprintf(stderr, "bench_match: cannot set up %s\n", b.tmp);
		return 2;
	}
	/* pam_wrapper sets itself up at the first pam_start: not inside a timed attempt. */
	(void)attempt("bench-only", "shadowed", wrong_pw);
	r = compare("module only, duress / wrong password", "bench-only", "shadowed", wrong_pw,
		    "wrong", PAM_AUTH_ERR, pairs);
	if (r == 0)
		r = compare("before pam_unix, duress / real password", "bench-before", "bencher",
			    real_pw, "real", PAM_SUCCESS, pairs);
	if (r == 0 && geteuid() == 0)
		r = compare_once(&b, pairs);
	else if (r == 0)
		puts("once action: not root, a once action never runs: skipped");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b.tmp);
	return system(cmd) == 0 && r == 0 ? 0 : 1;
}
