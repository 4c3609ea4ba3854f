/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "opts.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "escape.h"

_Static_assert(DURESS_USER_MAX_MEMORY == crypto_pwhash_MEMLIMIT_INTERACTIVE &&
		       DURESS_USER_MAX_OPS == crypto_pwhash_OPSLIMIT_INTERACTIVE,
	       "per-user caps are libsodium's INTERACTIVE cost");

void duress_caps_default(struct duress_caps *caps)
{
	*caps = (struct duress_caps){
		.max_memory = DURESS_DEFAULT_MAX_MEMORY,
		.max_ops = DURESS_DEFAULT_MAX_OPS,
		.max_file_size = DURESS_DEFAULT_MAX_FILE_SIZE,
		.max_total = DURESS_DEFAULT_MAX_TOTAL,
		.max_entries = DURESS_DEFAULT_MAX_ENTRIES,
		.max_params = DURESS_DEFAULT_MAX_PARAMS,
	};
}

void duress_user_caps_default(struct duress_caps *caps)
{
	*caps = (struct duress_caps){
		.max_memory = DURESS_USER_MAX_MEMORY,
		.max_ops = DURESS_USER_MAX_OPS,
		.max_file_size = DURESS_USER_MAX_FILE_SIZE,
		.max_total = DURESS_USER_MAX_TOTAL,
		.max_entries = DURESS_USER_MAX_ENTRIES,
		.max_params = DURESS_USER_MAX_PARAMS,
	};
}

void duress_opts_default(struct duress_opts *o)
{
	*o = (struct duress_opts){
		.global_dir = DURESS_GLOBAL_DIR,
		.user_dir = DURESS_USER_DIR_DEFAULT,
		.elevation_services = DURESS_ELEVATION_DEFAULT,
		.runner = DURESS_RUNNER_PATH,
		.slot_dir = DURESS_SLOT_DIR,
		.state_dir = DURESS_STATE_DIR,
		.max_wait = DURESS_MAX_WAIT_DEFAULT,
	};
	duress_caps_default(&o->caps);
	duress_user_caps_default(&o->user_caps);
}

int duress_parse_size(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s) {
		const char *units = "KMG";
		const char *u = strchr(units, *s);

		if (!u || s[1] != '\0')
			return -EINVAL;
		shift = 10U * (unsigned)(u - units + 1);
		if (v > (max >> shift))
			return -ERANGE;
		v <<= shift;
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

struct size_option {
	const char *name;
	size_t offset;
	uint64_t min;
	uint64_t max;
};

#define CAP(field) offsetof(struct duress_caps, field)

static const struct size_option size_options[] = {
	{ "max_memory=", CAP(max_memory), 8192, 1ULL << 32 },
	{ "max_ops=", CAP(max_ops), 1, 64 },
	{ "max_size=", CAP(max_file_size), 1, 1ULL << 30 },
	{ "max_total=", CAP(max_total), 1, 1ULL << 32 },
	{ "max_entries=", CAP(max_entries), 1, 65536 },
	{ "max_params=", CAP(max_params), 1, 64 },
};

#define N_SIZE_OPTIONS (sizeof(size_options) / sizeof(size_options[0]))
#define USER_PREFIX "user_"

static uint64_t *cap_field(struct duress_caps *caps, const struct size_option *so)
{
	return (uint64_t *)((char *)caps + so->offset);
}

/* max_*= sets the global caps, user_max_*= the per-user ones: one table for both. */
static enum duress_opt_verdict parse_size_option(struct duress_opts *o, const char *arg)
{
	bool user = strncmp(arg, USER_PREFIX, strlen(USER_PREFIX)) == 0;
	const char *key = user ? arg + strlen(USER_PREFIX) : arg;

	for (size_t i = 0; i < N_SIZE_OPTIONS; i++) {
		const struct size_option *so = &size_options[i];
		size_t n = strlen(so->name);
		uint64_t v;

		if (strncmp(key, so->name, n) != 0)
			continue;
		if (duress_parse_size(key + n, so->max, &v) < 0 || v < so->min)
			return DURESS_OPT_BAD_VALUE;
		*cap_field(user ? &o->user_caps : &o->caps, so) = v;
		return DURESS_OPT_APPLIED;
	}
	return DURESS_OPT_UNKNOWN;
}

/*
 * An admin who lowers a global cap lowers it for users too: a per-user
 * directory, which anyone can make root pay for, never gets more.
 */
static void clamp_user_caps(struct duress_opts *o)
{
	for (size_t i = 0; i < N_SIZE_OPTIONS; i++) {
		uint64_t *user = cap_field(&o->user_caps, &size_options[i]);
		uint64_t global = *cap_field(&o->caps, &size_options[i]);

		if (*user > global)
			*user = global;
	}
}

static bool parse_flag(struct duress_opts *o, const char *arg)
{
	static const struct {
		const char *name;
		size_t offset;
	} flags[] = {
		{ "deny", offsetof(struct duress_opts, deny) },
		{ "allow_root", offsetof(struct duress_opts, allow_root) },
		{ "legacy_sha256", offsetof(struct duress_opts, legacy_sha256) },
	};

	/* The logger's own: duress_log_for() reads them, so they apply to every other. */
	if (strcmp(arg, "debug") == 0 || strcmp(arg, "quiet") == 0)
		return true;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strcmp(arg, flags[i].name) == 0) {
			*(bool *)((char *)o + flags[i].offset) = true;
			return true;
		}
	}
	return false;
}

static const char *value_of(const char *arg, const char *key)
{
	size_t n = strlen(key);

	return strncmp(arg, key, n) == 0 ? arg + n : NULL;
}

