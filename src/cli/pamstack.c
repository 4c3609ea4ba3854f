/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/pamstack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/actions.h"
#include "core/safe_open.h"

/* The tokens Linux-PAM's control field knows, in its order (prefixes match first). */
static const char *const return_names[_PAM_RETURN_VALUES + 1] = {
	[PAM_SUCCESS] = "success",
	[PAM_OPEN_ERR] = "open_err",
	[PAM_SYMBOL_ERR] = "symbol_err",
	[PAM_SERVICE_ERR] = "service_err",
	[PAM_SYSTEM_ERR] = "system_err",
	[PAM_BUF_ERR] = "buf_err",
	[PAM_PERM_DENIED] = "perm_denied",
	[PAM_AUTH_ERR] = "auth_err",
	[PAM_CRED_INSUFFICIENT] = "cred_insufficient",
	[PAM_AUTHINFO_UNAVAIL] = "authinfo_unavail",
	[PAM_USER_UNKNOWN] = "user_unknown",
	[PAM_MAXTRIES] = "maxtries",
	[PAM_NEW_AUTHTOK_REQD] = "new_authtok_reqd",
	[PAM_ACCT_EXPIRED] = "acct_expired",
	[PAM_SESSION_ERR] = "session_err",
	[PAM_CRED_UNAVAIL] = "cred_unavail",
	[PAM_CRED_EXPIRED] = "cred_expired",
	[PAM_CRED_ERR] = "cred_err",
	[PAM_NO_MODULE_DATA] = "no_module_data",
	[PAM_CONV_ERR] = "conv_err",
	[PAM_AUTHTOK_ERR] = "authtok_err",
	[PAM_AUTHTOK_RECOVERY_ERR] = "authtok_recover_err",
	[PAM_AUTHTOK_LOCK_BUSY] = "authtok_lock_busy",
	[PAM_AUTHTOK_DISABLE_AGING] = "authtok_disable_aging",
	[PAM_TRY_AGAIN] = "try_again",
	[PAM_IGNORE] = "ignore",
	[PAM_ABORT] = "abort",
	[PAM_AUTHTOK_EXPIRED] = "authtok_expired",
	[PAM_MODULE_UNKNOWN] = "module_unknown",
	[PAM_BAD_ITEM] = "bad_item",
	[PAM_CONV_AGAIN] = "conv_again",
	[PAM_INCOMPLETE] = "incomplete",
	[_PAM_RETURN_VALUES] = "default",
};

_Static_assert(_PAM_RETURN_VALUES == 32, "the return table above has every code");

/* Indexed by -action. */
static const char *const action_names[] = { "ignore", "ok", "done", "bad", "die", "reset" };

/* What PAM does on a broken include: the entry fails (PAM_PERM_DENIED). */
static const char WHY_UNOPENED[] = "its file cannot be opened";
static const char WHY_DEEP[] = "includes nested 16 deep (a loop?)";
static const char WHY_CONTINUED[] = "its file ends inside a continued line (a trailing backslash)";
static const char WHY_AT_INCLUDE[] = "an @include in its file fails";
static const char WHY_NO_FILE[] = "it names no file";

struct loader {
	struct duress_pam_stack *s;
	const char *dir;
	bool other;
	char why_at[160]; /* where the first failure PAM aborts on happened */
};

/* Our own refusals end the whole judgement: -2 after s->error is set. */
#define REFUSE(L, ...) (snprintf((L)->s->error, sizeof((L)->s->error), __VA_ARGS__), -2)

static void set_default(int *actions, int action)
{
	for (int i = 0; i < _PAM_RETURN_VALUES; i++)
		if (actions[i] == DURESS_ACT_UNDEF)
			actions[i] = action;
}

/* Splits off the next token as Linux-PAM does: blanks, or one "[...]" with "\]" kept. */
static char *next_token(char **next)
{
	char *from = *next, *end;

	if (!from)
		return NULL;
	from += strspn(from, " \n\t");
	if (*from == '[') {
		char *to = ++from;

		for (end = from; *end && *end != ']'; ++to, ++end) {
			if (end[0] == '\\' && end[1] == ']')
				++end;
			*to = *end;
		}
		if (to != end)
			*to = '\0';
	} else if (*from) {
		end = from + strcspn(from, " \n\t");
	} else {
		*next = NULL;
		return NULL;
	}
	if (*end)
		*end++ = '\0';
	*next = *end ? end : NULL;
	return from;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	return p;
}

