/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * duress: the command line; sign and verify here, the other commands in
 * their own files.
 *
 *   duress sign [--stdin] [--also FILE]... [--once | --no-once] [--memlimit BYTES]
 *               [--opslimit N] [--pam-dir DIR] FILE...
 *   duress verify [--stdin] [--state-dir DIR] FILE
 *   duress check ..., duress test ..., duress add ... (check.c, pamtest.c, add.c)
 *
 * Installed also as duress_sign, which behaves as "duress sign".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/add.h"
#include "cli/check.h"
#include "cli/pamtest.h"
#include "cli/password.h"
#include "cli/signing.h"
#include "core/boot.h"
#include "core/opts.h"

static void usage(FILE *out)
{
	fputs("Usage: duress COMMAND [OPTION]... ARG...\n"
	      "\n"
	      "Commands:\n"
	      "  sign [--stdin] [--also FILE]... [--no-also] [--once | --no-once]\n"
	      "       [--memlimit BYTES] [--opslimit N] [--pam-dir DIR] FILE...\n"
	      "        bind a duress password to each action FILE, writing FILE.sig\n"
	      "  verify [--stdin] [--state-dir DIR] FILE\n"
	      "        say whether a password matches FILE's signature (runs nothing);\n"
	      "        exit 0 on a match, 1 on no match, 2 on error\n"
	      "  check [--user USER] [--global-dir DIR] [--user-dir TEMPLATE]\n"
	      "        [--service NAME]... [--pam-dir DIR] [--machine laptop|server|auto]\n"
	      "        say whether each service's PAM stack reaches the module, and list\n"
	      "        every action with ARMED or why the module will skip it, and a\n"
	      "        WARN for what a coercer could notice;\n"
	      "        exit 0 only if every stack is right and every action is armed\n"
	      "  test [--stdin] [--service NAME] USER\n"
	      "        a real PAM authentication and account check, said in words\n"
	      "  add --list [--examples-dir DIR]\n"
	      "        list the example actions, each with its summary\n"
	      "  add EXAMPLE [--global] [--set KEY=VALUE]... [--set-file KEY=FILE]...\n"
	      "      [--no-edit] [--stdin] [--force] [--examples-dir DIR] [--pam-dir DIR]\n"
	      "        install an example and its config where the module reads them,\n"
	      "        edit or --set the config, sign both, and check the action;\n"
	      "        exit 0 only if it is armed"
	      "\n"
	      "Options:\n"
	      "  --stdin              sign, verify, add: read the password as one line\n"
	      "                       from standard input; test: one line per prompt\n"
	      "  --also FILE          sign: bind a companion file too (up to 8): if it\n"
	      "                       changes, the action no longer runs; without it,\n"
	      "                       those the old signature binds are kept\n"
	      "  --no-also            sign: bind no companion file, not even the old ones\n"
	      "  --once               sign, add: the action runs at its first match only;\n"
	      "                       later matches log in as it did and run nothing\n"
	      "  --no-once            sign: it runs at every match (without either, as\n"
	      "                       the old signature says)\n"
	      "  --state-dir DIR      verify, check: where the records of once actions\n"
	      "                       that ran are (default " DURESS_STATE_DIR ")\n"
	      "  --memlimit BYTES     sign, add: Argon2id memory for a new salt (K, M, G\n"
	      "                       suffixes)\n"
	      "  --opslimit N         sign, add: Argon2id passes for a new salt; neither\n"
	      "                       below libsodium's interactive cost (64M, 2 passes)\n"
	      "  --allow-weak-cost    sign, add: allow a cost below it (test suites)\n"
	      "  --user USER          check: whose per-user directory (default: yours)\n"
	      "  --global-dir DIR     check: the global directory (\"\" skips it)\n"
	      "  --user-dir TEMPLATE  check: the per-user directory, %h = home, %u = user\n"
	      "  --service NAME       check: a PAM service to read (default: those that\n"
	      "                       include common-auth); test: the PAM service\n"
	      "                       (default login)\n"
	      "  --pam-dir DIR        sign, check, add: where the PAM stack is read\n"
	      "                       (default /etc/pam.d; \"\" for check: do not read it)\n"
	      "  --list               add: list the examples\n"
	      "  --global             add: install in the global directory (root only)\n"
	      "  --set KEY=VALUE      add: set a KEY= line of the config (no editor)\n"
	      "  --set-file KEY=FILE  add: the same, the value the first line of FILE\n"
	      "                       (- : standard input): not in argv or history\n"
	      "  --machine KIND       check: laptop, server or auto: whether the\n"
	      "                       after-pam_unix placement is warned about\n"
	      "  --no-edit            add: do not open the config in an editor\n"
	      "  --force              add: replace the example's files already there\n"
	      "  --examples-dir DIR   add: where the examples are\n"
	      "  -h, --help           show this help; after a COMMAND, that command's help\n"
	      "  --version            show the version\n"
	      "\n"
	      "See duress(1) and pam_duress(8).\n",
	      out);
}

