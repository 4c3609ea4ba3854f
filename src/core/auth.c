/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "auth.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account.h"
#include "actions.h"
#include "escape.h"
#include "kdf.h"
#include "once.h"
#include "policy.h"
#include "slots.h"

/* The scopes, in the order they are checked (and their chains run). */
enum { SCOPE_USER, SCOPE_GLOBAL, N_SCOPES };

/* One directory's part of an authentication. */
struct scope_run {
	bool enabled;     /* configured (the user's: costs its stand-in, see check_scopes) */
	const char *path; /* the directory: user_path, or global_dir= */
	char user_path[PATH_MAX];  /* user_dir= expanded */
	struct duress_identity as; /* whose rights open its files */
	struct duress_dir dir;     /* zeroed unless loaded */
	struct duress_target target;
	const char *not_checked; /* for a trace: why the directory was not checked */
	bool needs_root;         /* for a trace: because we are not root */
	int load;                /* for a trace: duress_dir_load()'s result */
};

/* Loads s->path; a directory not there or not trusted is no error.  0 or -errno. */
static int load_dir(struct scope_run *s, enum duress_scope scope, uid_t owner,
		    const struct duress_identity *as, const struct duress_opts *o,
		    const struct duress_log *lg)
{
	const struct duress_caps *caps = scope == DURESS_SCOPE_USER ? &o->user_caps : &o->caps;
	int r = duress_dir_load(&s->dir, s->path, scope, owner, caps, o->legacy_sha256, as);

	s->load = r;
	return duress_dir_load_judged(r, s->path, lg);
}

static bool user_dir_allowed(struct scope_run *s, const struct duress_opts *o,
			     const struct passwd *pw, const struct duress_log *lg)
{
	if (o->group && !duress_in_group(pw, o->group)) {
		duress_debug(lg, "%s is not in group %s: no per-user actions", pw->pw_name,
			     o->group);
		s->not_checked = "the user is not in the module line's group=";
		return false;
	}
	if (geteuid() != 0 && geteuid() != pw->pw_uid) {
		duress_debug(lg, "not root: cannot run actions as %s", pw->pw_name);
		s->not_checked = "only root or the user can run them";
		s->needs_root = true;
		return false;
	}
	return true;
}

static bool user_dir_enabled(const struct duress_opts *o)
{
	return o->user_dir && *o->user_dir;
}

static bool global_dir_enabled(const struct duress_opts *o)
{
	return o->global_dir && *o->global_dir && geteuid() == 0;
}

static int load_user(struct scope_run *s, const struct duress_opts *o, const struct passwd *pw,
		     const struct duress_log *lg)
{
	int r;

	s->enabled = user_dir_enabled(o);
	if (!s->enabled)
		s->not_checked = "user_dir= is empty: per-user actions are off";
	if (!s->enabled || !user_dir_allowed(s, o, pw, lg))
		return 0;
	r = duress_expand_user_dir(o->user_dir, pw->pw_name, pw->pw_dir, s->user_path,
				   sizeof(s->user_path));
	if (r < 0) {
		s->not_checked = "user_dir= cannot be expanded for this user";
		duress_log(lg, LOG_ERR, "user_dir=%s cannot be expanded for %s, ignoring",
			   o->user_dir, pw->pw_name);
		return 0;
	}
	s->path = s->user_path;
	/* The user's files are opened with the user's rights: root opens nothing a user named. */
	r = duress_identity_init(&s->as, pw, lg);
	return r < 0 ? r : load_dir(s, DURESS_SCOPE_USER, pw->pw_uid, &s->as, o, lg);
}

static int load_global(struct scope_run *s, const struct duress_opts *o,
		       const struct duress_log *lg)
{
	s->enabled = global_dir_enabled(o);
	if (!s->enabled) {
		s->not_checked = "global_dir= is empty: global actions are off";
		if (o->global_dir && *o->global_dir) {
			duress_debug(lg, "not root: global actions cannot run as root");
			s->path = o->global_dir;
			s->not_checked = "only root can run global actions";
			s->needs_root = true;
		}
		return 0;
	}
	s->path = o->global_dir;
	return load_dir(s, DURESS_SCOPE_GLOBAL, 0, NULL, o, lg);
}

