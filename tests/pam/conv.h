/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <security/pam_appl.h>

/* What conv_password() answers with, and how many prompts it has answered. */
struct conv_password {
	const char *password;
	int prompts;
};

/*
 * A PAM conversation (appdata: a struct conv_password) that answers every
 * prompt, echoed or not, with the same password and prints nothing.
 */
int conv_password(int n, const struct pam_message **msg, struct pam_response **resp, void *data);
