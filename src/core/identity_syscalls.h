/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/syscall.h>

/*
 * The raw system calls identity.c makes, not glibc's setgroups(), which
 * changes every thread of the process (as libcap's cap_set_proc() may,
 * through libpsx): a PAM application may be multithreaded, and only this
 * thread may take a user's rights.  32-bit ids where the old calls are
 * 16-bit.  tests/unit/test_identity.c wraps syscall() and tells them apart
 * by these numbers.
 */
#ifdef SYS_setfsuid32
#define SYS_SETFSUID SYS_setfsuid32
#define SYS_SETFSGID SYS_setfsgid32
#define SYS_SETGROUPS SYS_setgroups32
#define SYS_GETGROUPS SYS_getgroups32
#else
#define SYS_SETFSUID SYS_setfsuid
#define SYS_SETFSGID SYS_setfsgid
#define SYS_SETGROUPS SYS_setgroups
#define SYS_GETGROUPS SYS_getgroups
#endif