/* Returns matches (>= 0) or -errno for internal errors. */
static int verify_dir(struct scope_run *s, const unsigned char (*keys)[DURESS_KEY_LEN],
		      const struct duress_request *req, const struct duress_log *lg)
{
	int r = 0;

	if (duress_dir_loaded(&s->dir)) {
		r = duress_dir_verify(&s->dir, keys, req->password, req->password_len);
		/* A trace (duress test) lists each action with its reason itself. */
		if (!req->trace)
			duress_dir_log_skips(&s->dir, lg);
	}
	s->dir.as = NULL; /* as ends here; the directory's files are all read by now */
	duress_identity_free(&s->as);
	return r;
}

/*
 * Takes a derivation slot when there is something to derive, derives, gives
 * the slot back.  0, -ETIMEDOUT (no slot came free), or -errno.  The lane is
 * the caller's: its real uid (a setuid su's is its user's) and PAM_RHOST.
 */
static int derive_keys(struct duress_kdf_scope *kdf, size_t n, const struct duress_opts *o,
		       const struct duress_request *req, const struct duress_log *lg)
{
	const struct duress_slot_caller who = { .ruid = getuid(), .rhost = req->items.rhost };
	struct duress_slot slot;
	int r;

	if (!duress_kdf_has_work(kdf, n))
		return 0;
	r = duress_slot_take(o, &who, &slot, lg);
	if (r == 0)
		r = duress_kdf_derive(kdf, n, req->password, req->password_len);
	duress_slot_release(&slot);
	return r;
}

/*
 * Derives the keys of the enabled scopes (kdf.c), then checks each
 * directory's actions.  The user's scope pays its stand-in derivation
 * whatever its directory holds: that hides which accounts have actions.
 * The global one derives only what its directory really needs: whether it
 * has armed actions is the same for every account.  matches[i] for
 * runs[i]; *derived: whether any key was derived.  0 or -errno.
 */
static int check_scopes(struct scope_run *const runs[N_SCOPES], const struct duress_opts *o,
			const struct duress_request *req, const struct duress_log *lg,
			int matches[N_SCOPES], bool *derived)
{
	struct duress_kdf_scope kdf[N_SCOPES];
	size_t of[N_SCOPES], n = 0;
	int r;

	for (size_t i = 0; i < N_SCOPES; i++) {
		matches[i] = 0;
		if (!runs[i]->enabled)
			continue;
		kdf[n] = (struct duress_kdf_scope){ .stand_in = i == SCOPE_USER };
		if (duress_dir_loaded(&runs[i]->dir)) {
			kdf[n].params = runs[i]->dir.params;
			kdf[n].n_params = runs[i]->dir.n_params;
		}
		of[n++] = i;
	}
	r = derive_keys(kdf, n, o, req, lg);
	*derived = r == 0 && duress_kdf_has_work(kdf, n);
	for (size_t k = 0; k < n && r == 0; k++) {
		matches[of[k]] = verify_dir(
			runs[of[k]], (const unsigned char(*)[DURESS_KEY_LEN])kdf[k].keys, req, lg);
		if (matches[of[k]] < 0)
			r = matches[of[k]];
	}
	duress_kdf_free(kdf, n);
	return r;
}

