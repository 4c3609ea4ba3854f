/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stand-in for the action runner (src/runner): started by duress_spawn()
 * exactly as the real one is, it runs nothing and writes what it was handed
 * to runner.out in its working directory (the test's): the descriptors it
 * holds, the manifest read with the runner's own parser, and each job's
 * memfd content.  Names, environment and contents are escaped, one item a
 * line.  Exits non-zero if anything is wrong, so that duress_spawn() fails.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/escape.h"
#include "core/manifest.h"

#define CONTENT_MAX 4096

/* Every descriptor but the listing's own and out's. */
static void print_fds(FILE *out)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	fputs("fds", out);
	while (d && (de = readdir(d))) {
		long fd = strtol(de->d_name, NULL, 10);

		if (de->d_name[0] != '.' && fd != dirfd(d) && fd != fileno(out))
			fprintf(out, " %ld", fd);
	}
	fputc('\n', out);
	if (d)
		closedir(d);
}

static void print_escaped(FILE *out, const char *key, const char *s)
{
	static char buf[DURESS_ESCAPED_SIZE(CONTENT_MAX)];

	fprintf(out, "%s=%s", key, duress_escape(s, buf, sizeof(buf)));
}

static void print_job(FILE *out, const struct duress_job *j)
{
	static char content[CONTENT_MAX + 1];
	ssize_t n = pread(j->memfd, content, CONTENT_MAX, 0);

	content[n > 0 ? n : 0] = '\0';
	fprintf(out, "job fd=%d elf=%d ", j->memfd, j->elf);
	print_escaped(out, "name", j->name);
	fputc(' ', out);
	print_escaped(out, "content", content);
	fputc('\n', out);
}

static void print_chain(FILE *out, const struct duress_chain *c)
{
	const struct duress_target *t = c->target;

	fprintf(out, "chain uid=%u gid=%u groups=", (unsigned)t->uid, (unsigned)t->gid);
	for (size_t i = 0; i < t->n_groups; i++)
		fprintf(out, "%s%u", i ? "," : "", (unsigned)t->groups[i]);
	fputc('\n', out);
	for (size_t i = 0; t->envp[i]; i++) {
		print_escaped(out, "env", t->envp[i]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < c->n_jobs; i++)
		print_job(out, &c->jobs[i]);
}

int main(void)
{
	struct duress_manifest m;
	int fd = open("runner.out", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	int r;

	if (!out)
		return 2;
	print_fds(out);
	r = duress_manifest_read(DURESS_RUNNER_MANIFEST_FD, &m);
	fprintf(out, "manifest %d flags=%u chains=%zu\n", r, r ? 0U : m.flags, r ? 0 : m.n_chains);
	for (size_t c = 0; r == 0 && c < m.n_chains; c++)
		print_chain(out, &m.chains[c]);
	if (r == 0)
		duress_manifest_free(&m);
	return fclose(out) == 0 && r == 0 ? 0 : 1;
}
