/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/check.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/actions.h"
#include "core/account.h"
#include "core/boot.h"
#include "core/escape.h"
#include "core/once.h"
#include "core/write.h"
#include "core/opts.h"
#include "core/policy.h"
#include "core/safe_open.h"
#include "core/shebang.h"
#include "cli/crypttab.h"
#include "cli/dracut.h"
#include "cli/fixcmd.h"
#include "cli/initramfs.h"
#include "cli/keyslots.h"
#include "cli/leftover.h"
#include "cli/pamstack.h"
#include "cli/requires.h"
#include "cli/signing.h"
#include "cli/tells.h"

#define MAX_SERVICES 64 /* --service */
#define MAX_FOUND 256   /* services found in the PAM directory */
#define MAX_MODULE_LINES 8
#define PAM_DIR_DEFAULT "/etc/pam.d"
#define PAM_CONFIGS_DEFAULT "/usr/share/pam-configs" /* Debian's pam-auth-update profiles */
#define CRYPTTAB_DEFAULT "/etc/crypttab"
/* "FILE:LINE (MODULE)", both escaped. */
#define ENTRY_NAME_SIZE (DURESS_ESCAPED_SIZE(PATH_MAX) + DURESS_ESCAPED_SIZE(256) + 128)

struct check_opts {
	const char *user;
	const char *global_dir;  /* NULL: the module line's, or the default */
	const char *user_dir;    /* NULL: the module line's, or the default */
	const char *state_dir;   /* NULL: the module line's, or the default */
	const char *pam_dir;     /* "": the stack is not read */
	const char *pam_configs; /* where the Debian package's profiles would be */
	const char *services[MAX_SERVICES];
	size_t n_services;
	enum duress_machine machine;
	const char *boot_dir;    /* NULL: DURESS_BOOT_DIR, if it exists; "": no boot section */
	const char *crypttab;    /* NULL: CRYPTTAB_DEFAULT */
	const char *initramfs;   /* NULL: the running kernel's */
	const char *dracut_conf; /* NULL: DURESS_DRACUT_CONF_DIR */
};

/* What the boot section needs of its directory, filled by check_dir(). */
struct boot_seen {
	bool loaded;      /* the directory was read */
	size_t n_params;  /* its distinct (salt, cost) sets */
	size_t n_actions; /* its actions, armed or not */
};

/* What the action lines add up to. */
struct tally {
	int actions; /* listed, armed or not (not data files) */
	int unseen;  /* global or boot actions the caller may not read: not a failure */
};

/* One action's line, as it counts. */
enum verdict {
	VERDICT_ARMED, /* or a file that is no action */
	VERDICT_NOT_ARMED,
	VERDICT_UNSEEN, /* not readable by the caller (not root), which the module is */
};

/* An internal error, such as rights that cannot be taken: nothing more runs. */
static _Noreturn void fail_closed(const char *why)
{
	fprintf(stderr, "duress: %s\n", why);
	exit(2);
}

static void check_usage(FILE *out)
{
	fputs("Usage: duress check [--user USER] [--service NAME]... [--pam-dir DIR]\n"
	      "                    [--pam-configs-dir DIR] [--global-dir DIR]\n"
	      "                    [--user-dir TEMPLATE] [--machine laptop|server|auto]\n"
	      "                    [--boot-dir DIR] [--crypttab FILE] [--initramfs FILE]\n"
	      "                    [--dracut-conf DIR] [--state-dir DIR]\n"
	      "\n"
	      "Reads the PAM stack of each service and says whether a duress password\n"
	      "reaches pam_duress.so and logs in; then lists every action of USER's\n"
	      "directory (default: yours) and of the global directory, as the module\n"
	      "line's options see them, with ARMED or the reason the module will skip\n"
	      "it; WARN lines name what a coercer could notice.  When the boot directory\n"
	      "exists, the disk-unlock prompt too: its actions, crypttab's keyscript= (or\n"
	      "dracut's config adding the pam-duress module) and whether the initramfs\n"
	      "holds the current boot actions.  Exit 0 only if every stack is right and\n"
	      "every action is armed (a WARN does not count).\n"
	      "\n"
	      "  --user USER          whose per-user directory to check\n"
	      "  --service NAME       the PAM service to check (repeatable; default: those\n"
	      "                       whose auth stack includes common-auth)\n"
	      "  --pam-dir DIR        where the service files are (default " PAM_DIR_DEFAULT ";\n"
	      "                       \"\" does not read the stack)\n"
	      "  --pam-configs-dir DIR  where pam-auth-update's profiles are (default\n"
	      "                       " PAM_CONFIGS_DEFAULT "): the fix it names\n"
	      "  --global-dir DIR     global directory (default: the module line's\n"
	      "                       global_dir=, else " DURESS_GLOBAL_DIR "; \"\" skips it)\n"
	      "  --user-dir TEMPLATE  per-user directory, %h = home, %u = user (default: the\n"
	      "                       module line's user_dir=, else " DURESS_USER_DIR_DEFAULT
	      "; \"\" skips it)\n"
	      "  --machine KIND       laptop: warn about the after-pam_unix placement;\n"
	      "                       server: do not; auto (default): a laptop if\n"
	      "                       /sys shows a portable chassis or a battery\n"
	      "  --boot-dir DIR       the disk-unlock prompt's actions (default " DURESS_BOOT_DIR
	      ",\n"
	      "                       checked when it exists; \"\" skips it)\n"
	      "  --crypttab FILE      where the keyscript= is looked for (default " CRYPTTAB_DEFAULT
	      ")\n"
	      "  --initramfs FILE     the initramfs to compare (default: the running kernel's,\n"
	      "                       /boot/initrd.img-RELEASE; with dracut,\n"
	      "                       /boot/initramfs-RELEASE.img if it exists)\n"
	      "  --dracut-conf DIR    where a *.conf adding the pam-duress module is looked\n"
	      "                       for (default " DURESS_DRACUT_CONF_DIR ")\n"
	      "  --state-dir DIR      where the records of once actions that ran are\n"
	      "                       (default: the module line's state_dir=, else\n"
	      "                       " DURESS_STATE_DIR "): a once action that ran is\n"
	      "                       NOT ARMED, with the command that arms it again\n",
	      out);
}

/* Returns the index of the first operand, or -1 with the exit status in *status. */
static int parse_check(struct check_opts *o, int argc, char **argv, int *status)
{
	static const struct option options[] = {
		{ "user", required_argument, NULL, 'u' },
		{ "global-dir", required_argument, NULL, 'g' },
		{ "user-dir", required_argument, NULL, 'd' },
		{ "service", required_argument, NULL, 's' },
		{ "pam-dir", required_argument, NULL, 'p' },
		{ "pam-configs-dir", required_argument, NULL, 'c' },
		{ "machine", required_argument, NULL, 'm' },
		{ "boot-dir", required_argument, NULL, 'b' },
		{ "crypttab", required_argument, NULL, 't' },
		{ "initramfs", required_argument, NULL, 'i' },
		{ "dracut-conf", required_argument, NULL, 'r' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == 'u') {
			o->user = optarg;
		} else if (opt == 'g') {
			o->global_dir = optarg;
		} else if (opt == 'd') {
			o->user_dir = optarg;
		} else if (opt == 'p') {
			o->pam_dir = optarg;
		} else if (opt == 'c') {
			o->pam_configs = optarg;
		} else if (opt == 'b') {
			o->boot_dir = optarg;
		} else if (opt == 't') {
			o->crypttab = optarg;
		} else if (opt == 'i') {
			o->initramfs = optarg;
		} else if (opt == 'r') {
			o->dracut_conf = optarg;
		} else if (opt == 'S') {
			o->state_dir = optarg;
		} else if (opt == 'm' && duress_machine_parse(optarg, &o->machine) == 0) {
			continue;
		} else if (opt == 's' && o->n_services < MAX_SERVICES && *optarg &&
			   !strchr(optarg, '/') && optarg[0] != '.') {
			o->services[o->n_services++] = optarg;
		} else {
			if (opt == 'h')
				check_usage(stdout);
			else if (opt == 's')
				fprintf(stderr, "duress check: --service: %s\n",
					o->n_services == MAX_SERVICES ? "at most 64" :
									"not a service name");
			else if (opt == 'm')
				fputs("duress check: --machine: laptop, server or auto\n", stderr);
			else
				fputs("duress: try 'duress check --help'\n", stderr);
			*status = opt == 'h' ? 0 : 2;
			return -1;
		}
	}
	return optind;
}