/* One "value=action": the index of value (_PAM_RETURN_VALUES for default), or -1. */
static int control_value(const char **tok)
{
	for (int v = 0; v <= _PAM_RETURN_VALUES; v++) {
		size_t len = strlen(return_names[v]);

		if (strncmp(return_names[v], *tok, len) == 0) {
			*tok += len;
			return **tok ? v : -1;
		}
	}
	return -1;
}

/* An action name or a jump count; false on a syntax error. */
static bool control_action(const char **tok, int *act)
{
	long n = 0;

	for (size_t a = 0; a < sizeof(action_names) / sizeof(action_names[0]); a++) {
		size_t len = strlen(action_names[a]);

		if (strncmp(action_names[a], *tok, len) == 0) {
			*tok += len;
			*act = -(int)a;
			return true;
		}
	}
	if (**tok < '0' || **tok > '9')
		return false;
	for (; **tok >= '0' && **tok <= '9'; (*tok)++) {
		n = n * 10 + (**tok - '0');
		if (n > INT_MAX)
			return false;
	}
	*act = (int)n;
	/* A jump of 0 is refused: "ignore" says that. */
	return n > 0;
}

/* "[value=action ...]": a syntax error makes every value bad, as in Linux-PAM. */
static void parse_control(int *actions, const char *tok)
{
	for (;;) {
		int value, act;

		tok = skip_space(tok);
		if (!*tok)
			return;
		value = control_value(&tok);
		if (value < 0)
			break;
		tok = skip_space(tok);
		if (*tok++ != '=')
			break;
		tok = skip_space(tok);
		if (!control_action(&tok, &act))
			break;
		if (value == _PAM_RETURN_VALUES)
			set_default(actions, act);
		else
			actions[value] = act;
	}
	for (int i = 0; i < _PAM_RETURN_VALUES; i++)
		actions[i] = DURESS_ACT_BAD;
}

/* The four keywords; false for anything else. */
static bool keyword_control(int *actions, const char *tok)
{
	static const struct {
		const char *name;
		int success, ignore, others;
	} keywords[] = {
		{ "required", DURESS_ACT_OK, DURESS_ACT_IGNORE, DURESS_ACT_BAD },
		{ "requisite", DURESS_ACT_OK, DURESS_ACT_IGNORE, DURESS_ACT_DIE },
		{ "optional", DURESS_ACT_OK, DURESS_ACT_IGNORE, DURESS_ACT_IGNORE },
		{ "sufficient", DURESS_ACT_DONE, DURESS_ACT_IGNORE, DURESS_ACT_IGNORE },
	};

	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++) {
		if (strcasecmp(tok, keywords[k].name) != 0)
			continue;
		actions[PAM_SUCCESS] = actions[PAM_NEW_AUTHTOK_REQD] = keywords[k].success;
		if (keywords[k].success == DURESS_ACT_OK)
			actions[PAM_IGNORE] = keywords[k].ignore;
		set_default(actions, keywords[k].others);
		return true;
	}
	return false;
}

static int parse_type(const char *tok)
{
	static const char *const types[] = { "auth", "account", "session", "password" };

	for (int t = 0; t < 4; t++)
		if (strcasecmp(tok, types[t]) == 0)
			return t;
	return -1;
}

/* The name as read, kept once: entries point at it. */
static const char *intern(struct loader *L, const char *name)
{
	struct duress_pam_stack *s = L->s;
	char **files;

	for (size_t i = 0; i < s->n_files; i++)
		if (strcmp(s->files[i], name) == 0)
			return s->files[i];
	files = realloc(s->files, (s->n_files + 1) * sizeof(*files));
	if (!files)
		return NULL;
	s->files = files;
	files[s->n_files] = strdup(name);
	return files[s->n_files] ? files[s->n_files++] : NULL;
}

static struct duress_pam_entry *new_entry(struct loader *L)
{
	struct duress_pam_stack *s = L->s;

	if (s->n == DURESS_PAM_MAX_HANDLERS) {
		(void)REFUSE(L, "more than %u stack entries", DURESS_PAM_MAX_HANDLERS);
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		struct duress_pam_entry *e = realloc(s->entries, cap * sizeof(*e));

		if (!e) {
			(void)REFUSE(L, "out of memory");
			return NULL;
		}
		s->entries = e;
		s->cap = cap;
	}
	s->entries[s->n] = (struct duress_pam_entry){ .other = L->other };
	return &s->entries[s->n++];
}

