/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * duress add --list | EXAMPLE [--global] [--set KEY=VALUE]... [--no-edit]
 * [--stdin] [--force] [--examples-dir DIR] [--pam-dir DIR]: installs an
 * example action and its config where the module reads them, signs both and
 * checks the result.  Returns the exit status: 0 only if the new action is
 * ARMED (or the list was printed), 1 if not, 2 on a usage error.
 */
int duress_cmd_add(int argc, char **argv);