/* The scope's matched actions, in name order, as a chain; 0 or -ENOMEM.  Free *jobs. */
static int add_jobs(struct scope_run *s, struct duress_job **jobs, struct duress_chain *chain)
{
	size_t n = 0;

	*chain = (struct duress_chain){ .target = &s->target };
	*jobs = NULL;
	if (!duress_dir_loaded(&s->dir) || s->dir.n_actions == 0)
		return 0;
	*jobs = calloc(s->dir.n_actions, sizeof(**jobs));
	if (!*jobs)
		return -ENOMEM;
	for (size_t i = 0; i < s->dir.n_actions; i++) {
		struct duress_action *a = &s->dir.actions[i];

		if (a->matched && !a->spent)
			(*jobs)[n++] = (struct duress_job){ .memfd = a->memfd,
							    .elf = a->elf,
							    .name = a->name };
	}
	chain->jobs = *jobs;
	chain->n_jobs = n;
	return 0;
}

/*
 * Builds the targets and starts the runner with the matched actions, held
 * until duress_spawn_release(*held): per-user ones as the user and global
 * ones as root, in two chains that do not wait for each other.  With no
 * match it does the same, targets included, and hands the runner no chain:
 * the work, and what the login process starts and reaps, must not tell a
 * duress login from a wrong password.
 */
static int start_actions(struct scope_run *user, struct scope_run *global, const struct passwd *pw,
			 const struct duress_opts *o, const struct duress_request *req,
			 const struct duress_log *lg, struct duress_held *held)
{
	struct duress_account *root = NULL;
	struct duress_job *jobs[DURESS_CHAINS] = { 0 };
	struct duress_chain chains[DURESS_CHAINS], run[DURESS_CHAINS];
	const struct duress_trace *t = req->trace;
	const bool rehearse = t && t->rehearse;
	const struct duress_spawn_io io = { .output_fd = t ? t->output_fd : -1,
					    .report_fd = t ? t->report_fd : -1 };
	size_t n_run = 0;
	int r = add_jobs(user, &jobs[0], &chains[0]);

	if (r == 0)
		r = add_jobs(global, &jobs[1], &chains[1]);
	if (r == 0 && user->enabled)
		r = duress_target_init(&user->target, pw, &req->items, rehearse);
	if (r == 0 && global->enabled && (r = duress_getpw(NULL, 0, &root)) == 0)
		r = duress_target_init(&global->target, &root->pw, &req->items, rehearse);
	if (r < 0) {
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot prepare the actions' environment: %m");
		goto out;
	}
	for (size_t c = 0; c < DURESS_CHAINS; c++)
		if (chains[c].n_jobs > 0)
			run[n_run++] = chains[c];
	/* A wrong password's runner, with nothing to run, is not worth a line. */
	if (n_run > 0)
		duress_debug(lg, "starting %zu per-user and %zu global action(s)", chains[0].n_jobs,
			     chains[1].n_jobs);
	r = duress_spawn_hold(o->runner, run, n_run, o->wait_seconds, &io, lg, held);
out:
	free(root);
	free(jobs[0]);
	free(jobs[1]);
	return r;
}

static void scope_free(struct scope_run *s)
{
	duress_dir_free(&s->dir);
	duress_identity_free(&s->as);
	duress_target_free(&s->target);
}

static void log_check_error(int r, const struct duress_log *lg)
{
	errno = -r;
	if (errno == EACCES)
		duress_log(lg, LOG_ERR,
			   "cannot create an executable memfd "
			   "(is vm.memfd_noexec 2?): actions cannot run");
	else
		duress_log(lg, LOG_ERR, "internal error while checking actions: %m");
}

static struct duress_scope_report scope_report(const struct scope_run *s)
{
	return (struct duress_scope_report){
		.path = s->path,
		.not_checked = s->not_checked,
		.needs_root = s->needs_root,
		.load = s->load,
		.dir = duress_dir_loaded(&s->dir) ? &s->dir : NULL,
	};
}

/* Hands a trace what was found, before anything starts: `duress test` prints it. */
static void trace_checked(const struct duress_request *req, const struct scope_run *user,
			  const struct scope_run *global, enum duress_outcome out,
			  enum duress_deny deny)
{
	struct duress_trace_report rep;

	if (!req->trace || !req->trace->checked)
		return;
	rep = (struct duress_trace_report){ .user = scope_report(user),
					    .global = scope_report(global),
					    .outcome = out,
					    .deny = deny };
	req->trace->checked(&rep, req->trace->data);
}

