/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * duress test: the password is typed once.  The core checks it as the
 * module would, with a trace (auth.h) that only this direct caller can
 * give: what matched and why the rest did not, then each action's end.  A
 * match is judged here without pam_authenticate (the module would run the
 * actions a second time); any other password goes through the real stack.
 */
#include "cli/pamtest.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include <sodium.h>

#include "cli/check.h"
#include "cli/pamstack.h"
#include "cli/password.h"
#include "core/actions.h"
#include "core/auth.h"
#include "core/escape.h"
#include "core/manifest.h"

#define DEFAULT_SERVICE "login"
#define DEFAULT_TIMEOUT 60U /* seconds duress test waits for the actions */
#define MAX_TIMEOUT 3600U

struct test_opts {
	const char *service;
	const char *pam_dir; /* where the service's pam_duress.so line is read */
	bool from_stdin;
	bool rehearse;
	unsigned timeout;
};

static void test_usage(FILE *out)
{
	fputs("Usage: duress test [--rehearse] [--stdin] [--service NAME] [--pam-dir DIR]\n"
	      "                   [--timeout SECONDS] USER\n"
	      "\n"
	      "Asks for a password once and says what a login of USER on a service\n"
	      "(default " DEFAULT_SERVICE ") would do with it.  pam_duress's own check says, per\n"
	      "directory and per action, which actions match the password, which are armed\n"
	      "for another one and which are skipped and why; the matching ones then RUN,\n"
	      "for real, and each one's exit status and run time is shown.  A password that\n"
	      "matches no action goes through the service's real PAM stack instead.\n"
	      "\n"
	      "  --rehearse         run the matching actions with DURESS_REHEARSE=1 in their\n"
	      "                     environment (actions that honour it only say what they\n"
	      "                     would do) and show their output\n"
	      "  --service NAME     the PAM service (a file in /etc/pam.d)\n"
	      "  --stdin            read the password, and answers to any later prompt, as\n"
	      "                     lines of standard input\n"
	      "  --pam-dir DIR      where the service files are read, for the pam_duress.so\n"
	      "                     line's options (default /etc/pam.d)\n"
	      "  --timeout SECONDS  how long to wait for the actions (default 60); past it\n"
	      "                     they go on, detached, and are listed as still running\n"
	      "\n"
	      "Exit status: 0 the login would succeed, 1 it would be refused, 2 error.  An\n"
	      "action that fails does not change it: its status is printed.\n",
	      out);
}

static int parse_timeout(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > MAX_TIMEOUT) {
		fprintf(stderr, "duress test: --timeout wants 1 to %u seconds\n", MAX_TIMEOUT);
		return -1;
	}
	*ret = (unsigned)v;
	return 0;
}

static int parse_test(struct test_opts *o, int argc, char **argv, int *status)
{
	static const struct option options[] = {
		{ "service", required_argument, NULL, 's' },
		{ "stdin", no_argument, NULL, 'i' },
		{ "pam-dir", required_argument, NULL, 'p' },
		{ "rehearse", no_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == 's') {
			o->service = optarg;
		} else if (opt == 'i') {
			o->from_stdin = true;
		} else if (opt == 'p') {
			o->pam_dir = optarg;
		} else if (opt == 'r') {
			o->rehearse = true;
		} else if (opt == 't' && parse_timeout(optarg, &o->timeout) == 0) {
			continue;
		} else {
			if (opt == 'h')
				test_usage(stdout);
			else
				fputs("duress: try 'duress test --help'\n", stderr);
			*status = opt == 'h' ? 0 : 2;
			return -1;
		}
	}
	return optind;
}

/* --- the real PAM stack ------------------------------------------------- */

struct conv_state {
	bool from_stdin;
	const struct duress_password *typed; /* answers the first password prompt */
	bool typed_used;
};

