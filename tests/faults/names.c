/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tests/faults/shim.h"

#define DURESS_FAULT_NAME(name) #name,
const char *const duress_fault_function_names[FAULT_N_FUNCTIONS] = { DURESS_FAULT_FUNCTIONS(
	DURESS_FAULT_NAME) };
#undef DURESS_FAULT_NAME

const char *const duress_fault_role_names[FAULT_N_ROLES] = {
	[FAULT_ROLE_MODULE] = "module", [FAULT_ROLE_SPAWN] = "spawn",
	[FAULT_ROLE_RUNNER] = "runner", [FAULT_ROLE_WORKER] = "worker",
	[FAULT_ROLE_CHAIN] = "chain",   [FAULT_ROLE_JOB] = "job",
};