/* A match, allowed or denied; or none.  Hands a trace what was found. */
static enum duress_outcome judge(const int m[N_SCOPES], const struct passwd *pw,
				 const struct duress_opts *o, const struct duress_request *req,
				 const struct scope_run *user, const struct scope_run *global,
				 const struct duress_log *lg)
{
	enum duress_deny deny = DURESS_DENY_NONE;
	enum duress_outcome out = DURESS_NO_MATCH;

	if (m[SCOPE_USER] + m[SCOPE_GLOBAL] > 0) {
		struct duress_match match = { .user = m[SCOPE_USER] > 0,
					      .global = m[SCOPE_GLOBAL] > 0 };

		deny = duress_login_denied(o, pw, req->items.service, match, lg);
		out = deny == DURESS_DENY_NONE ? DURESS_MATCH : DURESS_MATCH_DENIED;
	}
	trace_checked(req, user, global, out, deny);
	return out;
}

/* req->user's account into *p; 0, -ENOENT (no such account, not logged) or -errno. */
static int look_up(const struct duress_request *req, struct duress_account **p,
		   const struct duress_log *lg)
{
	int r = duress_getpw(req->user, 0, p);
	/* The name is whatever was typed at the prompt: a newline would forge a log line. */
	char shown[DURESS_ESCAPED_SIZE(64)];

	if (r == 0 && !*p)
		r = -EIO;
	if (r < 0 && r != -ENOENT) {
		errno = -r;
		duress_log(lg, LOG_ERR, "cannot look up user %s: %m",
			   duress_escape(req->user, shown, sizeof(shown)));
	}
	return r;
}

/* Loads the user's directory, then the global one; 0 or -errno. */
static int load_scopes(struct scope_run *const runs[N_SCOPES], const struct passwd *pw,
		       const struct duress_opts *o, const struct duress_log *lg)
{
	int r = load_user(runs[SCOPE_USER], o, pw, lg);

	return r == 0 ? load_global(runs[SCOPE_GLOBAL], o, lg) : r;
}

/*
 * Whether a loaded (or absent) directory may hold a signature its load did
 * not read: a login skips what it cannot read (fail closed: no match), but
 * for a password change a skipped signature could be the new password's.
 * Sure: no directory, one refused for its owner, mode or type, one over
 * max_entries, and signatures all read (an action's own faults do not
 * matter: its tag is computed from the signature alone).
 */
static bool scope_unsure(const struct scope_run *s)
{
	static const int judged[] = { 0, -ENOENT, -EPERM, -ENOTDIR, -EMEDIUMTYPE, -E2BIG };
	bool known = false;

	if (!s->enabled || !s->path)
		return false;
	for (size_t i = 0; i < sizeof(judged) / sizeof(judged[0]); i++)
		known |= s->load == judged[i];
	if (!known)
		return true;
	for (size_t i = 0; duress_dir_loaded(&s->dir) && i < s->dir.n_actions; i++)
		if (s->dir.actions[i].skip == DURESS_SKIP_UNREADABLE)
			return true;
	return false;
}

/*
 * Whether the password is that of a signature of the directory: a match,
 * or a tag that matched although the action was then found changed,
 * unreadable or untrusted (put right, it would match again).  A legacy
 * signature whose action could not be read is not known not to.
 */
static bool scope_taken(const struct scope_run *s, bool *unsure)
{
	bool taken = false;

	for (size_t i = 0; duress_dir_loaded(&s->dir) && i < s->dir.n_actions; i++) {
		const struct duress_action *a = &s->dir.actions[i];

		taken |= a->matched || a->tagged;
		*unsure |= a->legacy && a->skip == DURESS_SKIP_UNREADABLE;
	}
	return taken;
}

