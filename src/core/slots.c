/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "slots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The memory of one derivation at the default cost (libsodium INTERACTIVE). */
#define DERIVATION_MEMORY DURESS_USER_MAX_MEMORY
/* How long a waiter sleeps between two looks at the slots, at most. */
#define POLL_MAX_NS (50L * 1000L * 1000L)
/* The timeout line is written at most once in this many seconds, machine-wide. */
#define TIMEOUT_LOG_INTERVAL 60
#define TIMEOUT_STAMP "timeout.logged"

unsigned duress_slots_default(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
	uint64_t by_cpu = cpus > 0 ? 2 * (uint64_t)cpus : 1;
	uint64_t by_memory = pages > 0 && page_size > 0 ?
				     (uint64_t)pages * (uint64_t)page_size / 8 / DERIVATION_MEMORY :
				     1;
	uint64_t n = by_cpu < by_memory ? by_cpu : by_memory;

	return n < 1 ? 1 : n > DURESS_MAX_DERIVATIONS ? DURESS_MAX_DERIVATIONS : (unsigned)n;
}

/*
 * Only root's cap binds every login; a process that is not root (a screen
 * locker) checks its own user only and has no slot directory of its own.
 */
static int cap_off_priority(void)
{
	return geteuid() == 0 ? LOG_WARNING : LOG_DEBUG;
}

/* Whether a slot directory or file is ours alone: our owner, nobody else may write. */
static bool ours(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The slot directory, made if missing; -1 (logged) when it is not safe to use. */
static int open_slot_dir(const char *path, const struct duress_log *lg)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		duress_log(lg, cap_off_priority(), "cannot make %s: %m; no cap on derivations",
			   path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !ours(&st, S_IFDIR)) {
		duress_log(lg, cap_off_priority(),
			   "%s is not a directory of ours alone (or a symlink); "
			   "no cap on derivations",
			   path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Opens slot k: a descriptor, -EPERM when the file is not ours alone, or another -errno. */
static int open_slot(int dir_fd, unsigned k)
{
	char name[sizeof("slot.") + 3 * sizeof(unsigned)];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "slot.%u", k);
	fd = openat(dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOMEM || errno == EMFILE || errno == ENFILE ? -errno : -EPERM;
	if (fstat(fd, &st) < 0 || !ours(&st, S_IFREG)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * One look at every slot, from a place that differs between processes so
 * that they do not all queue on slot 0.  Returns the locked slot's
 * descriptor, -EAGAIN when all are taken, -EPERM when one is unsafe, or
 * another -errno.
 */
static int try_slots(int dir_fd, unsigned n, unsigned start)
{
	int r = -EAGAIN;

	for (unsigned i = 0; i < n; i++) {
		int fd = open_slot(dir_fd, (start + i) % n);

		if (fd < 0)
			return fd;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		r = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		close(fd);
		if (r != -EAGAIN)
			return r;
	}
	return r;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleeps for ns, or less: a signal only makes the next look come sooner. */
static void doze(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

	(void)nanosleep(&ts, NULL);
}

/* Whether this process writes the timeout line: nobody did in the last minute. */
static bool timeout_log_due(int dir_fd)
{
	const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	int fd = openat(dir_fd, TIMEOUT_STAMP, flags | O_CREAT | O_EXCL, 0600);
	struct timespec now;
	struct stat st;
	bool due;

	if (fd >= 0) { /* the first timeout this boot */
		close(fd);
		return true;
	}
	fd = errno == EEXIST ? openat(dir_fd, TIMEOUT_STAMP, flags) : -1;
	if (fd < 0)
		return false;
	clock_gettime(CLOCK_REALTIME, &now);
	due = fstat(fd, &st) == 0 && ours(&st, S_IFREG) &&
	      (now.tv_sec - st.st_mtim.tv_sec >= TIMEOUT_LOG_INTERVAL ||
	       now.tv_sec < st.st_mtim.tv_sec);
	/* The stamp's time is the last line's: a process that cannot set it stays quiet. */
	due = due && futimens(fd, NULL) == 0;
	close(fd);
	return due;
}

static int wait_for_slot(int dir_fd, const struct duress_opts *o, unsigned n)
{
	int64_t deadline = now_ns() + (int64_t)o->max_wait * 1000000000LL;
	int64_t pause = 1000000L; /* 1 ms, doubled up to POLL_MAX_NS */
	unsigned start = (unsigned)getpid() % n;
	int r;

	while ((r = try_slots(dir_fd, n, start)) == -EAGAIN) {
		int64_t left = deadline - now_ns();

		if (left <= 0)
			return -ETIMEDOUT;
		doze(pause < left ? pause : left);
		pause = pause * 2 > POLL_MAX_NS ? POLL_MAX_NS : pause * 2;
	}
	return r;
}

int duress_slot_take(const struct duress_opts *o, struct duress_slot *slot,
		     const struct duress_log *lg)
{
	unsigned n = o->max_derivations ? o->max_derivations : duress_slots_default();
	int dir_fd, r;

	slot->fd = -1;
	if (!o->slot_dir || !*o->slot_dir)
		return 0;
	dir_fd = open_slot_dir(o->slot_dir, lg);
	if (dir_fd < 0)
		return 0;
	r = wait_for_slot(dir_fd, o, n);
	if (r >= 0) {
		slot->fd = r;
		r = 0;
	} else if (r == -EPERM) {
		duress_log(lg, cap_off_priority(),
			   "a slot file in %s is not ours alone (or a symlink); "
			   "no cap on derivations",
			   o->slot_dir);
		r = 0;
	} else if (r == -ETIMEDOUT && timeout_log_due(dir_fd)) {
		duress_log(lg, LOG_WARNING,
			   "all %u derivation slots busy for %u s: answering as for no match "
			   "(max_derivations=, max_wait=; this line at most once a minute)",
			   n, o->max_wait);
	}
	close(dir_fd);
	return r;
}

void duress_slot_release(struct duress_slot *slot)
{
	if (slot->fd >= 0)
		close(slot->fd); /* drops the lock */
	slot->fd = -1;
}