/* Why an armed script will not start: its #! line, as the kernel reads it. */
static const char *shebang_problem(const struct duress_dir *dir, const struct duress_action *a,
				   char *buf, size_t len)
{
	struct duress_trust t = duress_dir_trust(dir, dir->caps->max_file_size);
	char head[DURESS_SHEBANG_MAX], interp[DURESS_ESCAPED_SIZE(DURESS_SHEBANG_MAX)];
	struct duress_shebang sb;
	struct duress_file f;
	struct stat st;
	ssize_t n;

	if (duress_open_file(dir->fd, a->name, DURESS_FILE_ACTION, &t, true, &f) < 0 || f.fd < 0)
		return NULL;
	n = read(f.fd, head, sizeof(head));
	duress_file_close(&f);
	duress_shebang_parse(head, n > 0 ? (size_t)n : 0, &sb);
	if (!sb.interp)
		return NULL;
	if (strchr(sb.interp, '\r') || (sb.arg && strchr(sb.arg, '\r')))
		return "its #! line ends with a CR (Windows line ends): remove it and sign again";
	duress_escape(sb.interp, interp, sizeof(interp));
	if (stat(sb.interp, &st) < 0)
		snprintf(buf, len, "its #! interpreter %s does not exist", interp);
	else if (!S_ISREG(st.st_mode) || !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		snprintf(buf, len, "its #! interpreter %s is not executable", interp);
	else
		return NULL;
	return buf;
}

/*
 * Why an armed action will not work when it runs: its #! line, or a
 * program its "# Requires:" lines name that is not installed (requires.h).
 */
static const char *will_fail(const struct duress_dir *dir, const struct duress_action *a, char *buf,
			     size_t len)
{
	struct duress_missing m;
	const char *why = shebang_problem(dir, a, buf, len);

	if (why)
		return why;
	if (duress_requires_of_action(dir, a, &m) < 0)
		fail_closed("cannot read what an action needs (no memory, or the rights a user's "
			    "file is read with)");
	return m.n ? duress_missing_say(&m, buf, len) : NULL;
}

/* A boot action's kind, said after its name: where and when it runs. */
static const char *boot_kind(const char *name)
{
	return strncmp(name, DURESS_BOOT_BEFORE_PREFIX, strlen(DURESS_BOOT_BEFORE_PREFIX)) == 0 ?
		       "before unlock: " :
		       "after boot: ";
}

/*
 * The line of an action changed since signing (path and name escaped, for
 * the words): if the change is the user's, the fix is to sign it again, bound
 * to every companion its signature names, exactly as it was.
 */
static void print_changed(const char *path, const char *name, const char *kind,
			  const struct duress_dir *dir, const struct duress_action *a, bool boot)
{
	struct duress_fix fix;

	printf("%s/%s: %sSKIPPED: %s; fix: if the change is yours, sign it again", path, name, kind,
	       duress_skip_reason(a->skip));
	duress_fix_begin(&fix);
	duress_fix_text(&fix, dir->scope == DURESS_SCOPE_GLOBAL && geteuid() != 0 ?
				      ": sudo duress sign" :
				      ": duress sign");
	/* Another boot directory is judged as one only when sign is told so. */
	if (boot && strcmp(dir->path, DURESS_BOOT_DIR) != 0) {
		duress_fix_text(&fix, " --boot-dir");
		duress_fix_path(&fix, dir->path, NULL, "");
	}
	for (const char *p = duress_sig_next_also(&a->sig, NULL); p;
	     p = duress_sig_next_also(&a->sig, p)) {
		duress_fix_text(&fix, " --also");
		duress_fix_path(&fix, p, NULL, "");
	}
	duress_fix_path(&fix, dir->path, a->name, "");
	duress_fix_end(&fix, " with duress sign (its name cannot be pasted as it shows: rename it "
			     "first)");
}

/*
 * Whether the caller, not root, is refused reading path (at at_fd) of a
 * global (or boot) directory, which the module, as root, reads
 * (docs/troubleshooting.md: not a failure).
 */
static bool only_root_reads(const struct duress_dir *dir, int at_fd, const char *path)
{
	return dir->scope == DURESS_SCOPE_GLOBAL && geteuid() != 0 &&
	       faccessat(at_fd, path, R_OK, AT_EACCESS) < 0 && errno == EACCES;
}

/* Whether a is skipped only because the caller may not read it, its signature or a companion. */
static bool unreadable_by_caller(const struct duress_dir *dir, const struct duress_action *a)
{
	char sig[NAME_MAX + sizeof(DURESS_LEGACY_SUFFIX)];

	snprintf(sig, sizeof(sig), "%s%s", a->name,
		 a->legacy ? DURESS_LEGACY_SUFFIX : DURESS_SIG_SUFFIX);
	if (a->skip == DURESS_SKIP_UNREADABLE)
		return only_root_reads(dir, dir->fd, a->name) || only_root_reads(dir, dir->fd, sig);
	for (const char *p = NULL;
	     a->skip == DURESS_SKIP_ALSO_MISSING && (p = duress_sig_next_also(&a->sig, p));)
		if (only_root_reads(dir, AT_FDCWD, p))
			return true;
	return false;
}

/*
 * A file that is no action: the companion an action's signature binds (as
 * duress add installs a config), one the caller may not read, or ignored.
 */
static void report_data_file(const char *path, const char *name, const struct duress_dir *dir,
			     const struct duress_action *a)
{
	char full[PATH_MAX], owner[DURESS_ESCAPED_SIZE(NAME_MAX)];
	size_t len = strlen(dir->path);

	while (len > 1 && dir->path[len - 1] == '/')
		len--;
	snprintf(full, sizeof(full), "%.*s/%s", (int)len, dir->path, a->name);
	for (size_t i = 0; i < dir->n_actions; i++)
		if (duress_binds(&dir->actions[i], full)) {
			printf("%s/%s: companion of %s (bound by its signature)\n", path, name,
			       duress_escape(dir->actions[i].name, owner, sizeof(owner)));
			return;
		}
	if (only_root_reads(dir, dir->fd, a->name))
		printf("%s/%s: not readable by you (run duress check as root to see it)\n", path,
		       name);
	else
		printf("%s/%s: ignored: %s\n", path, name, duress_skip_reason(a->skip));
}

/*
 * An armed once action's words (cli/signing.h), into buf; whether it still
 * runs at its next match (or only root can tell).
 */
static bool once_runs(const struct duress_dir *dir, const struct duress_action *a,
		      const char *state_dir, char *buf, size_t size)
{
	char name[DURESS_ONCE_NAME_SIZE];
	struct stat when;
	enum duress_once_state st =
		duress_once_state(state_dir, dir->scope, dir->owner, &a->sig, name, &when);

	duress_once_words(st, state_dir, name, &when, buf, size);
	return st == DURESS_ONCE_ARMED || st == DURESS_ONCE_UNKNOWN;
}

/*
 * Prints one action's line (path already escaped), with its kind first for
 * a boot action; returns whether it is armed, or not, or not readable by
 * the caller.  A once action that ran, or whose record cannot be made
 * under state_dir, is not.
 */
static enum verdict report_action(const char *path, const struct duress_dir *dir,
				  const struct duress_action *a, bool legacy_ok, bool boot,
				  const char *state_dir)
{
	char once[2 * DURESS_ESCAPED_SIZE(PATH_MAX)] = "";
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)],
		buf[DURESS_ESCAPED_SIZE(DURESS_SHEBANG_MAX) + 1024];
	const char *broken = NULL;
	const char *kind = boot ? boot_kind(a->name) : "";

	/* Names are data: a newline or an ESC in one must not reach the terminal. */
	duress_escape(a->name, name, sizeof(name));
	if (a->skip == DURESS_SKIP_NOT_AN_ACTION) {
		report_data_file(path, name, dir, a);
		return VERDICT_ARMED;
	}
	if (unreadable_by_caller(dir, a)) {
		printf("%s/%s: %snot readable by you (run duress check as root to see it)\n", path,
		       name, kind);
		return VERDICT_UNSEEN;
	}
	if (a->skip == DURESS_SKIP_NONE && a->legacy && !legacy_ok) {
		printf("%s/%s: %sSKIPPED unless legacy_sha256: weak legacy .sha256 signature "
		       "(re-sign with duress sign)\n",
		       path, name, kind);
		return VERDICT_NOT_ARMED;
	}
	if (a->skip == DURESS_SKIP_CHANGED) {
		print_changed(path, name, kind, dir, a, boot);
		return VERDICT_NOT_ARMED;
	}
	if (a->skip != DURESS_SKIP_NONE) {
		printf("%s/%s: %sSKIPPED: %s\n", path, name, kind, duress_skip_reason(a->skip));
		return VERDICT_NOT_ARMED;
	}
	if ((broken = will_fail(dir, a, buf, sizeof(buf)))) {
		printf("%s/%s: %sWILL FAIL: %s\n", path, name, kind, broken);
		return VERDICT_NOT_ARMED;
	}
	if (a->sig.once && state_dir && !once_runs(dir, a, state_dir, once, sizeof(once))) {
		printf("%s/%s: %sNOT ARMED: %s\n", path, name, kind, once);
		return VERDICT_NOT_ARMED;
	}
	printf("%s/%s: %sARMED%s%s%s%s%s%s\n", path, name, kind, *once ? " (" : "", once,
	       *once ? ")" : "",
	       a->legacy ? " (warning: weak legacy .sha256 signature, accepted by legacy_sha256: "
			   "re-sign with duress sign)" :
			   "",
	       a->world_readable ? " (warning: readable by others)" : "",
	       a->sig_world_readable ?
		       " (warning: signature readable by others, who can guess offline)" :
		       "");
	return VERDICT_ARMED;
}

