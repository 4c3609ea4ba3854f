/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "manifest.h"
#include "memfd.h"
#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

static const char magic[16] = "duress-runner-1";

void duress_target_free(struct duress_target *t)
{
	for (size_t i = 0; t->envp && t->envp[i]; i++)
		free(t->envp[i]);
	free(t->envp);
	free(t->groups);
	*t = (struct duress_target){ 0 };
}

/* --- writing ------------------------------------------------------------ */

struct out {
	char *data;
	size_t len, cap;
	int err;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->err)
		return;
	if (n > DURESS_MANIFEST_MAX - o->len) {
		o->err = -E2BIG;
		return;
	}
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *d;

		while (cap < o->len + n)
			cap *= 2;
		d = realloc(o->data, cap);
		if (!d) {
			o->err = -ENOMEM;
			return;
		}
		o->data = d;
		o->cap = cap;
	}
	memcpy(o->data + o->len, p, n);
	o->len += n;
}

static void put_u32(struct out *o, size_t v)
{
	uint32_t x = (uint32_t)v;

	if (v > UINT32_MAX && !o->err)
		o->err = -E2BIG;
	put(o, &x, sizeof(x));
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s) + 1);
}

static void put_chain(struct out *o, const struct duress_chain *c, size_t *next_fd)
{
	const struct duress_target *t = c->target;
	size_t n_env = 0;

	while (t->envp && t->envp[n_env])
		n_env++;
	if (t->n_groups > DURESS_MANIFEST_MAX_GROUPS || n_env > DURESS_MANIFEST_MAX_ENV ||
	    c->n_jobs > DURESS_MANIFEST_MAX_JOBS - (*next_fd - DURESS_RUNNER_FIRST_JOB_FD))
		o->err = o->err ? o->err : -E2BIG;
	put_u32(o, t->uid);
	put_u32(o, t->gid);
	put_u32(o, t->n_groups);
	for (size_t i = 0; i < t->n_groups; i++)
		put_u32(o, t->groups[i]);
	put_u32(o, n_env);
	for (size_t i = 0; i < n_env; i++)
		put_str(o, t->envp[i]);
	put_u32(o, c->n_jobs);
	for (size_t i = 0; i < c->n_jobs; i++) {
		put_u32(o, (*next_fd)++);
		put_u32(o, c->jobs[i].elf);
		put_str(o, c->jobs[i].name);
	}
}

