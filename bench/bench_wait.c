/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long a duress login waits for its actions under wait=, through the
 * real runner, as ratios measured in this one run: the numbers pam-runner
 * once asserted as time bounds (0.9-1.9 s, under 0.8 s), which a loaded
 * machine broke without a bug.  The test now asserts the order of the
 * return and the action's evidence; this says how long it took.
 *
 *   no wait=, an action of 1 s:  the login's own work (derivation, runner start)
 *   wait=2, an action of 1 s:    the wait beyond that / 1 s (the action's end)
 *   wait=1, an action of 3 s:    the wait beyond that / 1 s (the bound)
 *
 * Usage: bench_wait PATH/TO/duress PATH/TO/session-helper
 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "core/auth.h"
#include "core/opts.h"

#include "clock.h"

#define RUNS 5

static const char password[] = "Bench-wait-pw-7";
static char top[] = "/tmp/duress-bench-wait.XXXXXX";

static void die(const char *what)
{
	fprintf(stderr, "bench_wait: %s\n", what);
	exit(2);
}

/* top/NAME: a directory whose one action sleeps seconds, signed with the real CLI. */
static void sleeper_dir(const char *duress, const char *name, unsigned seconds, char out[PATH_MAX])
{
	char path[PATH_MAX], text[64], cmd[3 * PATH_MAX];
	int fd, n;

	snprintf(out, PATH_MAX, "%s/%s", top, name);
	snprintf(path, sizeof(path), "%s/act", out);
	n = snprintf(text, sizeof(text), "#!/bin/sh\nsleep %u\n", seconds);
	if (mkdir(out, 0700) < 0)
		die("cannot make a directory");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) < 0)
		die("cannot write the action");
	snprintf(cmd, sizeof(cmd), "echo '%s' | '%s' sign --stdin '%s' >/dev/null 2>&1", password,
		 duress, path);
	if (system(cmd) != 0)
		die("duress sign failed");
}

/* The median time of a duress login against dir with wait=wait_seconds, in ms. */
static double median_ms(const char *runner, const char *dir, unsigned wait_seconds,
			const char *user)
{
	const struct duress_log lg = { 0 };
	const struct duress_request req = {
		.user = user,
		.password = password,
		.password_len = strlen(password),
		.items = { .user = user, .service = "bench" },
	};
	struct duress_opts o;
	double t[RUNS];

	duress_opts_default(&o);
	o.global_dir = "";
	o.user_dir = dir;
	o.runner = runner;
	o.wait_seconds = wait_seconds;
	for (int i = 0; i < RUNS; i++) {
		double start = bench_now_ms();
		enum duress_outcome out = duress_authenticate(&o, &req, &lg);

		t[i] = bench_now_ms() - start;
		/* As root the per-user password of uid 0 is refused, and still runs. */
		if (out != DURESS_MATCH && out != DURESS_MATCH_DENIED)
			die("the duress password did not match");
	}
	return bench_median(t, RUNS);
}

int main(int argc, char **argv)
{
	struct passwd *pw = getpwuid(getuid());
	char one[PATH_MAX], three[PATH_MAX], cmd[PATH_MAX + 16];
	double base, t;

	if (argc != 3 || !pw || sodium_init() < 0 || !mkdtemp(top))
		return 2;
	sleeper_dir(argv[1], "one", 1, one);
	sleeper_dir(argv[1], "three", 3, three);
	printf("a duress login through the real runner, median of %d runs each:\n", RUNS);
	base = median_ms(argv[2], one, 0, pw->pw_name);
	printf("  no wait=, an action of 1 s:  %7.1f ms (the login's own work)\n", base);
	t = median_ms(argv[2], one, 2, pw->pw_name);
	printf("  wait=2, an action of 1 s:    %7.1f ms, waited %.1f ms: ratio to the action's "
	       "1 s %.2f\n",
	       t, t - base, (t - base) / 1000);
	t = median_ms(argv[2], three, 1, pw->pw_name);
	printf("  wait=1, an action of 3 s:    %7.1f ms, waited %.1f ms: ratio to wait=1 %.2f\n", t,
	       t - base, (t - base) / 1000);
	/* The 3 s actions still sleeping do not mind their directory going. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : 1;
}
