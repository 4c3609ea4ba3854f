/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one conversation of the PAM test programs. */
#include "conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_responses(struct pam_response *r, int n)
{
	for (int i = 0; i < n; i++)
		free(r[i].resp);
	free(r);
}

/* Appends msg and a newline to s->said, as much as fits. */
static void keep_message(struct conv_password *s, const char *msg)
{
	size_t used;

	if (!s->said || s->said_size == 0)
		return;
	used = strlen(s->said);
	snprintf(s->said + used, s->said_size - used, "%s\n", msg);
}

int conv_password(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	struct conv_password *s = data;
	struct pam_response *r;

	if (n <= 0 || n > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	r = calloc((size_t)n, sizeof(*r));
	if (!r)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style != PAM_PROMPT_ECHO_OFF &&
		    msg[i]->msg_style != PAM_PROMPT_ECHO_ON) {
			keep_message(s, msg[i]->msg);
			continue;
		}
		s->prompts++;
		r[i].resp = strdup(s->password);
		if (!r[i].resp) {
			free_responses(r, i);
			return PAM_BUF_ERR;
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}