/* The module's name and arguments, copied; -2 when out of memory. */
static int copy_words(struct loader *L, struct duress_pam_entry *e, const char *module, char *rest)
{
	char *args[DURESS_PAM_MAX_LINE / 2 + 1];
	char *tok;
	int n = 0;

	while ((tok = next_token(&rest)))
		args[n++] = tok;
	e->module = module ? strdup(module) : NULL;
	e->argv = n ? calloc((size_t)n, sizeof(*e->argv)) : NULL;
	if ((module && !e->module) || (n && !e->argv))
		return REFUSE(L, "out of memory");
	for (e->argc = 0; e->argc < n; e->argc++)
		if (!(e->argv[e->argc] = strdup(args[e->argc])))
			return REFUSE(L, "out of memory");
	return 0;
}

struct place {
	const char *name; /* interned */
	unsigned line;
	enum duress_pam_type want;
	unsigned depth, level;
	bool via;
};

static int load_file(struct loader *L, const char *name, const struct place *from,
		     const char **why);

/* include, substack and @include lines; 0, -1 (PAM aborts on this file: why) or -2. */
static int include_line(struct loader *L, const struct place *at, enum duress_pam_type type,
			bool substack, bool at_include, const int *actions, char *target,
			const char **why)
{
	struct place inner = *at;
	struct duress_pam_entry *e;
	int r;

	inner.want = type;
	inner.depth = at->depth + 1;
	inner.level = at->level + substack;
	if (substack) {
		if (!(e = new_entry(L)))
			return -2;
		*e = (struct duress_pam_entry){ .file = at->name,
						.line = at->line,
						.type = type,
						.substack = true,
						.level = at->level,
						.other = L->other,
						.via_common_auth = at->via };
		memcpy(e->actions, actions, sizeof(e->actions));
	}
	r = load_file(L, target, &inner, why);
	if (r == -2 || r == 0)
		return r;
	if (at_include) {
		if (!L->why_at[0])
			snprintf(L->why_at, sizeof(L->why_at), "%s:%u: @include %s: %s", at->name,
				 at->line, target ? target : "", *why);
		*why = WHY_AT_INCLUDE;
		return -1;
	}
	/* Not an abort after all: what went wrong inside is this entry's failure. */
	L->why_at[0] = '\0';
	/* A failed include becomes an entry that fails, bad for every value. */
	if (!(e = new_entry(L)))
		return -2;
	*e = (struct duress_pam_entry){ .file = at->name,
					.line = at->line,
					.type = type,
					.broken = *why,
					.level = at->level,
					.other = L->other,
					.via_common_auth = at->via };
	for (int i = 0; i < _PAM_RETURN_VALUES; i++)
		e->actions[i] = DURESS_ACT_BAD;
	*why = NULL;
	return 0;
}

/* The control field; returns 1 for include, 2 for substack, 0 otherwise. */
static int control_field(int *actions, const char *tok, const char **broken)
{
	for (int i = 0; i < _PAM_RETURN_VALUES; i++)
		actions[i] = DURESS_ACT_UNDEF;
	if (!tok) {
		set_default(actions, DURESS_ACT_BAD);
		if (!*broken)
			*broken = "no control field";
		return 0;
	}
	if (strcasecmp(tok, "include") == 0)
		return 1;
	if (strcasecmp(tok, "substack") == 0)
		return 2;
	if (!keyword_control(actions, tok)) {
		parse_control(actions, tok);
		set_default(actions, DURESS_ACT_BAD);
	}
	return 0;
}

/* One logical line, as _pam_parse_conf_file() takes it. */
static int parse_line(struct loader *L, const struct place *at, char *buf, const char **why)
{
	char *next = buf;
	char *tok = next_token(&next);
	const char *broken = NULL;
	int actions[_PAM_RETURN_VALUES] = { 0 };
	enum duress_pam_type fallback = at->want == DURESS_PAM_ANY ? DURESS_PAM_AUTH : at->want;
	struct duress_pam_entry *e;
	int type, ctl;

	if (tok && strcmp(tok, "@include") == 0)
		return include_line(L, at, at->want, false, true, actions, next_token(&next), why);
	if (tok && *tok == '-')
		tok++;
	type = tok ? parse_type(tok) : -1;
	if (type < 0) {
		/* Linux-PAM installs it as the most sensitive type, to fail. */
		broken = tok ? "unknown module type" : "no module type";
		type = (int)fallback;
	}
	if (at->want != DURESS_PAM_ANY && type != (int)at->want)
		return 0;
	ctl = control_field(actions, next_token(&next), &broken);
	tok = next_token(&next);
	if (ctl)
		return include_line(L, at, (enum duress_pam_type)type, ctl == 2, false, actions,
				    tok, why);
	if (!tok && !broken)
		broken = "no module named";
	if (!(e = new_entry(L)))
		return -2;
	*e = (struct duress_pam_entry){ .file = at->name,
					.line = at->line,
					.type = (enum duress_pam_type)type,
					.broken = broken,
					.level = at->level,
					.other = L->other,
					.via_common_auth = at->via };
	memcpy(e->actions, actions, sizeof(actions));
	return copy_words(L, e, tok, next);
}

