/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test world: accounts, service files, directories, helpers. */
#include "harness.h"
#include "../lib/kdf_cost.h"

#include <crypt.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

struct world W;

/*
 * libsodium's crypto_pwhash(), for the module this process loads too (the
 * symbol is exported: tests/pam/meson.build), at the cheapest cost
 * (../lib/kdf_cost.h says why).  auth_child, which test_timing measures, is
 * another program: its derivations keep their cost.
 */
int crypto_pwhash(unsigned char *const out, unsigned long long outlen, const char *const passwd,
		  unsigned long long passwdlen, const unsigned char *const salt,
		  unsigned long long opslimit, size_t memlimit, int alg)
{
	int (*real)(unsigned char *, unsigned long long, const char *, unsigned long long,
		    const unsigned char *, unsigned long long, size_t, int);

	*(void **)&real = dlsym(RTLD_NEXT, "crypto_pwhash");
	if (!real)
		return -1;
	kdf_cost_cheapest(&opslimit, &memlimit);
	return real(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
}

/* Uids for the fake accounts when the tests run as root. */
#define ALICE_UID 20001
#define DURESSERS_GID 20010
#define EXTRA_GID 20011

/*
 * Every service the tests use.  pam_wrapper copies the service directory
 * once, at the first pam_start(), so all of them are written at setup.
 * Each module line also gets global_dir=<tmp>/global: no test may touch
 * /etc/duress.d, state_dir=<tmp>/state: nor /var/lib/pam_duress, and runner=
 * the build tree's runner (nothing installed is used).  "@T@" stands for the temporary directory.
 */
static const struct service {
	const char *name;
	enum {
		AFTER,  /* the usual stack: pam_duress after pam_unix */
		BEFORE, /* pam_duress before pam_unix */
		ALONE,  /* pam_duress required, then pam_permit: its own answer decides */
	} stack;
	const char *opts;
} services[] = {
	{ "after", AFTER, "" },
	{ "before", BEFORE, "" },
	{ "deny", AFTER, "deny" },
	{ "allow-root", AFTER, "allow_root" },
	{ "group", AFTER, "group=duressers" },
	{ "svc-ok", AFTER, "services=login,svc-ok" },
	{ "svc-other", AFTER, "services=login,svc-ok" },
	{ "wait1", AFTER, "wait=1" },
	{ "wait2", AFTER, "wait=2" },
	/* Far past any test's own bound: waiting it out would be a hang. */
	{ "wait600", AFTER, "wait=600" },
	/* A misspelled option and a malformed one make the line inert (issue 18, item 5). */
	{ "inert-after", AFTER, "servces=sshd max_memory=lots" },
	{ "inert-before", BEFORE, "servces=sshd max_memory=lots" },
	{ "inert-quiet", AFTER, "quiet servces=sshd" },
	{ "no-userdir", AFTER, "user_dir=" },
	{ "var-userdir", AFTER, "user_dir=@T@/var/%u" },
	{ "shared-userdir", AFTER, "user_dir=@T@/shared" },
	{ "maxsize", AFTER, "max_size=1K" },
	{ "maxentries", AFTER, "max_entries=5" },
	{ "legacy", AFTER, "legacy_sha256" },
	/* One derivation slot, waited for a second: test_pam.c holds it. */
	{ "slots-after", AFTER, "slot_dir=@T@/slots max_derivations=1 max_wait=1" },
	{ "slots-before", BEFORE, "slot_dir=@T@/slots max_derivations=1 max_wait=1" },
	{ "quiet", AFTER, "quiet" },
	{ "debug", AFTER, "debug" },
	{ "no-runner", AFTER, "runner=@T@/no-such-runner" },
	/* Elevation services (SPEC 4): the names are what counts. */
	{ "sudo", AFTER, "" },
	{ "pkexec", AFTER, "allow_root" },
	{ "doas", AFTER, "elevation_services=run0" },
	{ "global-group", AFTER, "global_group=duressers" },
	/* The module's own return code, with nothing after it that could hide it. */
	{ "alone", ALONE, "" },
	{ "alone-deny", ALONE, "deny" },
	{ "alone-no-runner", ALONE, "runner=@T@/no-such-runner" },
	{ "alone-false-runner", ALONE, "runner=/bin/false" },
};

/*
 * The threads test runs more derivations at once than the machine has
 * slots, and valgrind makes each one last seconds: they wait their turn
 * rather than time out (the cap itself is tested in tests/unit/test_auth.c).
 */
#define WAIT_FOR_SLOTS "max_wait=600"

static const char after_fmt[] =
	"# pam_duress after pam_unix: the usual stack (SPEC 1)\n"
	"auth [success=2 default=ignore] pam_unix.so nodelay\n"
	"auth [success=1 default=ignore] %s global_dir=%s/global state_dir=%s/state runner=%s " WAIT_FOR_SLOTS
	" %s\n"
	"auth requisite pam_deny.so\n"
	"auth required pam_permit.so\n"
	"account required pam_permit.so\n";

/*
 * No real stack should look like this (no match is PAM_IGNORE, and
 * pam_permit then lets a wrong password in); here the module's own answer
 * alone decides whether the login fails.
 */
static const char alone_fmt[] =
	"# pam_duress alone: its own return code decides\n"
	"auth required %s global_dir=%s/global state_dir=%s/state runner=%s " WAIT_FOR_SLOTS " %s\n"
	"auth required pam_permit.so\n"
	"account required pam_permit.so\n";

/*
 * Every service's password stack: the module with the service's options,
 * then pam_permit (no pam_unix: it would write the accounts' files).
 */
static const char password_fmt[] =
	"password requisite %s global_dir=%s/global runner=%s " WAIT_FOR_SLOTS " %s\n"
	"password required pam_permit.so\n";

static const char before_fmt[] =
	"# pam_duress before pam_unix (SPEC 4, placement)\n"
	"auth [success=done default=ignore] %s global_dir=%s/global state_dir=%s/state runner=%s " WAIT_FOR_SLOTS
	" %s\n"
	"auth required pam_unix.so nodelay try_first_pass\n"
	"account required pam_permit.so\n";

void pathf(char out[PATH_MAX], const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && n < PATH_MAX);
}

