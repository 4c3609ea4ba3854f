/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/add.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/check.h"
#include "cli/dracut.h"
#include "cli/ending.h"
#include "cli/password.h"
#include "cli/requires.h"
#include "cli/setfile.h"
#include "cli/signing.h"
#include "core/actions.h"
#include "core/account.h"
#include "core/boot.h"
#include "core/escape.h"
#include "core/opts.h"
#include "core/safe_open.h"
#include "core/wait.h"
#include "core/write.h"

#define MAX_SETS 32
#define MAX_EXAMPLES 256
/* An example is a short script and a short config: anything larger is not one. */
#define EXAMPLE_MAX_SIZE (1U << 20)
/* The line every example finds its config through, for NAME: */
#define CONFIG_LINE_PREFIX "CONFIG=/etc/duress.d/"
#define CONF_SUFFIX ".conf"
#define SUMMARY_PREFIX "# Summary: "
/*
 * An example that must run before the disk is unlocked when it is a boot
 * action says so, and why, on a header line "# Boot: before-unlock: WHY".
 */
#define BOOT_BEFORE_PREFIX "# Boot: before-unlock: "
#define HEADER_LINES 40
/* The longest KEY of a --set KEY=VALUE, and room for "#KEY=" and its NUL. */
#define KEY_MAX 253
#define KEY_SIZE (KEY_MAX + 3)
/* How long an editor has to end (a swap file saved) once a hang-up or kill is passed on. */
#define EDITOR_GRACE_MS 5000

struct add_opts {
	bool list, global, no_edit, from_stdin, force;
	bool boot, before_unlock; /* --boot, --before-unlock */
	const char *boot_dir;     /* --boot-dir (NULL: DURESS_BOOT_DIR) */
	const char *crypttab;     /* --crypttab (NULL: /etc/crypttab) */
	const char *examples_dir;
	const char *sets[MAX_SETS];
	char *read_sets[MAX_SETS]; /* --set-file: NULL, or what sets[i] points to, ours */
	bool from_file[MAX_SETS];  /* sets[i] is still --set-file's KEY=FILE */
	size_t n_sets;
	struct duress_sign_opts sign; /* cost and pam_dir, as for duress sign */
};

struct buffer {
	char *data;
	size_t len;
};

struct example {
	const char *name;
	struct buffer script, conf;
	bool has_conf;
};

/* Where the example goes, judged and open. */
struct target {
	char dir[PATH_MAX];
	char name[NAME_MAX + 1]; /* the action's name there */
	int fd;
	enum duress_scope scope;
	mode_t dir_mode; /* a directory add makes */
	bool boot;       /* the disk-unlock prompt's directory */
	uid_t uid;       /* owner of the files written; -1: the caller, unchanged */
	gid_t gid;
	bool made; /* the directory did not exist: removed again if add fails */
};

static void add_usage(FILE *out)
{
	fputs("Usage: duress add --list [--examples-dir DIR]\n"
	      "       duress add EXAMPLE [--global | --boot [--before-unlock] [--boot-dir DIR]]\n"
	      "                  [--set KEY=VALUE]... [--set-file KEY=FILE]...\n"
	      "                  [--no-edit] [--stdin] [--force] [--examples-dir DIR]\n"
	      "                  [--pam-dir DIR] [--crypttab FILE] [--dracut-conf DIR]\n"
	      "                  [--memlimit BYTES] [--opslimit N] [--allow-weak-cost] [--once]\n"
	      "\n"
	      "Copies the example action EXAMPLE and its EXAMPLE.conf into your per-user\n"
	      "directory (or, with --global, the global one), as the module line of the\n"
	      "PAM stack names them, or, with --boot, into the disk-unlock prompt's\n"
	      "directory (docs/boot.md); opens the config in $VISUAL or $EDITOR at a terminal\n"
	      "(one line says so first) unless --set, --set-file or --no-edit is given;\n"
	      "signs the action bound to its config, and prints duress check's line for\n"
	      "it.  The password is asked for at the terminal (or read with --stdin)\n"
	      "before anything is written; if add cannot finish, or a hang-up, kill or\n"
	      "^C ends it, what it wrote is removed and what --force replaced is put back.\n"
	      "\n"
	      "  --list             list the examples, each with its summary\n"
	      "  --global           install in the global directory (root only)\n"
	      "  --boot             install as a boot action, for the disk-unlock prompt\n"
	      "                     (root only; " DURESS_BOOT_DIR ", made root's 0700)\n"
	      "  --before-unlock    with --boot: as " DURESS_BOOT_BEFORE_PREFIX
	      "EXAMPLE, run in the\n"
	      "                     initramfs before the disk is unlocked (luks-wipe needs it)\n"
	      "  --boot-dir DIR     with --boot: this directory instead\n"
	      "  --crypttab FILE    with --boot: where the keyscript line is looked for\n"
	      "                     (default /etc/crypttab)\n"
	      "  --dracut-conf DIR  with --boot: where a *.conf adding the pam-duress dracut\n"
	      "                     module is looked for (default " DURESS_DRACUT_CONF_DIR ")\n"
	      "  --set KEY=VALUE    set KEY of the config to VALUE (one line); the last\n"
	      "                     KEY= line is replaced, or the value goes after the\n"
	      "                     last commented #KEY= line; repeated, one line each,\n"
	      "                     in order (list keys); no editor\n"
	      "  --set-file KEY=FILE  the same, the value being the first line of FILE\n"
	      "                     (- : standard input; at a terminal, end it with Enter\n"
	      "                     and Ctrl-D), so it stays out of argv and the shell's\n"
	      "                     history; at most 4096 bytes\n"
	      "  --no-edit          do not open the config in an editor\n"
	      "  --stdin            read the password as one line from standard input\n"
	      "  --force            replace an EXAMPLE or EXAMPLE.conf already there\n"
	      "  --examples-dir DIR where the examples are (default " DURESS_EXAMPLES_DIR ")\n"
	      "  --pam-dir DIR      where the PAM stack is read (default /etc/pam.d)\n"
	      "  --memlimit BYTES, --opslimit N, --allow-weak-cost   as for duress sign\n"
	      "  --once             as for duress sign: it runs at its first match only\n"
	      "                     (not with --boot)\n"
	      "  -h, --help         show this help\n"
	      "\n"
	      "Exit 0 when the action is ARMED (or the list is shown), 1 otherwise, 2 on\n"
	      "bad usage or a missing examples directory.\n",
	      out);
}

