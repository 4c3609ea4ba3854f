/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * duress check [--user USER] [--global-dir DIR] [--user-dir TEMPLATE]:
 * one line per action, ARMED or the reason the module will skip it.
 * Returns the exit status: 0 only if every action is armed, 1 if not, 2 on
 * a usage error.
 */
int duress_cmd_check(int argc, char **argv);