int duress_password_taken(const struct duress_opts *o, const struct duress_request *req,
			  const struct duress_log *lg)
{
	struct scope_run user = { 0 }, global = { 0 };
	struct scope_run *const runs[N_SCOPES] = { &user, &global };
	struct duress_account *p = NULL;
	int m[N_SCOPES] = { 0 }, r;
	bool derived = false, unsure = false, taken = false;

	r = look_up(req, &p, lg);
	if (r == 0)
		r = load_scopes(runs, &p->pw, o, lg);
	if (r == 0 && (scope_unsure(&user) || scope_unsure(&global)))
		r = -EIO;
	if (r == 0)
		r = check_scopes(runs, o, req, lg, m, &derived);
	if (r == 0) {
		taken = scope_taken(&user, &unsure);
		taken |= scope_taken(&global, &unsure);
		if (unsure && !taken)
			r = -EIO;
	}
	if (r < 0 && r != -ENOENT) {
		errno = -r;
		duress_log(lg, LOG_ERR,
			   "cannot check a new password against the duress actions: %m");
	}
	scope_free(&user);
	scope_free(&global);
	free(p);
	/* No such account here: nothing of its own to collide with. */
	if (r == -ENOENT)
		return 0;
	return r < 0 ? r : taken;
}

enum duress_outcome duress_authenticate(const struct duress_opts *o,
					const struct duress_request *req,
					const struct duress_log *lg)
{
	struct scope_run user = { 0 }, global = { 0 };
	struct scope_run *const runs[N_SCOPES] = { &user, &global };
	struct duress_dir *const dirs[N_SCOPES] = { &user.dir, &global.dir };
	const bool rehearse = req->trace && req->trace->rehearse;
	struct duress_held held = { .release = -1, .done = -1 };
	struct duress_account *p = NULL;
	enum duress_outcome out = DURESS_ERROR;
	int m[N_SCOPES] = { 0 }, r;
	bool derived = false;

	r = look_up(req, &p, lg);
	/* pam_unix answers at once for a name that is not an account: so do we. */
	if (r == -ENOENT)
		return DURESS_UNKNOWN_USER;
	if (r < 0)
		return DURESS_ERROR;
	/* Both directories are always checked: the work must not depend on a match. */
	r = load_scopes(runs, &p->pw, o, lg);
	if (r == 0)
		r = check_scopes(runs, o, req, lg, m, &derived);
	/* No slot came free: as for a wrong password, never a login. */
	if (r == -ETIMEDOUT) {
		out = DURESS_NO_MATCH;
		goto out;
	}
	if (r < 0) {
		log_check_error(r, lg);
		goto out;
	}
	/*
	 * A spent once action still answers as a match; it only does not run.
	 * Before judge(), which hands a trace what will run.
	 */
	duress_once_settle(dirs, N_SCOPES, o->state_dir, rehearse, lg);
	out = judge(m, &p->pw, o, req, &user, &global, lg);
	/*
	 * Every attempt that derived starts the runner here, with nothing to
	 * run if nothing matched: what the login process starts and reaps must
	 * not say which.  (A legacy_sha256 match may derive nothing.)  A
	 * runner that failed is an error for a match; for no match it changes
	 * nothing (logged).
	 */
	if ((derived || out != DURESS_NO_MATCH) &&
	    start_actions(&user, &global, &p->pw, o, req, lg, &held) < 0 &&
	    out != DURESS_NO_MATCH) {
		out = DURESS_ERROR;
		/* Nothing ran: a once action stays armed. */
		duress_once_unsettle(dirs, N_SCOPES, o->state_dir, rehearse);
	}
	/*
	 * Before pam_unix, a login this answers skips its hash: pay for it here,
	 * after the runner started, as pam_unix hashes after a wrong password's
	 * start; the actions wait for the release, not to compete with it for
	 * the CPU.
	 */
	if (out == DURESS_MATCH && req->unix_follows)
		duress_mirror_unix_hash(&p->pw, req->password);
	duress_spawn_release(&held);
out:
	scope_free(&user);
	scope_free(&global);
	free(p);
	return out;
}
