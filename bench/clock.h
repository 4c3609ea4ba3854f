/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* The benchmarks' clock and middle value: one definition for all of them. */

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);
/* The median of n values (n > 0; sorts them): the middle one, or the mean of the two. */
double bench_median(double *v, size_t n);
