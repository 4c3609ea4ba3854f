/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Module options come from PAM configuration files: any argv must parse
 * without crashing, and every cap must stay within its bounds.
 */
#include <stdlib.h>
#include <string.h>

#include "core/opts.h"
#include "fuzz/fuzz.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct duress_log lg;
	struct duress_opts o;
	const char *argv[MAX_ARGS];
	char out[64];
	char *copy = malloc(size + 1);
	int argc = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	/* Arguments are NUL- or newline-separated. */
	for (char *p = copy, *end = copy + size; p <= end && argc < MAX_ARGS;) {
		size_t len = strcspn(p, "\n");

		p[len] = '\0';
		argv[argc++] = p;
		p += len + 1;
	}
	lg = duress_log_for(NULL, argc, argv);
	duress_opts_default(&o);
	if (duress_opts_parse(&o, argc, argv, &lg) < 0 ||
	    duress_opts_parse(&o, argc, argv, NULL) > argc)
		abort();
	if (o.caps.max_entries > 65536 || o.caps.max_ops > 64 || o.caps.max_params > 64 ||
	    o.caps.max_memory > (1ULL << 32) || o.wait_seconds > DURESS_MAX_WAIT)
		abort();
	(void)duress_service_allowed(&o, "sshd");
	if (o.user_dir && *o.user_dir &&
	    duress_expand_user_dir(o.user_dir, "user", "/home/user", out, sizeof(out)) == 0 &&
	    (out[0] != '/' || strlen(out) >= sizeof(out)))
		abort();
	free(copy);
	return 0;
}
