/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PAM-level client of bench/spray: real pam_authenticate() calls
 * through the real libpam, against the real pam_unix and a service file in
 * /etc/pam.d.  A driver rather than pamtester because pamtester's process
 * start-up (exec, dynamic linking, reading its arguments) is a fixed cost
 * of the same order as a whole attempt for an unknown name, and a per-process
 * clock cannot start N of them at the same instant: here N children are
 * forked first, held at a barrier and released together; each loads the
 * stack itself (pam_start reads the service file and dlopens the modules,
 * as the per-connection process of sshd does).
 *
 *   spray_pam run SERVICE N USER PASSWORD FLOOR_MIB DEADLINE_S [RHOST]
 *     N concurrent attempts, each with PAM_RHOST set to RHOST (default
 *     127.0.0.1; "-": none, as at the console; "many": a different address
 *     for each attempt, 10.77.X.Y, as from a botnet).  Prints one line:
 *       wall=SECONDS ok=N fail=N other=N drop_mib=MIB rss_mib=MIB p50=S max=S
 *       aborted=0|1 cut=0|1
 *     wall: from the release of the barrier until the last child has ended;
 *     ok, fail: attempts that PAM accepted, refused (wrong password or
 *     unknown user); other: any other answer, or killed; drop_mib: the peak
 *     drop of MemAvailable (/proc/meminfo, sampled every 20 ms by a thread)
 *     below its value at the release; rss_mib: the median of the children's
 *     peak RSS (getrusage's ru_maxrss: one attempt's own memory, which other
 *     processes of the machine do not blur); p50/max: the durations of the
 *     attempts that ended.  If MemAvailable falls under FLOOR_MIB, every
 *     child is killed (aborted=1): a benchmark must not get the machine
 *     OOM-killed; so are those still running DEADLINE_S seconds after the
 *     release (cut=1): the run stays bounded whatever the module does.
 *   spray_pam time SERVICE USER PASSWORD [RHOST]
 *     One attempt in this process: pam_start to pam_end (RHOST as for run).
 *     Prints
 *       sec=SECONDS rc=PAM_RESULT
 *   spray_pam hold SERVICE K USER PASSWORD RUID WATCH_S
 *     What a local user does to a setuid su (issue 24, item 4): K children
 *     with real uid RUID and effective uid 0 (setresuid(RUID, 0, 0), as su
 *     runs) each try PASSWORD for USER (no PAM_RHOST); each one seen holding
 *     a lock in /proc/locks (a derivation slot: in the middle of its
 *     derivation) is stopped with SIGSTOP at once.  After WATCH_S seconds it
 *     prints
 *       held=H ended=E of=K
 *     (H: the locks they hold, all stopped; E: children already answered)
 *     and a line "ready",
 *     then keeps them stopped until SIGTERM, and kills them.
 *   spray_pam watch FLOOR_MIB
 *     Samples MemAvailable every 20 ms until SIGTERM (or until it is under
 *     FLOOR_MIB), then prints drop_mib=MIB under_floor=0|1: the drop below
 *     the first sample.
 *
 * Exit status: 0 when it ran (whatever PAM answered), 2 on a usage or
 * system error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>

#define SAMPLE_NS (20 * 1000 * 1000L)
#define MAX_N 1000
#define MAX_HOLD 64

struct result {
	int rc;
	int us;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* MemAvailable in KiB, or -1. */
static long mem_available(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	const char *p;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "MemAvailable:");
	return p ? strtol(p + strlen("MemAvailable:"), NULL, 10) : -1;
}

struct secret {
	const char *password;
};

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	const struct secret *sec = data;
	struct pam_response *r = calloc((size_t)n, sizeof(*r));

	if (!r)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(sec->password);
			if (!r[i].resp) {
				for (int j = 0; j < i; j++)
					free(r[j].resp);
				free(r);
				return PAM_BUF_ERR;
			}
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