/* Answers one prompt; the answer is copied into memory libpam frees. */
static int answer(const struct pam_message *m, struct pam_response *r, struct conv_state *c)
{
	struct duress_password *pw = NULL;
	bool echo = m->msg_style == PAM_PROMPT_ECHO_ON;

	/* The password already typed, once: it was read before the stack ran. */
	if (!echo && c->typed && !c->typed_used) {
		c->typed_used = true;
		r->resp = strndup(c->typed->text, c->typed->len);
		return r->resp ? PAM_SUCCESS : PAM_BUF_ERR;
	}
	if (duress_read_answer(c->from_stdin, m->msg, echo, &pw) < 0)
		return PAM_CONV_ERR;
	r->resp = strndup(pw->text, pw->len);
	duress_password_free(pw);
	return r->resp ? PAM_SUCCESS : PAM_BUF_ERR;
}

static void free_responses(struct pam_response *resp, int n)
{
	for (int i = 0; i < n; i++) {
		if (resp[i].resp) {
			sodium_memzero(resp[i].resp, strlen(resp[i].resp));
			free(resp[i].resp);
		}
	}
	free(resp);
}

static int converse(int n, const struct pam_message **msg, struct pam_response **ret, void *data)
{
	struct conv_state *c = data;
	struct pam_response *resp;

	if (n <= 0 || n > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	resp = calloc((size_t)n, sizeof(*resp));
	if (!resp)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		int style = msg[i]->msg_style;
		int r = PAM_SUCCESS;

		if (style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON)
			r = answer(msg[i], &resp[i], c);
		else
			fprintf(style == PAM_ERROR_MSG ? stderr : stdout, "%s\n", msg[i]->msg);
		if (r != PAM_SUCCESS) {
			free_responses(resp, n);
			return r;
		}
	}
	*ret = resp;
	return PAM_SUCCESS;
}

static int print_result(int r)
{
	printf("result: the login %s\n", r == PAM_SUCCESS ? "would succeed" : "would be refused");
	return r == PAM_SUCCESS ? 0 : 1;
}

/* The account check of a login that authenticated; authenticate too unless authenticated. */
static int run_pam(const struct test_opts *o, const char *user, const struct duress_password *typed,
		   bool authenticated)
{
	struct conv_state c = { .from_stdin = o->from_stdin, .typed = typed };
	struct pam_conv conv = { converse, &c };
	pam_handle_t *pamh = NULL;
	int r = pam_start(o->service, user, &conv, &pamh);

	if (r != PAM_SUCCESS) {
		fprintf(stderr, "duress: pam_start(%s): %s\n", o->service, pam_strerror(NULL, r));
		return 2;
	}
	if (!authenticated) {
		r = pam_authenticate(pamh, 0);
		printf("authenticate: %s\n", pam_strerror(pamh, r));
	}
	if (r == PAM_SUCCESS) {
		r = pam_acct_mgmt(pamh, 0);
		printf("account: %s\n", pam_strerror(pamh, r));
	}
	pam_end(pamh, r);
	return print_result(r);
}

/* --- what the core found ------------------------------------------------ */

/* An action started, until its record comes. */
struct job {
	uid_t uid;
	bool global;
	bool done;
	char name[NAME_MAX + 1];
};

struct rehearsal {
	const struct test_opts *o;
	const char *user; /* as typed */
	struct job *jobs;
	size_t n_jobs;
	bool reported; /* the core's check ran to its end */
	enum duress_deny deny;
	bool no_memory;
};

static const char *shown(const char *s, char *buf, size_t len)
{
	return duress_escape(s, buf, len);
}

/* One line per action of a loaded directory; counts the matches into r->jobs. */
static void print_actions(struct rehearsal *r, const struct duress_dir *dir, bool global)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)];
	size_t shown_n = 0;

	for (size_t i = 0; i < dir->n_actions; i++) {
		const struct duress_action *a = &dir->actions[i];

		/* Neither executable nor signed: the module ignores it, and so does duress check. */
		if (a->skip == DURESS_SKIP_NOT_AN_ACTION)
			continue;
		shown_n++;
		shown(a->name, name, sizeof(name));
		if (a->matched && a->spent)
			printf("  %s: matches, but it is once and does not run (it ran before, or "
			       "its record cannot be made)\n",
			       name);
		else if (a->matched)
			printf("  %s: matches\n", name);
		else if (a->skip == DURESS_SKIP_NONE)
			printf("  %s: armed, another password\n", name);
		else
			printf("  %s: skipped: %s\n", name, duress_skip_reason(a->skip));
		if (a->matched && !a->spent && r->jobs) {
			struct job *j = &r->jobs[r->n_jobs++];

			*j = (struct job){ .uid = dir->owner, .global = global };
			memcpy(j->name, a->name, sizeof(j->name));
		}
	}
	if (shown_n == 0)
		printf("  no actions\n");
}

