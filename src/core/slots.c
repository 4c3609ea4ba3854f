/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "slots.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

/* The memory of one derivation at the default cost (libsodium INTERACTIVE). */
#define DERIVATION_MEMORY DURESS_USER_MAX_MEMORY
/* How long a waiter sleeps between two looks at the slots, at most. */
#define POLL_MAX_NS (50L * 1000L * 1000L)
/* The timeout line is written at most once in this many seconds, machine-wide. */
#define TIMEOUT_LOG_INTERVAL 60
#define TIMEOUT_STAMP "timeout.logged"
/* How many buckets the network's sources are spread over: a fixed number of files. */
#define SOURCE_BUCKETS 64U

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

/*
 * A set of interchangeable lock files, PREFIX(FIRST) .. PREFIX(FIRST + N - 1):
 * "slot." 0..N-1, "src.17." 0..share-1, or "uid." 1000 alone.
 */
struct lane {
	char prefix[sizeof("src..") + 3 * sizeof(unsigned)];
	unsigned first, n;
};

/* Who asks decides the lane (slots.h). */
enum lane_kind { LANE_USER, LANE_NETWORK, LANE_LOCAL };

static enum lane_kind lane_of(const struct duress_slot_caller *who)
{
	if (who->ruid != 0)
		return LANE_USER;
	return who->rhost && *who->rhost ? LANE_NETWORK : LANE_LOCAL;
}

static void lane_init(struct lane *l, const char *prefix, unsigned first, unsigned n)
{
	snprintf(l->prefix, sizeof(l->prefix), "%s", prefix);
	l->first = first;
	l->n = n;
}

/* The machine's slots the network may hold: all but the last, which stays for local logins. */
static unsigned network_slots(unsigned n)
{
	return n >= 2 ? n - 1 : n;
}

/* One source's share of those: at most half (at least one), so others keep as many. */
static unsigned source_share(unsigned n)
{
	unsigned half = network_slots(n) / 2;

	return half > 1 ? half : 1;
}

/*
 * The bucket of a remote host: a hash of its IPv4 address, of an IPv6
 * address's /64 (one host or one network, as an IPv4 address is: anyone
 * holds a /64's worth of addresses), or of the name as given.  Not keyed:
 * an attacker who could aim many addresses at one bucket has as many
 * sources as it takes to fill every network slot anyway.
 */
static unsigned source_bucket(const char *rhost)
{
	unsigned char hash[crypto_generichash_BYTES_MIN];
	struct in6_addr in6;
	struct in_addr in4;
	const void *key = rhost;
	size_t len = strlen(rhost);

	if (inet_pton(AF_INET, rhost, &in4) == 1) {
		key = &in4;
		len = sizeof(in4);
	} else if (inet_pton(AF_INET6, rhost, &in6) == 1) {
		key = IN6_IS_ADDR_V4MAPPED(&in6) ? (const void *)&in6.s6_addr[12] : &in6;
		len = IN6_IS_ADDR_V4MAPPED(&in6) ? 4 : 8;
	}
	crypto_generichash(hash, sizeof(hash), key, len, NULL, 0);
	return ((unsigned)hash[0] | (unsigned)hash[1] << 8) % SOURCE_BUCKETS;
}

/* Opens the lane's k-th file: a descriptor, -EPERM when it is not ours alone, or another -errno. */
static int open_slot(int dir_fd, const struct lane *l, unsigned k)
{
	char name[sizeof(l->prefix) + 3 * sizeof(unsigned)];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), "%s%u", l->prefix, l->first + k);
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
 * One look at every file of the lane, from a place that differs between
 * processes so that they do not all queue on the first.  Returns the locked
 * file's descriptor, -EAGAIN when all are taken, -EPERM when one is unsafe,
 * or another -errno.
 */