/* No failure delay whatever a module asks for: the bench counts work, not sleeps. */
static void no_delay(int status, unsigned int usec, void *data)
{
	(void)status;
	(void)usec;
	(void)data;
}

/* The PAM_RHOST of attempt i of a run: NULL at the console (rhost "-"); buf for "many". */
static const char *rhost_of(const char *rhost, int i, char *buf, size_t size)
{
	if (strcmp(rhost, "-") == 0)
		return NULL;
	if (strcmp(rhost, "many") != 0)
		return rhost;
	snprintf(buf, size, "10.77.%d.%d", i / 250, i % 250 + 1);
	return buf;
}

/* One authentication, pam_start to pam_end, from rhost (NULL: none); the PAM result. */
static int attempt(const char *service, const char *user, const char *password, const char *rhost)
{
	struct secret sec = { password };
	struct pam_conv c = { conv, &sec };
	pam_handle_t *ph = NULL;
	int rc = pam_start(service, user, &c, &ph);

	if (rc != PAM_SUCCESS)
		return rc;
	pam_set_item(ph, PAM_FAIL_DELAY, (const void *)(uintptr_t)no_delay);
	if (rhost)
		pam_set_item(ph, PAM_RHOST, rhost);
	rc = pam_authenticate(ph, PAM_SILENT);
	pam_end(ph, rc);
	return rc;
}

/* --- the MemAvailable sampler ---------------------------------------------------- */
struct sampler {
	long base_kib, min_kib, floor_kib;
	double deadline; /* now() after which the children are killed; 0: none */
	atomic_int stop, under_floor, cut;
	pid_t *kids;        /* children to kill under the floor or past the deadline */
	atomic_int *reaped; /* kids[i] is no longer ours to kill */
	int nkids;
	pthread_t thread;
};

static void kill_all(const struct sampler *s)
{
	for (int i = 0; i < s->nkids; i++)
		if (s->kids[i] > 0 && !atomic_load(&s->reaped[i]))
			kill(s->kids[i], SIGKILL);
}

static void *sample_loop(void *arg)
{
	struct sampler *s = arg;
	const struct timespec step = { 0, SAMPLE_NS };

	while (!atomic_load(&s->stop)) {
		long v = mem_available();

		if (v >= 0 && v < s->min_kib)
			s->min_kib = v;
		if (v >= 0 && v < s->floor_kib && !atomic_exchange(&s->under_floor, 1))
			kill_all(s);
		if (s->deadline > 0 && now() > s->deadline && !atomic_exchange(&s->cut, 1))
			kill_all(s);
		nanosleep(&step, NULL);
	}
	return NULL;
}

/* The sampler, with a deadline deadline_s from now unless it is 0. */
static int sampler_start(struct sampler *s, long floor_mib, double deadline_s, pid_t *kids,
			 atomic_int *reaped, int nkids)
{
	s->base_kib = s->min_kib = mem_available();
	s->floor_kib = floor_mib * 1024;
	s->deadline = deadline_s > 0 ? now() + deadline_s : 0;
	atomic_init(&s->stop, 0);
	atomic_init(&s->under_floor, 0);
	atomic_init(&s->cut, 0);
	s->kids = kids;
	s->reaped = reaped;
	s->nkids = nkids;
	if (s->base_kib < 0)
		return -1;
	return pthread_create(&s->thread, NULL, sample_loop, s) == 0 ? 0 : -1;
}

/* Stops the sampler; the peak drop in MiB. */
static long sampler_stop(struct sampler *s)
{
	long v = mem_available();

	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
	if (v >= 0 && v < s->min_kib)
		s->min_kib = v;
	return (s->base_kib - s->min_kib) / 1024;
}

