/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/check.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/actions.h"
#include "core/auth.h"
#include "core/escape.h"
#include "core/opts.h"

struct check_opts {
	const char *user;
	const char *global_dir;
	const char *user_dir;
};

static void check_usage(FILE *out)
{
	fputs("Usage: duress check [--user USER] [--global-dir DIR] [--user-dir TEMPLATE]\n"
	      "\n"
	      "Lists every action of USER's directory (default: yours) and of the global\n"
	      "directory with ARMED or the reason the module will skip it.  Exit 0 only\n"
	      "if every action is armed.\n"
	      "\n"
	      "  --user USER          whose per-user directory to check\n"
	      "  --global-dir DIR     global directory (default " DURESS_GLOBAL_DIR "; \"\" skips it)\n"
	      "  --user-dir TEMPLATE  per-user directory, %h = home, %u = user\n"
	      "                       (default " DURESS_USER_DIR_DEFAULT "; \"\" skips it)\n",
	      out);
}

/* Returns the index of the first operand, or -1 with the exit status in *status. */
static int parse_check(struct check_opts *o, int argc, char **argv, int *status)
{
	static const struct option options[] = {
		{ "user", required_argument, NULL, 'u' },
		{ "global-dir", required_argument, NULL, 'g' },
		{ "user-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == 'u')
			o->user = optarg;
		else if (opt == 'g')
			o->global_dir = optarg;
		else if (opt == 'd')
			o->user_dir = optarg;
		else {
			if (opt == 'h')
				check_usage(stdout);
			else
				fputs("duress: try 'duress check --help'\n", stderr);
			*status = opt == 'h' ? 0 : 2;
			return -1;
		}
	}
	return optind;
}

/* Prints one action's line (path already escaped); returns whether it is armed. */
static bool report_action(const char *path, const struct duress_action *a)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)];
	bool armed = a->skip == DURESS_ARMED && !a->legacy;

	/* Names are data: a newline or an ESC in one must not reach the terminal. */
	duress_escape(a->name, name, sizeof(name));
	if (a->skip == DURESS_NOT_AN_ACTION) {
		printf("%s/%s: ignored: %s\n", path, name, duress_skip_reason(a->skip));
		return true;
	}
	if (a->skip == DURESS_ARMED && a->legacy)
		printf("%s/%s: SKIPPED unless legacy_sha256: weak legacy .sha256 signature "
		       "(re-sign with duress sign)\n",
		       path, name);
	else if (a->skip != DURESS_ARMED)
		printf("%s/%s: SKIPPED: %s\n", path, name, duress_skip_reason(a->skip));
	else
		printf("%s/%s: ARMED%s%s\n", path, name,
		       a->world_readable ? " (warning: readable by others)" : "",
		       a->sig_world_readable
			       ? " (warning: signature readable by others, who can guess offline)"
			       : "");
	return armed;
}

/* Lists a loaded directory; returns the number of actions not armed. */
static int report_dir(const char *path, const struct duress_dir *dir, int *actions)
{
	int bad = 0;

	if (dir->n_actions == 0)
		printf("%s: no actions\n", path);
	for (size_t i = 0; i < dir->n_actions; i++) {
		bad += !report_action(path, &dir->actions[i]);
		*actions += dir->actions[i].skip != DURESS_NOT_AN_ACTION;
	}
	return bad;
}

/*
 * Returns the number of actions not armed (a bad directory counts as one);
 * adds the number of actions listed to *actions.  The caps are the scope's
 * defaults, those the module applies without options; files are opened with
 * as's rights (NULL: ours), as the module opens them.
 */
static int check_dir(const char *path, enum duress_scope scope, uid_t owner,
		     const struct duress_identity *as, int *actions)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	struct duress_caps caps;
	struct duress_dir dir;
	int bad;
	int r;

	if (scope == DURESS_SCOPE_USER)
		duress_user_caps_default(&caps);
	else
		duress_caps_default(&caps);
	duress_escape(path, shown, sizeof(shown));
	/* legacy_ok: list legacy signatures, but as not armed. */
	r = duress_dir_load(&dir, path, scope, owner, &caps, true, as);
	if (r == -ENOENT) {
		printf("%s: no such directory (no %s actions)\n", shown,
		       scope == DURESS_SCOPE_GLOBAL ? "global" : "per-user");
		return 0;
	}
	if (r == -EACCES && scope == DURESS_SCOPE_GLOBAL && geteuid() != 0) {
		printf("%s: not readable by you (run duress check as root to see global actions)\n",
		       shown);
		return 0;
	}
	if (r < 0) {
		char buf[128];

		printf("%s: SKIPPED (whole directory): %s\n", shown,
		       duress_dir_problem(r, buf, sizeof(buf)));
		return 1;
	}
	r = duress_dir_hash(&dir);
	if (r < 0) {
		char buf[128];

		fprintf(stderr, "duress: %s: cannot check: %s\n", shown,
			strerror_r(-r, buf, sizeof(buf)));
		duress_dir_free(&dir);
		return 1;
	}
	bad = report_dir(shown, &dir, actions);
	duress_dir_free(&dir);
	return bad;
}

/* As the module does: another user's directory is read with that user's rights. */
static int check_user_dir(const char *path, const struct passwd *pw, int *actions)
{
	struct duress_identity as;
	int bad;
	int r = duress_identity_init(&as, pw);

	if (r < 0) {
		char buf[128];

		fprintf(stderr, "duress: cannot look up the groups of %s: %s\n", pw->pw_name,
			strerror_r(-r, buf, sizeof(buf)));
		return 1;
	}
	bad = check_dir(path, DURESS_SCOPE_USER, pw->pw_uid, &as, actions);
	duress_identity_free(&as);
	return bad;
}

static int check_user(const struct check_opts *o, int *bad, int *actions)
{
	struct duress_passwd *p = NULL;
	char path[PATH_MAX];
	int r;

	r = o->user ? duress_getpw(o->user, 0, &p) : duress_getpw(NULL, getuid(), &p);
	if (r < 0 || !p) {
		fprintf(stderr, "duress: no such user: %s\n", o->user ? o->user : "(you)");
		return -1;
	}
	if (!o->user_dir || !*o->user_dir) {
		free(p);
		return 0;
	}
	r = duress_expand_user_dir(o->user_dir, p->pw.pw_name, p->pw.pw_dir, path, sizeof(path));
	if (r < 0)
		fprintf(stderr, "duress: --user-dir %s cannot be expanded for %s\n", o->user_dir,
			p->pw.pw_name);
	else
		*bad += check_user_dir(path, &p->pw, actions);
	free(p);
	return r < 0 ? -1 : 0;
}

int duress_cmd_check(int argc, char **argv)
{
	struct check_opts o = {
		.global_dir = DURESS_GLOBAL_DIR,
		.user_dir = DURESS_USER_DIR_DEFAULT,
	};
	int status = 0, bad = 0, actions = 0;
	int first = parse_check(&o, argc, argv, &status);

	if (first < 0)
		return status;
	if (first != argc) {
		fputs("duress check: takes no operand; try 'duress check --help'\n", stderr);
		return 2;
	}
	if (*o.global_dir && o.global_dir[0] != '/') {
		fputs("duress check: --global-dir must be an absolute path\n", stderr);
		return 2;
	}
	if (check_user(&o, &bad, &actions) < 0)
		return 2;
	if (*o.global_dir)
		bad += check_dir(o.global_dir, DURESS_SCOPE_GLOBAL, 0, NULL, &actions);
	if (bad)
		puts("not every action is armed");
	else
		puts(actions ? "every action is armed" : "no actions found");
	return bad ? 1 : 0;
}
