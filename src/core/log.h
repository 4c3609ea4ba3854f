/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include <security/pam_ext.h>

/*
 * Where messages go: pam_syslog (authpriv) when a PAM handle is set, stderr
 * for the CLI and the tests.  LOG_DEBUG is dropped unless `debug`; `quiet`
 * drops everything that goes to syslog.
 */
struct duress_log {
	pam_handle_t *pamh;
	bool debug;
	bool quiet;
	/*
	 * The word before each stderr line (NULL: "duress").  The disk-unlock
	 * helper's lines reach the console, which a coercer may watch: its own
	 * neutral name, not the project's.
	 */
	const char *tag;
};

/* The logger for a PAM handle (NULL: stderr), set by the module's debug and quiet arguments. */
struct duress_log duress_log_for(pam_handle_t *pamh, int argc, const char **argv);

void duress_log(const struct duress_log *lg, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define duress_debug(lg, ...) duress_log((lg), LOG_DEBUG, __VA_ARGS__)
