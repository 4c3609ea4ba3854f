/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

#include "log.h"
#include "opts.h"

/*
 * The cap on concurrent key derivations, in lanes.  sshd forks a process per
 * connection, so a cap inside one process bounds nothing: a derivation
 * holds an flock() on a file in slot_dir=, which the kernel drops when the
 * process dies, however it dies.  Who asks decides the lane
 * (docs/design.md, docs/servers.md):
 *
 *   - a caller whose real uid is not 0 (a setuid su, sudo, pkexec run by a
 *     user, who may stop, nice or freeze it) takes only its own lane,
 *     uid.RUID: whatever the user does to it holds that user's lane alone;
 *   - a root caller with PAM_RHOST (sshd) takes a token of its source's
 *     share first, src.B.K (B a hash of the address, K < the share), then
 *     one of the machine's slots open to the network, slot.0 .. slot.N-2:
 *     one source holds at most its share, and the network never the last
 *     slot, slot.N-1;
 *   - a root caller without PAM_RHOST (console, display manager) takes any
 *     of the machine's N slots, slot.0 .. slot.N-1.
 */
struct duress_slot {
	int fd;        /* the locked slot (or uid lane) file, or -1: none held */
	int source_fd; /* a network caller's token of its source's share, or -1 */
};

/* Who asks for a derivation: what decides its lane. */
struct duress_slot_caller {
	uid_t ruid;        /* the PAM application's real uid, getuid() */
	const char *rhost; /* PAM_RHOST; NULL or "" for a local login */
};

/*
 * The default cap: as many default-cost derivations (64 MiB each) as fit in
 * an eighth of the machine's memory, at most two per CPU, at least one.
 */
unsigned duress_slots_default(void);

/*
 * Takes a slot in the caller's lane, waiting up to o->max_wait seconds in
 * all for it to come free.  Returns 0 with the slot held, or 0 with nothing
 * held when the cap cannot be kept (no usable slot directory or an unsafe
 * file in it: logged, and the login goes on without it); -ETIMEDOUT when the
 * lane stayed full (logged, at most once a minute for the whole machine; a
 * user's own lane only with debug); or -errno for an internal error.
 */
int duress_slot_take(const struct duress_opts *o, const struct duress_slot_caller *who,
		     struct duress_slot *slot, const struct duress_log *lg);

/* Gives the slot back; a slot not held is fine too. */
void duress_slot_release(struct duress_slot *slot);