/*
 * Lists a loaded directory, or only the action named only (not NULL);
 * returns the number of actions not armed.
 */
static int report_dir(const char *path, const struct duress_dir *dir, bool legacy_ok,
		      const char *only, struct tally *tally, bool boot, const char *state_dir)
{
	int bad = 0, listed = 0;

	for (size_t i = 0; i < dir->n_actions; i++) {
		enum verdict v;

		if (only && strcmp(dir->actions[i].name, only) != 0)
			continue;
		v = report_action(path, dir, &dir->actions[i], legacy_ok, boot, state_dir);
		bad += v == VERDICT_NOT_ARMED;
		tally->unseen += v == VERDICT_UNSEEN;
		tally->actions += dir->actions[i].skip != DURESS_SKIP_NOT_AN_ACTION;
		listed++;
	}
	if (listed == 0 && !only)
		printf("%s: no actions\n", path);
	if (listed == 0 && only) {
		char name[DURESS_ESCAPED_SIZE(NAME_MAX)];

		printf("%s/%s: not found\n", path, duress_escape(only, name, sizeof(name)));
		bad++;
	}
	return bad;
}

/*
 * A match copies and hashes its action and companions before the action
 * runs; from this size on that time is worth a WARN (about 5 ms a MiB on
 * the test machine, docs/tells.md).
 */
#define NOTICEABLE_MATCH_READ ((uint64_t)1 << 20)

/* Armed actions a match would copy and hash for long enough to notice: a WARN each. */
static void tell_large_actions(const char *shown, const struct duress_dir *dir)
{
	char name[DURESS_ESCAPED_SIZE(NAME_MAX)];

	for (size_t i = 0; i < dir->n_actions; i++) {
		const struct duress_action *a = &dir->actions[i];

		if (a->skip != DURESS_SKIP_NONE || a->legacy || a->size < NOTICEABLE_MATCH_READ)
			continue;
		printf("%s/%s: WARN: %.1f MiB to copy and hash when its password matches, which "
		       "a real login and a wrong password do not wait for: a duress login takes "
		       "longer; fix: keep it and its companions under 1 MiB, e.g. a short script "
		       "that runs a program installed elsewhere\n",
		       shown, duress_escape(a->name, name, sizeof(name)),
		       (double)a->size / (1024.0 * 1024.0));
	}
}

static bool at_default_cost(const struct duress_params *p)
{
	return (uint64_t)p->mem_kib * 1024U == crypto_pwhash_MEMLIMIT_INTERACTIVE &&
	       p->ops == crypto_pwhash_OPSLIMIT_INTERACTIVE;
}

/* A cost as --memlimit and --opslimit take it: "64M, 2 passes". */
static const char *shown_cost(uint64_t mem_kib, unsigned ops, char *buf, size_t size)
{
	if (mem_kib % 1024 == 0)
		snprintf(buf, size, "%lluM, %u passes", (unsigned long long)(mem_kib / 1024), ops);
	else
		snprintf(buf, size, "%lluK, %u passes", (unsigned long long)mem_kib, ops);
	return buf;
}

/*
 * What makes a wrong password for the owner of a per-user directory cost
 * other than for an account without actions (one Argon2id at the default
 * cost): a set at another cost, or more than one set.  A WARN each.
 */
static void tell_user_costs(const char *shown, const struct duress_dir *dir, const char *user)
{
	char who[DURESS_ESCAPED_SIZE(LOGIN_NAME_MAX)], cost[64], usual[64];

	duress_escape(user, who, sizeof(who));
	for (size_t i = 0; i < dir->n_params; i++) {
		const struct duress_params *p = &dir->params[i];

		if (at_default_cost(p))
			continue;
		printf("%s: WARN: signed at a cost other than the default (%s instead of %s), so a "
		       "wrong password for %s takes another time than for an account without "
		       "actions; fix: sign its actions again without --memlimit and --opslimit\n",
		       shown, shown_cost(p->mem_kib, p->ops, cost, sizeof(cost)),
		       shown_cost(crypto_pwhash_MEMLIMIT_INTERACTIVE / 1024U,
				  crypto_pwhash_OPSLIMIT_INTERACTIVE, usual, sizeof(usual)),
		       who);
		break;
	}
	if (dir->n_params > 1)
		printf("%s: WARN: %zu different salts or costs, so a wrong password for %s costs %zu "
		       "Argon2id derivations, and for an account without actions one; fix: sign "
		       "its actions again without --memlimit and --opslimit (duress sign then shares "
		       "one salt)\n",
		       shown, dir->n_params, who, dir->n_params);
}

/*
 * Returns the number of actions not armed (a bad directory counts as one);
 * adds the actions listed, and those the caller may not read, to *tally.  The caps and legacy_sha256
 * are the module line's; files are opened with as's rights (NULL: ours), as
 * the module opens them.  only (not NULL): that action's line alone.
 * boot (not NULL): the boot directory, whose lines say each action's kind;
 * what the boot section needs is filled in.
 */
static int check_dir(const char *path, enum duress_scope scope, const struct passwd *owner,
		     const struct duress_identity *as, const struct duress_opts *mo,
		     const char *only, struct tally *tally, struct boot_seen *boot)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	const struct duress_caps *caps = scope == DURESS_SCOPE_USER ? &mo->user_caps : &mo->caps;
	struct duress_dir dir;
	int bad;
	int r;

	duress_escape(path, shown, sizeof(shown));
	/* legacy_ok: list legacy signatures, armed only with legacy_sha256. */
	r = duress_dir_load(&dir, path, scope, owner ? owner->pw_uid : 0, caps, true, as);
	if (r == -ENOENT) {
		printf("%s: no such directory (no %s actions)\n", shown,
		       boot                         ? "boot" :
		       scope == DURESS_SCOPE_GLOBAL ? "global" :
						      "per-user");
		return 0;
	}
	if (r == -EACCES && scope == DURESS_SCOPE_GLOBAL && geteuid() != 0) {
		printf("%s: not readable by you (run duress check as root to see %s actions)\n",
		       shown, boot ? "boot" : "global");
		tally->unseen++;
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
	bad = report_dir(shown, &dir, mo->legacy_sha256, only, tally, boot != NULL,
			 boot ? NULL : mo->state_dir);
	if (boot) {
		boot->loaded = true;
		boot->n_params = dir.n_params;
		for (size_t i = 0; i < dir.n_actions; i++)
			boot->n_actions += dir.actions[i].skip != DURESS_SKIP_NOT_AN_ACTION;
	}
	/* The whole check tells; add's one line for its new action does not. */
	if (!only)
		tell_large_actions(shown, &dir);
	if (!only && scope == DURESS_SCOPE_USER && owner)
		tell_user_costs(shown, &dir, owner->pw_name);
	if (!only && duress_tells_dir(shown, &dir, owner ? owner->pw_dir : NULL,
				      owner ? owner->pw_name : NULL) < 0) {
		fail_closed("cannot take the rights to read a user's file with");
	}
	duress_dir_free(&dir);
	return bad;
}

