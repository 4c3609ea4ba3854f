/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One pam_authenticate() in a process of its own, so that the parent can
 * read what it cost (its peak memory, from wait4()) without the test
 * program's own history in the figure.
 *
 *   auth_child SERVICE USER PASSWORD     exit status: the PAM result
 */
#include <stddef.h>

#include <security/pam_appl.h>

#include "conv.h"

int main(int argc, char **argv)
{
	pam_handle_t *ph = NULL;
	struct conv_password s = { 0 };
	const struct pam_conv pc = { conv_password, &s };
	int r;

	if (argc != 4)
		return 127;
	s.password = argv[3];
	r = pam_start(argv[1], argv[2], &pc, &ph);
	if (r != PAM_SUCCESS)
		return r;
	r = pam_authenticate(ph, 0);
	pam_end(ph, r);
	return r;
}
