/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

/*
 * Waits for the child pid at most timeout_ms (looking every 5 ms), then
 * kills it (SIGKILL: a child may ignore the others) and reaps it, so that
 * no zombie is left either way.  Returns 0 when it ended in time, its
 * status in *status (when not NULL); -ETIMEDOUT when it was killed; -errno
 * when it could not be waited for.
 */
int duress_wait_bounded(pid_t pid, int *status, long timeout_ms);
