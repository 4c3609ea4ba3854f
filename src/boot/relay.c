/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unlock-relay: duress at systemd-cryptsetup's passphrase prompt, for an
 * initramfs made by dracut with systemd in it (docs/boot.md, "dracut").
 *
 *   unlock-relay [RELAY_DIR AGENT_DIR [BOOT_DIR]]
 *
 * systemd-cryptsetup asks for a passphrase by the password agent protocol
 * (systemd.io/PASSWORD_AGENTS): an ask.* file in AGENT_DIR
 * (/run/systemd/ask-password) names a datagram socket, and the console and
 * plymouth agents answer on it.  The dracut module's drop-in binds
 * RELAY_DIR over AGENT_DIR for systemd-cryptsetup@.service alone, so its
 * questions land in RELAY_DIR.  For each, the relay puts a copy into
 * AGENT_DIR, the same file but for its own socket in place of the asker's:
 * the stock agents ask as they always do, with systemd's own words, on
 * every try.  Each answer goes through unlock-helper (one derivation; the
 * before-unlock actions waited for, the after-boot ones recorded), then to
 * the asker byte for byte, whatever the helper did.  No prompt, option or
 * try of systemd-cryptsetup's is changed.
 *
 * Whatever cannot be relayed (a question that is not cryptsetup's, or more
 * than RELAY_MAX at once) is passed through: the copy names the asker's own
 * socket, and the agents answer it directly.  When the relay is stopped,
 * its questions are passed through the same way.  A question withdrawn
 * (its file removed: answered, timed out) has its copy removed.
 *
 * No passphrase in argv or the environment: it comes in on a socket only
 * root can reach (RELAY_DIR is 0700) from root (SCM_CREDENTIALS), and goes
 * to the helper on a pipe.  Lines go to stderr (the journal), never one for
 * a match.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "boot/unlock.h"
#include "core/boot.h"
#include "core/log.h"
#include "core/wait.h"
#include "core/write.h"

/* The helper the relay starts; a test build names the build tree's. */
#ifndef RELAY_HELPER_PATH
#define RELAY_HELPER_PATH DURESS_UNLOCK_HELPER_PATH
#endif

#define RELAY_DIR_DEFAULT "/run/unlock-relay"
#define AGENT_DIR_DEFAULT "/run/systemd/ask-password"
/* Questions relayed at once (one per disk being unlocked); more are passed through. */
#define RELAY_MAX 16
/* An ask file read whole; systemd's are a few hundred bytes. */
#define RELAY_ASK_MAX (16U << 10)
/* An answer: "+" and the passwords, NUL-separated (the tty agent's are at most LINE_MAX). */
#define RELAY_REPLY_MAX (64U << 10)
/* Passwords of one answer that are checked (each costs a derivation). */
#define RELAY_PASSWORDS_MAX 4
/* The longest "ask." suffix taken (systemd's are 6 to 16 characters). */
#define RELAY_SUFFIX_MAX 48
/* How long an answer waits for the helper: its own watchdog, and a little more. */
#define RELAY_HELPER_SECONDS (UNLOCK_WAIT_SECONDS + 65)

#define SUN_PATH_SIZE sizeof(((struct sockaddr_un *)0)->sun_path)

struct relayed {
	char name[sizeof("ask.") + RELAY_SUFFIX_MAX]; /* the same in both directories; "" when free */
	char target[SUN_PATH_SIZE]; /* the asker's socket, as the relay reaches it */
	char own[SUN_PATH_SIZE];    /* the relay's socket, which the copy names */
	int fd;
};

struct relay {
	const char *relay_dir, *agent_dir, *boot_dir;
	int relay_fd, agent_fd, inotify_fd;
	char *reply; /* RELAY_REPLY_MAX, locked, wiped after each answer */
	struct relayed q[RELAY_MAX];
	struct duress_log lg;
};

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

/* "ask." and 1 to RELAY_SUFFIX_MAX characters of [A-Za-z0-9_-]. */
static bool is_question(const char *name)
{
	size_t n;

	if (strncmp(name, "ask.", 4) != 0)
		return false;
	n = strspn(name + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
	return n > 0 && n <= RELAY_SUFFIX_MAX && name[4 + n] == '\0';
}

static struct relayed *find(struct relay *r, const char *name)
{
	for (size_t i = 0; i < RELAY_MAX; i++)
		if (strcmp(r->q[i].name, name) == 0)
			return &r->q[i];
	return NULL;
}

/* Closes q's socket and removes it; the slot is free again. */
static void forget(struct relayed *q)
{
	if (q->fd >= 0) {
		close(q->fd);
		(void)unlink(q->own);
	}
	q->fd = -1;
	q->name[0] = '\0';
}

/*
 * The line of the ask file text (len bytes) that starts with prefix, as
 * [*start, *end) (the newline excluded).  Whether there is exactly one.
 */
static bool one_line(const char *text, size_t len, const char *prefix, size_t *start, size_t *end)
{
	size_t plen = strlen(prefix), found = 0;

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;

		if (e - i >= plen && memcmp(text + i, prefix, plen) == 0) {
			*start = i;
			*end = e;
			found++;
		}
		i = e + 1;
	}
	return found == 1;
}