static gid_t gid_of(uid_t uid)
{
	for (int i = 0; i < N_USERS; i++)
		if (W.users[i].uid == uid)
			return W.users[i].gid;
	return (gid_t)-1;
}

/* chown only as root; otherwise everything is ours anyway. */
static void give(int fd, const char *path, uid_t uid)
{
	int r;

	if (!W.root)
		return;
	r = fd >= 0 ? fchown(fd, uid, gid_of(uid)) : lchown(path, uid, gid_of(uid));
	if (r != 0)
		fail_msg("chown %s: %s", path, strerror(errno));
}

void make_dir(const char *path, uid_t uid, mode_t mode)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	give(-1, path, uid);
	/* chmod after mkdir: the umask must not decide the mode. */
	if (chmod(path, mode) != 0)
		fail_msg("chmod %s: %s", path, strerror(errno));
}

void write_file(const char *path, const void *data, size_t len, uid_t uid, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	give(fd, path, uid);
	if (fchmod(fd, mode) != 0 || write(fd, data, len) != (ssize_t)len)
		fail_msg("write %s: %s", path, strerror(errno));
	close(fd);
}

char *read_file(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	n = read(fd, buf, (size_t)st.st_size);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

char *read_proc(const char *path, size_t *len)
{
	char *buf = calloc(1, 65536);
	size_t used = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_non_null(buf);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (used < 65535 && (n = read(fd, buf + used, 65535 - used)) > 0)
		used += (size_t)n;
	close(fd);
	if (len)
		*len = used;
	return buf;
}

bool file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

static bool try_remove_tree(const char *path)
{
	if (!file_exists(path))
		return true;
	/* A directory left 0000 or 0777 by a hostile-file test must go too. */
	(void)chmod(path, 0700);
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

void remove_tree(const char *path)
{
	if (!try_remove_tree(path))
		fail_msg("cannot remove %s: %s", path, strerror(errno));
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned hang_ms(unsigned ms, unsigned valgrind_ms)
{
	const char *env = getenv("DURESS_TIMEOUT_FACTOR");
	char *end = NULL;
	unsigned long factor = env ? strtoul(env, &end, 10) : 1;

	if (!env || end == env || *end || factor < 1 || factor > 100)
		factor = 1;
	return (W.valgrind ? valgrind_ms : ms) * (unsigned)factor;
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void require_root(const char *why)
{
	if (W.root)
		return;
	/* meson shows the test's output: say plainly what did not run. */
	printf("SKIP: %s: needs root\n", why);
	fflush(stdout);
	skip();
}

void skip_under_valgrind(const char *why)
{
	if (!W.valgrind)
		return;
	printf("SKIP: %s: not under valgrind\n", why);
	fflush(stdout);
	skip();
}

/* ---------------------------------------------------------------------- */

static void hash_password(const char *password, char *out, size_t outlen)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *h;

	assert_non_null(cd);
	assert_non_null(crypt_gensalt_rn("$6$", 0, NULL, 0, salt, sizeof(salt)));
	h = crypt_r(password, salt, cd);
	assert_true(h && h[0] == '$');
	snprintf(out, outlen, "%s", h);
	free(cd);
}

static void init_users(void)
{
	static const struct {
		const char *name, *real, *duress, *shell;
		uid_t uid;
	} base[N_USERS] = {
		[ALICE] = { "alice", "alice-real", "alice-duress", "/bin/bash", ALICE_UID },
		[BOB] = { "bob", "bob-real", "bob-duress", "/bin/sh", ALICE_UID + 1 },
		[CAROL] = { "carol", "carol-real", "carol-duress", "/bin/sh", ALICE_UID + 2 },
		[ROOT] = { "root", "root-real", "root-duress", "/bin/sh", 0 },
		[TOOR] = { "toor", "toor-real", "toor-duress", "/bin/sh", 0 },
		/* Below Debian's UID_MIN (1000): a system account with a password. */
		[SYSACCT] = { "sysacct", "sysacct-real", "sysacct-duress", "/bin/sh", 998 },
	};

	for (int i = 0; i < N_USERS; i++) {
		struct user *u = &W.users[i];

		u->name = base[i].name;
		u->real = base[i].real;
		u->duress = base[i].duress;
		u->shell = base[i].shell;
		/* Not root: per-user actions run only for our own uid, so all are us. */
		u->uid = W.root ? base[i].uid : getuid();
		u->gid = W.root ? (gid_t)base[i].uid : getgid();
		pathf(u->home, "%s/home/%s", W.tmp, u->name);
		pathf(u->dir, "%s/.duress", u->home);
	}
}

/* passwd with the crypt hash in field 2, as pam_unix reads it without root. */
static void write_accounts(void)
{
	char path[PATH_MAX], hash[256], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	for (int i = 0; i < N_USERS; i++) {
		const struct user *u = &W.users[i];

		hash_password(u->real, hash, sizeof(hash));
		/* carol is locked as `usermod -L` does it: "!" before the hash. */
		fprintf(f, "%s:%s%s:%u:%u:%s:%s:%s\n", u->name, i == CAROL ? "!" : "", hash,
			(unsigned)u->uid, (unsigned)u->gid, u->name, u->home, u->shell);
	}
	fclose(f);
	pathf(path, "%s/passwd", W.tmp);
	write_file(path, buf, len, 0, 0644);
	free(buf);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	if (W.root)
		fprintf(f, "root:x:0:\nalice:x:%u:\nbob:x:%u:\ncarol:x:%u:\nsysacct:x:998:\n",
			ALICE_UID, ALICE_UID + 1, ALICE_UID + 2);
	else
		fprintf(f, "self:x:%u:\n", (unsigned)getgid());
	fprintf(f, "duressers:x:%u:alice\nextra:x:%u:alice\n", DURESSERS_GID, EXTRA_GID);
	fclose(f);
	pathf(path, "%s/group", W.tmp);
	write_file(path, buf, len, 0, 0644);
	free(buf);
}

/* Replaces every "@T@" with the temporary directory. */
static void expand(char *out, size_t outlen, const char *in)
{
	size_t used = 0;

	while (*in && used + 1 < outlen) {
		if (strncmp(in, "@T@", 3) == 0) {
			used += (size_t)snprintf(out + used, outlen - used, "%s", W.tmp);
			in += 3;
		} else {
			out[used++] = *in++;
		}
	}
	assert_true(used + 1 < outlen);
	out[used] = '\0';
}

static void write_services(void)
{
	char dir[PATH_MAX], path[PATH_MAX], opts[PATH_MAX], text[4096];
	static const char other[] = "# anything unknown is refused\n"
				    "auth required pam_deny.so\naccount required pam_deny.so\n";

	pathf(dir, "%s/services", W.tmp);
	make_dir(dir, 0, 0755);
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++) {
		const struct service *s = &services[i];
		int n, m;

		expand(opts, sizeof(opts), s->opts);
		n = snprintf(text, sizeof(text),
			     s->stack == ALONE  ? alone_fmt :
			     s->stack == BEFORE ? before_fmt :
						  after_fmt,
			     W.module, W.tmp, W.tmp, W.runner, opts);
		assert_true(n > 0 && (size_t)n < sizeof(text));
		m = snprintf(text + n, sizeof(text) - (size_t)n, password_fmt, W.module, W.tmp,
			     W.runner, opts);
		assert_true(m > 0 && (size_t)m < sizeof(text) - (size_t)n);
		n += m;
		pathf(path, "%s/%s", dir, s->name);
		write_file(path, text, (size_t)n, 0, 0644);
	}
	pathf(path, "%s/other", dir);
	write_file(path, other, sizeof(other) - 1, 0, 0644);
	assert_int_equal(setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1), 0);
}

static int need_env(const char *name, const char **ret)
{
	*ret = getenv(name);
	if (*ret && **ret == '/')
		return 0;
	fprintf(stderr, "test_pam: %s must name an absolute path (meson sets it)\n", name);
	return -1;
}

static char hang_msg[PATH_MAX + 128];

/* A test hung (alarm from fresh_test): say so rather than die silently. */
static void on_alarm(int sig)
{
	(void)sig;
	(void)!write(2, hang_msg, strlen(hang_msg));
	_exit(1);
}

/*
 * As root, this process (and all it starts) moves to a mount namespace of
 * its own where an empty file covers /etc/shadow: the module reads shadow
 * entries with getspnam_r(), which nss_wrapper does not wrap, so the
 * machine's own entry for a fake name (a locked "alice") would decide.
 * Without root, shadow is unreadable and counts as no entry anyway.
 */
static int hide_machine_shadow(void)
{
	char path[PATH_MAX];
	int fd;

	if (!W.root)
		return 0;
	pathf(path, "%s/shadow", W.tmp);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	/*
	 * "none", not NULL, as the unused type: valgrind takes a NULL for an
	 * error, which would then end every forked runner with its exit code.
	 */
	if (fd < 0 || close(fd) != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
	    (access("/etc/shadow", F_OK) == 0 &&
	     mount(path, "/etc/shadow", "none", MS_BIND, NULL) != 0)) {
		fprintf(stderr, "test_pam: cannot hide the machine's /etc/shadow: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int world_init(void)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *preload = getenv("LD_PRELOAD");
	char path[PATH_MAX];

	if (need_env("DURESS_MODULE", &W.module) < 0 || need_env("DURESS_CLI", &W.cli) < 0 ||
	    need_env("DURESS_RUNNER", &W.runner) < 0 || need_env("DURESS_ELF_ACTION", &W.elf) < 0)
		return -1;
	if (!getenv("PAM_WRAPPER") || !preload || !strstr(preload, "pam_wrapper")) {
		fputs("test_pam: run through meson test: pam_wrapper is not preloaded\n", stderr);
		return -1;
	}
	if (sodium_init() < 0 || reaper_init() < 0)
		return -1;
	W.root = geteuid() == 0;
	/* valgrind puts its own preload first; timing bounds get looser under it. */
	W.valgrind = strstr(preload, "vgpreload") != NULL;
	snprintf(W.tmp, sizeof(W.tmp), "%s/pam_duress_test.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(W.tmp)) {
		perror("test_pam: mkdtemp");
		return -1;
	}
	/* The fake users must be able to reach their homes and the results. */
	if (chmod(W.tmp, 0755) != 0 || hide_machine_shadow() < 0)
		return -1;
	snprintf(hang_msg, sizeof(hang_msg),
		 "\ntest_pam: FAIL: the running test hung past its bound; files left in %s\n",
		 W.tmp);
	signal(SIGALRM, on_alarm);
	init_users();
	pathf(W.global, "%s/global", W.tmp);
	pathf(W.state, "%s/state", W.tmp);
	for (const char *const *d = (const char *const[]){ "home", "results", "var", NULL }; *d;
	     d++) {
		pathf(path, "%s/%s", W.tmp, *d);
		make_dir(path, 0, 0755);
	}
	for (int i = 0; i < N_USERS; i++)
		make_dir(W.users[i].home, W.users[i].uid, 0755);
	write_accounts();
	pathf(path, "%s/passwd", W.tmp);
	setenv("NSS_WRAPPER_PASSWD", path, 1);
	pathf(path, "%s/group", W.tmp);
	setenv("NSS_WRAPPER_GROUP", path, 1);
	write_services();
	return 0;
}

void world_destroy(void)
{
	/* DURESS_TEST_KEEP=1 keeps the evidence for a post-mortem. */
	if (getenv("DURESS_TEST_KEEP")) {
		printf("kept %s\n", W.tmp);
		return;
	}
	/* Every test waits for its actions, but one that failed may not have. */
	end_actions();
	if (W.tmp[0] && !try_remove_tree(W.tmp))
		fprintf(stderr, "test_pam: warning: could not remove %s\n", W.tmp);
}

int fresh_test(void **state)
{
	char path[PATH_MAX];

	(void)state;
	/* A hung authentication must fail the run, not stall it (meson's timeout: 300 s). */
	alarm(hang_ms(120000, 280000) / 1000);
	/* Only a test that failed leaves actions running: they must not spoil this one. */
	if (end_actions() > 0)
		fail_msg("an earlier test left processes running (killed)");
	W.gen++;
	pathf(W.results, "%s/results/%u", W.tmp, W.gen);
	pathf(W.runs, "%s/runs", W.results);
	/* Sticky and world-writable: actions of every uid leave evidence here. */
	make_dir(W.results, 0, 01777);
	/*
	 * Actions of every uid append to runs, with umask 077: it exists from
	 * the start, owned by the directory's owner (fs.protected_regular lets
	 * others open it) and writable by all.
	 */
	write_file(W.runs, "", 0, 0, 0666);
	for (int i = 0; i < N_USERS; i++) {
		struct user *u = &W.users[i];

		remove_tree(u->dir);
		make_dir(u->home, u->uid, 0755);
		make_dir(u->dir, u->uid, 0700);
		/* The ELF action writes to $HOME/results: this test's results. */
		pathf(path, "%s/results", u->home);
		(void)unlink(path);
		if (symlink(W.results, path) != 0)
			fail_msg("symlink %s: %s", path, strerror(errno));
		give(-1, path, u->uid);
		pathf(path, "%s/var/%s", W.tmp, u->name);
		remove_tree(path);
	}
	remove_tree(W.global);
	make_dir(W.global, 0, 0700);
	/* The module makes it at a once action's first run. */
	remove_tree(W.state);
	for (const char *const *d = (const char *const[]){ "shared", "elsewhere", NULL }; *d; d++) {
		pathf(path, "%s/%s", W.tmp, *d);
		remove_tree(path);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */

/*
 * Records how the action was run, without the shell adding descriptors of
 * its own first: `find` runs in a child and opens its output itself (a
 * redirection would be set up in the shell, before the fork), so it lists
 * exactly the shell's descriptors.
 */
static const char evidence_body[] =
	"find /proc/$$/fd -mindepth 1 -maxdepth 1 -fprintf \"$R/.$N.$$\" 'fd %f %l\\n'\n"
	"read -r _ _ _ p _ s _ </proc/$$/stat\n"
	"{ echo \"uid $(id -u)\"; echo \"gid $(id -g)\"; echo \"groups $(id -G)\"\n"
	"echo \"argv0 $0\"; echo \"cmdline $(tr '\\0' ' ' </proc/$$/cmdline)\"\n"
	"echo \"ppid $p\"; echo \"sid $s\"; env | sed 's/^/env /'; } >>\"$R/.$N.$$\"\n"
	"mv \"$R/.$N.$$\" \"$R/$N\"\n"
	"echo \"$N\" >>\"$R/runs\"\n";

void action_script(const char *dir, const char *name, uid_t uid, const char *pre, bool shebang)
{
	char path[PATH_MAX], text[8192];
	int n;

	n = snprintf(text, sizeof(text), "%s# pam_duress test action\nR='%s' N='%s'\n%s%s",
		     shebang ? "#!/bin/sh\n" : "", W.results, name, pre, evidence_body);
	assert_true(n > 0 && (size_t)n < sizeof(text));
	pathf(path, "%s/%s", dir, name);
	write_file(path, text, (size_t)n, uid, 0700);
}

extern char **environ;

char **env_edited(const char *drop, char *add)
{
	size_t n = 0, used = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(char *));
	assert_non_null(envp);
	if (add)
		envp[used++] = add;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], drop, strlen(drop)) != 0)
			envp[used++] = environ[i];
	return envp;
}

/*
 * Our environment without PAM_WRAPPER*: pam_wrapper would otherwise set
 * itself up in every child too, each time in a new /tmp/pam.? directory
 * chosen with lstat()+mkdir(), which is racy across processes.
 */
static char **env_without_pam_wrapper(void)
{
	return env_edited("PAM_WRAPPER", NULL);
}

/* How sign_action() signs. */
struct signing {
	const char *also; /* --also FILE, or NULL */
	bool cheap; /* the cheapest cost libsodium allows, which keeps valgrind and ASan fast */
	bool once;  /* --once */
};

static void sign_action(const char *path, const char *password, struct signing how)
{
	char log[PATH_MAX], file[PATH_MAX], companion[PATH_MAX];
	char a0[] = "duress", a1[] = "sign", a2[] = "--stdin", a3[] = "--memlimit", a4[] = "8K",
	     a5[] = "--opslimit", a6[] = "1", a7[] = "--also", weak[] = "--allow-weak-cost",
	     once[] = "--once";
	char *argv[16] = { a0, a1, a2 };
	size_t n = 3;
	char **envp = env_without_pam_wrapper();
	int in[2], status = 0;
	pid_t pid;

	pathf(file, "%s", path);
	if (how.cheap)
		for (char *const *a = (char *const[]){ a3, a4, a5, a6, weak, NULL }; *a; a++)
			argv[n++] = *a;
	if (how.also) {
		pathf(companion, "%s", how.also);
		argv[n++] = a7;
		argv[n++] = companion;
	}
	if (how.once)
		argv[n++] = once;
	argv[n++] = file;
	pathf(log, "%s/sign.log", W.tmp);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (out < 0 || dup2(in[0], 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(127);
		execve(W.cli, argv, envp);
		_exit(127);
	}
	free(envp);
	close(in[0]);
	assert_true(write(in[1], password, strlen(password)) == (ssize_t)strlen(password));
	assert_int_equal(write(in[1], "\n", 1), 1);
	close(in[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *text = read_file(log, NULL);

		fail_msg("duress sign %s failed (status %d): %s", path, status, text ? text : "");
	}
}

void action_sign(const char *path, const char *password)
{
	sign_action(path, password, (struct signing){ .cheap = true });
}

void action_sign_also(const char *path, const char *password, const char *also)
{
	sign_action(path, password, (struct signing){ .also = also, .cheap = true });
}

void action_sign_default(const char *path, const char *password)
{
	sign_action(path, password, (struct signing){ .cheap = false });
}

void action_sign_once(const char *path, const char *password)
{
	sign_action(path, password, (struct signing){ .cheap = true, .once = true });
}

char *cli_output(char *const argv[], int *status)
{
	char log[PATH_MAX];
	char **envp = env_without_pam_wrapper();
	pid_t pid;

	pathf(log, "%s/cli.log", W.tmp);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (out < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(127);
		execve(W.cli, argv, envp);
		_exit(127);
	}
	free(envp);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return read_file(log, NULL);
}

void action_add(const char *dir, const char *name, uid_t uid, const char *password)
{
	char path[PATH_MAX];

	action_script(dir, name, uid, "", true);
	pathf(path, "%s/%s", dir, name);
	action_sign(path, password);
}

void action_elf(const char *dir, const char *name, uid_t uid, const char *password)
{
	char path[PATH_MAX];
	size_t len = 0;
	char *bytes = read_file(W.elf, &len);

	assert_non_null(bytes);
	pathf(path, "%s/%s", dir, name);
	write_file(path, bytes, len, uid, 0700);
	free(bytes);
	action_sign(path, password);
}

void evidence_path(char out[PATH_MAX], const char *name)
{
	pathf(out, "%s/%s", W.results, name);
}

void legacy_sign(const char *path, const char *password, uid_t uid)
{
	unsigned char inner[crypto_hash_sha256_BYTES], outer[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_state st;
	char sig[PATH_MAX];
	size_t len = 0;
	char *content = read_file(path, &len);

	assert_non_null(content);
	/* nuvious/pam-duress: SHA-256(SHA-256(content) || password), 32 raw bytes. */
	crypto_hash_sha256(inner, (const unsigned char *)content, len);
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, inner, sizeof(inner));
	crypto_hash_sha256_update(&st, (const unsigned char *)password, strlen(password));
	crypto_hash_sha256_final(&st, outer);
	pathf(sig, "%s.sha256", path);
	write_file(sig, outer, sizeof(outer), uid, 0600);
	free(content);
}