enum {
	OPT_LIST = 256,
	OPT_GLOBAL,
	OPT_SET,
	OPT_SET_FILE,
	OPT_NO_EDIT,
	OPT_STDIN,
	OPT_FORCE,
	OPT_EXAMPLES_DIR,
	OPT_PAM_DIR,
	OPT_MEMLIMIT,
	OPT_OPSLIMIT,
	OPT_BOOT,
	OPT_BEFORE_UNLOCK,
	OPT_BOOT_DIR,
	OPT_CRYPTTAB,
	OPT_DRACUT_CONF,
	OPT_ALLOW_WEAK_COST,
	OPT_ONCE
};

static const struct option add_options[] = {
	{ "list", no_argument, NULL, OPT_LIST },
	{ "global", no_argument, NULL, OPT_GLOBAL },
	{ "boot", no_argument, NULL, OPT_BOOT },
	{ "before-unlock", no_argument, NULL, OPT_BEFORE_UNLOCK },
	{ "boot-dir", required_argument, NULL, OPT_BOOT_DIR },
	{ "crypttab", required_argument, NULL, OPT_CRYPTTAB },
	{ "dracut-conf", required_argument, NULL, OPT_DRACUT_CONF },
	{ "set", required_argument, NULL, OPT_SET },
	{ "set-file", required_argument, NULL, OPT_SET_FILE },
	{ "no-edit", no_argument, NULL, OPT_NO_EDIT },
	{ "stdin", no_argument, NULL, OPT_STDIN },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "examples-dir", required_argument, NULL, OPT_EXAMPLES_DIR },
	{ "pam-dir", required_argument, NULL, OPT_PAM_DIR },
	{ "memlimit", required_argument, NULL, OPT_MEMLIMIT },
	{ "opslimit", required_argument, NULL, OPT_OPSLIMIT },
	{ "allow-weak-cost", no_argument, NULL, OPT_ALLOW_WEAK_COST },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option that is not a plain flag; -1 (exit status in *status) to stop. */
static int apply_option(struct add_opts *o, int opt, int *status)
{
	*status = 2;
	switch (opt) {
	case OPT_SET:
	case OPT_SET_FILE:
		if (o->n_sets == MAX_SETS) {
			fprintf(stderr, "duress add: at most %d --set and --set-file\n", MAX_SETS);
			return -1;
		}
		o->from_file[o->n_sets] = opt == OPT_SET_FILE;
		o->sets[o->n_sets++] = optarg;
		return 0;
	case OPT_EXAMPLES_DIR:
		o->examples_dir = optarg;
		return 0;
	case OPT_PAM_DIR:
		o->sign.pam_dir = optarg;
		return 0;
	case OPT_BOOT_DIR:
		/* Also signing's: the boot directory's scope and reminder, for this one. */
		o->boot_dir = optarg;
		o->sign.boot_dir = optarg;
		return 0;
	case OPT_CRYPTTAB:
		o->crypttab = optarg;
		return 0;
	case OPT_DRACUT_CONF:
		/* Signing's too: its reminder names the same rebuild command. */
		o->sign.dracut_conf = optarg;
		return 0;
	case OPT_MEMLIMIT:
	case OPT_OPSLIMIT:
		return duress_sign_opts_cost(&o->sign, opt == OPT_MEMLIMIT, optarg);
	case 'h':
		add_usage(stdout);
		*status = 0;
		return -1;
	default:
		fputs("duress: try 'duress add --help'\n", stderr);
		return -1;
	}
}

/* Returns the index of the first operand, or -1 with the exit status in *status. */
static int parse_add(struct add_opts *o, int argc, char **argv, int *status)
{
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", add_options, NULL)) != -1) {
		bool *flag = opt == OPT_LIST            ? &o->list :
			     opt == OPT_GLOBAL          ? &o->global :
			     opt == OPT_NO_EDIT         ? &o->no_edit :
			     opt == OPT_STDIN           ? &o->from_stdin :
			     opt == OPT_FORCE           ? &o->force :
			     opt == OPT_BOOT            ? &o->boot :
			     opt == OPT_BEFORE_UNLOCK   ? &o->before_unlock :
			     opt == OPT_ALLOW_WEAK_COST ? &o->sign.allow_weak_cost :
			     opt == OPT_ONCE            ? &o->sign.once :
							  NULL;

		if (flag)
			*flag = true;
		else if (apply_option(o, opt, status) < 0)
			return -1;
	}
	*status = 2;
	if (duress_sign_opts_floor(&o->sign) < 0)
		return -1;
	if (o->boot && o->sign.once) {
		fputs("duress add: --once is not for a boot action: the disk-unlock prompt keeps "
		      "no record of what ran\n",
		      stderr);
		return -1;
	}
	if (o->boot && o->global) {
		fputs("duress add: --boot and --global are two different directories: "
		      "choose one\n",
		      stderr);
		return -1;
	}
	if (!o->boot && (o->before_unlock || o->boot_dir || o->crypttab || o->sign.dracut_conf)) {
		fputs("duress add: --before-unlock, --boot-dir, --crypttab and --dracut-conf go "
		      "with --boot\n",
		      stderr);
		return -1;
	}
	if (o->boot_dir && o->boot_dir[0] != '/') {
		fputs("duress add: --boot-dir needs an absolute path\n", stderr);
		return -1;
	}
	return optind;
}

/*
 * A plain name: no dot (so no NAME.conf, .sig, hidden file), no slash, room
 * for NAME.conf, and nothing that is not printable: it is shown as it is.
 */
static bool is_example_name(const char *name)
{
	size_t len = strlen(name);

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c == '.' || *c == '/')
			return false;
	return len > 0 && len <= NAME_MAX - strlen(CONF_SUFFIX) && duress_is_action_name(name);
}

/*
 * Reads name in dir_fd whole (at most EXAMPLE_MAX_SIZE), never through a
 * symlink, never a FIFO or device.  Returns 0, -ENOENT (absent), or -1
 * after a one-line error.  *st is what was read.
 */
static int load_file(int dir_fd, const char *shown_dir, const char *name, struct buffer *b,
		     struct stat *st)
{
	struct duress_trust t = { .max_size = EXAMPLE_MAX_SIZE };
	struct duress_file in = { .fd = -1 };
	ssize_t n = 0;
	int r = duress_open_file(dir_fd, name, DURESS_FILE_INPUT, &t, true, &in);