static int sealed_memfd(const struct out *o)
{
	int fd = memfd_create(DURESS_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
	int r;

	/* Kernels before 6.3 do not know MFD_NOEXEC_SEAL. */
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create(DURESS_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	r = duress_write_all(fd, o->data, o->len);
	if (r == 0 &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int duress_manifest_write(const struct duress_chain *chains, size_t n_chains, unsigned flags)
{
	struct out o = { 0 };
	size_t next_fd = DURESS_RUNNER_FIRST_JOB_FD;
	int r;

	if (n_chains > DURESS_CHAINS)
		return -E2BIG;
	put(&o, magic, sizeof(magic));
	put_u32(&o, flags);
	put_u32(&o, n_chains);
	for (size_t i = 0; i < n_chains; i++)
		put_chain(&o, &chains[i], &next_fd);
	r = o.err ? o.err : sealed_memfd(&o);
	free(o.data);
	return r;
}

/* --- reading ------------------------------------------------------------ */

struct in {
	char *p;
	size_t left;
	int err;
};

static uint32_t get_u32(struct in *in)
{
	uint32_t v = 0;

	if (in->left < sizeof(v)) {
		in->err = -EBADMSG;
		return 0;
	}
	memcpy(&v, in->p, sizeof(v));
	in->p += sizeof(v);
	in->left -= sizeof(v);
	return v;
}

/* A count of items of at least min_size bytes each, checked against what is left. */
static size_t get_count(struct in *in, size_t max, size_t min_size)
{
	size_t n = get_u32(in);

	if (n > max || n > in->left / min_size) {
		in->err = -EBADMSG;
		return 0;
	}
	return n;
}

/* A NUL-terminated string inside what is left, or NULL. */
static char *get_str(struct in *in)
{
	char *s = in->p, *end = in->left ? memchr(in->p, '\0', in->left) : NULL;

	if (!end) {
		in->err = -EBADMSG;
		return NULL;
	}
	in->left -= (size_t)(end - s) + 1;
	in->p = end + 1;
	return s;
}

static void get_ids(struct in *in, struct duress_target *t)
{
	t->uid = get_u32(in);
	t->gid = get_u32(in);
	/* -1 would mean "unchanged" to setresuid() and setresgid(). */
	if (t->uid == (uid_t)-1 || t->gid == (gid_t)-1)
		in->err = -EBADMSG;
	t->n_groups = get_count(in, DURESS_MANIFEST_MAX_GROUPS, sizeof(uint32_t));
	t->groups = calloc(t->n_groups + 1, sizeof(gid_t));
	if (!t->groups)
		in->err = -ENOMEM;
	for (size_t i = 0; !in->err && i < t->n_groups; i++)
		t->groups[i] = get_u32(in);
}

static void get_env(struct in *in, struct duress_target *t)
{
	size_t n = get_count(in, DURESS_MANIFEST_MAX_ENV, 2);

	t->envp = calloc(n + 1, sizeof(char *));
	if (!t->envp)
		in->err = -ENOMEM;
	for (size_t i = 0; !in->err && i < n; i++) {
		const char *s = get_str(in);

		if (!s || !strchr(s, '='))
			in->err = -EBADMSG;
		else if (!(t->envp[i] = strdup(s)))
			in->err = -ENOMEM;
	}
}

static void get_jobs(struct in *in, struct duress_manifest *m, size_t c, uint32_t *next_fd)
{
	/* fd, elf and a name of at least one byte and its NUL. */
	size_t n = get_count(in, DURESS_MANIFEST_MAX_JOBS, 2 * sizeof(uint32_t) + 2);

	m->jobs[c] = calloc(n + 1, sizeof(struct duress_job));
	if (!m->jobs[c])
		in->err = -ENOMEM;
	for (size_t i = 0; !in->err && i < n; i++) {
		struct duress_job *j = &m->jobs[c][i];
		uint32_t fd = get_u32(in), elf = get_u32(in);

		j->name = get_str(in);
		if (fd != (*next_fd)++ || fd > INT32_MAX || elf > 1 || !j->name || !*j->name)
			in->err = -EBADMSG;
		j->memfd = (int)fd;
		j->elf = elf;
	}
	m->chains[c] = (struct duress_chain){ .target = &m->targets[c],
					      .jobs = m->jobs[c],
					      .n_jobs = in->err ? 0 : n };
}

static int parse(struct duress_manifest *m, size_t size)
{
	struct in in = { .p = m->text, .left = size };
	uint32_t next_fd = DURESS_RUNNER_FIRST_JOB_FD;

	if (size < sizeof(magic) || memcmp(m->text, magic, sizeof(magic)) != 0)
		return -EBADMSG;
	in.p += sizeof(magic);
	in.left -= sizeof(magic);
	m->flags = get_u32(&in);
	m->n_chains = get_count(&in, DURESS_CHAINS, 1);
	if (m->flags &
	    ~(DURESS_RUN_DEBUG | DURESS_RUN_WAIT | DURESS_RUN_REPORT | DURESS_RUN_INTERP_ARGV0))
		in.err = -EBADMSG;
	/* Both would be the same descriptor. */
	if ((m->flags & DURESS_RUN_WAIT) && (m->flags & DURESS_RUN_REPORT))
		in.err = -EBADMSG;
	for (size_t c = 0; !in.err && c < m->n_chains; c++) {
		get_ids(&in, &m->targets[c]);
		if (!in.err)
			get_env(&in, &m->targets[c]);
		if (!in.err)
			get_jobs(&in, m, c, &next_fd);
	}
	if (!in.err && in.left != 0)
		in.err = -EBADMSG;
	return in.err;
}

static int read_text(int fd, struct duress_manifest *m, size_t *size)
{
	struct stat st;
	size_t done = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > DURESS_MANIFEST_MAX)
		return -EBADMSG;
	*size = (size_t)st.st_size;
	m->text = malloc(*size + 1);
	if (!m->text)
		return -ENOMEM;
	while (done < *size) {
		ssize_t n = pread(fd, m->text + done, *size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EBADMSG;
		done += (size_t)n;
	}
	m->text[*size] = '\0';
	return 0;
}

int duress_manifest_read(int fd, struct duress_manifest *m)
{
	size_t size = 0;
	int r;

	*m = (struct duress_manifest){ 0 };
	r = read_text(fd, m, &size);
	if (r == 0)
		r = parse(m, size);
	if (r < 0)
		duress_manifest_free(m);
	return r;
}

void duress_manifest_free(struct duress_manifest *m)
{
	for (size_t c = 0; c < DURESS_CHAINS; c++) {
		duress_target_free(&m->targets[c]);
		free(m->jobs[c]);
	}
	free(m->text);
	*m = (struct duress_manifest){ 0 };
}

/* --- report records ---------------------------------------------------- */

size_t duress_report_format(char *buf, uid_t uid, int status, unsigned long ms, const char *name)
{
	bool sig = WIFSIGNALED(status);
	int n = snprintf(buf, DURESS_REPORT_MAX, "%u %s %d %lu %s", (unsigned)uid,
			 sig ? "signal" : "exit", sig ? WTERMSIG(status) : WEXITSTATUS(status), ms,
			 name);

	/* A name is at most NAME_MAX bytes: this never cuts, but stays a record if it did. */
	if (n < 0)
		n = 0;
	if ((size_t)n >= DURESS_REPORT_MAX)
		n = DURESS_REPORT_MAX - 1;
	buf[n] = '\0';
	return (size_t)n + 1;
}

/* A decimal number up to the next space, within [0, max]; NULL if not one. */
static const char *report_number(const char *p, unsigned long max, unsigned long *v)
{
	char *end;

	if (*p < '0' || *p > '9')
		return NULL;
	errno = 0;
	*v = strtoul(p, &end, 10);
	if (errno || *v > max || *end != ' ')
		return NULL;
	return end + 1;
}

int duress_report_parse(const char *rec, size_t len, struct duress_report *r)
{
	unsigned long uid = 0, code = 0;
	const char *p = rec;

	if (len == 0 || len > DURESS_REPORT_MAX || rec[len - 1] != '\0' || strlen(rec) != len - 1)
		return -EBADMSG;
	p = report_number(p, UINT32_MAX - 1, &uid);
	if (p && strncmp(p, "exit ", 5) == 0)
		r->signaled = false;
	else if (p && strncmp(p, "signal ", 7) == 0)
		r->signaled = true;
	else
		return -EBADMSG;
	p = report_number(p + (r->signaled ? 7 : 5), 255, &code);
	if (p)
		p = report_number(p, ULONG_MAX - 1, &r->ms);
	if (!p || !*p)
		return -EBADMSG;
	r->uid = (uid_t)uid;
	r->code = (int)code;
	r->name = p;
	return 0;
}