/*
 * The asker's socket as the relay reaches it: Socket= names a path in
 * AGENT_DIR as the asker sees it (RELAY_DIR bound there), a file name in
 * it.  0, or -EINVAL.
 */
static int target_of(const struct relay *r, const char *value, size_t len, char *out)
{
	size_t dlen = strlen(r->agent_dir);
	const char *name = value + dlen + 1;
	size_t nlen = len - dlen - 1;

	if (len <= dlen + 1 || memcmp(value, r->agent_dir, dlen) != 0 || value[dlen] != '/' ||
	    name[0] == '.' || memchr(name, '/', nlen) || memchr(name, '\0', nlen))
		return -EINVAL;
	if ((size_t)snprintf(out, SUN_PATH_SIZE, "%s/%.*s", r->relay_dir, (int)nlen, name) >=
	    SUN_PATH_SIZE)
		return -ENAMETOOLONG;
	return 0;
}

/* A datagram socket at path, taking root's credentials with each answer. */
static int own_socket(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int one = 1, fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	memcpy(a.sun_path, path, strlen(path) + 1);
	(void)unlink(path);
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/*
 * Puts the copy of question name (its text, with the Socket= line at
 * [s, e)) into AGENT_DIR, naming socket instead.  0 or -errno.
 */
static int post_copy(struct relay *r, const char *name, const char *text, size_t len, size_t s,
		     size_t e, const char *socket, mode_t mode)
{
	/* The text has no NUL (on_question checked): one string. */
	size_t n = s + strlen("Socket=") + strlen(socket) + (len - e);
	char *copy = malloc(n + 1);
	int rc;

	if (!copy)
		return -ENOMEM;
	(void)snprintf(copy, n + 1, "%.*sSocket=%s%.*s", (int)s, text, socket, (int)(len - e),
		       text + e);
	rc = duress_write_file_at(r->agent_fd, name, copy, n, mode, (uid_t)-1, (gid_t)-1);
	free(copy);
	return rc;
}

/*
 * A question in RELAY_DIR: relayed (a cryptsetup one, with a free slot,
 * unless pass_through) or passed through, by its copy in AGENT_DIR.
 */
static void on_question(struct relay *r, const char *name, bool pass_through)
{
	char text[RELAY_ASK_MAX + 1] = { 0 }, target[SUN_PATH_SIZE];
	struct relayed *q = find(r, name);
	size_t s, e, is, ie;
	struct stat st;
	ssize_t len;
	int rc;

	if (q && !pass_through)
		return; /* seen already (a rescan, or both inotify events) */
	len = duress_read_small_at(r->relay_fd, name, O_NOFOLLOW, text, sizeof(text) - 1, &st);
	if (len == -ENOENT)
		return; /* withdrawn already */
	if (len < 0 || memchr(text, '\0', (size_t)len) ||
	    !one_line(text, (size_t)len, "Socket=", &s, &e) ||
	    target_of(r, text + s + strlen("Socket="), e - s - strlen("Socket="), target) < 0) {
		duress_log(&r->lg, LOG_ERR, "%s: cannot read the question (%s): it is not relayed",
			   name,
			   len < 0 ? strerror((int)-len) :
				     "no single Socket= line in the agent directory");
		return;
	}
	if (q) {
		forget(q);
		q = NULL;
	} else if (!pass_through && one_line(text, (size_t)len, "Id=cryptsetup:", &is, &ie))
		q = find(r, "");
	if (q) {
		rc = snprintf(q->own, sizeof(q->own), "%s/relay.%s", r->relay_dir, name + 4);
		q->fd = rc > 0 && (size_t)rc < sizeof(q->own) ? own_socket(q->own) : -ENAMETOOLONG;
		if (q->fd < 0) {
			duress_log(&r->lg, LOG_ERR, "%s: cannot make a socket (%s): passed through",
				   name, strerror(-q->fd));
			q->fd = -1;
			q = NULL;
		} else {
			memcpy(q->name, name, strlen(name) + 1);
			memcpy(q->target, target, sizeof(target));
		}
	}
	rc = post_copy(r, name, text, (size_t)len, s, e, q ? q->own : target, st.st_mode & 0644);
	sodium_memzero(text, sizeof(text));
	if (rc < 0) {
		duress_log(&r->lg, LOG_ERR, "%s: cannot post the question to %s: %s", name,
			   r->agent_dir, strerror(-rc));
		if (q)
			forget(q);
	}
}

/* A question withdrawn: its copy and socket go too. */
static void on_withdrawn(struct relay *r, const char *name)
{
	struct relayed *q = find(r, name);

	if (q)
		forget(q);
	(void)unlinkat(r->agent_fd, name, 0);
}

/* unlock-helper BOOT_DIR with pass (len bytes) on its stdin; bounded. */
static void check_password(struct relay *r, const char *pass, size_t len)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		duress_log(&r->lg, LOG_ERR, "cannot make a pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null < 0 || dup2(p[0], STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
			_exit(127);
		execl(RELAY_HELPER_PATH, RELAY_HELPER_PATH, r->boot_dir, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		duress_log(&r->lg, LOG_ERR, "cannot start %s: %s", RELAY_HELPER_PATH,
			   strerror(errno));
		close(p[1]);
		return;
	}
	/* A helper gone early (missing, failing) takes nothing more: EPIPE, ignored. */
	(void)duress_write_all(p[1], pass, len);
	close(p[1]);
	(void)duress_wait_bounded(pid, NULL, RELAY_HELPER_SECONDS * 1000L);
}

/* Whether the answer came from root (SCM_CREDENTIALS, which SO_PASSCRED has the kernel add). */
static bool from_root(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct ucred cred;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS ||
		    c->cmsg_len != CMSG_LEN(sizeof(cred)))
			continue;
		memcpy(&cred, CMSG_DATA(c), sizeof(cred));
		return cred.uid == 0;
	}
	return false;
}