	*b = (struct buffer){ 0 };
	if (r == 0 && in.error == ENOENT)
		return -ENOENT;
	if (r < 0 || in.fd < 0) {
		fprintf(stderr, "duress add: %s/%s: %s\n", shown_dir, name,
			in.skip == DURESS_SKIP_TOO_LARGE ? "too large for an example" :
			in.error                         ? strerror(in.error) :
							   duress_skip_reason(in.skip));
		return -1;
	}
	*st = in.st;
	/* One more byte than the cap: a file that grew since fstat() is seen. */
	b->data = malloc((size_t)in.st.st_size + 2);
	while (b->data && b->len <= (size_t)in.st.st_size &&
	       (n = read(in.fd, b->data + b->len, (size_t)in.st.st_size + 1 - b->len)) > 0)
		b->len += (size_t)n;
	duress_file_close(&in);
	if (!b->data || n < 0 || b->len != (size_t)in.st.st_size) {
		fprintf(stderr, "duress add: %s/%s: %s\n", shown_dir, name,
			!b->data ? "out of memory" : "cannot be read whole");
		free(b->data);
		*b = (struct buffer){ 0 };
		return -1;
	}
	b->data[b->len] = '\0';
	return 0;
}

/* The next line of b from *pos (without its newline); false at the end. */
static bool next_line(const struct buffer *b, size_t *pos, const char **line, size_t *len)
{
	const char *nl;

	if (*pos >= b->len)
		return false;
	*line = b->data + *pos;
	nl = memchr(*line, '\n', b->len - *pos);
	*len = nl ? (size_t)(nl - *line) : b->len - *pos;
	*pos += *len + (nl != NULL);
	return true;
}

/* The text of the "# Summary: " line, the script's second or third; NULL if none. */
static const char *summary(const struct buffer *script, char *buf, size_t size)
{
	size_t pos = 0, len = 0, plen = strlen(SUMMARY_PREFIX);
	const char *line = NULL;

	for (int i = 1; i <= 3 && next_line(script, &pos, &line, &len); i++)
		if (i >= 2 && len >= plen && memcmp(line, SUMMARY_PREFIX, plen) == 0) {
			snprintf(buf, size, "%.*s", (int)(len - plen), line + plen);
			return buf;
		}
	return NULL;
}

/*
 * Why the example must run before the unlock when it is a boot action
 * (its "# Boot: before-unlock: WHY" header line, into buf), or NULL.
 */
static const char *before_unlock_only(const struct buffer *script, char *buf, size_t size)
{
	size_t pos = 0, len = 0, plen = strlen(BOOT_BEFORE_PREFIX);
	const char *line = NULL;

	for (int i = 1; i <= HEADER_LINES && next_line(script, &pos, &line, &len); i++)
		if (len >= plen && memcmp(line, BOOT_BEFORE_PREFIX, plen) == 0) {
			snprintf(buf, size, "%.*s", (int)(len - plen), line + plen);
			return buf;
		}
	return NULL;
}

/* Whether entry name of dir_fd is an example: a regular file, executable by its owner. */
static bool is_example(int dir_fd, const char *name)
{
	struct stat st;

	return is_example_name(name) && fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR);
}

static int compare_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The example names of an open directory, sorted; returns how many, or -1 (reported). */
static int example_names(DIR *d, char **names, size_t max)
{
	struct dirent *e;
	size_t n = 0;

	while ((e = readdir(d)) && n < max)
		if (is_example(dirfd(d), e->d_name) && !(names[n++] = strdup(e->d_name))) {
			fputs("duress add: out of memory\n", stderr);
			while (n > 0)
				free(names[--n]);
			return -1;
		}
	qsort(names, n, sizeof(*names), compare_names);
	return (int)n;
}

/* One line per example: its name and summary.  Returns the exit status. */
static int list_examples(const char *dir)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], text[256], esc[DURESS_ESCAPED_SIZE(256)];
	char *names[MAX_EXAMPLES];
	DIR *d = opendir(dir);
	int n, bad = 0;

	duress_escape(dir, shown, sizeof(shown));
	if (!d) {
		fprintf(stderr, "duress add: examples directory %s: %s\n", shown, strerror(errno));
		return 2;
	}
	n = example_names(d, names, MAX_EXAMPLES);
	if (n == 0)
		printf("%s: no examples\n", shown);
	for (int i = 0; i < n; i++) {
		struct buffer script;
		struct stat st;
		const char *s = NULL;

		if (load_file(dirfd(d), shown, names[i], &script, &st) == 0)
			s = summary(&script, text, sizeof(text));
		else
			bad = 1;
		/* A summary is data: no escape sequence reaches the terminal. */
		printf("%-15s %s\n", names[i],
		       s ? duress_escape(s, esc, sizeof(esc)) : "(no summary)");
		free(script.data);
		free(names[i]);
	}
	closedir(d);
	return n < 0 ? 2 : bad;
}

static void example_free(struct example *ex)
{
	free(ex->script.data);
	free(ex->conf.data);
}

/* Reads the example and its config; -1 after a one-line error (nothing to free). */
static int load_example(const char *dir, const char *name, struct example *ex)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], conf[NAME_MAX + 1];
	struct stat st;
	int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	*ex = (struct example){ .name = name };
	duress_escape(dir, shown, sizeof(shown));
	if (dir_fd < 0) {
		fprintf(stderr, "duress add: examples directory %s: %s\n", shown, strerror(errno));
		return -1;
	}
	r = load_file(dir_fd, shown, name, &ex->script, &st);
	if (r == 0 && !(st.st_mode & S_IXUSR))
		r = -ENOEXEC;
	if (r == -ENOENT || r == -ENOEXEC)
		fprintf(stderr, "duress add: no example \"%s\" in %s (see duress add --list)\n",
			name, shown);
	snprintf(conf, sizeof(conf), "%s" CONF_SUFFIX, name);
	if (r == 0) {
		r = load_file(dir_fd, shown, conf, &ex->conf, &st);
		ex->has_conf = r == 0;
		if (r == -ENOENT)
			r = 0;
	}
	close(dir_fd);
	if (r < 0)
		example_free(ex);
	return r < 0 ? -1 : 0;
}

