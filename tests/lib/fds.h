/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/*
 * How many descriptors this process has open, by /proc/self/fd (its own
 * listing counted too: the same every time).  For tests that nothing leaks.
 */
size_t count_open_fds(void);
