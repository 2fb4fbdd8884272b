/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Interface for deter's kernel/userspace definitions: the only copy of
 * anything deter.ko and the deter command must agree on. Fixed-width
 * types and explicit padding only; every log and event layout carries the
 * version below, bumped on any incompatible change.
 */
#ifndef _DETER_ABI_H
#define _DETER_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

/* Version of the event and log formats defined here. */
enum {
	DETER_ABI_VERSION = 1,
};

/* Default send-time sampling threshold (DETER §3.3): 5 us. */
enum {
	DETER_SAMPLE_THRESHOLD_NS = 5000,
};

#endif /* _DETER_ABI_H */
