/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A reader of PAM service files that builds the stack the way Linux-PAM
 * does (pam_handlers.c: comments, backslash continuations, [value=action]
 * controls, -type lines, include, substack, and Debian's @include), and an
 * abstract run of the auth stack for the case "a duress password was typed"
 * (pam_dispatch.c's rules), for `duress check` and `duress sign`.
 */

#include <stdbool.h>
#include <stddef.h>

#include <security/_pam_types.h>

/* Bounds on what the files can make the reader do. */
#define DURESS_PAM_MAX_DEPTH 16 /* include/substack nesting: Linux-PAM's own limit */
#define DURESS_PAM_MAX_FILE ((size_t)64 * 1024) /* bytes of one file */
#define DURESS_PAM_MAX_LINE 4096U               /* bytes of one line, continuations joined */
#define DURESS_PAM_MAX_LINES 8192U    /* lines read for one service, every include counted */
#define DURESS_PAM_MAX_HANDLERS 1024U /* stack entries of one service, all types */
#define DURESS_PAM_MAX_ENTRIES 4096U  /* names looked at in the PAM directory */
#define DURESS_PAM_MAX_RUNS 65536U    /* outcome combinations of modules of unknown result */

enum duress_pam_type {
	DURESS_PAM_AUTH,
	DURESS_PAM_ACCOUNT,
	DURESS_PAM_SESSION,
	DURESS_PAM_PASSWORD,
	DURESS_PAM_ANY, /* a service file: every type */
};

/* Linux-PAM's actions; a positive value jumps over that many entries. */
enum {
	DURESS_ACT_IGNORE = 0,
	DURESS_ACT_OK = -1,
	DURESS_ACT_DONE = -2,
	DURESS_ACT_BAD = -3,
	DURESS_ACT_DIE = -4,
	DURESS_ACT_RESET = -5,
	DURESS_ACT_UNDEF = -6,
};

/* One entry of the stack, as Linux-PAM installs it. */
struct duress_pam_entry {
	const char *file; /* the name it was read under (service or include), owned by the stack */
	unsigned line;    /* where its line starts */
	enum duress_pam_type type;
	bool other;         /* from the "other" file */
	bool substack;      /* a substack's head: runs nothing itself */
	const char *broken; /* why PAM installed it to fail (PAM_PERM_DENIED), or NULL */
	unsigned level;     /* substack depth */
	int actions[_PAM_RETURN_VALUES];
	char *module; /* as written; NULL when the line names none */
	int argc;
	char **argv;
	bool via_common_auth; /* read from common-auth or a file it includes */
};

struct duress_pam_stack {
	struct duress_pam_entry *entries;
	size_t n, cap;
	char **files; /* names read, in order, each once */
	size_t n_files;
	unsigned lines_read;
	bool service_file; /* DIR/SERVICE exists (else PAM uses "other") */
	char error[320];   /* "" once loaded, else why the stack cannot be judged */
	bool pam_fails;    /* error is one on which Linux-PAM itself fails every login */
};

/*
 * Reads DIR/service and DIR/other as Linux-PAM does for service.  Returns 0,
 * or -1 with s->error set (a file our bounds refuse, or one Linux-PAM cannot
 * load either: then s->pam_fails).  Free with duress_pam_free() either way.
 */
int duress_pam_load(struct duress_pam_stack *s, const char *dir, const char *service);
void duress_pam_free(struct duress_pam_stack *s);

/* The entries PAM runs for pam_authenticate(): the service's auth lines, else other's. */
size_t duress_pam_auth(const struct duress_pam_stack *s, const struct duress_pam_entry **out,
		       size_t max);

/* Whether an entry runs pam_duress.so (by the module's basename; a full path counts). */
bool duress_pam_is_duress(const struct duress_pam_entry *e);

enum duress_placement {
	DURESS_PLACED,         /* reached when the real password fails; its success logs in */
	DURESS_NOT_IN_STACK,   /* no pam_duress.so line at all */
	DURESS_NOT_AUTH,       /* only on account, session or password lines */
	DURESS_NEVER_REACHED,  /* no run with the real password failing gets to it */
	DURESS_NEVER_SUCCEEDS, /* reached, but its success never ends in PAM_SUCCESS */
	DURESS_TOO_COMPLEX,    /* more than DURESS_PAM_MAX_RUNS combinations */
};

/* What the culprit entry does. */
enum duress_culprit {
	DURESS_CULPRIT_NONE,
	DURESS_CULPRIT_ENDS,     /* done/die (or requisite) ends the stack before the module */
	DURESS_CULPRIT_JUMPS,    /* a jump skips the module */
	DURESS_CULPRIT_FAILS,    /* it fails the stack, and nothing can undo that */
	DURESS_CULPRIT_BAD_JUMP, /* it jumps past the end of its stack (PAM: "bad jump") */
	/* nothing after the module grants the login: a jump is no success */
	DURESS_CULPRIT_NO_GRANT,
};

struct duress_pam_verdict {
	enum duress_placement placement;
	const struct duress_pam_entry *module;  /* the pam_duress.so entry reached (or the first) */
	const struct duress_pam_entry *culprit; /* the entry that keeps it from logging in */
	enum duress_culprit how;
};

/*
 * The abstract run, for every combination of outcomes that matters: pam_unix
 * and pam_deny fail (PAM_AUTH_ERR), pam_permit and pam_duress succeed, a
 * broken line fails (PAM_PERM_DENIED), and any other module may succeed,
 * fail or return PAM_IGNORE.  PLACED when some combination reaches the
 * module and ends in PAM_SUCCESS: an unknown module that can deny every
 * login (pam_nologin) is not the duress module's placement problem.
 */
void duress_pam_judge(const struct duress_pam_stack *s, struct duress_pam_verdict *v);

/*
 * The same run for a wrong password: pam_unix and pam_deny fail, pam_duress
 * ignores it, and other modules fail or ignore it (none grants it).  Whether
 * some combination still ends in PAM_SUCCESS: a stack that lets anyone in.
 */
bool duress_pam_wrong_password_logs_in(const struct duress_pam_stack *s);

/* The run for the real password, and what it meets. */
struct duress_pam_real {
	bool logs_in;        /* some combination ends in PAM_SUCCESS */
	bool reaches_module; /* one that does runs pam_duress.so first (the before placement) */
	const struct duress_pam_entry *culprit; /* when it never logs in: the entry that fails it */
	enum duress_culprit how;
};

/*
 * The same run for the real password: pam_unix grants it, pam_duress ignores
 * it, pam_deny fails and pam_permit grants it, other modules may do either
 * or ignore it.  A stack where no combination logs in locks everyone out.
 * With no pam_unix.so auth line, or past DURESS_PAM_MAX_RUNS combinations,
 * logs_in stays true (no verdict).
 */
void duress_pam_real_password(const struct duress_pam_stack *s, struct duress_pam_real *real);

/*
 * The services of dir whose auth stack includes common-auth (directly or
 * through include, substack or @include), sorted; hidden files, editor and
 * package leftovers and the common-* fragments themselves are not services.
 * Returns the number found (at most max, names malloc()ed), or -errno.
 */
int duress_pam_services(const char *dir, char **names, size_t max);
