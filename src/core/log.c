/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct duress_log duress_log_for(pam_handle_t *pamh, int argc, const char **argv)
{
	struct duress_log lg = { .pamh = pamh };

	for (int i = 0; i < argc; i++) {
		lg.debug = lg.debug || strcmp(argv[i], "debug") == 0;
		lg.quiet = lg.quiet || strcmp(argv[i], "quiet") == 0;
	}
	return lg;
}

void duress_log(const struct duress_log *lg, int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio == LOG_DEBUG && !(lg && lg->debug))
		return;

	va_start(ap, fmt);
	if (lg && lg->pamh) {
		if (!lg->quiet)
			pam_vsyslog(lg->pamh, prio, fmt, ap);
	} else {
		/* glibc's vfprintf understands %m, like vsyslog does. */
		fputs(lg && lg->tag ? lg->tag : "duress", stderr);
		fputs(": ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