/* Replaces the line [line, line + len) of b with text.  Returns 0, or -1 out of memory. */
static int replace_line(struct buffer *b, const char *line, size_t len, const char *text)
{
	size_t at = (size_t)(line - b->data), text_len = strlen(text);
	size_t new_len = b->len - len + text_len;
	char *data = malloc(new_len + 1);

	if (!data) {
		fputs("duress add: out of memory\n", stderr);
		return -1;
	}
	memcpy(data, b->data, at);
	memcpy(data + at, text, text_len);
	memcpy(data + at + text_len, line + len, b->len - at - len);
	data[new_len] = '\0';
	free(b->data);
	*b = (struct buffer){ .data = data, .len = new_len };
	return 0;
}

/* The one line of b that equals want, or the last that starts with it (prefix). */
static int find_line(const struct buffer *b, const char *want, bool prefix, const char **ret,
		     size_t *ret_len)
{
	size_t pos = 0, len, want_len = strlen(want);
	const char *line;
	int n = 0;

	while (next_line(b, &pos, &line, &len))
		if (prefix ? len >= want_len && memcmp(line, want, want_len) == 0 :
			     len == want_len && memcmp(line, want, len) == 0) {
			*ret = line;
			*ret_len = len;
			n++;
		}
	return n;
}

/*
 * Characters a path may have on the unquoted CONFIG= line of a sh script:
 * anything else (a space, a quote, $) would be read by the shell.
 */
static bool shell_safe(const char *s)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "abcdefghijklmnopqrstuvwxyz"
				   "0123456789/._-+@%,:";

	return s[strspn(s, safe)] == '\0';
}

/* Points the script's one CONFIG=/etc/duress.d/NAME.conf line at the installed config. */
static int rewrite_config_line(struct example *ex, const char *conf_path)
{
	char want[sizeof(CONFIG_LINE_PREFIX) + NAME_MAX + 1], text[PATH_MAX + 8];
	const char *line = NULL;
	size_t len = 0;
	int n;

	if (!ex->has_conf)
		return 0;
	snprintf(want, sizeof(want), CONFIG_LINE_PREFIX "%s" CONF_SUFFIX, ex->name);
	n = find_line(&ex->script, want, false, &line, &len);
	if (n != 1) {
		fprintf(stderr, "duress add: %s: not an example: %s one line \"%s\"\n", ex->name,
			n ? "more than" : "no", want);
		return -1;
	}
	snprintf(text, sizeof(text), "CONFIG=%s", conf_path);
	return replace_line(&ex->script, line, len, text);
}

static bool is_key(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
			    s[i]))
			return false;
	return true;
}

/* The key of a --set KEY=VALUE (its length), or 0 after a one-line error. */
static size_t set_key(const char *set)
{
	const char *eq = strchr(set, '=');

	if (!eq || !is_key(set, (size_t)(eq - set)) || (size_t)(eq - set) > KEY_MAX) {
		fprintf(stderr, "duress add: --set %s: not KEY=VALUE\n", set);
		return 0;
	}
	if (strpbrk(eq + 1, "\n\r")) {
		fprintf(stderr, "duress add: --set %.*s: the value must be one line\n",
			(int)(eq - set), set);
		return 0;
	}
	return (size_t)(eq - set);
}

/* Whether there is a terminal to ask the password at (cli/password.h reads it there). */
static bool has_terminal(void)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (tty < 0)
		return false;
	close(tty);
	return true;
}

/*
 * --set-file's usage errors, before anything is read: a KEY=FILE that is
 * not one, standard input wanted twice (the password's --stdin, or two
 * "-"): whichever came second would read nothing; and a value from
 * standard input without a terminal for the password.
 */
static int check_set_files(const struct add_opts *o)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX + KEY_SIZE)];
	size_t readers = o->from_stdin;

	for (size_t i = 0; i < o->n_sets; i++) {
		const char *eq = strchr(o->sets[i], '=');

		if (!o->from_file[i])
			continue;
		if (!eq || !is_key(o->sets[i], (size_t)(eq - o->sets[i])) ||
		    (size_t)(eq - o->sets[i]) > KEY_MAX || !eq[1]) {
			fprintf(stderr, "duress add: --set-file %s: not KEY=FILE\n",
				duress_escape(o->sets[i], shown, sizeof(shown)));
			return -1;
		}
		readers += duress_set_file_is_stdin(o->sets[i]);
	}
	if (readers > 1)
		fprintf(stderr,
			"duress add: %s both read standard input: give the value in a file\n",
			o->from_stdin ? "--set-file KEY=- and --stdin" : "two --set-file KEY=-");
	else if (readers == 1 && !o->from_stdin && !has_terminal())
		fputs("duress add: --set-file KEY=- reads standard input, so the password is asked "
		      "at the terminal, and there is none: give the value in a file (--set-file "
		      "KEY=FILE) and the password with --stdin\n",
		      stderr);
	else
		return 0;
	return -1;
}

/* Each --set-file's value, read: sets[i] becomes its KEY=VALUE.  -1 after a one-line error. */
static int read_set_files(struct add_opts *o)
{
	for (size_t i = 0; i < o->n_sets; i++) {
		if (!o->from_file[i])
			continue;
		o->read_sets[i] = duress_set_file_read(o->sets[i]);
		if (!o->read_sets[i])
			return -1;
		o->sets[i] = o->read_sets[i];
		o->from_file[i] = false;
	}
	return 0;
}

static void free_set_files(struct add_opts *o)
{
	for (size_t i = 0; i < o->n_sets; i++)
		duress_set_file_free(o->read_sets[i]);
}

/* Whether the line is "KEY=..." or "#KEY=...", KEY a key; its length in *key_len. */
static bool key_line(const char *line, size_t len, size_t *key_len)
{
	const char *eq;

	if (len > 0 && line[0] == '#') {
		line++;
		len--;
	}
	eq = memchr(line, '=', len);
	*key_len = eq ? (size_t)(eq - line) : 0;
	return eq && is_key(line, *key_len);
}

/* Whether the config's name (of len bytes) is one of the list "A, B, C". */
static bool listed(const char *list, const char *name, size_t len)
{
	for (const char *p = list; *p; p += strspn(p, ", ")) {
		size_t l = strcspn(p, ",");

		if (l == len && memcmp(p, name, len) == 0)
			return true;
		p += l;
	}
	return false;
}

/* The keys the config names, live or commented, each once, in order: "A, B". */
static void known_keys(const struct buffer *conf, char *buf, size_t size)
{
	size_t pos = 0, len = 0, klen = 0, used = 0;
	const char *line = NULL;

	*buf = '\0';
	while (next_line(conf, &pos, &line, &len) && used < size)
		if (key_line(line, len, &klen) && !listed(buf, line + (line[0] == '#'), klen))
			used += (size_t)snprintf(buf + used, size - used, "%s%.*s",
						 used ? ", " : "", (int)klen,
						 line + (line[0] == '#'));
}