static void sign_usage(FILE *out)
{
	fputs("Usage: duress sign [--stdin] [--also FILE]... [--no-also] [--once | --no-once]\n"
	      "                   [--memlimit BYTES] [--opslimit N] [--allow-weak-cost]\n"
	      "                   [--pam-dir DIR] [--boot-dir DIR] FILE...\n"
	      "       duress_sign [same options] FILE...\n"
	      "\n"
	      "Binds one duress password to the exact content of each action FILE and\n"
	      "writes FILE.sig beside it (mode 0600, owned like FILE).  The password is\n"
	      "asked for twice without echo.  Refused: an empty one, or the real password\n"
	      "of the account (which pam_unix would accept first); a normal user's is\n"
	      "checked with unix_chkpwd, which logs a failed check to the auth log.\n"
	      "\n"
	      "  --stdin          read the password as one line from standard input\n"
	      "  --also FILE      bind a companion file too (up to 8): if it changes,\n"
	      "                   the action no longer runs.  Without any, the files the\n"
	      "                   signature being replaced binds are bound again (said\n"
	      "                   in a warning)\n"
	      "  --no-also        bind no companion file, not even those\n"
	      "  --once           run the action at its first match only: later matches\n"
	      "                   log in (or are denied) as the first did and run nothing;\n"
	      "                   signing again arms it again (not for boot actions)\n"
	      "  --no-once        run it at every match.  Without either, as the\n"
	      "                   signature being replaced says (said in a warning)\n"
	      "  --memlimit BYTES Argon2id memory for a new salt (K, M, G suffixes);\n"
	      "                   by default the directory's salt and cost are reused\n"
	      "  --opslimit N     Argon2id passes for a new salt; neither may be below\n"
	      "                   libsodium's interactive cost (64M, 2 passes), the default\n"
	      "  --allow-weak-cost  allow a cost below it (for test suites: it makes the\n"
	      "                   account's wrong passwords faster than for one without\n"
	      "                   actions)\n"
	      "  --pam-dir DIR    where the PAM stack is read to learn which directories\n"
	      "                   the module reads (default /etc/pam.d)\n"
	      "  --boot-dir DIR   the disk-unlock prompt's directory (default\n"
	      "                   " DURESS_BOOT_DIR "): a FILE there is judged as a global\n"
	      "                   action, and the initramfs needs updating\n"
	      "  -h, --help       show this help\n"
	      "\n"
	      "Exit 0 when every FILE was signed, 1 otherwise, 2 on bad usage.\n",
	      out);
}

static void verify_usage(FILE *out)
{
	fputs("Usage: duress verify [--stdin] [--state-dir DIR] FILE\n"
	      "\n"
	      "Says whether a password matches the signature of FILE (FILE.sig, or a\n"
	      "legacy FILE.sha256), and whether FILE changed since it was signed.  Runs\n"
	      "nothing and changes nothing.  The password is asked for once without echo.\n"
	      "For a once action (duress sign --once) a match also says whether it ran\n"
	      "(only root can tell) and how to arm it again.\n"
	      "\n"
	      "  --stdin          read the password as one line from standard input\n"
	      "  --state-dir DIR  where the records of once actions that ran are (the\n"
	      "                   module line's state_dir=; default " DURESS_STATE_DIR ")\n"
	      "  -h, --help       show this help\n"
	      "\n"
	      "Exit 0 on a match, 1 on no match, 2 on error.\n",
	      out);
}

enum {
	OPT_STDIN = 256,
	OPT_ALSO,
	OPT_MEMLIMIT,
	OPT_OPSLIMIT,
	OPT_VERSION,
	OPT_PAM_DIR,
	OPT_BOOT_DIR,
	OPT_ALLOW_WEAK_COST,
	OPT_NO_ALSO,
	OPT_ONCE,
	OPT_NO_ONCE,
	OPT_STATE_DIR
};

static const struct option sign_options[] = {
	{ "stdin", no_argument, NULL, OPT_STDIN },
	{ "also", required_argument, NULL, OPT_ALSO },
	{ "no-also", no_argument, NULL, OPT_NO_ALSO },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "no-once", no_argument, NULL, OPT_NO_ONCE },
	{ "memlimit", required_argument, NULL, OPT_MEMLIMIT },
	{ "opslimit", required_argument, NULL, OPT_OPSLIMIT },
	{ "allow-weak-cost", no_argument, NULL, OPT_ALLOW_WEAK_COST },
	{ "pam-dir", required_argument, NULL, OPT_PAM_DIR },
	{ "boot-dir", required_argument, NULL, OPT_BOOT_DIR },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* getopt itself names an option of sign given to verify. */
