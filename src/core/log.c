/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

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
		fputs("duress: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