/*
 * Every --set of the key of sets[0] (n in all, later ones of other keys
 * ignored), as the lines "KEY=VALUE" in order; NULL out of memory.  With
 * after, that line first.
 */
static char *set_lines(const char *const *sets, size_t n, size_t key_len, const char *after,
		       size_t after_len)
{
	size_t size = after_len + 2, used = 0; /* its newline, and the NUL */
	char *text;

	for (size_t i = 0; i < n; i++)
		size += strlen(sets[i]) + 1;
	text = malloc(size);
	if (!text)
		return NULL;
	if (after)
		used = (size_t)snprintf(text, size, "%.*s\n", (int)after_len, after);
	for (size_t i = 0; i < n; i++)
		if (strncmp(sets[i], sets[0], key_len + 1) == 0)
			used += (size_t)snprintf(text + used, size - used, "%s\n", sets[i]);
	text[used - 1] = '\0'; /* the line's own newline follows in the config */
	return text;
}

/*
 * Every --set of one key, sets[0]'s: the config's last "KEY=" line becomes
 * one "KEY=VALUE" line per --set, in order; with none, the lines go right
 * after the last commented "#KEY=" line, which stays as the example it is.
 */
static int apply_key(struct example *ex, const char *const *sets, size_t n, size_t key_len)
{
	char key[KEY_SIZE], known[1024];
	const char *line = NULL;
	size_t len = 0;
	bool live;
	char *text;
	int r;

	snprintf(key, sizeof(key), "%.*s=", (int)key_len, sets[0]);
	live = find_line(&ex->conf, key, true, &line, &len) > 0;
	snprintf(key, sizeof(key), "#%.*s=", (int)key_len, sets[0]);
	if (!live && find_line(&ex->conf, key, true, &line, &len) == 0) {
		known_keys(&ex->conf, known, sizeof(known));
		fprintf(stderr,
			"duress add: --set %.*s: %s" CONF_SUFFIX " has no such key; it knows %s\n",
			(int)key_len, sets[0], ex->name, *known ? known : "none");
		return -1;
	}
	text = set_lines(sets, n, key_len, live ? NULL : line, live ? 0 : len);
	if (!text) {
		fputs("duress add: out of memory\n", stderr);
		return -1;
	}
	r = replace_line(&ex->conf, line, len, text);
	free(text);
	return r;
}

/* All the --set, each key once, where its first --set names it. */
static int apply_sets(struct example *ex, const char *const *sets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t key_len = set_key(sets[i]);
		bool done = false;

		if (key_len == 0)
			return -1;
		if (!ex->has_conf) {
			fprintf(stderr, "duress add: --set: %s has no config\n", ex->name);
			return -1;
		}
		for (size_t j = 0; j < i && !done; j++)
			done = strncmp(sets[j], sets[i], key_len + 1) == 0;
		if (!done && apply_key(ex, sets + i, n - i, key_len) < 0)
			return -1;
	}
	return 0;
}

/* The directory the module line names for this scope, expanded for the caller. */
static int target_path(const struct add_opts *o, const struct duress_opts *mo, char *buf,
		       size_t size)
{
	struct duress_account *p = NULL;
	int r;

	if (o->global) {
		if (snprintf(buf, size, "%s", mo->global_dir) >= (int)size)
			return -ENAMETOOLONG;
		return *buf == '/' ? 0 : -EINVAL;
	}
	if (!*mo->user_dir)
		return -EINVAL;
	r = duress_getpw(NULL, getuid(), &p);
	if (r == 0 && !p)
		r = -ENOENT;
	if (r == 0)
		r = duress_expand_user_dir(mo->user_dir, p->pw.pw_name, p->pw.pw_dir, buf, size);
	free(p);
	return r;
}

/* Opens the target directory, made if missing, if the module would trust it. */
static int open_target(struct target *t)
{
	struct duress_trust trust = { .scope = t->scope, .owner = getuid() };
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	struct duress_file f = { .fd = -1 };
	bool made = mkdir(t->dir, t->dir_mode) == 0;
	int r;

	duress_escape(t->dir, shown, sizeof(shown));
	if (!made && errno != EEXIST) {
		fprintf(stderr, "duress add: cannot create %s: %s\n", shown, strerror(errno));
		return -1;
	}
	r = duress_open_file(AT_FDCWD, t->dir, DURESS_FILE_DIR, &trust, true, &f);
	if (r == 0 && f.fd >= 0 && made &&
	    (fchown(f.fd, t->uid, t->gid) < 0 || fchmod(f.fd, t->dir_mode) < 0))
		r = -errno;
	if (r < 0 || f.fd < 0) {
		fprintf(stderr, "duress add: %s: %s\n", shown,
			r < 0   ? strerror(-r) :
			f.error ? strerror(f.error) :
			f.skip == DURESS_SKIP_NOT_REGULAR ?
				  "not a directory" :
			f.skip == DURESS_SKIP_OWNER ?
				  "owned by another user: the module skips it" :
			f.skip == DURESS_SKIP_PSEUDO_FS ?
				  "on a pseudo-filesystem: the module skips it" :
				  "writable by group or others: the module skips it");
		duress_file_close(&f);
		if (made)
			(void)rmdir(t->dir);
		return -1;
	}
	duress_file_release(&f);
	t->fd = f.fd;
	t->made = made;
	return 0;
}

/*
 * A per-user directory that is missing where the user cannot create it
 * (user_dir=/var/lib/duress/%u under a root-owned parent): said before the
 * password is asked, with the one command that makes it.  The parent is
 * not opened up instead: in a world-writable one, another user could take
 * the name first.
 */
