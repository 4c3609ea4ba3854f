/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One pam_authenticate() in a process of its own, so that the parent can
 * read what it cost (its peak memory, from wait4()) without the test
 * program's own history in the figure.
 *
 *   auth_child SERVICE USER PASSWORD     exit status: the PAM result
 */
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));

	if (!r)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style != PAM_PROMPT_ECHO_OFF)
			continue;
		r[i].resp = strdup(data);
		if (!r[i].resp) {
			for (int j = 0; j < i; j++)
				free(r[j].resp);
			free(r);
			return PAM_BUF_ERR;
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

int main(int argc, char **argv)
{
	pam_handle_t *ph = NULL;
	struct pam_conv pc = { conv, NULL };
	int r;

	if (argc != 4)
		return 127;
	pc.appdata_ptr = argv[3];
	r = pam_start(argv[1], argv[2], &pc, &ph);
	if (r != PAM_SUCCESS)
		return r;
	r = pam_authenticate(ph, 0);
	pam_end(ph, r);
	return r;
}