/* A file's bytes, read through the project's one open helper; 0, -1 (missing) or -2. */
static int read_text(struct loader *L, const char *path, const char *name, char **text, size_t *len)
{
	struct duress_trust t = { .max_size = DURESS_PAM_MAX_FILE };
	struct duress_file f;
	char *real = realpath(path, NULL);
	ssize_t n;
	int r;

	/* Linux-PAM follows symlinks (authselect's system-auth is one): resolve, then open. */
	if (!real)
		return -1;
	r = duress_open_file(AT_FDCWD, real, DURESS_FILE_INPUT, &t, true, &f);
	free(real);
	if (r < 0)
		return REFUSE(L, "%s: cannot be opened: %s", name, strerror(-r));
	if (f.fd < 0) {
		if (f.error)
			return -1;
		return REFUSE(L, "%s: %s", name,
			      f.skip == DURESS_SKIP_TOO_LARGE ? "larger than 64 KiB" :
								"not a regular file");
	}
	*text = malloc(DURESS_PAM_MAX_FILE + 1);
	n = *text ? read(f.fd, *text, DURESS_PAM_MAX_FILE + 1) : -1;
	duress_file_close(&f);
	if (n < 0 || (size_t)n > DURESS_PAM_MAX_FILE) {
		free(*text);
		*text = NULL;
		return REFUSE(L, "%s: %s", name, n < 0 ? "cannot be read" : "larger than 64 KiB");
	}
	*len = (size_t)n;
	if (memchr(*text, '\0', *len)) {
		free(*text);
		*text = NULL;
		return REFUSE(L, "%s: contains a NUL byte", name);
	}
	return 0;
}

struct cursor {
	const char *p, *end;
	unsigned line;
};

