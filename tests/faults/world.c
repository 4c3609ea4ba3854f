/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tests/faults/world.h"

#include <crypt.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fault_world FW;

#define ALICE_UID 20001
#define CAROL_UID 20003
#define EXTRA_GID 20011

void bail(const char *fmt, ...)
{
	va_list ap;

	fputs("Bail out! ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(1);
}

static void pathf(char out[PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void pathf(char out[PATH_MAX], const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		bail("path too long: %s", out);
}

static void make_dir(const char *path, uid_t uid, mode_t mode)
{
	if (mkdir(path, mode) != 0 && errno != EEXIST)
		bail("mkdir %s: %s", path, strerror(errno));
	if (chown(path, uid, uid) != 0 || chmod(path, mode) != 0)
		bail("chown/chmod %s: %s", path, strerror(errno));
}

static void write_file(const char *path, const char *text, uid_t uid, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t len = strlen(text);

	if (fd < 0 || fchown(fd, uid, uid) != 0 || fchmod(fd, mode) != 0 ||
	    write(fd, text, len) != (ssize_t)len)
		bail("write %s: %s", path, strerror(errno));
	close(fd);
}

static void random_password(char out[PASSWORD_MAX], const char *what)
{
	unsigned char raw[12];
	int n;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		bail("getrandom: %s", strerror(errno));
	n = snprintf(out, PASSWORD_MAX, "%s-", what);
	for (size_t i = 0; i < sizeof(raw); i++)
		n += snprintf(out + n, PASSWORD_MAX - (size_t)n, "%02x", raw[i]);
}

/* What pam_unix checks: SHA-512 crypt at 1000 rounds, cheap for thousands of logins. */
static void hash_password(const char *password, char *out, size_t outlen)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd = { 0 };
	const char *h;

	if (!crypt_gensalt_rn("$6$", 1000, NULL, 0, salt, sizeof(salt)))
		bail("crypt_gensalt_rn: %s", strerror(errno));
	h = crypt_r(password, salt, &cd);
	if (!h || h[0] != '$')
		bail("crypt_r failed");
	snprintf(out, outlen, "%s", h);
}

/*
 * alice's hash is in passwd (field 2), as pam_unix reads it; carol is
 * locked as `usermod -L` does it, in shadow: passwd says "x" and the shadow
 * hash starts with "!", so that the module must read shadow to know.
 */
static void write_accounts(void)
{
	char path[PATH_MAX], alice[256], carol[256], text[3 * PATH_MAX];

	hash_password(FW.alice_real, alice, sizeof(alice));
	hash_password("carol's real password", carol, sizeof(carol));
	snprintf(text, sizeof(text),
		 "root:x:0:0:root:/root:/bin/sh\n"
		 "alice:%s:%u:%u:alice:%s/home/alice:/bin/sh\n"
		 "carol:x:%u:%u:carol:%s/home/carol:/bin/sh\n",
		 alice, ALICE_UID, ALICE_UID, FW.tmp, CAROL_UID, CAROL_UID, FW.tmp);
	pathf(path, "%s/passwd", FW.tmp);
	write_file(path, text, 0, 0644);
	setenv("NSS_WRAPPER_PASSWD", path, 1);
	snprintf(text, sizeof(text), "root:x:0:\nalice:x:%u:\ncarol:x:%u:\nextra:x:%u:alice\n",
		 ALICE_UID, CAROL_UID, EXTRA_GID);
	pathf(path, "%s/group", FW.tmp);
	write_file(path, text, 0, 0644);
	setenv("NSS_WRAPPER_GROUP", path, 1);
	snprintf(text, sizeof(text), "carol:!%s:19000:0:99999:7:::\n", carol);
	pathf(path, "%s/shadow", FW.tmp);
	write_file(path, text, 0, 0600);
	setenv("NSS_WRAPPER_SHADOW", path, 1);
}

extern char **environ;

/*
 * Signs with the real CLI at libsodium's lowest cost (with once, --once);
 * no PAM_WRAPPER* in its environment.
 */
static void sign(const char *path, const char *password, bool once)
{
	char a0[] = "duress", a1[] = "sign", a2[] = "--stdin", a3[] = "--memlimit", a4[] = "8K",
	     a5[] = "--opslimit", a6[] = "1", weak[] = "--allow-weak-cost", o[] = "--once",
	     file[PATH_MAX];
	/* With once, --once before the file. */
	char *const argv[] = {
		a0, a1, a2, a3, a4, a5, a6, weak, once ? o : file, once ? file : NULL, NULL
	};
	char *envp[256];
	size_t n = 0;
	int in[2], status = 0;
	pid_t pid;

	pathf(file, "%s", path);
	for (size_t i = 0; environ[i] && n + 1 < sizeof(envp) / sizeof(envp[0]); i++)
		if (strncmp(environ[i], "PAM_WRAPPER", 11) != 0)
			envp[n++] = environ[i];
	envp[n] = NULL;
	if (pipe2(in, O_CLOEXEC) != 0)
		bail("pipe2: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bail("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (dup2(in[0], 0) < 0 || dup2(null, 1) < 0)
			_exit(127);
		execve(FW.cli, argv, envp);
		_exit(127);
	}
	close(in[0]);
	dprintf(in[1], "%s\n", password);
	close(in[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bail("duress sign %s failed (status %d)", path, status);
}

/* dir/name: a script that records who it ran for in the evidence file, signed (once: --once). */
static void add_action(const char *dir, const char *name, uid_t uid, const char *password,
		       bool once)
{
	char path[PATH_MAX], text[PATH_MAX + 64];

	snprintf(text, sizeof(text), "#!/bin/sh\necho \"$PAM_USER\" >>'%s'\n", FW.evidence);
	pathf(path, "%s/%s", dir, name);
	write_file(path, text, uid, 0700);
	sign(path, password, once);
}

static void add_user_dir(const char *user, uid_t uid, const char *password)
{
	char home[PATH_MAX], dir[PATH_MAX];

	pathf(home, "%s/home/%s", FW.tmp, user);
	pathf(dir, "%s/.duress", home);
	make_dir(home, uid, 0755);
	make_dir(dir, uid, 0700);
	add_action(dir, "act", uid, password, false);
}

/*
 * Two placements (SPEC 4), each with and without wait= (the pipe the
 * module waits on).  A private slot directory, so that the slot code runs
 * (and is failed) without touching /run.
 */
/*
 * The two placements of SPEC 4, as the pam suite writes them
 * (tests/pam/harness.c), each with the module's password line before
 * pam_permit (no pam_unix: it would write the accounts' files).
 */
static void service_text(char *out, size_t size, bool before, const char *opts)
{
	if (before)
		snprintf(out, size,
			 "auth [success=done default=ignore] %s %s\n"
			 "auth required pam_unix.so nodelay try_first_pass\n"
			 "account required pam_permit.so\n"
			 "password requisite %s %s\n"
			 "password required pam_permit.so\n",
			 FW.module, opts, FW.module, opts);
	else
		snprintf(out, size,
			 "auth [success=2 default=ignore] pam_unix.so nodelay\n"
			 "auth [success=1 default=ignore] %s %s\n"
			 "auth requisite pam_deny.so\n"
			 "auth required pam_permit.so\n"
			 "account required pam_permit.so\n"
			 "password requisite %s %s\n"
			 "password required pam_permit.so\n",
			 FW.module, opts, FW.module, opts);
}

/*
 * Each placement with and without wait= (the pipe the module waits on).  A
 * private slot directory, so that the slot code runs (and is failed)
 * without touching /run.
 */
static void write_services(void)
{
	static const struct {
		const char *name;
		bool before;
		const char *extra;
	} services[] = {
		{ "after", false, "" },
		{ "before", true, "" },
		{ "after-wait", false, " wait=5" },
		{ "before-wait", true, " wait=5" },
	};
	char dir[PATH_MAX], path[PATH_MAX], opts[4 * PATH_MAX + 128], text[9 * PATH_MAX];

	pathf(dir, "%s/services", FW.tmp);
	make_dir(dir, 0, 0755);
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++) {
		snprintf(opts, sizeof(opts),
			 "global_dir=%s/global runner=%s slot_dir=%s/slots max_derivations=2 "
			 "state_dir=%s/state%s",
			 FW.tmp, FW.runner, FW.tmp, FW.tmp, services[i].extra);
		service_text(text, sizeof(text), services[i].before, opts);
		pathf(path, "%s/%s-%s", dir, FW.services, services[i].name);
		write_file(path, text, 0, 0644);
	}
	pathf(path, "%s/other", dir);
	write_file(path, "auth required pam_deny.so\naccount required pam_deny.so\n", 0, 0644);
	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
}

static const char *need_path(const char *name)
{
	const char *v = getenv(name);

	if (!v || *v != '/')
		bail("%s must name an absolute path (meson test sets it)", name);
	return v;
}

void fault_world_init(void)
{
	const char *tmpdir = getenv("TMPDIR");
	char path[PATH_MAX];

	FW.module = need_path("DURESS_MODULE");
	FW.runner = need_path("DURESS_RUNNER");
	FW.cli = need_path("DURESS_CLI");
	snprintf(FW.tmp, sizeof(FW.tmp), "%s/duress_faults.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(FW.tmp) || chmod(FW.tmp, 0755) != 0)
		bail("mkdtemp %s: %s", FW.tmp, strerror(errno));
	/* Linux-PAM lowercases service names; pids are unique among the runs alive. */
	snprintf(FW.services, sizeof(FW.services), "run%ld", (long)getpid());
	random_password(FW.alice_real, "real");
	random_password(FW.alice_duress, "duress");
	random_password(FW.carol_duress, "locked-duress");
	random_password(FW.global_duress, "global-duress");
	random_password(FW.wrong, "wrong");
	random_password(FW.once_duress, "once-duress");
	pathf(path, "%s/results", FW.tmp);
	make_dir(path, 0, 01777);
	pathf(FW.evidence, "%s/ran", path);
	pathf(FW.log, "%s/log", FW.tmp);
	pathf(FW.counts, "%s/counts", FW.tmp);
	pathf(path, "%s/home", FW.tmp);
	make_dir(path, 0, 0755);
	write_accounts();
	add_user_dir("alice", ALICE_UID, FW.alice_duress);
	add_user_dir("carol", CAROL_UID, FW.carol_duress);
	pathf(path, "%s/home/alice/.duress", FW.tmp);
	add_action(path, "once-act", ALICE_UID, FW.once_duress, true);
	pathf(FW.records, "%s/state/once", FW.tmp);
	pathf(path, "%s/global", FW.tmp);
	make_dir(path, 0, 0700);
	add_action(path, "global-act", 0, FW.global_duress, false);
	write_services();
	/* UID_MIN and UID_MAX as Debian's, without its 400 lines of comments (shim.c). */
	pathf(path, "%s/login.defs", FW.tmp);
	write_file(path, "# login.defs of the fault suite\nUID_MIN 1000\nUID_MAX 60000\n", 0, 0644);
	setenv("DURESS_FAULT_LOGIN_DEFS", path, 1);
	setenv("DURESS_FAULT_COUNTS", FW.counts, 1);
	setenv("DURESS_FAULT_MODULE", FW.module, 1);
	setenv("DURESS_FAULT_RUNNER", FW.runner, 1);
}

unsigned fault_world_records(bool remove)
{
	DIR *d = opendir(FW.records);
	struct dirent *de;
	unsigned n = 0;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && !(remove && unlinkat(dirfd(d), de->d_name, 0) == 0))
			n++;
	if (d)
		closedir(d);
	return n;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void fault_world_destroy(void)
{
	if (getenv("DURESS_TEST_KEEP")) {
		printf("# kept %s\n", FW.tmp);
		return;
	}
	if (FW.tmp[0] && nftw(FW.tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		printf("# could not remove %s\n", FW.tmp);
}