static const struct option verify_options[] = {
	{ "stdin", no_argument, NULL, OPT_STDIN },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

struct cli {
	bool from_stdin;
	const char *state_dir; /* verify: NULL for DURESS_STATE_DIR */
	struct duress_sign_opts sign;
};

/* Returns the index of the first operand, or -1 (exit status in *status). */
static int parse_options(struct cli *c, int argc, char **argv, bool for_sign, int *status)
{
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", for_sign ? sign_options : verify_options,
				  NULL)) != -1) {
		switch (opt) {
		case OPT_STDIN:
			c->from_stdin = true;
			break;
		case OPT_ALSO:
			if (c->sign.n_also == DURESS_ALSO_MAX_FILES) {
				fprintf(stderr, "duress: at most %d --also files\n",
					DURESS_ALSO_MAX_FILES);
				*status = 2;
				return -1;
			}
			c->sign.also[c->sign.n_also++] = optarg;
			break;
		case OPT_MEMLIMIT:
		case OPT_OPSLIMIT:
			if (duress_sign_opts_cost(&c->sign, opt == OPT_MEMLIMIT, optarg) < 0) {
				*status = 2;
				return -1;
			}
			break;
		case OPT_ALLOW_WEAK_COST:
			c->sign.allow_weak_cost = true;
			break;
		case OPT_NO_ALSO:
			c->sign.drop_also = true;
			break;
		case OPT_ONCE:
			c->sign.once = true;
			break;
		case OPT_NO_ONCE:
			c->sign.drop_once = true;
			break;
		case OPT_STATE_DIR:
			c->state_dir = optarg;
			break;
		case OPT_PAM_DIR:
			c->sign.pam_dir = optarg;
			break;
		case OPT_BOOT_DIR:
			c->sign.boot_dir = optarg;
			break;
		case 'h':
			(for_sign ? sign_usage : verify_usage)(stdout);
			*status = 0;
			return -1;
		case OPT_VERSION:
			printf("duress %s\n", DURESS_VERSION);
			*status = 0;
			return -1;
		default:
			fprintf(stderr, "duress: try 'duress %s --help'\n",
				for_sign ? "sign" : "verify");
			*status = 2;
			return -1;
		}
	}
	if (for_sign && c->sign.drop_also && c->sign.n_also) {
		fputs("duress sign: --no-also and --also: choose one\n", stderr);
		*status = 2;
		return -1;
	}
	if (for_sign && c->sign.once && c->sign.drop_once) {
		fputs("duress sign: --once and --no-once: choose one\n", stderr);
		*status = 2;
		return -1;
	}
	if (for_sign && duress_sign_opts_floor(&c->sign) < 0) {
		*status = 2;
		return -1;
	}
	return optind;
}

static int cmd_sign(int argc, char **argv)
{
	struct cli c = { 0 };
	struct duress_password *pw = NULL;
	int status = 0;
	int first = parse_options(&c, argc, argv, true, &status);

	if (first < 0)
		return status;
	if (first >= argc) {
		fputs("duress sign: no FILE given; try 'duress sign --help'\n", stderr);
		return 2;
	}
	if (duress_read_password(c.from_stdin, true, &pw) < 0)
		return 1;
	for (int i = first; i < argc; i++)
		if (duress_sign_file(argv[i], pw, &c.sign) < 0)
			status = 1;
	duress_password_free(pw);
	return status;
}

static int cmd_verify(int argc, char **argv)
{
	struct cli c = { 0 };
	struct duress_password *pw = NULL;
	int status = 0;
	int first = parse_options(&c, argc, argv, false, &status);

	if (first < 0)
		return status;
	if (argc - first != 1) {
		fputs("duress verify: exactly one FILE is needed; try 'duress verify --help'\n",
		      stderr);
		return 2;
	}
	if (duress_read_password(c.from_stdin, false, &pw) < 0)
		return 2;
	status = duress_verify_file(argv[first], pw, c.state_dir);
	duress_password_free(pw);
	return status;
}

int main(int argc, char **argv)
{
	const char *prog = strrchr(argv[0], '/');

	prog = prog ? prog + 1 : argv[0];
	if (sodium_init() < 0) {
		fputs("duress: libsodium cannot be initialised\n", stderr);
		return 2;
	}
	if (strcmp(prog, "duress_sign") == 0)
		return cmd_sign(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "sign") == 0)
		return cmd_sign(argc - 1, argv + 1);
	if (strcmp(argv[1], "verify") == 0)
		return cmd_verify(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return duress_cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "test") == 0)
		return duress_cmd_test(argc - 1, argv + 1);
	if (strcmp(argv[1], "add") == 0)
		return duress_cmd_add(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("duress %s\n", DURESS_VERSION);
		return 0;
	}
	fprintf(stderr, "duress: unknown command \"%s\"; try 'duress --help'\n", argv[1]);
	return 2;
}
