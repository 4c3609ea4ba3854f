/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * duress check [--user USER] [--global-dir DIR] [--user-dir TEMPLATE]:
 * one line per action, ARMED or the reason the module will skip it.
 * Returns the exit status: 0 only if every action is armed, 1 if not, 2 on
 * a usage error.
 */
int duress_cmd_check(int argc, char **argv);

#include <sys/types.h>

#include "core/opts.h"
#include "core/safe_open.h"
#include "cli/dracut.h"
#include "cli/pamstack.h"

/*
 * After `duress sign`: one warning line on stderr when dir_fd (the directory
 * path was signed in) is none the module reads: the global_dir= or the
 * user_dir= (expanded for owner and for the signing user) of the
 * pam_duress.so lines of pam_dir's common-auth services (NULL: /etc/pam.d),
 * or the module's defaults when no line is found; it says which.
 */
void duress_warn_unread_dir(const char *path, int dir_fd, uid_t owner, const char *pam_dir);

/*
 * The pam_duress.so lines of pam_dir's common-auth services (NULL:
 * /etc/pam.d), and in *mo the options of the first one found, the line
 * duress_warn_unread_dir() names (the module's defaults when there is none).
 * *mo points into the result: free it after the last use of *mo.  NULL when
 * out of memory.
 */
struct duress_module_lines;
struct duress_module_lines *duress_module_lines_read(const char *pam_dir, struct duress_opts *mo);
void duress_module_lines_free(struct duress_module_lines *l);

/*
 * duress check's line for the one action name in dir, judged with mo's
 * caps as the module would (a per-user dir as the caller's).  Returns 0
 * only if it is ARMED, else 1.
 */
int duress_check_action(const struct duress_opts *mo, enum duress_scope scope, const char *dir,
			const char *name);

/*
 * duress check's line for the one boot action name in dir (its kind said),
 * as the disk-unlock prompt section judges it, then, unless d's dracut
 * integration is on or a line of crypttab (NULL: /etc/crypttab) uses the
 * keyscript, check's WARN line with the fix (on a dracut machine, the
 * dracut config line to add).  Returns 0 only if it is ARMED, else 1.
 */
int duress_check_boot_action(const char *dir, const char *name, const char *crypttab,
			     const struct duress_dracut *d);

/*
 * For duress test: service's stack in pam_dir (NULL: /etc/pam.d), judged,
 * and its pam_duress.so auth line as the module reads it.  One warning line
 * on stdout per unknown or malformed option, as duress check says them:
 * any makes the line inert.  Returns 0, or -1 when the stack cannot be
 * read (stack.error says why) or out of memory.  Free it either way.
 */
struct duress_service_line {
	struct duress_pam_stack stack;
	struct duress_pam_verdict verdict;
	const struct duress_pam_entry *module; /* the auth line reached, or NULL: none */
	int inert;                             /* how many bad options it has */
	struct duress_opts opts; /* its options, pointing into stack; defaults without one */
};

int duress_service_line_read(struct duress_service_line *l, const char *pam_dir,
			     const char *service);
void duress_service_line_free(struct duress_service_line *l);
