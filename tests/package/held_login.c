/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A login program that holds its PAM handle across an upgrade, as a screen
 * locker or a greeter does: pam_start(), which reads SERVICE's stack and
 * dlopen()s every module in it, then "started PID" on stdout, then the password
 * as one line from stdin (the package test writes it after dpkg -i), then
 * pam_authenticate() with the modules loaded at the start.
 *
 *   held_login SERVICE USER      exit status: the PAM result (0: success)
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "../pam/conv.h"

/* One line of stdin without its newline into buf; 0, or -1 at the end or if too long. */
static int read_line(char *buf, size_t size)
{
	size_t len;

	if (!fgets(buf, (int)size, stdin))
		return -1;
	len = strcspn(buf, "\n");
	if (buf[len] != '\n')
		return -1;
	buf[len] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	pam_handle_t *ph = NULL;
	struct conv_password s = { 0 };
	const struct pam_conv pc = { conv_password, &s };
	char password[PAM_MAX_RESP_SIZE];
	int r;

	if (argc != 3)
		return 127;
	r = pam_start(argv[1], argv[2], &pc, &ph);
	if (r != PAM_SUCCESS)
		return r;
	printf("started %ld\n", (long)getpid());
	fflush(stdout);
	if (read_line(password, sizeof(password)) == 0) {
		s.password = password;
		r = pam_authenticate(ph, 0);
	} else {
		r = PAM_ABORT;
	}
	explicit_bzero(password, sizeof(password));
	pam_end(ph, r);
	return r;
}
