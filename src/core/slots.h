/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "log.h"
#include "opts.h"

/*
 * The machine-wide cap on concurrent key derivations.  sshd forks a process
 * per connection, so a cap inside one process bounds nothing: a derivation
 * holds one of max_derivations= slots, an flock() on slot_dir=/slot.K, which
 * the kernel drops when the process dies, however it dies.
 */
struct duress_slot {
	int fd; /* the locked slot file, or -1: no slot held */
};

/*
 * The default cap: as many default-cost derivations (64 MiB each) as fit in
 * an eighth of the machine's memory, at most two per CPU, at least one.
 */
unsigned duress_slots_default(void);

/*
 * Takes a slot, waiting up to o->max_wait seconds for one to come free.
 * Returns 0 with slot->fd held, or 0 with slot->fd -1 when the cap cannot be
 * kept (no usable slot directory: logged, and the login goes on without it);
 * -ETIMEDOUT when every slot stayed taken (logged, at most once a minute for
 * the whole machine); or -errno for an internal error.
 */
int duress_slot_take(const struct duress_opts *o, struct duress_slot *slot,
		     const struct duress_log *lg);

/* Gives the slot back; a slot not held is fine too. */
void duress_slot_release(struct duress_slot *slot);