static int creatable(const struct target *t)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], parent[PATH_MAX];
	char user[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)], group[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)];
	struct duress_account *p = NULL;
	struct group *g;
	struct stat st;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", t->dir);
	slash = strrchr(parent, '/');
	if (t->scope != DURESS_SCOPE_USER || !slash || lstat(t->dir, &st) == 0 || errno != ENOENT)
		return 0;
	*(slash == parent ? slash + 1 : slash) = '\0';
	/* access(): the real ids, the user's even under a set-id wrapper. */
	if (stat(parent, &st) < 0 || access(parent, W_OK | X_OK) == 0 || errno != EACCES ||
	    duress_getpw(NULL, getuid(), &p) < 0 || !p) {
		free(p);
		return 0;
	}
	g = getgrgid(getgid());
	fprintf(stderr,
		"duress add: %s does not exist and you cannot create it; fix: sudo install -d "
		"-o %s -g %s -m 700 %s\n",
		duress_escape(t->dir, shown, sizeof(shown)),
		duress_escape(p->pw.pw_name, user, sizeof(user)),
		duress_escape(g ? g->gr_name : p->pw.pw_name, group, sizeof(group)), shown);
	free(p);
	return -1;
}

static int choose_target(const struct add_opts *o, const struct duress_opts *mo, struct target *t)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	int r;

	/* The boot directory is judged as the global one, and is root's 0700 (core/boot.h). */
	*t = (struct target){ .fd = -1,
			      .scope = o->global || o->boot ? DURESS_SCOPE_GLOBAL :
							      DURESS_SCOPE_USER,
			      .dir_mode = o->global ? 0755 : 0700,
			      .boot = o->boot,
			      .uid = (uid_t)-1,
			      .gid = (gid_t)-1 };
	if (o->global && geteuid() != 0) {
		fputs("duress add: --global installs for every account: run it as root\n", stderr);
		return -1;
	}
	if (o->boot && geteuid() != 0) {
		fputs("duress add: --boot installs for the disk-unlock prompt, which runs as root: "
		      "run it as root\n",
		      stderr);
		return -1;
	}
	if (geteuid() == 0) {
		t->uid = t->scope == DURESS_SCOPE_GLOBAL ? 0 : getuid();
		t->gid = t->scope == DURESS_SCOPE_GLOBAL ? 0 : getgid();
	}
	if (o->boot)
		r = snprintf(t->dir, sizeof(t->dir), "%s",
			     o->boot_dir ? o->boot_dir : DURESS_BOOT_DIR) >= (int)sizeof(t->dir) ?
			    -ENAMETOOLONG :
			    0;
	else
		r = target_path(o, mo, t->dir, sizeof(t->dir));
	if (r < 0) {
		fprintf(stderr, "duress add: the module line %s: %s\n",
			o->global ? "reads no global directory (global_dir=)" :
				    "names no per-user directory for you (user_dir=)",
			strerror(-r));
		return -1;
	}
	if (!shell_safe(t->dir)) {
		fprintf(stderr,
			"duress add: %s: a character the example's CONFIG= line cannot "
			"hold unquoted\n",
			duress_escape(t->dir, shown, sizeof(shown)));
		return -1;
	}
	return creatable(t);
}

/* Refuses to replace what the user has, unless --force; asks nothing yet, writes nothing. */
static int refuse_existing(const char *path, bool force)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	struct stat st;

	if (force || (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT))
		return 0;
	fprintf(stderr, "duress add: %s already exists (--force replaces it)\n",
		duress_escape(path, shown, sizeof(shown)));
	return -1;
}

/*
 * A name add writes in the target directory.  What was there before is
 * kept, until add has finished, as a second link ".NAME.keep": a failure
 * renames it back, so the user's previous file is never lost.
 */
struct placed {
	char name[NAME_MAX + 1], keep[NAME_MAX + 1];
	bool kept;    /* .NAME.keep holds what was there */
	bool written; /* add may have written name: removed on failure unless kept */
};

static int keep_old(const struct target *t, struct placed *p)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];

	if (snprintf(p->keep, sizeof(p->keep), ".%s.keep", p->name) >= (int)sizeof(p->keep)) {
		fputs("duress add: the example's name is too long\n", stderr);
		return -1;
	}
	/* A link to the entry itself: a symlink is kept as the symlink it is. */
	p->kept = linkat(t->fd, p->name, t->fd, p->keep, 0) == 0;
	if (p->kept || errno == ENOENT)
		return 0;
	fprintf(stderr, "duress add: %s/%s: cannot keep the old file as %s: %s\n",
		duress_escape(t->dir, shown, sizeof(shown)), p->name, p->keep,
		errno == EEXIST ? "left by an earlier run; see what it is, then remove it" :
				  strerror(errno));
	return -1;
}

/* Puts back what was there (or removes what add wrote), or, done, drops the kept links. */
static void finish_placed(const struct target *t, struct placed *p, size_t n, bool done)
{
	for (size_t i = 0; i < n; i++) {
		if (!done && p[i].kept)
			(void)renameat(t->fd, p[i].keep, t->fd, p[i].name);
		else if (!done && p[i].written)
			(void)unlinkat(t->fd, p[i].name, 0);
		/* Renamed, or (the same file, rename does nothing) still a second link. */
		if (p[i].kept)
			(void)unlinkat(t->fd, p[i].keep, 0);
	}
	(void)fsync(t->fd);
	if (!done && t->made)
		(void)rmdir(t->dir);
}

static int write_one(const struct target *t, const char *name, const struct buffer *b, mode_t mode)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	int r = duress_write_file_at(t->fd, name, b->data, b->len, mode, t->uid, t->gid);

	if (r < 0)
		fprintf(stderr, "duress add: %s/%s: %s\n",
			duress_escape(t->dir, shown, sizeof(shown)), name, strerror(-r));
	return r < 0 ? -1 : 0;
}

/* The editor add runs: what $VISUAL or $EDITOR names, else sensible-editor, else vi. */
struct editor {
	const char *variable; /* "VISUAL" or "EDITOR"; NULL: neither is set */
	const char *command;  /* the variable's value, or the program */
	char found[PATH_MAX]; /* sensible-editor's path, when that is the program */
};

static void choose_editor(struct editor *ed)
{
	static const char *const names[] = { "VISUAL", "EDITOR" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *value = getenv(names[i]);

		if (value && *value) {
			ed->variable = names[i];
			ed->command = value;
			return;
		}
	}
	ed->variable = NULL;
	/* As root, only one no other user could have put in PATH (cli/dracut.h). */
	ed->command = duress_find_program("sensible-editor", ed->found, sizeof(ed->found)) ?
			      ed->found :
			      "vi";
}

/*
 * In the child: the editor on path; never returns.  Named by a variable
 * with a space in it ("code --wait"), it is run through sh, which splits
 * it: that is what such a value means.
 */
