/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/realpw.h"

#include <errno.h>
#include <fcntl.h>
#include <shadow.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/_pam_types.h>

#include <sodium.h>
#if HAVE_CRYPT
#include <crypt.h>
#endif

#include "core/account.h"
#include "core/wait.h"
#include "core/write.h"

/* pam_unix's helper (setgid shadow), at the path it runs it from on Debian and Fedora. */
#ifndef DURESS_UNIX_CHKPWD
#define DURESS_UNIX_CHKPWD "/usr/sbin/unix_chkpwd"
#endif

/* It hashes once; even a slow NSS lookup is done well within this. */
#define CHKPWD_TIMEOUT_MS 5000

#if HAVE_CRYPT
/* The CLI is single-threaded, so getspnam() will do (and nss_wrapper wraps it). */
static int matches_account(const char *user, const struct duress_password *pw)
{
	const struct spwd *found;
	struct crypt_data *data;
	const char *hash;
	int r = -1;

	if (!user || !(found = getspnam(user)))
		return -1;
	/* A locked or password-less account has no password to collide with. */
	if (!found->sp_pwdp[0] || found->sp_pwdp[0] == '!' || found->sp_pwdp[0] == '*')
		return 0;
	data = calloc(1, sizeof(*data));
	if (!data)
		return -1;
	hash = crypt_r(pw->text, found->sp_pwdp, data);
	if (hash && hash[0] != '*') {
		size_t len = strlen(hash);

		r = len == strlen(found->sp_pwdp) && sodium_memcmp(hash, found->sp_pwdp, len) == 0;
	}
	sodium_memzero(data, sizeof(*data));
	free(data);
	return r;
}

/* Root reads the shadow file itself. */
static int root_check(uid_t owner, const struct duress_password *pw, const char **why)
{
	struct duress_account *p = NULL;
	int r = -1;

	if (duress_getpw(NULL, owner, &p) == 0) {
		r = matches_account(p->pw.pw_name, pw);
		free(p);
	}
	/* root signing for the whole machine: the admin's own password counts too. */
	if (r != 1 && owner == 0 && getenv("SUDO_USER")) {
		int s = matches_account(getenv("SUDO_USER"), pw);

		r = s > r ? s : r;
	}
	if (r < 0)
		*why = "no readable shadow entry for the account";
	return r;
}
#else
static int matches_account(const char *user, const struct duress_password *pw)
{
	(void)user;
	(void)pw;
	return -1;
}

static int root_check(uid_t owner, const struct duress_password *pw, const char **why)
{
	(void)owner;
	(void)pw;
	*why = "duress was built without libcrypt";
	return -1;
}
#endif

/*
 * The child: the password pipe as standard input (unix_chkpwd refuses a
 * terminal there), nothing else open, an empty environment.  Only
 * async-signal-safe calls between fork() and execve().
 */
static _Noreturn void exec_chkpwd(int in, char *user)
{
	char path[] = DURESS_UNIX_CHKPWD, nonull[] = "nonull";
	char *const argv[] = { path, user, nonull, NULL };
	char *const envp[] = { NULL };
	/* Both above 2 first (a standard descriptor may have been closed), so that
	   no dup2() below overwrites the other's source. */
	int src = fcntl(in, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int quiet = null < 0 ? -1 : fcntl(null, F_DUPFD_CLOEXEC, 3);

	if (src >= 0 && quiet >= 0 && dup2(src, STDIN_FILENO) == STDIN_FILENO &&
	    dup2(quiet, STDOUT_FILENO) == STDOUT_FILENO &&
	    dup2(quiet, STDERR_FILENO) == STDERR_FILENO && close_range(3, ~0U, 0) == 0)
		execve(path, argv, envp);
	_exit(127);
}

/*
 * What unix_chkpwd answers for user (the caller's own account) and pw:
 * exit PAM_SUCCESS for the password, PAM_AUTH_ERR for another one; any
 * other end means it could not tell.
 */
static int helper_check(char *user, const struct duress_password *pw, const char **why)
{
	int fds[2], status = 0, r;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		*why = "no pipe for unix_chkpwd";
		return -1;
	}
	pid = fork();
	if (pid == 0)
		exec_chkpwd(fds[0], user);
	/* At most 513 bytes in an empty pipe: this never blocks, and the read end is
	   still open here, so it cannot fail with EPIPE either. */
	r = pid < 0 ? -1 : duress_write_all(fds[1], pw->text, pw->len + 1);
	close(fds[1]);
	close(fds[0]);
	if (pid < 0) {
		*why = "cannot fork to run unix_chkpwd";
		return -1;
	}
	/* unix_chkpwd ignores SIGTERM and SIGINT: the wait ends it with SIGKILL. */
	if (duress_wait_bounded(pid, &status, CHKPWD_TIMEOUT_MS) < 0) {
		*why = "unix_chkpwd did not answer in time";
		return -1;
	}
	if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) == PAM_SUCCESS)
		return 1;
	if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) == PAM_AUTH_ERR)
		return 0;
	*why = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "cannot run " DURESS_UNIX_CHKPWD :
								 "unix_chkpwd failed";
	return -1;
}

/*
 * A user checks the shadow entry when it can read it (a member of group
 * shadow; the demo's nss_wrapper world, whose shadow file pam_unix's
 * setgid helper never sees); otherwise it asks that helper, which checks
 * only the caller's account.
 */
static int user_check(uid_t owner, const struct duress_password *pw, const char **why)
{
	struct duress_account *p = NULL;
	int r;

	if (owner != getuid() || owner != geteuid() || duress_getpw(NULL, owner, &p) < 0) {
		*why = "not run as the account that owns the file";
		free(p);
		return -1;
	}
	r = matches_account(p->pw.pw_name, pw);
	if (r < 0)
		r = helper_check(p->pw.pw_name, pw, why);
	free(p);
	return r;
}

int duress_is_real_password(uid_t owner, const struct duress_password *pw, const char **why)
{
	*why = NULL;
	return geteuid() == 0 ? root_check(owner, pw, why) : user_check(owner, pw, why);
}
