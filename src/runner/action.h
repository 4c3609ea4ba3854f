/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "core/manifest.h"

/* Takes on the target's ids for good; 0 or -1. */
int duress_become(const struct duress_target *t);

/*
 * In a forked child of a chain already running as the target: gives the
 * action a session keyring of its own and executes the job's memfd with the
 * target's environment.  Does not return.
 */
_Noreturn void duress_exec_job(const struct duress_job *job, const struct duress_target *t,
			       bool interp_argv0);