/* As the module does: another user's directory is read with that user's rights. */
static int check_user_dir(const char *path, const struct passwd *pw, const struct duress_opts *mo,
			  const char *only, struct tally *tally)
{
	struct duress_identity as;
	int bad;
	int r = duress_identity_init(&as, pw, NULL);

	if (r < 0) {
		char buf[128];

		fprintf(stderr, "duress: cannot look up the groups of %s: %s\n", pw->pw_name,
			strerror_r(-r, buf, sizeof(buf)));
		return 1;
	}
	bad = check_dir(path, DURESS_SCOPE_USER, pw, &as, mo, only, tally, NULL);
	duress_identity_free(&as);
	return bad;
}

/* A per-user directory in the home is what a coercer in the session finds first. */
static void tell_home(const char *path, const struct passwd *pw)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	struct stat st;

	/* Only one that exists: no directory, nothing to find. */
	if (duress_in_home(path, pw->pw_dir) && lstat(path, &st) == 0)
		duress_tell_home_dir(duress_escape(path, shown, sizeof(shown)), pw->pw_name);
}

static int check_user(const struct check_opts *o, const struct duress_opts *mo, int *bad,
		      struct tally *tally)
{
	struct duress_account *p = NULL;
	char path[PATH_MAX];
	int r;

	r = o->user ? duress_getpw(o->user, 0, &p) : duress_getpw(NULL, getuid(), &p);
	if (r < 0 || !p) {
		fprintf(stderr, "duress: no such user: %s\n", o->user ? o->user : "(you)");
		return -1;
	}
	if (!*mo->user_dir) {
		free(p);
		return 0;
	}
	if (mo->group && !duress_in_group(&p->pw, mo->group)) {
		printf("%s is not in group=%s: the module skips their per-user actions\n",
		       p->pw.pw_name, mo->group);
		free(p);
		return 0;
	}
	r = duress_expand_user_dir(mo->user_dir, p->pw.pw_name, p->pw.pw_dir, path, sizeof(path));
	if (r < 0)
		fprintf(stderr, "duress: --user-dir %s cannot be expanded for %s\n", mo->user_dir,
			p->pw.pw_name);
	else
		tell_home(path, &p->pw);
	if (r == 0)
		*bad += check_user_dir(path, &p->pw, mo, NULL, tally);
	free(p);
	return r < 0 ? -1 : 0;
}

/* A pam_duress.so line's arguments, copied: the options of the directories' check. */
struct module_line {
	char at[PATH_MAX + 16]; /* FILE:LINE */
	int argc;
	char **argv;
};

struct stack_report {
	const char *pam_dir;
	bool debian_profile; /* pam-auth-update has the package's "duress" profile */
	bool laptop;         /* the after-pam_unix placement is a tell here */
	char after[MAX_MODULE_LINES][ENTRY_NAME_SIZE]; /* module lines placed after pam_unix */
	size_t n_after;
	struct module_line lines[MAX_MODULE_LINES];
	size_t n_lines;
	int bad;        /* services whose stack is wrong */
	bool boot_only; /* no service has a module line, and the boot directory exists */
};

static void module_line_free(struct module_line *m)
{
	for (int i = 0; i < m->argc; i++)
		free(m->argv[i]);
	free(m->argv);
}

/* Keeps the line's arguments once per distinct set; returns it, or NULL when full. */
static const struct module_line *keep_line(struct stack_report *rep,
					   const struct duress_pam_entry *e)
{
	struct module_line *m;

	for (size_t i = 0; i < rep->n_lines; i++) {
		bool same = rep->lines[i].argc == e->argc;

		for (int a = 0; same && a < e->argc; a++)
			same = strcmp(rep->lines[i].argv[a], e->argv[a]) == 0;
		if (same)
			return &rep->lines[i];
	}
	if (rep->n_lines == MAX_MODULE_LINES)
		return NULL;
	m = &rep->lines[rep->n_lines];
	*m = (struct module_line){ .argv = calloc((size_t)e->argc + 1, sizeof(char *)) };
	snprintf(m->at, sizeof(m->at), "%s:%u", e->file, e->line);
	for (m->argc = 0; m->argv && m->argc < e->argc; m->argc++)
		if (!(m->argv[m->argc] = strdup(e->argv[m->argc])))
			break;
	if (!m->argv || m->argc < e->argc) {
		module_line_free(m);
		return NULL;
	}
	rep->n_lines++;
	return m;
}

/* What fixes a bad argument, after "fix: ". */
static const char *option_fix(enum duress_opt_verdict v)
{
	return v == DURESS_OPT_UNKNOWN ?
		       "correct its spelling or remove it (pam_duress(8) lists the options)" :
		       "give it a value pam_duress(8) allows, or remove it";
}

/*
 * The line's bad arguments, one ERROR each, judged one by one as the
 * module would; prefix goes first on each (duress test's "warning: ").
 * Returns how many: any makes the line inert.
 */
static int print_bad_options(const char *at, int argc, char *const *argv, const char *prefix)
{
	char shown[DURESS_ESCAPED_SIZE(256)], where[DURESS_ESCAPED_SIZE(PATH_MAX + 16)];
	int bad = 0;

	duress_escape(at, where, sizeof(where));
	for (int i = 0; i < argc; i++) {
		struct duress_opts scratch;
		enum duress_opt_verdict v;

		duress_opts_default(&scratch);
		v = duress_opts_apply(&scratch, argv[i]);
		if (v == DURESS_OPT_APPLIED)
			continue;
		duress_escape(argv[i], shown, sizeof(shown));
		printf("%s%s: pam_duress.so: %s \"%s\": the line is inert, no duress password works "
		       "through it; fix: %s\n",
		       prefix, where,
		       v == DURESS_OPT_UNKNOWN ? "unknown option" : "bad value in option", shown,
		       option_fix(v));
		bad++;
	}
	return bad;
}

/* The same for a stack entry, named FILE:LINE. */
static int print_bad_options_of(const struct duress_pam_entry *e, const char *prefix)
{
	char at[PATH_MAX + 16];

	snprintf(at, sizeof(at), "%s:%u", e->file, e->line);
	return print_bad_options(at, e->argc, e->argv, prefix);
}

static int report_options(const struct module_line *m)
{
	return print_bad_options(m->at, m->argc, m->argv, "ERROR: ");
}

/* The module's own parse of a line's arguments into *o (they point into argv); -1: no memory. */
static int parse_module_args(struct duress_opts *o, int argc, char *const *argv)
{
	const char **args = calloc((size_t)argc + 1, sizeof(*args));
	int bad;

	if (!args)
		return -1;
	for (int i = 0; i < argc; i++)
		args[i] = argv[i];
	bad = duress_opts_parse(o, argc, args, NULL);
	free(args);
	return bad;
}

/* The options the module takes from line m (NULL: none); they point into m. */
static int module_opts(const struct module_line *m, struct duress_opts *o)
{
	int bad;

	duress_opts_default(o);
	if (!m)
		return 0;
	bad = parse_module_args(o, m->argc, m->argv);
	return bad < 0 ? 0 : bad; /* no memory: as before, the defaults and no complaint */
}

/* "FILE:LINE (module)", escaped. */

static const char *entry_name(const struct duress_pam_entry *e, char *buf, size_t len)
{
	char at[DURESS_ESCAPED_SIZE(PATH_MAX)], mod[DURESS_ESCAPED_SIZE(256)];
	const char *slash = e->module ? strrchr(e->module, '/') : NULL;

	duress_escape(e->file, at, sizeof(at));
	if (e->broken)
		snprintf(buf, len, "%s:%u (a line PAM fails: %s)", at, e->line, e->broken);
	else
		snprintf(buf, len, "%s:%u (%s)", at, e->line,
			 duress_escape(slash ? slash + 1 : e->module, mod, sizeof(mod)));
	return buf;
}

static const char *culprit_words(enum duress_culprit how)
{
	switch (how) {
	case DURESS_CULPRIT_ENDS:
		return "ends the stack before it";
	case DURESS_CULPRIT_JUMPS:
		return "jumps over it";
	case DURESS_CULPRIT_FAILS:
		return "fails the stack, and nothing after it can undo that";
	case DURESS_CULPRIT_BAD_JUMP:
		return "jumps past the end of its stack";
	case DURESS_CULPRIT_NO_GRANT:
		return "grants nothing (a jump is no success)";
	default:
		return "";
	}
}