/* The answer, byte for byte, to the asker's socket. */
static void forward(struct relay *r, const char *target, const char *data, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memcpy(a.sun_path, target, strlen(target) + 1);
	if (fd < 0 || sendto(fd, data, len, MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof(a)) < 0)
		duress_log(&r->lg, LOG_ERR, "cannot hand the answer on: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * An answer on q's socket: the copy withdrawn (the agents stop asking),
 * each password ("+" and NUL-separated; "-" is a cancel) checked, then the
 * answer handed on.
 */
static void on_answer(struct relay *r, struct relayed *q)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = { r->reply, RELAY_REPLY_MAX };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = &ctl,
			    .msg_controllen = sizeof(ctl) };
	char target[SUN_PATH_SIZE], name[sizeof(q->name)];
	ssize_t n = recvmsg(q->fd, &m, MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			duress_log(&r->lg, LOG_ERR, "%s: cannot read an answer: %s", q->name,
				   strerror(errno));
		return;
	}
	if (!from_root(&m) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		duress_log(&r->lg, LOG_WARNING, "%s: an answer not from root, or too long: ignored",
			   q->name);
		sodium_memzero(r->reply, (size_t)n);
		return;
	}
	memcpy(target, q->target, sizeof(target));
	memcpy(name, q->name, sizeof(name));
	on_withdrawn(r, name);
	if (n > 0 && r->reply[0] == '+') {
		const char *p = r->reply + 1, *end = r->reply + n;

		for (int i = 0; i < RELAY_PASSWORDS_MAX; i++) {
			size_t len = strnlen(p, (size_t)(end - p));

			check_password(r, p, len);
			p += len + 1;
			if (p >= end)
				break;
		}
	}
	forward(r, target, r->reply, (size_t)n);
	sodium_memzero(r->reply, (size_t)n);
}

/* Every question now in RELAY_DIR (at the start, and after an inotify overflow). */
static void scan(struct relay *r, bool pass_through)
{
	int fd = openat(r->relay_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		duress_log(&r->lg, LOG_ERR, "cannot read %s: %s", r->relay_dir, strerror(errno));
		return;
	}
	while ((de = readdir(d)))
		if (is_question(de->d_name))
			on_question(r, de->d_name, pass_through);
	closedir(d);
}

static void on_inotify(struct relay *r)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(r->inotify_fd, buf, sizeof(buf));

	for (char *p = buf; n > 0 && p < buf + n;) {
		const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

		if (ev->mask & IN_Q_OVERFLOW)
			scan(r, false);
		else if (ev->len && is_question(ev->name)) {
			if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
				on_withdrawn(r, ev->name);
			else
				on_question(r, ev->name, false);
		}
		p += sizeof(*ev) + ev->len;
	}
}