static _Noreturn void exec_editor(const struct editor *ed, const char *path)
{
	char script[32];

	if (ed->variable && strpbrk(ed->command, " \t")) {
		snprintf(script, sizeof(script), "exec $%s \"$1\"", ed->variable);
		execl("/bin/sh", "sh", "-c", script, "sh", path, (char *)NULL);
	} else {
		execlp(ed->command, ed->command, path, (char *)NULL);
	}
	fprintf(stderr, "duress add: cannot run the editor %s: %s\n", ed->command, strerror(errno));
	_exit(127);
}

/* The one line before the editor opens: which one, on which file, and how to do without. */
static void say_editing(const struct editor *ed, const char *path)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], command[DURESS_ESCAPED_SIZE(PATH_MAX)];

	fprintf(stderr,
		"duress add: opening %s in %s%s%s%s to review its settings; save and quit to "
		"sign it (--no-edit skips this)\n",
		duress_escape(path, shown, sizeof(shown)),
		duress_escape(ed->command, command, sizeof(command)), ed->variable ? " ($" : "",
		ed->variable ? ed->variable : "", ed->variable ? ")" : "");
}

/* A signal a job was started with ignored (nohup) does not end anything. */
static bool ignored(int sig)
{
	struct sigaction sa;

	return sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

/*
 * Waits for the editor, SIGCHLD and the ending signals blocked (in set), so
 * that none comes between a look and the wait.  ^C and ^\ are the
 * editor's, as with system(): the terminal sends them to it too.  A
 * hang-up or a kill meant for add is passed on to the editor, which gets
 * EDITOR_GRACE_MS to end (a swap file saved) before SIGKILL: add must not
 * end before it has undone its writes, nor leave an editor open on a file
 * it removes.  Returns the signal passed on, or 0.
 */
static int wait_editor(pid_t pid, const sigset_t *set, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		int sig;

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR) {
			*status = -1;
			return 0;
		}
		sig = sigwaitinfo(set, NULL);
		if ((sig == SIGHUP || sig == SIGTERM) && !ignored(sig)) {
			kill(pid, sig);
			if (duress_wait_bounded(pid, status, EDITOR_GRACE_MS) < 0)
				*status = -1;
			return sig;
		}
	}
}

/* Drops a ^C or ^\ that came for the editor after the last look, before they are unblocked. */
static void drop_editor_keys(void)
{
	const struct timespec now = { 0 };
	sigset_t keys;

	sigemptyset(&keys);
	sigaddset(&keys, SIGINT);
	sigaddset(&keys, SIGQUIT);
	while (sigtimedwait(&keys, NULL, &now) > 0)
		;
}

/*
 * Runs the editor on path and waits for it, having said so.  Returns 0 if
 * it exited 0.  A hang-up or kill passed on to it is raised again once it
 * has ended, for duress_ending_caught() to see.
 */
static int edit(const char *path)
{
	struct editor ed;
	sigset_t set, old;
	int status = -1, sig = 0;
	pid_t pid;

	choose_editor(&ed);
	say_editing(&ed, path);
	sigemptyset(&set);
	duress_ending_add(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		exec_editor(&ed, path);
	}
	if (pid > 0)
		sig = wait_editor(pid, &set, &status);
	else
		fprintf(stderr, "duress add: cannot start the editor: %s\n", strerror(errno));
	drop_editor_keys();
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sig)
		raise(sig);
	else if (pid > 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		fputs("duress add: the editor did not end well\n", stderr);
	return pid > 0 && !sig && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Whether a signal asked add to end: it then undoes what it wrote. */
static bool ended(void)
{
	return duress_ending_caught() != 0;
}

/* Edits if asked, then signs the installed action bound to its config (and nothing else). */
static int sign_installed(const struct add_opts *o, const struct duress_password *pw,
			  const char *action, const char *conf)
{
	struct duress_sign_opts sign = o->sign;

	if (conf && !o->no_edit && o->n_sets == 0 && isatty(STDIN_FILENO) &&
	    (edit(conf) < 0 || ended()))
		return -1;
	if (conf)
		sign.also[sign.n_also++] = conf;
	/* What an action replaced with --force was bound to is not this example's. */
	sign.drop_also = true;
	return duress_sign_file(action, pw, &sign);
}

/*
 * A global password is not one user's: say whom it logs in, since that is
 * easy to miss and hard to undo once the password is known.
 */
static void say_who_global_logs_in(const struct duress_opts *mo)
{
	char group[DURESS_ESCAPED_SIZE(64)];

	if (mo->global_group)
		fprintf(stderr,
			"duress add: note: a global duress password logs in only members of "
			"group %s (global_group=); for anyone else it runs the global actions and "
			"the login fails\n",
			duress_escape(mo->global_group, group, sizeof(group)));
	else
		fputs("duress add: warning: a global duress password logs in EVERY ordinary "
		      "account (UID_MIN to UID_MAX of /etc/login.defs); add global_group=GROUP to "
		      "the module line to narrow it\n",
		      stderr);
}

/*
 * check's line for a boot action with its kind, its WARN when nothing
 * hands the prompt to us (the crypttab or dracut line to add), then the
 * rebuild this machine's initramfs needs.  Returns check's status.
 */
static int say_boot_next(const struct target *t, const struct add_opts *o)
{
	struct duress_dracut d;
	int status;

	duress_dracut_find(o->sign.dracut_conf, &d);
	status = duress_check_boot_action(t->dir, t->name, o->crypttab, &d);
	printf("next: %s (the initramfs holds a copy of the boot actions and their configs)\n",
	       duress_dracut_rebuild(&d));
	return status;
}

/* What install() writes: where, under which names, at which paths. */
struct job {
	struct target t;
	struct placed p[3]; /* the action, its signature, its config */
	size_t n;
	char action[PATH_MAX], conf[PATH_MAX];
};

/* Everything that can fail without writing: the target, the names, what is there, the --set. */
static int plan(const struct add_opts *o, struct example *ex, const struct duress_opts *mo,
		struct job *j)
{
	struct target *t = &j->t;

	j->n = ex->has_conf ? 3 : 2;
	if (choose_target(o, mo, t) < 0)
		return -1;
	/* Its name there: the example's, after the before-unlock prefix with --before-unlock. */
	if (snprintf(t->name, sizeof(t->name), "%s%s",
		     o->before_unlock ? DURESS_BOOT_BEFORE_PREFIX : "",
		     ex->name) >= (int)sizeof(t->name) - (int)strlen(CONF_SUFFIX)) {
		fputs("duress add: the example's name is too long\n", stderr);
		return -1;
	}
	if (snprintf(j->p[0].name, sizeof(j->p[0].name), "%s", t->name) >=
		    (int)sizeof(j->p[0].name) ||
	    snprintf(j->p[1].name, sizeof(j->p[1].name), "%s" DURESS_SIG_SUFFIX, t->name) >=
		    (int)sizeof(j->p[1].name) ||
	    snprintf(j->p[2].name, sizeof(j->p[2].name), "%s" CONF_SUFFIX, t->name) >=
		    (int)sizeof(j->p[2].name) ||
	    snprintf(j->action, sizeof(j->action), "%s/%s", t->dir, t->name) >=
		    (int)sizeof(j->action) ||
	    snprintf(j->conf, sizeof(j->conf), "%s/%s", t->dir, j->p[2].name) >=
		    (int)sizeof(j->conf)) {
		fputs("duress add: the target path is too long\n", stderr);
		return -1;
	}
	return refuse_existing(j->action, o->force) < 0 ||
			       (ex->has_conf && refuse_existing(j->conf, o->force) < 0) ||
			       rewrite_config_line(ex, j->conf) < 0 ||
			       apply_sets(ex, o->sets, o->n_sets) < 0 ?
		       -1 :
		       0;
}

/*
 * Keeps what is there aside, then writes, edits and signs.  -1 after a
 * one-line error, or after the first step an ending signal came during.
 */
static int place(const struct add_opts *o, const struct example *ex, struct job *j,
		 const struct duress_password *pw)
{
	if (open_target(&j->t) < 0)
		return -1;
	for (size_t i = 0; i < j->n; i++)
		if (keep_old(&j->t, &j->p[i]) < 0)
			return -1;
	for (size_t i = 0; i < j->n; i++)
		j->p[i].written = true;
	if (ex->has_conf && (write_one(&j->t, j->p[2].name, &ex->conf, 0600) < 0 || ended()))
		return -1;
	if (write_one(&j->t, j->t.name, &ex->script, 0700) < 0 || ended())
		return -1;
	return sign_installed(o, pw, j->action, ex->has_conf ? j->conf : NULL);
}

/* What is installed, then check's line for it (and whom a global one logs in): the status. */
static int report_installed(const struct add_opts *o, const struct example *ex, const struct job *j,
			    const struct duress_opts *mo)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	int status;

	duress_escape(j->t.dir, shown, sizeof(shown));
	if (j->t.made)
		printf("%s: created\n", shown);
	if (ex->has_conf)
		printf("%s/%s: installed\n", shown, j->p[2].name);
	printf("%s/%s: installed\n", shown, j->t.name);
	if (j->t.boot)
		status = say_boot_next(&j->t, o);
	else
		status = duress_check_action(mo, j->t.scope, j->t.dir, j->t.name);
	if (o->global)
		say_who_global_logs_in(mo);
	return status;
}