/* The files the auth lines come from, each once, in stack order. */
static void print_auth_files(const struct duress_pam_stack *s)
{
	const struct duress_pam_entry **auth =
		calloc(s->n ? s->n : 1, sizeof(const struct duress_pam_entry *));
	size_t n = auth ? duress_pam_auth(s, auth, s->n) : 0;

	for (size_t i = 0; i < n; i++) {
		char name[DURESS_ESCAPED_SIZE(PATH_MAX)];
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = auth[j]->file == auth[i]->file;
		if (!seen)
			printf(" %s", duress_escape(auth[i]->file, name, sizeof(name)));
	}
	if (n == 0)
		fputs(" none", stdout);
	free(auth);
}

/* The fix for a culprit entry, after "; fix: ". */
static const char *culprit_fix(enum duress_culprit how)
{
	switch (how) {
	case DURESS_CULPRIT_ENDS:
		return "make that line default=ignore, or move it after pam_duress.so";
	case DURESS_CULPRIT_JUMPS:
		return "count that line's success= and default= jumps again";
	case DURESS_CULPRIT_FAILS:
		return "correct that line (a control PAM cannot read, such as success=end, "
		       "fails every result), or move it";
	case DURESS_CULPRIT_BAD_JUMP:
		return "make that line's jump land inside its stack";
	default:
		return "end the stack on auth required pam_permit.so";
	}
}

/* What puts the module into a stack, after "fix: ". */
static const char *enable_fix(bool debian_profile)
{
	return debian_profile ? "sudo pam-auth-update --enable duress (a server; duress-laptop for "
				"a laptop)" :
				"add a pam_duress.so auth line next to pam_unix.so "
				"(docs/configuration.md; Fedora: docs/install-fedora.md, Arch: "
				"docs/install-arch.md)";
}

/* Says why a placement fails, after "service S: "; false if it is fine. */
static bool placement_problem(const struct duress_pam_stack *s, const struct duress_pam_verdict *v,
			      bool debian_profile)
{
	char module[ENTRY_NAME_SIZE], culprit[ENTRY_NAME_SIZE];

	if (v->placement == DURESS_PLACED)
		return false;
	if (v->placement != DURESS_TOO_COMPLEX)
		fputs("ERROR: ", stdout);
	if (v->module)
		entry_name(v->module, module, sizeof(module));
	if (v->culprit)
		entry_name(v->culprit, culprit, sizeof(culprit));
	switch (v->placement) {
	case DURESS_PLACED:
		break;
	case DURESS_NOT_IN_STACK:
		printf("no pam_duress.so auth line (auth lines from:");
		print_auth_files(s);
		printf("); fix: %s\n", enable_fix(debian_profile));
		break;
	case DURESS_NOT_AUTH:
		printf("pam_duress.so is only on a non-auth line, %s: "
		       "the module works only as auth; fix: make that line an auth line\n",
		       module);
		break;
	case DURESS_NEVER_REACHED:
		printf("%s is never reached when the real password fails: %s %s; fix: %s\n", module,
		       v->culprit ? culprit : "the stack", culprit_words(v->how),
		       culprit_fix(v->how));
		break;
	case DURESS_NEVER_SUCCEEDS:
		if (v->how == DURESS_CULPRIT_NO_GRANT)
			printf("%s is reached, but its success never ends in a login: "
			       "nothing after it grants one (a jump is no success); fix: %s\n",
			       module, culprit_fix(v->how));
		else
			printf("%s is reached, but its success never ends in a login: %s %s; "
			       "fix: %s\n",
			       module, v->culprit ? culprit : "the stack", culprit_words(v->how),
			       culprit_fix(v->how));
		break;
	case DURESS_TOO_COMPLEX:
		printf("cannot check: more than %u outcome combinations of modules this check does "
		       "not know\n",
		       DURESS_PAM_MAX_RUNS);
		break;
	}
	return true;
}

/*
 * What the module line's options do on this service, once the placement is
 * right.  services= leaving a service out is a choice (the README suggests
 * leaving sshd out), so it is an error only for a service named with
 * --service, whose user wants the module there.
 */
static bool report_placed(const char *service, bool named, const struct duress_pam_verdict *v,
			  const struct duress_opts *mo, bool before)
{
	char module[ENTRY_NAME_SIZE];
	/* Before pam_unix, every password goes through it, the real one too. */
	const char *reached = before ? "is reached before pam_unix: every password passes it" :
				       "is reached when the real password fails";

	if (!v->module)
		return false;
	entry_name(v->module, module, sizeof(module));
	if (!duress_service_allowed(mo, service)) {
		char name[DURESS_ESCAPED_SIZE(NAME_MAX)];

		duress_escape(service, name, sizeof(name));
		printf("%s: %s is reached, but its services= leaves %s out: the module ignores "
		       "every password here",
		       named ? "ERROR" : "OFF", module, name);
		if (named)
			printf("; fix: add %s to that line's services=", name);
		putchar('\n');
		return !named;
	}
	if (duress_service_is_elevation(mo, service) && !mo->allow_root)
		printf("OK: %s is reached; duress password refused here by design "
		       "(allow_root off): the actions run, the answer is a wrong password's\n",
		       module);
	else if (mo->deny)
		printf("OK: %s is reached; deny: a duress password runs the actions and is refused "
		       "(silent alarm)\n",
		       module);
	else
		printf("OK: %s %s, and a duress password logs in\n", module, reached);
	return true;
}

/* Whose auth lines a service runs, when they are not its own. */
static const char *service_note(const struct duress_pam_stack *s)
{
	const struct duress_pam_entry *first = NULL;

	if (!s->service_file)
		return " (no file of its own: other's stack)";
	if (duress_pam_auth(s, &first, 1) == 1 && first->other)
		return " (no auth lines of its own: other's)";
	return "";
}

/* Notes a module line placed after pam_unix, each once: a tell on a laptop. */
static void keep_after(struct stack_report *rep, const struct duress_pam_entry *module)
{
	char name[ENTRY_NAME_SIZE];

	entry_name(module, name, sizeof(name));
	for (size_t i = 0; i < rep->n_after; i++)
		if (strcmp(rep->after[i], name) == 0)
			return;
	if (rep->n_after < MAX_MODULE_LINES)
		memcpy(rep->after[rep->n_after++], name, sizeof(name));
}

/*
 * Whether a boot-only setup leaves the module out of this stack, which is
 * otherwise right: check_stack() says so once for every service.
 */
static bool left_out_by_choice(const struct stack_report *rep, const struct duress_pam_stack *s,
			       const struct duress_pam_verdict *v,
			       const struct duress_pam_real *real)
{
	return rep->boot_only && v->placement == DURESS_NOT_IN_STACK && real->logs_in &&
	       !duress_pam_wrong_password_logs_in(s);
}

/* Why a service's stack could not be read (shown: its name, escaped). */
static void report_unloadable(const char *shown, const struct duress_pam_stack *s)
{
	char why[DURESS_ESCAPED_SIZE(sizeof(s->error))];

	/* The reason quotes file names: data, escaped. */
	printf("service %s: %s: %s%s\n", shown, s->pam_fails ? "ERROR" : "cannot check",
	       duress_escape(s->error, why, sizeof(why)),
	       s->pam_fails ? "; fix: correct that line now, from a root shell you kept open" : "");
}

/*
 * One service: one line (after its module line's option problems, said
 * once).  named: the user asked for it with --service.
 */