/* A plain decimal number within [min, max] (seconds, a count: no K, M or G). */
static enum duress_opt_verdict parse_count(const char *v, unsigned min, unsigned max, unsigned *ret)
{
	uint64_t n;

	if (duress_parse_size(v, max, &n) < 0 || strpbrk(v, "KMG") || n < min)
		return DURESS_OPT_BAD_VALUE;
	*ret = (unsigned)n;
	return DURESS_OPT_APPLIED;
}

static enum duress_opt_verdict parse_string(struct duress_opts *o, const char *arg)
{
	const char *v;

	if ((v = value_of(arg, "global_dir="))) {
		if (*v && *v != '/')
			return DURESS_OPT_BAD_VALUE;
		o->global_dir = v;
	} else if ((v = value_of(arg, "user_dir="))) {
		o->user_dir = v;
	} else if ((v = value_of(arg, "group="))) {
		o->group = *v ? v : NULL;
	} else if ((v = value_of(arg, "runner="))) {
		if (*v != '/')
			return DURESS_OPT_BAD_VALUE;
		o->runner = v;
	} else if ((v = value_of(arg, "services="))) {
		o->services = v;
	} else if ((v = value_of(arg, "elevation_services="))) {
		o->elevation_services = v;
	} else if ((v = value_of(arg, "global_group="))) {
		o->global_group = *v ? v : NULL;
	} else if ((v = value_of(arg, "slot_dir="))) {
		if (*v && *v != '/')
			return DURESS_OPT_BAD_VALUE;
		o->slot_dir = v;
	} else if ((v = value_of(arg, "state_dir="))) {
		if (*v != '/')
			return DURESS_OPT_BAD_VALUE;
		o->state_dir = v;
	} else if ((v = value_of(arg, "wait="))) {
		return parse_count(v, 0, DURESS_MAX_WAIT, &o->wait_seconds);
	} else if ((v = value_of(arg, "max_wait="))) {
		return parse_count(v, 0, DURESS_MAX_WAIT, &o->max_wait);
	} else if ((v = value_of(arg, "max_derivations="))) {
		return parse_count(v, 1, DURESS_MAX_DERIVATIONS, &o->max_derivations);
	} else {
		return DURESS_OPT_UNKNOWN;
	}
	return DURESS_OPT_APPLIED;
}

enum duress_opt_verdict duress_opts_apply(struct duress_opts *o, const char *arg)
{
	enum duress_opt_verdict v;

	if (parse_flag(o, arg))
		return DURESS_OPT_APPLIED;
	v = parse_string(o, arg);
	if (v == DURESS_OPT_UNKNOWN)
		v = parse_size_option(o, arg);
	return v;
}

/* Appends "unknown option "ARG"" (escaped, cut) to why; false when it is full. */
static bool describe_bad(char *why, size_t *used, enum duress_opt_verdict v, const char *arg)
{
	char shown[DURESS_OPT_SHOWN];
	int n;

	if (*used >= DURESS_INERT_WHY_MAX - DURESS_OPT_SHOWN - 64)
		return false;
	n = snprintf(why + *used, DURESS_INERT_WHY_MAX - *used, "%s%s \"%s\"", *used ? ", " : "",
		     v == DURESS_OPT_UNKNOWN ? "unknown option" : "bad value in option",
		     duress_escape(arg, shown, sizeof(shown)));
	if (n > 0)
		*used += (size_t)n;
	return true;
}

int duress_opts_parse(struct duress_opts *o, int argc, const char **argv,
		      const struct duress_log *lg)
{
	char why[DURESS_INERT_WHY_MAX] = "";
	size_t used = 0;
	int bad = 0, named = 0;

	for (int i = 0; i < argc; i++) {
		enum duress_opt_verdict v = duress_opts_apply(o, argv[i]);

		if (v == DURESS_OPT_APPLIED)
			continue;
		bad++;
		named += describe_bad(why, &used, v, argv[i]);
	}
	clamp_user_caps(o);
	if (bad && lg && named < bad)
		duress_log(lg, LOG_ERR,
			   "module line inert: %s, and %d more; fix it (duress check names it)",
			   why, bad - named);
	else if (bad && lg)
		duress_log(lg, LOG_ERR, "module line inert: %s; fix it (duress check names it)",
			   why);
	return bad;
}

/* Whether name is one of the comma-separated list's entries. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len == n && strncmp(list, name, n) == 0)
			return true;
		list += len;
		if (*list == ',')
			list++;
	}
	return false;
}

bool duress_service_allowed(const struct duress_opts *o, const char *service)
{
	if (!o->services)
		return true;
	return service && in_list(o->services, service);
}

bool duress_service_is_elevation(const struct duress_opts *o, const char *service)
{
	return service && in_list(o->elevation_services, service);
}

int duress_expand_user_dir(const char *tmpl, const char *user, const char *home, char *out,
			   size_t outlen)
{
	size_t used = 0;

	for (const char *p = tmpl; *p; p++) {
		const char *piece = p;
		size_t len = 1;

		if (*p == '%') {
			p++;
			if (*p == 'h')
				piece = home;
			else if (*p == 'u')
				piece = user;
			else if (*p == '%')
				piece = p;
			else
				return -EINVAL;
			/* A user name must not walk out of the directory. */
			if (piece == user && (strchr(user, '/') || strcmp(user, ".") == 0 ||
					      strcmp(user, "..") == 0))
				return -EINVAL;
			len = piece == p ? 1 : strlen(piece);
			/* An empty home or name would silently point somewhere else. */
			if (len == 0)
				return -EINVAL;
		}
		if (len >= outlen - used)
			return -ENAMETOOLONG;
		memcpy(out + used, piece, len);
		used += len;
	}
	out[used] = '\0';
	return out[0] == '/' ? 0 : -EINVAL;
}
