/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The signature parser reads files that users control, inside a module
 * running as root: it must refuse garbage without crashing, and what it
 * accepts must format back to the same line.
 */
#include <stdlib.h>
#include <string.h>

#include "core/sig.h"
#include "fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct duress_sig sig, again;
	char line[DURESS_SIG_MAX + 1];
	int n;

	if (duress_sig_parse((const char *)data, size, &sig) < 0)
		return 0;
	n = duress_sig_format(&sig, line, sizeof(line));
	if (n < 0 || duress_sig_parse(line, (size_t)n, &again) < 0 ||
	    memcmp(&sig, &again, sizeof(sig)) != 0)
		abort();
	/* Canonical encoding: an accepted line is exactly the formatted one. */
	if (size > 0 && data[size - 1] == '\n')
		size--;
	if ((size_t)n != size + 1 || memcmp(line, data, size) != 0)
		abort();
	return 0;
}