/* The matched actions that will run: not a spent once one. */
static size_t count_matches(const struct duress_dir *dir)
{
	size_t n = 0;

	for (size_t i = 0; dir && i < dir->n_actions; i++)
		n += dir->actions[i].matched && !dir->actions[i].spent;
	return n;
}

/* The directory's heading and what the core found in it. */
static void print_scope(struct rehearsal *r, const struct duress_scope_report *s, bool global)
{
	char path[DURESS_ESCAPED_SIZE(PATH_MAX)], buf[128];
	const char *what = global ? "global actions" : "per-user actions";

	if (s->path)
		shown(s->path, path, sizeof(path));
	if (s->not_checked) {
		printf("%s: not checked: %s%s\n", s->path ? path : what, s->not_checked,
		       s->needs_root ? " (sudo duress test)" : "");
		return;
	}
	if (s->dir) {
		printf("%s:\n", path);
		print_actions(r, s->dir, global);
	} else if (s->load == -ENOENT) {
		printf("%s: does not exist\n", path);
	} else {
		printf("%s: not checked: %s\n", path,
		       duress_dir_problem(s->load, buf, sizeof(buf)));
	}
}

/* The trace's callback: before any action starts. */
static void checked(const struct duress_trace_report *rep, void *data)
{
	struct rehearsal *r = data;
	size_t n = count_matches(rep->user.dir) + count_matches(rep->global.dir);

	r->reported = true;
	r->deny = rep->deny;
	r->jobs = n ? calloc(n, sizeof(*r->jobs)) : NULL;
	r->no_memory = n && !r->jobs;
	print_scope(r, &rep->user, false);
	print_scope(r, &rep->global, true);
	if (n == 0 && rep->outcome != DURESS_NO_MATCH)
		printf("no action runs: each one that matches is once, and does not run\n");
	else if (n == 0)
		printf("no action matches this password\n");
	else if (r->o->rehearse)
		printf("rehearsing %zu action%s (DURESS_REHEARSE=1)\n", n, n == 1 ? "" : "s");
	else
		printf("running %zu action%s for real\n", n, n == 1 ? "" : "s");
	/* Before the actions start: their output comes after these lines. */
	fflush(stdout);
}

/* --- the report pipe ---------------------------------------------------- */

static const char *who(const struct rehearsal *r, const struct job *j, char *buf, size_t len)
{
	return j->global ? "root" : shown(r->user, buf, len);
}

/* The job a record is about: the first not yet done with its uid and name. */
static struct job *find_job(struct rehearsal *r, const struct duress_report *rec)
{
	for (size_t i = 0; i < r->n_jobs; i++) {
		struct job *j = &r->jobs[i];

		if (!j->done && j->uid == rec->uid && strcmp(j->name, rec->name) == 0)
			return j;
	}
	return NULL;
}

static void print_record(struct rehearsal *r, const struct duress_report *rec)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)], as[DURESS_ESCAPED_SIZE(256)];
	struct job *j = find_job(r, rec);

	if (!j)
		return; /* not one the core started: the runner would be broken */
	j->done = true;
	printf("  %s (as %s): %s %d after %lu.%02lu s\n", shown(j->name, name, sizeof(name)),
	       who(r, j, as, sizeof(as)), rec->signaled ? "killed by signal" : "exit", rec->code,
	       rec->ms / 1000, rec->ms % 1000 / 10);
	fflush(stdout);
}

/* Each whole record in buf[0..*used); keeps a partial one.  -1: not a record. */
static int take_records(struct rehearsal *r, char *buf, size_t *used)
{
	char *p = buf, *nul;

	while ((nul = memchr(p, '\0', *used - (size_t)(p - buf)))) {
		struct duress_report rec;

		if (duress_report_parse(p, (size_t)(nul - p) + 1, &rec) < 0)
			return -1;
		print_record(r, &rec);
		p = nul + 1;
	}
	*used -= (size_t)(p - buf);
	memmove(buf, p, *used);
	return *used < DURESS_REPORT_MAX ? 0 : -1;
}

