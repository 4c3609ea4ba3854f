/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cli/pamtest.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>
#include <sodium.h>

#include "cli/check.h"
#include "cli/password.h"
#include "core/escape.h"

#define DEFAULT_SERVICE "login"

struct test_opts {
	const char *service;
	const char *pam_dir; /* only for the check of the module line's options */
	bool from_stdin;
};

static void test_usage(FILE *out)
{
	fputs("Usage: duress test [--stdin] [--service NAME] [--pam-dir DIR] USER\n"
	      "\n"
	      "Runs a real PAM authentication and account check for USER on a service\n"
	      "(default " DEFAULT_SERVICE "), as a login program would, and says what happened.\n"
	      "A duress password runs the matching actions, exactly as at a real login.\n"
	      "\n"
	      "  --service NAME  the PAM service (a file in /etc/pam.d)\n"
	      "  --stdin         answer password prompts with lines from standard input\n"
	      "  --pam-dir DIR   where the service files are, for the check of the\n"
	      "                  pam_duress.so line's options (default /etc/pam.d)\n",
	      out);
}

static int parse_test(struct test_opts *o, int argc, char **argv, int *status)
{
	static const struct option options[] = {
		{ "service", required_argument, NULL, 's' },
		{ "stdin", no_argument, NULL, 'i' },
		{ "pam-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == 's') {
			o->service = optarg;
		} else if (opt == 'i') {
			o->from_stdin = true;
		} else if (opt == 'p') {
			o->pam_dir = optarg;
		} else {
			if (opt == 'h')
				test_usage(stdout);
			else
				fputs("duress: try 'duress test --help'\n", stderr);
			*status = opt == 'h' ? 0 : 2;
			return -1;
		}
	}
	return optind;
}

/* Answers one prompt; the answer is copied into memory libpam frees. */
static int answer(const struct pam_message *m, struct pam_response *r, bool from_stdin)
{
	struct duress_password *pw = NULL;
	bool echo = m->msg_style == PAM_PROMPT_ECHO_ON;

	if (duress_read_answer(from_stdin, m->msg, echo, &pw) < 0)
		return PAM_CONV_ERR;
	r->resp = strndup(pw->text, pw->len);
	duress_password_free(pw);
	return r->resp ? PAM_SUCCESS : PAM_BUF_ERR;
}

static void free_responses(struct pam_response *resp, int n)
{
	for (int i = 0; i < n; i++) {
		if (resp[i].resp) {
			sodium_memzero(resp[i].resp, strlen(resp[i].resp));
			free(resp[i].resp);
		}
	}
	free(resp);
}

static int converse(int n, const struct pam_message **msg, struct pam_response **ret, void *data)
{
	const struct test_opts *o = data;
	struct pam_response *resp;

	if (n <= 0 || n > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	resp = calloc((size_t)n, sizeof(*resp));
	if (!resp)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		int style = msg[i]->msg_style;
		int r = PAM_SUCCESS;

		if (style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON)
			r = answer(msg[i], &resp[i], o->from_stdin);
		else
			fprintf(style == PAM_ERROR_MSG ? stderr : stdout, "%s\n", msg[i]->msg);
		if (r != PAM_SUCCESS) {
			free_responses(resp, n);
			return r;
		}
	}
	*ret = resp;
	return PAM_SUCCESS;
}

static int run_pam(const struct test_opts *o, const char *user)
{
	struct pam_conv conv = { converse, (void *)(uintptr_t)o };
	pam_handle_t *pamh = NULL;
	int r = pam_start(o->service, user, &conv, &pamh);

	if (r != PAM_SUCCESS) {
		fprintf(stderr, "duress: pam_start(%s): %s\n", o->service, pam_strerror(NULL, r));
		return 2;
	}
	r = pam_authenticate(pamh, 0);
	printf("authenticate: %s\n", pam_strerror(pamh, r));
	if (r == PAM_SUCCESS) {
		r = pam_acct_mgmt(pamh, 0);
		printf("account: %s\n", pam_strerror(pamh, r));
	}
	printf("result: the login %s\n", r == PAM_SUCCESS ? "would succeed" : "would be refused");
	pam_end(pamh, r);
	return r == PAM_SUCCESS ? 0 : 1;
}

int duress_cmd_test(int argc, char **argv)
{
	struct test_opts o = { .service = DEFAULT_SERVICE };
	int status = 0;
	int first = parse_test(&o, argc, argv, &status);

	if (first < 0)
		return status;
	if (argc - first != 1) {
		fputs("duress test: exactly one USER is needed; try 'duress test --help'\n",
		      stderr);
		return 2;
	}
	printf("service: %s, user: %s\n", o.service, argv[first]);
	if (duress_check_inert(o.pam_dir, o.service) > 0) {
		char shown[DURESS_ESCAPED_SIZE(256)];

		printf("warning: a duress password will not work on service %s: its pam_duress.so "
		       "line is inert until the option above is fixed (duress check names it)\n",
		       duress_escape(o.service, shown, sizeof(shown)));
	}
	fflush(stdout);
	return run_pam(&o, argv[first]);
}