/*
 * Copies, signs and checks, all or nothing: everything that can fail
 * without writing (the names, the --set, the password) is done first; then
 * what is there is kept aside, the files are written and signed, and any
 * failure puts back what was there.  From the first write to the last, an
 * ending signal (a hang-up, a kill, ^C) is caught: what was written is
 * undone, then add ends as the signal asked (128 + its number).  Returns
 * the exit status.
 */
static int install(const struct add_opts *o, struct example *ex, const struct duress_opts *mo)
{
	struct job j = { .t.fd = -1 };
	struct duress_password *pw = NULL;
	struct duress_ending ending;
	int status = 1, sig;
	bool done;

	if (plan(o, ex, mo, &j) < 0)
		return 1;
	/* Said before the password: the user may rather install what it needs first. */
	duress_requires_warn(ex->name, o->global || o->boot || getuid() == 0, ex->script.data,
			     ex->script.len, ex->has_conf ? ex->conf.data : "",
			     ex->has_conf ? ex->conf.len : 0);
	if (duress_read_password(o->from_stdin, true, &pw) < 0)
		return 1;
	duress_ending_catch(&ending);
	done = place(o, ex, &j, pw) == 0 && !ended();
	duress_password_free(pw);
	if (j.t.fd >= 0)
		finish_placed(&j.t, j.p, j.n, done);
	duress_ending_restore(&ending);
	sig = duress_ending_caught();
	if (!done)
		fprintf(stderr, "duress add: %snothing installed%s\n", sig ? "interrupted: " : "",
			o->force ? "; what was there is as it was" : "");
	if (sig)
		exit(128 + sig);
	if (done)
		status = report_installed(o, ex, &j, mo);
	if (j.t.fd >= 0)
		close(j.t.fd);
	return status;
}

int duress_cmd_add(int argc, char **argv)
{
	struct add_opts o = { .examples_dir = DURESS_EXAMPLES_DIR };
	struct duress_module_lines *lines;
	struct duress_opts mo;
	struct example ex;
	int status = 0;
	int first = parse_add(&o, argc, argv, &status);

	if (first < 0)
		return status;
	if (o.list)
		return first == argc ? list_examples(o.examples_dir) :
				       (fputs("duress add: --list takes no EXAMPLE\n", stderr), 2);
	if (argc - first != 1) {
		fputs("duress add: exactly one EXAMPLE is needed; try 'duress add --list'\n",
		      stderr);
		return 2;
	}
	if (!is_example_name(argv[first])) {
		fputs("duress add: an EXAMPLE is a plain name (no dot, no slash); "
		      "see duress add --list\n",
		      stderr);
		return 2;
	}
	if (check_set_files(&o) < 0)
		return 2;
	if (load_example(o.examples_dir, argv[first], &ex) < 0)
		return 1;
	if (o.boot && !o.before_unlock) {
		char why[256], esc[DURESS_ESCAPED_SIZE(256)];

		if (before_unlock_only(&ex.script, why, sizeof(why))) {
			fprintf(stderr, "duress add: %s --boot needs --before-unlock: %s\n",
				ex.name, duress_escape(why, esc, sizeof(esc)));
			example_free(&ex);
			return 2;
		}
	}
	lines = duress_module_lines_read(o.sign.pam_dir, &mo);
	if (!lines) {
		fputs("duress add: out of memory\n", stderr);
		status = 1;
	} else {
		status = read_set_files(&o) < 0 ? 1 : install(&o, &ex, &mo);
	}
	free_set_files(&o);
	duress_module_lines_free(lines);
	example_free(&ex);
	return status;
}
