/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"

#ifndef DURESS_GLOBAL_DIR
#define DURESS_GLOBAL_DIR "/etc/duress.d"
#endif
#define DURESS_USER_DIR_DEFAULT "%h/.duress"
/* Services that authenticate a user to act as someone else (elevation_services=). */
#define DURESS_ELEVATION_DEFAULT "sudo,sudo-i,pkexec,polkit-1,doas,run0"

/* Everything a user-controlled file can make the module spend is capped here. */
struct duress_caps {
	uint64_t max_memory;    /* Argon2id memory per signature, bytes */
	uint64_t max_ops;       /* Argon2id passes per signature */
	uint64_t max_file_size; /* bytes per action */
	uint64_t max_total;     /* bytes of all actions of a directory together */
	uint64_t max_entries;   /* directory entries (actions, signatures, others) */
	uint64_t max_params;    /* distinct (salt, cost) sets per directory */
};

#define DURESS_DEFAULT_MAX_MEMORY (256ULL << 20)
#define DURESS_DEFAULT_MAX_OPS 4ULL
#define DURESS_DEFAULT_MAX_FILE_SIZE (16ULL << 20)
#define DURESS_DEFAULT_MAX_TOTAL (64ULL << 20)
#define DURESS_DEFAULT_MAX_ENTRIES 256ULL
#define DURESS_DEFAULT_MAX_PARAMS 4ULL

/*
 * A per-user directory is paid for by anyone who types a wrong password for
 * that account, as root inside sshd: at most libsodium's INTERACTIVE cost
 * (64 MiB, 2 passes; opts.c checks that they agree) and two cost sets.
 */
#define DURESS_USER_MAX_MEMORY (64ULL << 20)
#define DURESS_USER_MAX_OPS 2ULL
#define DURESS_USER_MAX_FILE_SIZE (16ULL << 20)
#define DURESS_USER_MAX_TOTAL (16ULL << 20)
#define DURESS_USER_MAX_ENTRIES 128ULL
#define DURESS_USER_MAX_PARAMS 2ULL

/* Longest wait= (and max_wait=) the module honours; a login must not hang for ever. */
#define DURESS_MAX_WAIT 600U

/* Where the derivation slots are (slots.h); slot_dir= empty: no cap. */
#ifndef DURESS_SLOT_DIR
#define DURESS_SLOT_DIR "/run/pam_duress"
#endif
/* Where the records of once actions that ran are (once.h); state_dir=. */
#ifndef DURESS_STATE_DIR
#define DURESS_STATE_DIR "/var/lib/pam_duress"
#endif
/* The most max_derivations= may say (and the default may come to). */
#define DURESS_MAX_DERIVATIONS 1024U
/* How long a login waits for a derivation slot by default, in seconds. */
#define DURESS_MAX_WAIT_DEFAULT 5U

/*
 * Module options.  String members point into the argv that PAM hands the
 * module, which outlives every call; nothing here is allocated.
 */
struct duress_opts {
	const char *global_dir;         /* "" disables global actions */
	const char *user_dir;           /* template with %h and %u; "" disables */
	const char *group;              /* NULL: every user may have per-user actions */
	const char *services;           /* comma-separated; NULL: every service */
	const char *elevation_services; /* comma-separated; "" none */
	const char *global_group; /* NULL: the global password logs in every ordinary account */
	const char *runner;       /* the runner program, an absolute path */
	const char *slot_dir;     /* the derivation slots; "" no cap */
	const char *state_dir;    /* the records of once actions that ran (once.h) */
	unsigned wait_seconds;
	unsigned max_derivations; /* 0: duress_slots_default() */
	unsigned max_wait;        /* seconds a login waits for a derivation slot */
	bool deny;
	bool allow_root;
	bool legacy_sha256;           /* debug and quiet are the logger's: duress_log_for() */
	struct duress_caps caps;      /* the global directory (max_*=) */
	struct duress_caps user_caps; /* per-user ones (user_max_*=), never above caps */
};

/* The global directory's default caps. */
void duress_caps_default(struct duress_caps *caps);
/* A per-user directory's default caps. */
void duress_user_caps_default(struct duress_caps *caps);
void duress_opts_default(struct duress_opts *o);

/*
 * Fills *o from module arguments.  Returns how many of them are unknown
 * (a misspelling: servces=) or malformed (wait=900): a line with any is
 * inert, the module ignores every password there rather than run without
 * what the admin meant.  Then, through lg (NULL: nothing, duress check
 * reports them itself), ONE line names each, escaped and cut, at most
 * DURESS_INERT_WHY_MAX bytes of them.  The other arguments still apply.
 */
int duress_opts_parse(struct duress_opts *o, int argc, const char **argv,
		      const struct duress_log *lg);

/* The longest list of bad arguments in that line, and the most shown of each. */
#define DURESS_INERT_WHY_MAX 1024
#define DURESS_OPT_SHOWN 128

/* What became of one module argument. */
enum duress_opt_verdict {
	DURESS_OPT_APPLIED,
	DURESS_OPT_UNKNOWN,   /* no such option (a misspelling: servces=) */
	DURESS_OPT_BAD_VALUE, /* a known option whose value is malformed or out of range */
};

/* Applies one argument as duress_opts_parse() does (without the user caps' clamp); logs nothing. */
enum duress_opt_verdict duress_opts_apply(struct duress_opts *o, const char *arg);

bool duress_service_allowed(const struct duress_opts *o, const char *service);
/* Whether service is in elevation_services= (sudo, pkexec...); NULL is not. */
bool duress_service_is_elevation(const struct duress_opts *o, const char *service);

/*
 * Expands %h (home) and %u (user) and %% in a user_dir template.
 * Returns 0, -ENAMETOOLONG, or -EINVAL (unknown escape, or a result that is
 * not an absolute path).
 */
int duress_expand_user_dir(const char *tmpl, const char *user, const char *home, char *out,
			   size_t outlen);

/* Parses a decimal size with an optional K, M or G suffix (powers of 1024). */
int duress_parse_size(const char *s, uint64_t max, uint64_t *ret);