static void check_service(struct stack_report *rep, const char *service, bool named)
{
	struct duress_pam_stack s;
	struct duress_pam_verdict v;
	struct duress_pam_real real;
	const struct module_line *m = NULL;
	struct duress_opts mo;
	char shown[DURESS_ESCAPED_SIZE(NAME_MAX)];
	size_t before = rep->n_lines;

	duress_escape(service, shown, sizeof(shown));
	if (duress_pam_load(&s, rep->pam_dir, service) < 0) {
		report_unloadable(shown, &s);
		rep->bad++;
		duress_pam_free(&s);
		return;
	}
	duress_pam_judge(&s, &v);
	duress_pam_real_password(&s, &real);
	if (left_out_by_choice(rep, &s, &v, &real)) {
		duress_pam_free(&s);
		return;
	}
	if (v.module && v.module->type == DURESS_PAM_AUTH)
		m = keep_line(rep, v.module);
	if (m && rep->n_lines > before && report_options(m))
		rep->bad++;
	printf("service %s%s: ", shown, service_note(&s));
	if (duress_pam_wrong_password_logs_in(&s)) {
		/* Worse than any placement: say it first and alone. */
		puts("ERROR: a wrong password logs in: the stack lets any password through; fix: "
		     "count the success= and default= jumps again");
		rep->bad++;
	} else if (!real.logs_in) {
		/* As bad: nobody logs in, and the fix comes before any placement. */
		char culprit[ENTRY_NAME_SIZE];

		printf("ERROR: the real password cannot log in: %s %s; fix: %s\n",
		       real.culprit ? entry_name(real.culprit, culprit, sizeof(culprit)) :
				      "the stack",
		       culprit_words(real.how), culprit_fix(real.how));
		rep->bad++;
	} else if (placement_problem(&s, &v, rep->debian_profile)) {
		rep->bad++;
	} else if (module_opts(m, &mo) > 0 && v.module) {
		char module[ENTRY_NAME_SIZE];

		printf("ERROR: %s is reached, but an option it does not know or cannot read makes it "
		       "inert (the ERROR above names it): a duress password does not work here; "
		       "fix: the option named above\n",
		       entry_name(v.module, module, sizeof(module)));
		rep->bad++;
	} else {
		rep->bad += !report_placed(service, named, &v, &mo, real.reaches_module);
		if (!real.reaches_module && v.module)
			keep_after(rep, v.module);
	}
	duress_pam_free(&s);
}

/* Whether a stack of these services has a pam_duress.so line, of any type. */
static bool any_module_line(const char *pam_dir, char *const *services, int n)
{
	bool found = false;

	for (int i = 0; i < n && !found; i++) {
		struct duress_pam_stack s;
		struct duress_pam_verdict v;

		if (duress_pam_load(&s, pam_dir, services[i]) == 0) {
			duress_pam_judge(&s, &v);
			found = v.module != NULL;
		}
		duress_pam_free(&s);
	}
	return found;
}

/*
 * The boot directory the disk-unlock prompt's section is about (named, or
 * there: a prompt set up, or being set up), or NULL when there is none.
 */
static const char *boot_dir_of(const struct check_opts *o)
{
	const char *dir = o->boot_dir ? o->boot_dir : DURESS_BOOT_DIR;
	struct stat st;

	if (!*dir || (!o->boot_dir && lstat(dir, &st) < 0 && errno == ENOENT))
		return NULL;
	return dir;
}

/* Whether e is a line that runs pam_unix.so (by basename). */
static bool is_unix(const struct duress_pam_entry *e)
{
	const char *slash = e->module ? strrchr(e->module, '/') : NULL;

	return !e->broken && !e->substack && e->module &&
	       strcmp(slash ? slash + 1 : e->module, "pam_unix.so") == 0;
}

/*
 * The passwd service's password stack, where there is one: a pam_duress.so
 * line must come before pam_unix's, or a new real password can be a duress
 * password (docs/configuration.md, Changing a password).  What check cannot
 * tell is whether a real password already is one: that needs the password.
 * One WARN line, or nothing.
 */
static void check_password_stack(const struct stack_report *rep)
{
	struct duress_pam_stack s;
	bool guarded = false;

	if (duress_pam_load(&s, rep->pam_dir, "passwd") == 0 && s.service_file) {
		for (size_t i = 0; i < s.n; i++) {
			const struct duress_pam_entry *e = &s.entries[i];

			if (e->type != DURESS_PAM_PASSWORD || e->other)
				continue;
			if (duress_pam_is_duress(e))
				guarded = true;
			if (duress_pam_is_duress(e) || is_unix(e))
				break;
		}
		if (!guarded)
			printf("service passwd: WARN: no pam_duress.so password line before pam_unix: "
			       "passwd can set a duress password as the real one (then every login "
			       "before pam_unix runs the actions); fix: %s (docs/configuration.md, "
			       "Changing a password)\n",
			       rep->debian_profile ?
				       "sudo pam-auth-update --enable duress-password" :
				       "add 'password requisite pam_duress.so' before pam_unix");
	}
	duress_pam_free(&s);
}

/*
 * Each service's line; -1 when the PAM directory cannot be listed.  Without
 * --service, a boot-only setup (no service has the module, the boot
 * directory exists) is said in one line instead of an ERROR a service.
 */
static int check_stack(struct stack_report *rep, const struct check_opts *o)
{
	char *found[MAX_FOUND];
	const char *const *services = o->services;
	int n = (int)o->n_services;
	char dir[DURESS_ESCAPED_SIZE(PATH_MAX)];

	duress_escape(rep->pam_dir, dir, sizeof(dir));
	if (n == 0) {
		n = duress_pam_services(rep->pam_dir, found, MAX_FOUND);
		if (n < 0) {
			fprintf(stderr, "duress check: --pam-dir %s: %s\n", dir, strerror(-n));
			return -1;
		}
		services = (const char *const *)found;
		printf("PAM stack %s: checking the services whose auth includes common-auth:", dir);
		for (int i = 0; i < n; i++) {
			char name[DURESS_ESCAPED_SIZE(NAME_MAX)];

			printf(" %s", duress_escape(found[i], name, sizeof(name)));
		}
		puts(n ? "" : " none (name one with --service)");
		rep->bad += n == 0;
		rep->boot_only = n > 0 && boot_dir_of(o) &&
				 !any_module_line(rep->pam_dir, found, n);
	}
	if (rep->boot_only)
		printf("no service has a pam_duress.so line: a boot-only setup (the disk-unlock "
		       "prompt's section below); login-time duress passwords are off; to turn "
		       "them on: %s\n",
		       enable_fix(rep->debian_profile));
	for (int i = 0; i < n; i++)
		check_service(rep, services[i], o->n_services > 0);
	for (int i = 0; services == (const char *const *)found && i < n; i++)
		free(found[i]);
	for (size_t i = 0; rep->laptop && i < rep->n_after; i++)
		duress_tell_after_placement(rep->after[i], rep->debian_profile);
	if (rep->n_lines > 0)
		check_password_stack(rep);
	return 0;
}

/* The directories, as the module line m's options (NULL: the defaults) see them. */
static int check_dirs(const struct check_opts *o, const struct module_line *m, int *bad,
		      struct tally *tally)
{
	struct duress_opts mo;

	(void)module_opts(m, &mo);
	/* The command line wins over the module line. */
	if (o->user_dir)
		mo.user_dir = o->user_dir;
	if (o->global_dir)
		mo.global_dir = o->global_dir;
	if (o->state_dir)
		mo.state_dir = o->state_dir;
	if (check_user(o, &mo, bad, tally) < 0)
		return -1;
	if (*mo.global_dir)
		*bad += check_dir(mo.global_dir, DURESS_SCOPE_GLOBAL, NULL, NULL, &mo, NULL, tally,
				  NULL);
	return 0;
}

static int check_all_dirs(const struct check_opts *o, const struct stack_report *rep, int *bad,
			  struct tally *tally)
{
	if (rep->n_lines == 0) {
		/* Boot-only: its line said so already. */
		if (*rep->pam_dir && !rep->boot_only &&
		    !(o->user_dir && o->global_dir && !*o->user_dir && !*o->global_dir))
			puts("no pam_duress.so line found: "
			     "checking the module's default directories and caps");
		return check_dirs(o, NULL, bad, tally);
	}
	for (size_t i = 0; i < rep->n_lines; i++) {
		char at[DURESS_ESCAPED_SIZE(sizeof(rep->lines[i].at))];

		if (rep->n_lines > 1)
			printf("actions as %s sees them:\n",
			       duress_escape(rep->lines[i].at, at, sizeof(at)));
		if (check_dirs(o, &rep->lines[i], bad, tally) < 0)
			return -1;
	}
	return 0;
}

/*
 * Actions of the checked user left in the per-user directory of the other
 * placement (cli/leftover.h), when module lines name a per-user directory
 * and --user-dir does not: each counts as one not armed.
 */
static int check_left_behind(const struct check_opts *o, const struct stack_report *rep)
{
	const char *in_use[MAX_MODULE_LINES];
	struct duress_account *p = NULL;
	size_t n = 0;
	int found = 0;

	for (size_t i = 0; !o->user_dir && i < rep->n_lines && n < MAX_MODULE_LINES; i++) {
		struct duress_opts mo;

		(void)module_opts(&rep->lines[i], &mo);
		if (*mo.user_dir)
			in_use[n++] = mo.user_dir;
	}
	if (n > 0 &&
	    (o->user ? duress_getpw(o->user, 0, &p) : duress_getpw(NULL, getuid(), &p)) == 0 && p)
		found = duress_check_left_behind(&p->pw, in_use, n);
	free(p);
	return found;
}