/* --- modes -------------------------------------------------------------------------- */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int run(const char *service, int n, const char *user, const char *password, long floor_mib,
	       double deadline_s, const char *rhost)
{
	int gate[2], res[2], ok = 0, fail = 0, other = 0, got = 0;
	pid_t *kids = calloc((size_t)n, sizeof(*kids));
	int *us = calloc((size_t)n, sizeof(*us));
	int *rss = calloc((size_t)n, sizeof(*rss));
	atomic_int *reaped = calloc((size_t)n, sizeof(*reaped));
	struct result r;
	struct sampler s;
	double t0, wall;
	long drop;

	if (!kids || !us || !rss || !reaped || pipe2(gate, O_CLOEXEC) < 0 ||
	    pipe2(res, O_CLOEXEC) < 0) {
		perror("spray_pam: setup");
		return 2;
	}
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("spray_pam: fork");
			for (int j = 0; j < i; j++)
				kill(kids[j], SIGKILL);
			return 2;
		}
		if (kids[i] == 0) {
			char c, from[32];
			const char *rh = rhost_of(rhost, i, from, sizeof(from));
			double t;

			close(gate[1]);
			close(res[0]);
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			t = now();
			r.rc = attempt(service, user, password, rh);
			r.us = (int)((now() - t) * 1e6);
			if (write(res[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(3);
			_exit(0);
		}
	}
	close(gate[0]);
	close(res[1]);
	if (sampler_start(&s, floor_mib, deadline_s, kids, reaped, n) < 0) {
		perror("spray_pam: sampler");
		for (int i = 0; i < n; i++)
			kill(kids[i], SIGKILL);
		return 2;
	}
	t0 = now();
	close(gate[1]); /* the release: every child's read() returns 0 */
	for (int i = 0; i < n; i++) {
		struct rusage ru = { 0 };
		int st;

		while (wait4(kids[i], &st, 0, &ru) < 0 && errno == EINTR)
			;
		atomic_store(&reaped[i], 1);
		rss[i] = (int)ru.ru_maxrss;
	}
	wall = now() - t0;
	drop = sampler_stop(&s);
	/* Every child has ended: the pipe holds all results (n * 8 bytes < its size). */
	while (got < n && read(res[0], &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		us[got++] = r.us;
		if (r.rc == PAM_SUCCESS)
			ok++;
		else if (r.rc == PAM_AUTH_ERR || r.rc == PAM_USER_UNKNOWN)
			fail++;
		else
			other++;
	}
	other += n - got; /* killed, or no result */
	qsort(us, (size_t)got, sizeof(*us), cmp_int);
	qsort(rss, (size_t)n, sizeof(*rss), cmp_int);
	printf("wall=%.4f ok=%d fail=%d other=%d drop_mib=%ld rss_mib=%d p50=%.3f max=%.3f "
	       "aborted=%d cut=%d\n",
	       wall, ok, fail, other, drop, rss[n / 2] / 1024, got ? us[got / 2] / 1e6 : 0.0,
	       got ? us[got - 1] / 1e6 : 0.0, atomic_load(&s.under_floor), atomic_load(&s.cut));
	free(kids);
	free(us);
	free(rss);
	free(reaped);
	return 0;
}

/*
 * Stops each of kids[] seen holding a lock in /proc/locks (its owner is the
 * fifth field); how many locks of theirs it lists.
 */
static int stop_lock_holders(const pid_t *kids, bool *stopped, int n)
{
	char line[256];
	FILE *f = fopen("/proc/locks", "re");
	int k = 0;

	while (f && fgets(line, sizeof(line), f)) {
		int pid;

		if (sscanf(line, "%*s %*s %*s %*s %d", &pid) != 1)
			continue;
		for (int i = 0; i < n; i++) {
			if (kids[i] != pid)
				continue;
			k++;
			if (!stopped[i] && kill(pid, SIGSTOP) == 0)
				stopped[i] = true;
		}
	}
	if (f)
		fclose(f);
	return k;
}

static int hold(const char *service, int n, const char *user, const char *password, uid_t ruid,
		double watch_s)
{
	const struct timespec tick = { 0, 500 * 1000L }; /* 0.5 ms: a derivation lasts 60 ms */
	pid_t kids[MAX_HOLD];
	bool stopped[MAX_HOLD] = { false }, ended[MAX_HOLD] = { false };
	int held = 0, gone = 0, sig;
	sigset_t term, old;
	double until;

	/* Blocked from here, so that SIGTERM only ends the sigwait() below. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("spray_pam: fork");
			for (int j = 0; j < i; j++)
				kill(kids[j], SIGKILL);
			return 2;
		}
		if (kids[i] == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (setresuid(ruid, 0, 0) != 0)
				_exit(3);
			_exit(attempt(service, user, password, NULL) == PAM_SUCCESS ? 0 : 1);
		}
	}
	for (until = now() + watch_s; now() < until;) {
		stop_lock_holders(kids, stopped, n);
		nanosleep(&tick, NULL);
	}
	held = stop_lock_holders(kids, stopped, n);
	for (int i = 0; i < n; i++) {
		ended[i] = !stopped[i] && waitpid(kids[i], NULL, WNOHANG) == kids[i];
		gone += ended[i];
	}
	printf("held=%d ended=%d of=%d\nready\n", held, gone, n);
	fflush(stdout);
	sigwait(&term, &sig);
	for (int i = 0; i < n; i++) {
		if (ended[i])
			continue;
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	return 0;
}

static int watch(long floor_mib)
{
	struct sampler s;
	sigset_t term;
	const struct timespec tick = { 0, 100 * 1000 * 1000L };

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	/* Blocked before the thread starts, so that only sigtimedwait takes it. */
	if (sigprocmask(SIG_BLOCK, &term, NULL) < 0 ||
	    sampler_start(&s, floor_mib, 0, NULL, NULL, 0) < 0) {
		perror("spray_pam: sampler");
		return 2;
	}
	while (!atomic_load(&s.under_floor) && sigtimedwait(&term, NULL, &tick) < 0)
		;
	printf("drop_mib=%ld under_floor=%d\n", sampler_stop(&s), atomic_load(&s.under_floor));
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 8 || argc == 9) && strcmp(argv[1], "run") == 0) {
		int n = atoi(argv[3]);

		if (n < 1 || n > MAX_N) {
			fprintf(stderr, "spray_pam: N must be 1..%d\n", MAX_N);
			return 2;
		}
		return run(argv[2], n, argv[4], argv[5], atol(argv[6]), atof(argv[7]),
			   argc == 9 ? argv[8] : "127.0.0.1");
	}
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "time") == 0) {
		char from[32];
		const char *rhost =
			rhost_of(argc == 6 ? argv[5] : "127.0.0.1", 0, from, sizeof(from));
		double t = now();
		int rc = attempt(argv[2], argv[3], argv[4], rhost);

		printf("sec=%.6f rc=%d\n", now() - t, rc);
		return 0;
	}
	if (argc == 8 && strcmp(argv[1], "hold") == 0) {
		int n = atoi(argv[3]);

		if (n < 1 || n > MAX_HOLD) {
			fprintf(stderr, "spray_pam: K must be 1..%d\n", MAX_HOLD);
			return 2;
		}
		return hold(argv[2], n, argv[4], argv[5], (uid_t)strtoul(argv[6], NULL, 10),
			    atof(argv[7]));
	}
	if (argc == 3 && strcmp(argv[1], "watch") == 0)
		return watch(atol(argv[2]));
	fprintf(stderr,
		"usage: spray_pam run SERVICE N USER PASSWORD FLOOR_MIB DEADLINE_S [RHOST]\n"
		"       spray_pam time SERVICE USER PASSWORD [RHOST]\n"
		"       spray_pam hold SERVICE K USER PASSWORD RUID WATCH_S\n"
		"       spray_pam watch FLOOR_MIB\n");
	return 2;
}
