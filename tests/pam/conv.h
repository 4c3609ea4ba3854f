/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include <security/pam_appl.h>

/*
 * What conv_password() answers with, how many prompts it has answered, and
 * (when said is not NULL) the messages it was shown, one a line.
 */
struct conv_password {
	const char *password;
	int prompts;
	char *said;
	size_t said_size;
};

/*
 * A PAM conversation (appdata: a struct conv_password) that answers every
 * prompt, echoed or not, with the same password, keeps the error and info
 * messages in said (truncated to fit), and prints nothing.
 */
int conv_password(int n, const struct pam_message **msg, struct pam_response **resp, void *data);