/*
 * RELAY_DIR made (root's, 0700) and watched, AGENT_DIR opened.  The
 * drop-in's bind is optional: as long as RELAY_DIR is not there,
 * systemd-cryptsetup asks the agents itself; so it is made last, just
 * before serving, and never by systemd (a relay that cannot start must
 * not leave a directory nobody answers in).
 */
static int open_dirs(struct relay *r)
{
	struct stat st;

	(void)mkdir(r->agent_dir, 0755);
	if (mkdir(r->relay_dir, 0700) < 0 && errno != EEXIST)
		goto fail;
	r->relay_fd = open(r->relay_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r->agent_fd = open(r->agent_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (r->relay_fd < 0 || r->agent_fd < 0 || r->inotify_fd < 0 || fstat(r->relay_fd, &st) < 0)
		goto fail;
	/* Left by someone else: not where answers go. */
	if (st.st_uid != geteuid()) {
		errno = EPERM;
		goto fail;
	}
	if (fchmod(r->relay_fd, 0700) < 0 ||
	    inotify_add_watch(r->inotify_fd, r->relay_dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM |
				      IN_ONLYDIR) < 0)
		goto fail;
	return 0;
fail:
	duress_log(&r->lg, LOG_ERR, "cannot watch %s for %s: %s", r->relay_dir, r->agent_dir,
		   strerror(errno));
	return -1;
}

/* READY=1 to systemd (Type=notify): from now on questions are answered. */
static void notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = path ? strlen(path) : 0;
	int fd;

	if (n < 2 || n >= sizeof(a.sun_path) || (path[0] != '/' && path[0] != '@'))
		return;
	memcpy(a.sun_path, path, n);
	if (a.sun_path[0] == '@')
		a.sun_path[0] = '\0'; /* an abstract socket */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, "READY=1", strlen("READY=1"), MSG_NOSIGNAL, (struct sockaddr *)&a,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
	close(fd);
}

/* Until SIGTERM: questions and answers. */
static void serve(struct relay *r)
{
	sigset_t none;

	sigemptyset(&none);
	scan(r, false); /* after the watch: a question posted before it is seen too */
	notify_ready();
	while (!stopping) {
		struct pollfd pf[RELAY_MAX + 1] = { { .fd = r->inotify_fd, .events = POLLIN } };
		struct relayed *by[RELAY_MAX + 1] = { NULL };
		nfds_t n = 1;

		for (size_t i = 0; i < RELAY_MAX; i++)
			if (r->q[i].name[0] && r->q[i].fd >= 0) {
				pf[n].fd = r->q[i].fd;
				pf[n].events = POLLIN;
				by[n++] = &r->q[i];
			}
		if (ppoll(pf, n, NULL, &none) < 0) {
			if (errno == EINTR)
				continue;
			duress_log(&r->lg, LOG_ERR, "poll: %s", strerror(errno));
			return;
		}
		if (pf[0].revents)
			on_inotify(r);
		for (nfds_t i = 1; i < n; i++)
			if (pf[i].revents && by[i]->name[0])
				on_answer(r, by[i]);
	}
}

int main(int argc, char **argv)
{
	static struct relay r = { .relay_dir = RELAY_DIR_DEFAULT,
				  .agent_dir = AGENT_DIR_DEFAULT,
				  .boot_dir = DURESS_BOOT_DIR,
				  .lg = { .tag = "unlock-relay" } };
	struct sigaction sa = { .sa_handler = on_stop };
	sigset_t stop;

	if (argc == 3 || argc == 4) {
		r.relay_dir = argv[1];
		r.agent_dir = argv[2];
		if (argc == 4)
			r.boot_dir = argv[3];
	} else if (argc != 1) {
		fputs("usage: unlock-relay [RELAY_DIR AGENT_DIR [BOOT_DIR]]\n", stderr);
		return 2;
	}
	/* No core dump, no ptrace but root's: the answers pass through this memory. */
	(void)prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
	umask(077);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (size_t i = 0; i < RELAY_MAX; i++)
		r.q[i].fd = -1;
	if (sodium_init() < 0 || !(r.reply = sodium_malloc(RELAY_REPLY_MAX))) {
		duress_log(&r.lg, LOG_ERR, "cannot initialise libsodium");
		return 1;
	}
	if (open_dirs(&r) < 0)
		return 1;
	serve(&r);
	/*
	 * Stopped: what is still asked is answered by the agents directly;
	 * the directory goes when nothing is left in it (at switch-root).
	 */
	scan(&r, true);
	for (size_t i = 0; i < RELAY_MAX; i++)
		forget(&r.q[i]);
	(void)rmdir(r.relay_dir);
	sodium_free(r.reply);
	return 0;
}