/* Whether DIR/duress is pam-auth-update's profile of the Debian package. */
static bool has_profile(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	return snprintf(path, sizeof(path), "%s/duress", dir) < (int)sizeof(path) &&
	       stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * On a dracut machine without our module, the line report_crypttab() says
 * instead of its own: the fix is dracut's config, not a keyscript= that
 * systemd-cryptsetup ignores.
 */
static void report_no_dracut(const struct duress_dracut *d, bool boot_actions)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];

	duress_escape(d->dir, shown, sizeof(shown));
	if (!boot_actions) {
		printf("dracut %s: no config adds the pam-duress module\n", shown);
		return;
	}
	printf("dracut %s: WARN: no config adds the pam-duress module, so the disk-unlock prompt "
	       "never checks a boot passphrase; fix: add " DURESS_DRACUT_CONF_LINE " to "
	       "%s/" DURESS_DRACUT_CONF_FILE ", then sudo dracut -f\n",
	       shown, shown);
}

/*
 * With dracut, no crypttab line names our keyscript: the key slots of each
 * disk crypttab lists (Fedora lists the root's there) are reported.
 */
static void report_crypttab_slots(const char *path)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], prefix[sizeof(shown) + 16];
	ssize_t len;
	char *buf = duress_crypttab_read(AT_FDCWD, path, 0, &len), *rest = buf, *f[4];

	snprintf(prefix, sizeof(prefix), "crypttab %s", duress_escape(path, shown, sizeof(shown)));
	while (buf && duress_crypttab_next(&rest, f))
		if (f[0] && f[0][0] != '#' && f[1])
			(void)duress_keyslots_report(prefix, f[1], false);
	free(buf);
}

/*
 * A crypttab line (number no, fields f) that hands the disk-unlock prompt to
 * our keyscript: its OK line, its disk's key slots (and an ERROR when that
 * disk does not exist) when boot actions exist; its target name kept in
 * *disks.  Returns the ERRORs.
 */
static int report_keyscript_line(const char *shown, unsigned no, char *f[4], bool boot_actions,
				 struct duress_keyscript_disks *disks)
{
	char name[DURESS_ESCAPED_SIZE(DURESS_CRYPTTAB_NAME)],
		prefix[DURESS_ESCAPED_SIZE(PATH_MAX) + 16];

	printf("crypttab %s: OK: line %u (%s) uses the keyscript\n", shown, no,
	       duress_escape(f[0], name, sizeof(name)));
	if (disks->n < DURESS_KEYSCRIPT_DISKS)
		snprintf(disks->name[disks->n++], DURESS_CRYPTTAB_NAME, "%s", f[0]);
	if (!boot_actions || !f[1])
		return 0;
	snprintf(prefix, sizeof(prefix), "crypttab %s", shown);
	return duress_keyslots_report(prefix, f[1], true);
}

/*
 * Each crypttab line that hands the disk-unlock prompt to our keyscript
 * (report_keyscript_line()), or a WARN with the fix when boot actions
 * exist and no line does (on a dracut machine, report_no_dracut()'s).  A
 * WARN only: a machine may mean to have the boot actions ready before its
 * crypttab.  say_ok false: nothing but that WARN.  Fills *disks (without
 * one, the hook copies nothing into the initramfs); returns the ERRORs.
 */
static int report_crypttab(const char *path, const struct duress_dracut *d, bool boot_actions,
			   bool say_ok, struct duress_keyscript_disks *disks)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	const char *why = "no line uses the keyscript";
	ssize_t len;
	char *buf = duress_crypttab_read(AT_FDCWD, path, 0, &len), *rest = buf, *f[4];
	unsigned no = 0;
	int problems = 0;

	duress_escape(path, shown, sizeof(shown));
	if (len == -ENOENT)
		why = "no such file";
	else if (len < 0)
		why = len == -EFBIG ? "cannot check: over 64 KiB" : "cannot check: unreadable";
	while (rest && duress_crypttab_next(&rest, f) && (say_ok || disks->n == 0)) {
		no++;
		if (!f[0] || f[0][0] == '#' || !f[3] || !duress_crypttab_uses_keyscript(f[3]))
			continue;
		if (say_ok)
			problems += report_keyscript_line(shown, no, f, boot_actions, disks);
		else
			disks->n++;
	}
	free(buf);
	if (disks->n > 0)
		return problems;
	if (d->builder)
		report_no_dracut(d, boot_actions);
	else if (!boot_actions)
		printf("crypttab %s: %s\n", shown, why);
	else
		printf("crypttab %s: WARN: %s, so the disk-unlock prompt never checks a boot "
		       "passphrase; fix: add keyscript=" DURESS_KEYSCRIPT_PATH
		       " to the options (4th "
		       "field) of the disk's line, then sudo update-initramfs -u\n",
		       shown, why);
	return 0;
}

/*
 * What hands the disk-unlock prompt to us: with the dracut integration on,
 * its config line (OK, said when say_ok), else the crypttab lines, whose
 * disks go into *disks.  Returns the ERRORs; *handed says whether anything
 * hands the prompt to us.
 */
static int report_unlock_hook(const struct duress_dracut *d, const char *crypttab,
			      bool boot_actions, bool say_ok, struct duress_keyscript_disks *disks,
			      bool *handed)
{
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	int problems;

	*disks = (struct duress_keyscript_disks){ 0 };
	if (!d->on) {
		problems = report_crypttab(crypttab ? crypttab : CRYPTTAB_DEFAULT, d, boot_actions,
					   say_ok, disks);
		*handed = disks->n > 0;
		return problems;
	}
	*handed = true;
	if (!say_ok)
		return 0;
	printf("dracut %s: OK: line %u adds the pam-duress module\n",
	       duress_escape(d->file, shown, sizeof(shown)), d->line);
	if (boot_actions)
		report_crypttab_slots(crypttab ? crypttab : CRYPTTAB_DEFAULT);
	return 0;
}

/*
 * The disk-unlock prompt (docs/boot.md): the boot directory's actions, as
 * the global one's with their kinds, its one salt and cost, the crypttab
 * lines (or dracut's config) and, when there is one, the initramfs.  Only
 * when the directory exists or is named.  Adds the actions not armed to
 * *bad; returns the other problems (ERRORs).
 */
static int check_boot(const struct check_opts *o, int *bad, struct tally *tally)
{
	const char *dir = boot_dir_of(o);
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)];
	struct duress_keyscript_disks disks;
	struct boot_seen seen = { 0 };
	struct duress_dracut d;
	struct duress_opts mo;
	int problems = 0;
	bool handed;

	if (!dir)
		return 0;
	duress_escape(dir, shown, sizeof(shown));
	duress_dracut_find(o->dracut_conf, &d);
	printf("disk-unlock prompt: the boot actions in %s\n", shown);
	/* As the global directory, with the module's default caps. */
	duress_opts_default(&mo);
	*bad += check_dir(dir, DURESS_SCOPE_GLOBAL, NULL, NULL, &mo, NULL, tally, &seen);
	if (seen.n_params > 1) {
		printf("%s: ERROR: %zu different salts or costs, and the prompt derives one key per "
		       "try: the actions of only one of them can match; fix: sign every action "
		       "again with the same --memlimit and --opslimit, or with neither (duress "
		       "sign then shares one salt), then %s\n",
		       shown, seen.n_params, duress_dracut_rebuild(&d));
		problems++;
	}
	problems += report_unlock_hook(&d, o->crypttab, seen.n_actions > 0, true, &disks, &handed);
	/* Without the line the hook copies nothing: the WARN above says what to do. */
	if (handed && seen.loaded)
		problems += duress_initramfs_report(dir, o->initramfs, &d, &disks);
	return problems;
}

/* The line after the actions' lines. */
static void print_summary(int bad, const struct tally *tally)
{
	if (bad)
		puts("not every action is armed");
	else if (tally->unseen && tally->actions > tally->unseen)
		puts("every action you can read is armed (run duress check as root to see the others)");
	else if (tally->unseen)
		puts("no action you can read (run duress check as root to see the others)");
	else
		puts(tally->actions ? "every action is armed" : "no actions found");
}