/* The actions' output is cut into lines of at most this many bytes. */
#define OUTPUT_LINE_MAX 1024

/*
 * One line of an action's output, escaped: the actions are their owners'
 * programs, and a user's action must not reach root's terminal with escape
 * sequences.  A NUL byte, which duress_escape() cannot see, is shown as \x00.
 */
static void print_output_line(const char *line, size_t len)
{
	char part[OUTPUT_LINE_MAX + 1], out[DURESS_ESCAPED_SIZE(OUTPUT_LINE_MAX)];
	size_t done = 0;

	while (done <= len) {
		const char *nul = memchr(line + done, '\0', len - done);
		size_t n = nul ? (size_t)(nul - (line + done)) : len - done;

		memcpy(part, line + done, n);
		part[n] = '\0';
		fputs(duress_escape(part, out, sizeof(out)), stdout);
		if (nul)
			fputs("\\x00", stdout);
		done += n + 1;
	}
	putchar('\n');
}

/* Each whole line in buf[0..*used); a partial one waits, unless the buffer is full or at EOF. */
static void take_output(char *buf, size_t *used, bool eof)
{
	char *p = buf, *nl;

	while ((nl = memchr(p, '\n', *used - (size_t)(p - buf)))) {
		print_output_line(p, (size_t)(nl - p));
		p = nl + 1;
	}
	*used -= (size_t)(p - buf);
	memmove(buf, p, *used);
	if (*used > 0 && (eof || *used == OUTPUT_LINE_MAX)) {
		print_output_line(buf, *used);
		*used = 0;
	}
	fflush(stdout);
}

/* A pipe read as it comes. */
struct reader {
	int fd; /* -1 once at its end */
	char buf[OUTPUT_LINE_MAX > 2 * DURESS_REPORT_MAX ? OUTPUT_LINE_MAX : 2 * DURESS_REPORT_MAX];
	size_t used;
};

/* Reads what is there; false at EOF (or an error: as good as one). */
static bool read_some(struct reader *rd, size_t max)
{
	ssize_t n;

	do
		n = read(rd->fd, rd->buf + rd->used, max - rd->used);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return false;
	rd->used += (size_t)n;
	return true;
}

/* What the output pipe holds now; at its end, its fd becomes -1. */
static void drain_output(struct reader *out, int wait_ms)
{
	struct pollfd p = { .fd = out->fd, .events = POLLIN };

	while (out->fd >= 0 && poll(&p, 1, wait_ms) > 0) {
		bool more = read_some(out, OUTPUT_LINE_MAX);

		take_output(out->buf, &out->used, !more);
		if (!more)
			out->fd = -1;
	}
}

static long ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000L + (end->tv_nsec - now.tv_nsec) / 1000000L;
}

/*
 * Shows the actions' output and their ends as they come, until every chain
 * is done (the report pipe's EOF) or the bound; false when the time ran
 * out.  An action writes its output before it ends, and its chain the
 * record after: the output pipe is read first, so each action's lines come
 * before its end.
 */
static bool follow(struct rehearsal *r, struct reader *out, struct reader *rep, unsigned timeout)
{
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout;
	for (;;) {
		struct pollfd p[2] = { { .fd = out->fd, .events = POLLIN },
				       { .fd = rep->fd, .events = POLLIN } };
		long left = ms_left(&end);
		int ready = left > 0 ? poll(p, 2, (int)left) : 0;

		if (ready == 0)
			return false;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return true; /* cannot happen with valid descriptors: stop waiting */
		if (p[0].revents)
			drain_output(out, 0);
		if (!p[1].revents)
			continue;
		if (!read_some(rep, sizeof(rep->buf)))
			return true;
		if (take_records(r, rep->buf, &rep->used) < 0) {
			fputs("duress: the action runner sent a malformed report\n", stderr);
			return true;
		}
	}
}

/*
 * An action still running, or something it left behind, may still write:
 * a process of our own reads the pipe to its end, so that no writer gets
 * SIGPIPE (and dies) because duress test has finished.  It is detached
 * (setsid, reparented to init), holds nothing else, and shows nothing.
 */
