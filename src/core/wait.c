/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wait.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static long long now_ms(void)
{
	struct timespec ts = { 0 }; /* a failed read reads 0, never an undefined time */

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int duress_wait_bounded(pid_t pid, int *status, long timeout_ms)
{
	const struct timespec step = { .tv_nsec = 5000000L };
	long long deadline = now_ms() + timeout_ms;
	int ignored;

	if (!status)
		status = &ignored;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (now_ms() >= deadline)
			break;
		nanosleep(&step, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}