/* A backslash before the line's end joins the next line: replaced by a blank. */
static bool continued(char *start, char **end)
{
	char *p = *end;

	while (p > start && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n'))
		p--;
	if (p == start || p[-1] != '\\')
		return false;
	p[-1] = ' ';
	*p = '\0';
	*end = p;
	return true;
}

/* Appends a piece of a logical line; -2 past the line cap. */
static int append(struct loader *L, const struct place *at, char *buf, size_t *len,
		  const char *piece)
{
	size_t n = strlen(piece);

	if (*len + n > DURESS_PAM_MAX_LINE)
		return REFUSE(L, "%s:%u: line longer than %u bytes", at->name, at->line,
			      DURESS_PAM_MAX_LINE);
	memcpy(buf + *len, piece, n + 1);
	*len += n;
	return 0;
}

/*
 * The next logical line as _pam_line_assemble() builds it: comments cut at
 * '#', leading blanks dropped, a backslash continuation joined.  Returns 1,
 * 0 at the end, -1 when the file ends inside a continuation, -2.
 */
static int next_line(struct loader *L, struct cursor *c, struct place *at, char *buf)
{
	char chunk[DURESS_PAM_MAX_LINE + 2];
	size_t len = 0;
	bool pending = false;

	buf[0] = '\0';
	for (;;) {
		const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
		size_t n = nl ? (size_t)(nl - c->p) + 1 : (size_t)(c->end - c->p);
		char *start = chunk, *end;
		bool eol;

		if (n == 0)
			return pending ? -1 : 0;
		c->line++;
		/* The cap counts what is on the line, not its newline. */
		if (n > DURESS_PAM_MAX_LINE + 1 || ++L->s->lines_read > DURESS_PAM_MAX_LINES)
			return n > DURESS_PAM_MAX_LINE + 1 ?
				       REFUSE(L, "%s:%u: line longer than %u bytes", at->name,
					      c->line, DURESS_PAM_MAX_LINE) :
				       REFUSE(L, "more than %u lines read", DURESS_PAM_MAX_LINES);
		memcpy(chunk, c->p, n);
		chunk[n] = '\0';
		c->p += n;
		end = chunk + n;
		eol = !continued(start, &end) || strchr(start, '#');
		start += strspn(start, " \t");
		start[strcspn(start, "#")] = '\0';
		if (len == 0)
			at->line = c->line;
		if ((len > 0 || (*start && *start != '\n')) && append(L, at, buf, &len, start) < 0)
			return -2;
		if (eol && len > 0)
			return 1;
		pending = !eol;
	}
}

static int parse_text(struct loader *L, struct place *at, const char *text, size_t len,
		      const char **why)
{
	struct cursor c = { .p = text, .end = text + len };
	char buf[DURESS_PAM_MAX_LINE + 1];
	int r;

	while ((r = next_line(L, &c, at, buf)) > 0) {
		r = parse_line(L, at, buf, why);
		if (r < 0)
			break;
	}
	if (r == -1 && !*why)
		*why = WHY_CONTINUED;
	if (r == -1 && !L->why_at[0])
		snprintf(L->why_at, sizeof(L->why_at), "%s:%u: %s", at->name, at->line, *why);
	return r;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Reads one file (a service or an include) at from's depth; 0, -1 with why, or -2. */
static int load_file(struct loader *L, const char *name, const struct place *from, const char **why)
{
	struct place at = *from;
	char path[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int r;

	*why = NULL;
	if (!name)
		*why = WHY_NO_FILE;
	else if (from->depth >= DURESS_PAM_MAX_DEPTH)
		*why = WHY_DEEP;
	if (*why)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", name[0] == '/' ? "" : L->dir,
			     name[0] == '/' ? "" : "/", name) >= sizeof(path))
		return REFUSE(L, "%s: path too long", name);
	if (!(at.name = intern(L, name)))
		return REFUSE(L, "out of memory");
	at.via = from->via || strcmp(base_name(name), "common-auth") == 0;
	r = read_text(L, path, name, &text, &len);
	if (r == -1)
		*why = WHY_UNOPENED;
	if (r == 0)
		r = parse_text(L, &at, text, len, why);
	free(text);
	return r;
}

/* The service file or "other": -1 when PAM fails on it, with the error set. */
static int load_top(struct loader *L, const char *name, bool *exists)
{
	struct place top = { .want = DURESS_PAM_ANY };
	const char *why = NULL;
	int r = load_file(L, name, &top, &why);

	*exists = !(r == -1 && why == WHY_UNOPENED);
	if (r != -1 || !*exists)
		return r == -1 ? 0 : r;
	L->s->pam_fails = true;
	snprintf(L->s->error, sizeof(L->s->error),
		 "Linux-PAM cannot load this stack, every login fails: %s",
		 L->why_at[0] ? L->why_at : why);
	return -1;
}

int duress_pam_load(struct duress_pam_stack *s, const char *dir, const char *service)
{
	struct loader L = { .s = s, .dir = dir };
	bool other_exists = false;

	*s = (struct duress_pam_stack){ 0 };
	if (load_top(&L, service, &s->service_file) < 0)
		return -1;
	L.other = true;
	if (strcmp(service, "other") != 0 && load_top(&L, "other", &other_exists) < 0)
		return -1;
	if (!s->service_file && !other_exists) {
		s->pam_fails = true;
		snprintf(s->error, sizeof(s->error), "neither %s/%s nor %s/other exists", dir,
			 service, dir);
		return -1;
	}
	return 0;
}

void duress_pam_free(struct duress_pam_stack *s)
{
	for (size_t i = 0; i < s->n; i++) {
		for (int a = 0; a < s->entries[i].argc; a++)
			free(s->entries[i].argv[a]);
		free(s->entries[i].argv);
		free(s->entries[i].module);
	}
	for (size_t i = 0; i < s->n_files; i++)
		free(s->files[i]);
	free(s->files);
	free(s->entries);
	*s = (struct duress_pam_stack){ 0 };
}

size_t duress_pam_auth(const struct duress_pam_stack *s, const struct duress_pam_entry **out,
		       size_t max)
{
	bool own = false;
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		own |= s->entries[i].type == DURESS_PAM_AUTH && !s->entries[i].other;
	for (size_t i = 0; i < s->n && n < max; i++)
		if (s->entries[i].type == DURESS_PAM_AUTH && s->entries[i].other != own)
			out[n++] = &s->entries[i];
	return n;
}

bool duress_pam_is_duress(const struct duress_pam_entry *e)
{
	return !e->broken && !e->substack && e->module &&
	       strcmp(base_name(e->module), "pam_duress.so") == 0;
}

/* ---- The abstract run of pam_authenticate() ---- */

enum { IMP_NEGATIVE = -1, IMP_UNDEF = 0, IMP_POSITIVE = 1 };

struct state {
	int impression, status;
	const struct duress_pam_entry *failed_by; /* who made the impression negative */
	enum duress_culprit failed_how;
};

struct run {
	struct state now;
	struct state saved[DURESS_PAM_MAX_DEPTH + 1]; /* at each substack's start */
	unsigned prev_level;
	const struct duress_pam_entry *reached;
	const struct duress_pam_entry *status_by; /* set a failure under a positive impression */
	const struct duress_pam_entry *skipper;   /* skipped the module before it was reached */
	enum duress_culprit skip_how;
};

struct judge {
	const struct duress_pam_entry **auth;
	size_t n;
	unsigned runs;
	enum { RUN_DURESS, RUN_WRONG, RUN_REAL } typed; /* which password the runs are for */
	bool done, placed_found, have_failed, have_unreached, wrong_logs_in;
	bool real_logs_in, real_reaches, has_unix;
	struct duress_pam_verdict placed, failed, unreached;
};

/*
 * What the entry can return when a duress password was typed; for a wrong
 * one, pam_duress ignores it and no unknown module grants it; for the real
 * one, pam_unix grants it and pam_duress ignores it.
 */
static size_t outcomes(const struct judge *J, const struct duress_pam_entry *e, int out[3])
{
	const char *m = e->module ? base_name(e->module) : "";

	if (e->broken)
		return out[0] = PAM_PERM_DENIED, 1;
	if (J->typed != RUN_DURESS && strcmp(m, "pam_duress.so") == 0)
		return out[0] = PAM_IGNORE, 1;
	if (J->typed == RUN_REAL && strcmp(m, "pam_unix.so") == 0)
		return out[0] = PAM_SUCCESS, 1;
	if (strcmp(m, "pam_duress.so") == 0 || strcmp(m, "pam_permit.so") == 0)
		return out[0] = PAM_SUCCESS, 1;
	if (strcmp(m, "pam_unix.so") == 0 || strcmp(m, "pam_deny.so") == 0)
		return out[0] = PAM_AUTH_ERR, 1;
	if (J->typed == RUN_WRONG) {
		out[0] = PAM_AUTH_ERR;
		out[1] = PAM_IGNORE;
		return 2;
	}
	out[0] = PAM_SUCCESS;
	out[1] = PAM_AUTH_ERR;
	/* PAM_IGNORE only matters where its action differs in effect from a failure's. */
	if (e->actions[PAM_IGNORE] == e->actions[PAM_AUTH_ERR] &&
	    e->actions[PAM_IGNORE] != DURESS_ACT_OK && e->actions[PAM_IGNORE] != DURESS_ACT_DONE)
		return 2;
	out[2] = PAM_IGNORE;
	return 3;
}

/* A jump or a decision passed over entries from..to: did it skip the module? */
static void note_skipped(const struct judge *J, struct run *r, size_t i, size_t to,
			 enum duress_culprit how)
{
	if (r->reached || r->skipper)
		return;
	for (size_t k = i + 1; k <= to; k++) {
		if (duress_pam_is_duress(J->auth[k])) {
			r->skipper = J->auth[i];
			r->skip_how = how;
			return;
		}
	}
}

/* done/die: the rest of this (sub)stack is skipped; returns the last entry skipped. */
static size_t decide(const struct judge *J, struct run *r, size_t i)
{
	unsigned level = J->auth[i]->level;
	size_t j = i;

	while (j + 1 < J->n && J->auth[j + 1]->level >= level)
		j++;
	note_skipped(J, r, i, j, DURESS_CULPRIT_ENDS);
	return j;
}

static void fail_with(struct run *r, const struct duress_pam_entry *e, int status,
		      enum duress_culprit how)
{
	if (r->now.impression != IMP_NEGATIVE) {
		r->now.failed_by = e;
		r->now.failed_how = how;
	}
	r->now.impression = IMP_NEGATIVE;
	r->now.status = status;
}

/* A jump over `action` entries, a substack counting as one; it cannot leave its substack. */
static size_t jump(const struct judge *J, struct run *r, size_t i, int action)
{
	unsigned level = J->auth[i]->level;
	size_t j = i;

	while (j + 1 < J->n && J->auth[j + 1]->level >= level && action > 0) {
		do
			j++;
		while (j + 1 < J->n && J->auth[j + 1]->level > level);
		action--;
	}
	note_skipped(J, r, i, j, DURESS_CULPRIT_JUMPS);
	if (action)
		fail_with(r, J->auth[i], PAM_PERM_DENIED, DURESS_CULPRIT_BAD_JUMP);
	return j;
}

/*
 * Entry i returned retval: the impression, as pam_dispatch.c keeps it.
 * Returns the last entry used.
 */
static size_t apply(const struct judge *J, struct run *r, size_t i, int retval)
{
	const struct duress_pam_entry *e = J->auth[i];
	int action = e->actions[retval];

	if (!r->reached && duress_pam_is_duress(e))
		r->reached = e;
	switch (action) {
	case DURESS_ACT_RESET:
		r->now = r->saved[e->level];
		return i;
	case DURESS_ACT_OK:
	case DURESS_ACT_DONE:
		if (r->now.impression == IMP_UNDEF ||
		    (r->now.impression == IMP_POSITIVE && r->now.status == PAM_SUCCESS)) {
			r->now.impression = IMP_POSITIVE;
			r->now.status = retval;
			if (retval != PAM_SUCCESS)
				r->status_by = e;
		}
		return action == DURESS_ACT_DONE && r->now.impression == IMP_POSITIVE ?
			       decide(J, r, i) :
			       i;
	case DURESS_ACT_BAD:
	case DURESS_ACT_DIE:
		if (r->now.impression != IMP_NEGATIVE)
			fail_with(r, e, retval == PAM_IGNORE ? PAM_PERM_DENIED : retval,
				  DURESS_CULPRIT_FAILS);
		return action == DURESS_ACT_DIE ? decide(J, r, i) : i;
	case DURESS_ACT_IGNORE:
		return i;
	default:
		return jump(J, r, i, action);
	}
}

/* Who made a run that ended without a login fail, into v. */
static void blame(const struct run *r, struct duress_pam_verdict *v)
{
	if (r->now.impression == IMP_NEGATIVE) {
		v->culprit = r->now.failed_by;
		v->how = r->now.failed_how;
	} else if (r->now.impression == IMP_POSITIVE) {
		v->culprit = r->status_by;
		v->how = DURESS_CULPRIT_FAILS;
	} else {
		v->how = DURESS_CULPRIT_NO_GRANT;
	}
}

static void finish(struct judge *J, const struct run *r)
{
	bool success = r->now.status == PAM_SUCCESS && r->now.impression == IMP_POSITIVE;

	if (++J->runs >= DURESS_PAM_MAX_RUNS)
		J->done = true;
	if (J->typed == RUN_WRONG) {
		J->wrong_logs_in |= success;
		J->done |= success;
		return;
	}
	if (J->typed == RUN_REAL) {
		J->real_logs_in |= success;
		J->real_reaches |= success && r->reached;
		J->done |= J->real_logs_in && J->real_reaches;
		if (!success && !J->have_failed) {
			J->have_failed = true;
			blame(r, &J->failed);
		}
		return;
	}
	if (r->reached && success) {
		J->placed = (struct duress_pam_verdict){ .placement = DURESS_PLACED,
							 .module = r->reached };
		J->done = true;
		J->placed_found = true;
	} else if (r->reached && !J->have_failed) {
		J->have_failed = true;
		J->failed = (struct duress_pam_verdict){ .placement = DURESS_NEVER_SUCCEEDS,
							 .module = r->reached };
		blame(r, &J->failed);
	} else if (!r->reached && !J->have_unreached) {
		J->have_unreached = true;
		J->unreached = (struct duress_pam_verdict){ .placement = DURESS_NEVER_REACHED,
							    .culprit = r->skipper,
							    .how = r->skip_how };
	}
}

/* Runs from entry i on, branching where an entry's result is not known. */
static void walk(struct judge *J, size_t i, struct run *r)
{
	for (; i < J->n && !J->done; i++) {
		const struct duress_pam_entry *e = J->auth[i];
		int out[3];
		size_t k;

		if (e->level > r->prev_level)
			r->saved[e->level] = r->now;
		r->prev_level = e->level;
		if (e->substack)
			continue;
		k = outcomes(J, e, out);
		if (k == 1) {
			i = apply(J, r, i, out[0]);
			continue;
		}
		for (size_t o = 0; o < k && !J->done; o++) {
			struct run branch = *r;

			walk(J, apply(J, &branch, i, out[o]) + 1, &branch);
		}
		return;
	}
	if (!J->done)
		finish(J, r);
}

static const struct duress_pam_entry *first_duress(const struct duress_pam_stack *s, bool auth)
{
	for (size_t i = 0; i < s->n; i++)
		if (duress_pam_is_duress(&s->entries[i]) &&
		    (s->entries[i].type == DURESS_PAM_AUTH) == auth)
			return &s->entries[i];
	return NULL;
}

void duress_pam_judge(const struct duress_pam_stack *s, struct duress_pam_verdict *v)
{
	struct judge J = { 0 };
	struct run r = { .now = { .status = PAM_PERM_DENIED } };
	const struct duress_pam_entry *module;
	size_t n_auth;

	*v = (struct duress_pam_verdict){ .placement = DURESS_NOT_IN_STACK };
	J.auth = calloc(s->n ? s->n : 1, sizeof(const struct duress_pam_entry *));
	if (!J.auth) {
		v->placement = DURESS_TOO_COMPLEX;
		return;
	}
	n_auth = duress_pam_auth(s, J.auth, s->n);
	for (size_t i = 0; i < n_auth && !v->module; i++)
		if (duress_pam_is_duress(J.auth[i]))
			v->module = J.auth[i];
	module = v->module;
	if (!module) {
		v->module = first_duress(s, false);
		v->placement = v->module ? DURESS_NOT_AUTH : DURESS_NOT_IN_STACK;
		free(J.auth);
		return;
	}
	J.n = n_auth;
	r.saved[0] = r.now;
	walk(&J, 0, &r);
	free(J.auth);
	if (J.placed_found)
		*v = J.placed;
	else if (J.runs >= DURESS_PAM_MAX_RUNS)
		*v = (struct duress_pam_verdict){ .placement = DURESS_TOO_COMPLEX,
						  .module = module };
	else if (J.have_failed)
		*v = J.failed;
	else
		*v = J.unreached, v->module = module;
}

/* ---- Which services use common-auth ---- */

static bool service_name(const char *name)
{
	/* duress_is_action_name() knows the editor and package leftovers. */
	return duress_is_action_name(name) && strncmp(name, "common-", 7) != 0 &&
	       !strchr(name, '.');
}

static bool uses_common_auth(const char *dir, const char *service)
{
	struct duress_pam_stack s;
	const struct duress_pam_entry **auth;
	bool uses = false;

	if (duress_pam_load(&s, dir, service) < 0) {
		/* A stack that does not load still counts if it read common-auth. */
		for (size_t i = 0; i < s.n_files; i++)
			uses |= strcmp(base_name(s.files[i]), "common-auth") == 0;
	} else if ((auth = calloc(s.n ? s.n : 1, sizeof(const struct duress_pam_entry *)))) {
		size_t n = duress_pam_auth(&s, auth, s.n);

		for (size_t i = 0; i < n; i++)
			uses |= auth[i]->via_common_auth && !auth[i]->other;
		free(auth);
	}
	duress_pam_free(&s);
	return uses;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int duress_pam_services(const char *dir, char **names, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	unsigned seen = 0;
	int r = 0;

	if (!d)
		return -errno;
	/* Each name costs a stack's reading: a bounded number of them. */
	while (n < max && seen++ < DURESS_PAM_MAX_ENTRIES && (de = readdir(d))) {
		if (!service_name(de->d_name) || !uses_common_auth(dir, de->d_name))
			continue;
		if (!(names[n] = strdup(de->d_name))) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (r < 0) {
		while (n)
			free(names[--n]);
		return r;
	}
	qsort(names, n, sizeof(*names), by_name);
	return (int)n;
}

/* Every run of the auth stack for one kind of password; false if out of memory. */
static bool run_for(const struct duress_pam_stack *s, struct judge *J)
{
	struct run r = { .now = { .status = PAM_PERM_DENIED } };

	J->auth = calloc(s->n ? s->n : 1, sizeof(const struct duress_pam_entry *));
	if (!J->auth)
		return false;
	J->n = duress_pam_auth(s, J->auth, s->n);
	for (size_t i = 0; i < J->n; i++)
		J->has_unix |= J->auth[i]->module && !J->auth[i]->broken &&
			       strcmp(base_name(J->auth[i]->module), "pam_unix.so") == 0;
	r.saved[0] = r.now;
	walk(J, 0, &r);
	free(J->auth);
	J->auth = NULL;
	return true;
}

bool duress_pam_wrong_password_logs_in(const struct duress_pam_stack *s)
{
	struct judge J = { .typed = RUN_WRONG };

	return run_for(s, &J) && J.wrong_logs_in;
}

void duress_pam_real_password(const struct duress_pam_stack *s, struct duress_pam_real *real)
{
	struct judge J = { .typed = RUN_REAL };
	bool judged = run_for(s, &J) && J.has_unix &&
		      (J.real_logs_in || J.runs < DURESS_PAM_MAX_RUNS);

	/*
	 * Out of memory, too many combinations, or no pam_unix.so (a stack
	 * that refuses everyone, such as other's pam_deny, may mean it): no
	 * verdict, no false alarm.
	 */
	*real = (struct duress_pam_real){ .logs_in = !judged || J.real_logs_in,
					  .reaches_module = J.real_reaches };
	if (!real->logs_in) {
		real->culprit = J.failed.culprit;
		real->how = J.failed.how;
	}
}