static int try_lane(int dir_fd, const struct lane *l, unsigned start)
{
	int r = -EAGAIN;

	for (unsigned i = 0; i < l->n; i++) {
		int fd = open_slot(dir_fd, l, (start + i) % l->n);

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
	/* A clock that cannot be read reads 0: a bounded wait, never an undefined time. */
	struct timespec ts = { 0 };

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
	struct timespec now = { 0 };
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

/* Waits until a file of the lane is ours or the deadline passes: as try_lane(), or -ETIMEDOUT. */
static int wait_in_lane(int dir_fd, const struct lane *l, int64_t deadline)
{
	int64_t pause = 1000000L; /* 1 ms, doubled up to POLL_MAX_NS */
	unsigned start = (unsigned)getpid() % l->n;
	int r;

	while ((r = try_lane(dir_fd, l, start)) == -EAGAIN) {
		int64_t left = deadline - now_ns();

		if (left <= 0)
			return -ETIMEDOUT;
		doze(pause < left ? pause : left);
		pause = pause * 2 > POLL_MAX_NS ? POLL_MAX_NS : pause * 2;
	}
	return r;
}

/* What a caller waits for, by who it is (slots.h). */
struct plan {
	enum lane_kind kind;
	uid_t ruid;
	struct lane source; /* a network caller's share, taken first */
	struct lane slots;  /* then the machine's slots open to it, or the user's own lane */
	bool source_full;   /* out: it was the share that stayed full */
};

static void plan_for(struct plan *p, unsigned n, const struct duress_slot_caller *who)
{
	char prefix[sizeof(p->source.prefix)];

	*p = (struct plan){ .kind = lane_of(who), .ruid = who->ruid };
	switch (p->kind) {
	case LANE_USER:
		lane_init(&p->slots, "uid.", who->ruid, 1);
		break;
	case LANE_NETWORK:
		snprintf(prefix, sizeof(prefix), "src.%u.", source_bucket(who->rhost));
		lane_init(&p->source, prefix, 0, source_share(n));
		lane_init(&p->slots, "slot.", 0, network_slots(n));
		break;
	case LANE_LOCAL:
		lane_init(&p->slots, "slot.", 0, n);
		break;
	}
}

/*
 * Takes what the plan says, within one max_wait in all.  0 with the slot
 * held, or as wait_in_lane() (what was taken stays in slot: release it).
 */
static int take_lanes(int dir_fd, const struct duress_opts *o, struct plan *p,
		      struct duress_slot *slot)
{
	const int64_t deadline = now_ns() + (int64_t)o->max_wait * 1000000000LL;
	int r;

	if (p->kind == LANE_NETWORK) {
		r = wait_in_lane(dir_fd, &p->source, deadline);
		p->source_full = r == -ETIMEDOUT;
		if (r < 0)
			return r;
		slot->source_fd = r;
	}
	r = wait_in_lane(dir_fd, &p->slots, deadline);
	if (r < 0)
		return r;
	slot->fd = r;
	return 0;
}

/* The line for a lane that stayed full; a user's own lane is their doing, hence debug only. */
static void log_timeout(int dir_fd, const struct duress_opts *o, unsigned n, const struct plan *p,
			const struct duress_log *lg)
{
	static const char why[] = "(max_derivations=, max_wait=; this line at most once a minute)";

	if (p->kind == LANE_USER) {
		duress_debug(lg, "uid %u's own lane busy for %u s: answering as for no match",
			     (unsigned)p->ruid, o->max_wait);
		return;
	}
	if (!timeout_log_due(dir_fd))
		return;
	if (p->kind == LANE_LOCAL)
		duress_log(lg, LOG_WARNING,
			   "all %u derivation slots busy for %u s: answering as for no match %s", n,
			   o->max_wait, why);
	else if (p->source_full)
		duress_log(lg, LOG_WARNING,
			   "one network source's share (%u derivation slot(s)) busy for %u s: "
			   "answering as for no match %s",
			   p->source.n, o->max_wait, why);
	else
		duress_log(lg, LOG_WARNING,
			   "the %u derivation slot(s) open to network logins busy for %u s "
			   "(one more is kept for local logins): answering as for no match %s",
			   p->slots.n, o->max_wait, why);
}

int duress_slot_take(const struct duress_opts *o, const struct duress_slot_caller *who,
		     struct duress_slot *slot, const struct duress_log *lg)
{
	unsigned n = o->max_derivations ? o->max_derivations : duress_slots_default();
	struct plan plan;
	int dir_fd, r;

	*slot = (struct duress_slot){ .fd = -1, .source_fd = -1 };
	if (!o->slot_dir || !*o->slot_dir)
		return 0;
	dir_fd = open_slot_dir(o->slot_dir, lg);
	if (dir_fd < 0)
		return 0;
	plan_for(&plan, n, who);
	r = take_lanes(dir_fd, o, &plan, slot);
	if (r < 0)
		duress_slot_release(slot);
	if (r == -EPERM) {
		duress_log(lg, cap_off_priority(),
			   "a slot file in %s is not ours alone (or a symlink); "
			   "no cap on derivations",
			   o->slot_dir);
		r = 0;
	} else if (r == -ETIMEDOUT) {
		log_timeout(dir_fd, o, n, &plan, lg);
	}
	close(dir_fd);
	return r;
}

void duress_slot_release(struct duress_slot *slot)
{
	/* Closing drops the lock. */
	if (slot->fd >= 0)
		close(slot->fd);
	if (slot->source_fd >= 0)
		close(slot->source_fd);
	slot->fd = slot->source_fd = -1;
}
