/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * duress test [--stdin] [--service NAME] USER: a real PAM authentication and
 * account check for USER, the result said in words.  Returns the exit
 * status: 0 the login would succeed, 1 it would be refused, 2 error.
 */
int duress_cmd_test(int argc, char **argv);