static void discard_in_background(int fd)
{
	pid_t pid = fork();
	char sink[4096];

	if (pid == 0) {
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		if (dup2(fd, STDIN_FILENO) < 0)
			_exit(1);
		(void)close_range(STDERR_FILENO + 1, ~0U, 0);
		for (int i = STDOUT_FILENO; i <= STDERR_FILENO; i++)
			(void)close(i);
		for (;;) {
			ssize_t n = read(STDIN_FILENO, sink, sizeof(sink));

			if (n == 0 || (n < 0 && errno != EINTR))
				_exit(0);
		}
	}
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* What has no record: still running past the bound, or never started. */
static void print_unfinished(const struct rehearsal *r, bool timed_out, unsigned timeout)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)], as[DURESS_ESCAPED_SIZE(256)];

	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct job *j = &r->jobs[i];

		if (j->done)
			continue;
		if (timed_out)
			printf("  %s (as %s): still running after %u s (it goes on, detached)\n",
			       shown(j->name, name, sizeof(name)), who(r, j, as, sizeof(as)),
			       timeout);
		else
			printf("  %s (as %s): did not run (its chain could not start it)\n",
			       shown(j->name, name, sizeof(name)), who(r, j, as, sizeof(as)));
	}
}

/* --- the whole test ----------------------------------------------------- */

/* A pipe whose ends are both close-on-exec; the ends -1 when it fails. */
static int open_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) == 0)
		return 0;
	perror("duress: pipe");
	fds[0] = fds[1] = -1;
	return -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* After the core returned: what it started, followed to its end or the bound. */
static void follow_actions(struct rehearsal *r, int output, int report)
{
	struct reader out = { .fd = output }, rep = { .fd = report };
	bool ended = follow(r, &out, &rep, r->o->timeout);

	/* What was written before the last end is there by now. */
	drain_output(&out, 0);
	take_output(out.buf, &out.used, true);
	print_unfinished(r, !ended, r->o->timeout);
	if (out.fd >= 0)
		discard_in_background(out.fd);
}

/*
 * Runs the core's check with a trace and follows what it started.  The
 * pipes' write ends go to the runner only: ours are closed once it has
 * taken over, so the report's EOF means every chain is done.  The output
 * comes through a pipe, never our terminal: a user's action must not hold
 * root's terminal, to read what is typed next or to write to it raw.
 */
static enum duress_outcome rehearse(struct rehearsal *r, const struct duress_opts *mo,
				    struct duress_password *pw)
{
	const struct duress_log lg = { 0 };
	struct duress_request req = { .user = r->user,
				      .password = pw->text,
				      .password_len = pw->len };
	struct duress_trace trace = { .rehearse = r->o->rehearse, .checked = checked, .data = r };
	enum duress_outcome out = DURESS_ERROR;
	int report[2], output[2] = { -1, -1 };

	if (open_pipe(report) < 0 || open_pipe(output) < 0)
		goto out;
	trace.output_fd = output[1];
	trace.report_fd = report[1];
	req.trace = &trace;
	req.items = (struct duress_pam_items){ .user = r->user,
					       .service = r->o->service,
					       .tty = ttyname(STDIN_FILENO) };
	out = duress_authenticate(mo, &req, &lg);
	close_fd(&report[1]);
	close_fd(&output[1]);
	if (r->no_memory)
		out = DURESS_ERROR;
	if (out == DURESS_MATCH || out == DURESS_MATCH_DENIED) {
		/*
		 * A match needs the password no more (no PAM run follows), and
		 * following the actions may fork a reader that lives as long
		 * as they do: it must not hold a copy.
		 */
		sodium_memzero(pw->text, sizeof(pw->text));
		pw->len = 0;
		if (r->n_jobs > 0)
			follow_actions(r, output[0], report[0]);
	}
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&report[i]);
		close_fd(&output[i]);
	}
	return out;
}

