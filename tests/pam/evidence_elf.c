/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An ELF action for the PAM tests.  Unlike a shell script it sees exactly
 * what the runner gave it: its argv, every descriptor, its ids and groups,
 * its session keyring, its environment and the names /proc shows for it.
 * It writes them, in the format of the script actions, to
 * $HOME/results/<argv[0]> (the test links results there) and appends
 * argv[0] to $HOME/results/runs.
 *
 * Built without sanitizers: their runtimes could add descriptors of their own.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/keyctl.h>

extern char **environ;

/* Lists the descriptors before anything here opens one (but the listing's). */
static void list_fds(char *buf, size_t size)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t used = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)) && used < size) {
		char link[PATH_MAX] = "", p[320];
		ssize_t n;

		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", de->d_name);
		n = readlink(p, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		used += (size_t)snprintf(buf + used, size - used, "fd %s %s\n", de->d_name, link);
	}
	closedir(d);
}

static void write_ids(FILE *f)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	fprintf(f, "uid %u\neuid %u\ngid %u\negid %u\ngroups", (unsigned)getuid(),
		(unsigned)geteuid(), (unsigned)getgid(), (unsigned)getegid());
	for (int i = 0; i < n; i++)
		fprintf(f, " %u", (unsigned)groups[i]);
	fprintf(f, "\nppid %d\nsid %d\n", (int)getppid(), (int)getsid(0));
	/* Whose session keyring it was given (not created here: create = 0). */
	fprintf(f, "keyring %ld\n",
		syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

/*
 * The names /proc shows for this process to its own user: what `ps`, `top`
 * and `ls -l /proc/PID` would show a coercer in the session.
 */
static void write_proc_names(FILE *f)
{
	char link[PATH_MAX], line[PATH_MAX + 128], last[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", link, sizeof(link) - 1);
	FILE *in;

	link[n > 0 ? n : 0] = '\0';
	fprintf(f, "exe %s\n", link);
	in = fopen("/proc/self/comm", "re");
	if (in && fgets(line, sizeof(line), in))
		fprintf(f, "comm %s", line);
	if (in)
		fclose(in);
	in = fopen("/proc/self/maps", "re");
	/* The file column of each mapping, once per run of equal ones. */
	while (in && fgets(line, sizeof(line), in)) {
		char *path = strchr(line, '/');

		if (path && strcmp(path, last) != 0) {
			fprintf(f, "map %s", path);
			snprintf(last, sizeof(last), "%s", path);
		}
	}
	if (in)
		fclose(in);
}

int main(int argc, char **argv)
{
	char fds[8192], tmp[PATH_MAX], final[PATH_MAX], runs[PATH_MAX];
	const char *home = getenv("HOME");
	const char *name = argc > 0 && argv[0] && !strchr(argv[0], '/') ? argv[0] : "bad-argv0";
	FILE *f;
	int fd;

	list_fds(fds, sizeof(fds));
	if (!home)
		return 1;
	snprintf(tmp, sizeof(tmp), "%s/results/.%s.%d", home, name, (int)getpid());
	snprintf(final, sizeof(final), "%s/results/%s", home, name);
	snprintf(runs, sizeof(runs), "%s/results/runs", home);
	f = fopen(tmp, "w");
	if (!f)
		return 1;
	fputs(fds, f);
	fprintf(f, "argc %d\n", argc);
	for (int i = 0; i < argc; i++)
		fprintf(f, "argv%d %s\n", i, argv[i] ? argv[i] : "(null)");
	write_ids(f);
	write_proc_names(f);
	for (char **e = environ; *e; e++)
		fprintf(f, "env %s\n", *e);
	if (fclose(f) != 0 || rename(tmp, final) != 0)
		return 1;
	fd = open(runs, O_WRONLY | O_APPEND | O_CREAT, 0666);
	if (fd < 0)
		return 1;
	dprintf(fd, "%s\n", name);
	close(fd);
	return 0;
}