int duress_cmd_check(int argc, char **argv)
{
	struct check_opts o = { .pam_dir = PAM_DIR_DEFAULT, .pam_configs = PAM_CONFIGS_DEFAULT };
	struct stack_report rep = { 0 };
	struct tally tally = { 0 };
	int status = 0, bad = 0, boot = 0;
	int first = parse_check(&o, argc, argv, &status);

	if (first < 0)
		return status;
	if (first != argc) {
		fputs("duress check: takes no operand; try 'duress check --help'\n", stderr);
		return 2;
	}
	if (o.global_dir && *o.global_dir && o.global_dir[0] != '/') {
		fputs("duress check: --global-dir must be an absolute path\n", stderr);
		return 2;
	}
	rep.pam_dir = o.pam_dir ? o.pam_dir : "";
	rep.debian_profile = has_profile(o.pam_configs);
	rep.laptop = duress_machine_is_laptop(o.machine);
	if (*rep.pam_dir && check_stack(&rep, &o) < 0)
		return 2;
	status = check_all_dirs(&o, &rep, &bad, &tally) < 0 ? 2 : 0;
	/* Boot-only: login-time actions would never run. */
	if (status == 0 && rep.boot_only && tally.actions > 0) {
		printf("ERROR: no service has a pam_duress.so line, so the actions above never run; "
		       "fix: %s\n",
		       enable_fix(rep.debian_profile));
		rep.bad++;
	}
	if (status == 0)
		bad += check_left_behind(&o, &rep);
	if (status == 0)
		boot = check_boot(&o, &bad, &tally);
	for (size_t i = 0; i < rep.n_lines; i++)
		module_line_free(&rep.lines[i]);
	if (status)
		return status;
	print_summary(bad, &tally);
	if (rep.bad)
		puts("the PAM stack needs fixing (see the service lines above)");
	if (boot)
		puts("the disk-unlock prompt needs fixing (see the ERROR lines above)");
	return bad || rep.bad || boot ? 1 : 0;
}

/* Every module line of the common-auth services, as check_stack() finds them. */
static void collect_lines(struct stack_report *rep)
{
	char *found[MAX_FOUND];
	int n = duress_pam_services(rep->pam_dir, found, MAX_FOUND);

	for (int i = 0; i < n; i++) {
		struct duress_pam_stack s;
		struct duress_pam_verdict v;

		if (duress_pam_load(&s, rep->pam_dir, found[i]) == 0) {
			duress_pam_judge(&s, &v);
			if (v.module && v.module->type == DURESS_PAM_AUTH)
				(void)keep_line(rep, v.module);
		}
		duress_pam_free(&s);
		free(found[i]);
	}
}

static bool same_dir(const struct stat *dir, const char *path)
{
	struct stat st;

	return *path && stat(path, &st) == 0 && st.st_dev == dir->st_dev &&
	       st.st_ino == dir->st_ino;
}

/* Whether dir is the user_dir= of uid's account under these options. */
static bool is_user_dir(const struct stat *dir, const struct duress_opts *mo, uid_t uid)
{
	struct duress_account *p = NULL;
	char path[PATH_MAX];
	bool is = false;

	if (*mo->user_dir && duress_getpw(NULL, uid, &p) == 0 && p &&
	    duress_expand_user_dir(mo->user_dir, p->pw.pw_name, p->pw.pw_dir, path, sizeof(path)) ==
		    0)
		is = same_dir(dir, path);
	free(p);
	return is;
}

static bool module_reads(const struct stat *dir, const struct module_line *m, uid_t owner)
{
	struct duress_opts mo;

	(void)module_opts(m, &mo);
	return same_dir(dir, mo.global_dir) || is_user_dir(dir, &mo, owner) ||
	       is_user_dir(dir, &mo, getuid());
}

/* The options of the first module line found (the one the warnings name), or the defaults. */
static const struct module_line *first_line_opts(const struct stack_report *rep,
						 struct duress_opts *mo)
{
	const struct module_line *first = rep->n_lines ? &rep->lines[0] : NULL;

	(void)module_opts(first, mo);
	return first;
}

void duress_warn_unread_dir(const char *path, int dir_fd, uid_t owner, const char *pam_dir)
{
	struct stack_report rep = { .pam_dir = pam_dir ? pam_dir : PAM_DIR_DEFAULT };
	char shown[DURESS_ESCAPED_SIZE(PATH_MAX)], src[DURESS_ESCAPED_SIZE(PATH_MAX + 16)];
	char udir[DURESS_ESCAPED_SIZE(PATH_MAX)], gdir[DURESS_ESCAPED_SIZE(PATH_MAX)];
	const struct module_line *first;
	struct duress_opts mo;
	struct stat dir;
	bool read = false;

	if (fstat(dir_fd, &dir) < 0)
		return;
	collect_lines(&rep);
	for (size_t i = 0; i < rep.n_lines && !read; i++)
		read = module_reads(&dir, &rep.lines[i], owner);
	if (rep.n_lines == 0)
		read = module_reads(&dir, NULL, owner);
	first = first_line_opts(&rep, &mo);
	if (!read)
		fprintf(stderr,
			"duress: %s: warning: not in a directory the module reads (user_dir=%s, "
			"global_dir=%s%s%s in %s)\n",
			duress_escape(path, shown, sizeof(shown)),
			duress_escape(mo.user_dir, udir, sizeof(udir)),
			duress_escape(mo.global_dir, gdir, sizeof(gdir)),
			first ? ", from " : ": the module's defaults, no pam_duress.so line",
			first ? duress_escape(first->at, src, sizeof(src)) : "", rep.pam_dir);
	for (size_t i = 0; i < rep.n_lines; i++)
		module_line_free(&rep.lines[i]);
}

struct duress_module_lines {
	struct stack_report rep;
};

struct duress_module_lines *duress_module_lines_read(const char *pam_dir, struct duress_opts *mo)
{
	struct duress_module_lines *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->rep.pam_dir = pam_dir ? pam_dir : PAM_DIR_DEFAULT;
	collect_lines(&l->rep);
	(void)first_line_opts(&l->rep, mo);
	return l;
}

void duress_module_lines_free(struct duress_module_lines *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->rep.n_lines; i++)
		module_line_free(&l->rep.lines[i]);
	free(l);
}

int duress_check_action(const struct duress_opts *mo, enum duress_scope scope, const char *dir,
			const char *name)
{
	struct duress_account *p = NULL;
	struct tally tally = { 0 };
	int bad;

	if (scope == DURESS_SCOPE_GLOBAL) {
		bad = check_dir(dir, scope, NULL, NULL, mo, name, &tally, NULL);
	} else if (duress_getpw(NULL, getuid(), &p) == 0 && p) {
		bad = check_user_dir(dir, &p->pw, mo, name, &tally);
	} else {
		fputs("duress: cannot look up your account\n", stderr);
		bad = 1;
	}
	free(p);
	return bad == 0 && tally.actions == 1 && tally.unseen == 0 ? 0 : 1;
}

int duress_check_boot_action(const char *dir, const char *name, const char *crypttab,
			     const struct duress_dracut *d)
{
	struct duress_keyscript_disks disks;
	struct boot_seen seen = { 0 };
	struct tally tally = { 0 };
	struct duress_opts mo;
	bool handed;
	int bad;

	/* As check_boot() judges it: the global directory's rules, the default caps. */
	duress_opts_default(&mo);
	bad = check_dir(dir, DURESS_SCOPE_GLOBAL, NULL, NULL, &mo, name, &tally, &seen);
	(void)report_unlock_hook(d, crypttab, true, false, &disks, &handed);
	return bad == 0 && tally.actions == 1 ? 0 : 1;
}

int duress_service_line_read(struct duress_service_line *l, const char *pam_dir,
			     const char *service)
{
	const struct duress_pam_entry *m;

	*l = (struct duress_service_line){ 0 };
	duress_opts_default(&l->opts);
	if (duress_pam_load(&l->stack, pam_dir ? pam_dir : PAM_DIR_DEFAULT, service) < 0)
		return -1;
	duress_pam_judge(&l->stack, &l->verdict);
	m = l->verdict.module;
	if (!m || m->type != DURESS_PAM_AUTH)
		return 0;
	l->module = m;
	l->inert = print_bad_options_of(m, "warning: ");
	return parse_module_args(&l->opts, m->argc, m->argv) < 0 ? -1 : 0;
}

void duress_service_line_free(struct duress_service_line *l)
{
	duress_pam_free(&l->stack);
	*l = (struct duress_service_line){ 0 };
}