/* Why the service's module line is not checked here, or NULL: it is. */
static const char *not_tested(const struct duress_service_line *l, const char *service)
{
	if (l->stack.error[0])
		return "its stack cannot be read here (above), so duress test cannot tell; the "
		       "real stack runs instead";
	if (!l->module)
		return "no pam_duress.so auth line found for this service";
	if (l->inert)
		return "its pam_duress.so line is inert until the option above is fixed (duress "
		       "check names it)";
	if (!duress_service_allowed(&l->opts, service))
		return "the service is not in the module line's services=";
	if (l->verdict.placement == DURESS_NEVER_REACHED)
		return "the stack never reaches pam_duress.so (duress check says why)";
	return NULL;
}

/* A match: the stack's answer to the module's success, judged; then the account check. */
static int judge_match(const struct test_opts *o, const char *user,
		       const struct duress_service_line *l, enum duress_deny deny)
{
	if (deny != DURESS_DENY_NONE) {
		printf("authenticate: refused, as for a wrong password: %s\n",
		       duress_deny_words(deny));
		return print_result(PAM_AUTH_ERR);
	}
	if (l->verdict.placement == DURESS_TOO_COMPLEX) {
		printf("authenticate: pam_duress.so succeeds, but the stack is too complex to "
		       "judge\nresult: cannot tell\n");
		return 2;
	}
	if (l->verdict.placement != DURESS_PLACED) {
		printf("authenticate: pam_duress.so succeeds, but the stack never lets that log "
		       "in (duress check says why)\n");
		return print_result(PAM_AUTH_ERR);
	}
	/* Not pam_authenticate: the module would run the actions a second time. */
	printf("authenticate: pam_duress.so succeeds (judged from the stack, not run twice)\n");
	fflush(stdout);
	return run_pam(o, user, NULL, true);
}

/* The core's check, then the answer a login would get. */
static int test_password(const struct test_opts *o, const char *user,
			 const struct duress_service_line *l, struct duress_password *pw)
{
	struct rehearsal r = { .o = o, .user = user };
	enum duress_outcome out = rehearse(&r, &l->opts, pw);

	free(r.jobs);
	if (out == DURESS_ERROR) {
		fputs("duress test: the check failed (see above): pam_duress would refuse this "
		      "login\n",
		      stderr);
		return 2;
	}
	if (out == DURESS_NO_MATCH && !r.reported)
		printf("the check did not finish (no derivation slot came free): answered as for "
		       "a wrong password\n");
	if (out == DURESS_MATCH || out == DURESS_MATCH_DENIED)
		return judge_match(o, user, l, r.deny);
	fflush(stdout);
	return run_pam(o, user, pw, false);
}

int duress_cmd_test(int argc, char **argv)
{
	struct test_opts o = { .service = DEFAULT_SERVICE, .timeout = DEFAULT_TIMEOUT };
	struct duress_service_line line;
	struct duress_password *pw = NULL;
	char svc[DURESS_ESCAPED_SIZE(256)], usr[DURESS_ESCAPED_SIZE(256)];
	const char *why;
	int status = 0;
	int first = parse_test(&o, argc, argv, &status);

	if (first < 0)
		return status;
	if (argc - first != 1) {
		fputs("duress test: exactly one USER is needed; try 'duress test --help'\n",
		      stderr);
		return 2;
	}
	printf("service: %s, user: %s\n", shown(o.service, svc, sizeof(svc)),
	       shown(argv[first], usr, sizeof(usr)));
	if (duress_service_line_read(&line, o.pam_dir, o.service) < 0) {
		char err[DURESS_ESCAPED_SIZE(sizeof(line.stack.error))];

		printf("warning: service %s: %s\n", svc,
		       shown(line.stack.error[0] ? line.stack.error : "cannot be read", err,
			     sizeof(err)));
	}
	fflush(stdout);
	if (duress_read_answer(o.from_stdin, "Password: ", false, &pw) < 0) {
		duress_service_line_free(&line);
		return 2;
	}
	why = not_tested(&line, o.service);
	if (why)
		printf("warning: a duress password will not work on service %s: %s\n", svc, why);
	fflush(stdout);
	/* The module ignores an empty password, as it does every one where it is not checked. */
	if (why || pw->len == 0) {
		status = run_pam(&o, argv[first], pw, false);
	} else {
		status = test_password(&o, argv[first], &line, pw);
	}
	duress_password_free(pw);
	duress_service_line_free(&line);
	return status;
}
