/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for the host-wide settings a log records as CONFIG SYSCTL
 * events (rec_sysctl.c): their names and where they live, and what a
 * log says changed of them. Constant tables and functions of their
 * arguments; thread-safe.
 */
#ifndef _REC_SYSCTL_H
#define _REC_SYSCTL_H

#include <stddef.h>
#include <stdint.h>

#include "deter_abi.h"
#include "rec_ev.h"

/* enum deter_sysctl as userspace sees it; a CONFIG SYSCTL is id << 32 | value. */
struct rec_sysctl {
	const char *name;	/* under net.ipv4, or net.core if core */
	int elem;		/* element of a vector (tcp_rmem), or -1 */
	int sgn;		/* value is signed */
	int core;		/* under net.core: the host's, not a namespace's */
	int route;		/* a metric of the connection's route (ip route) */
	const char *module;	/* a congestion control's module parameter */
};

extern const struct rec_sysctl rec_sysctls[DETER_SYSCTL_MAX];
int rec_param_parse(const char *s, long long *v);
void rec_sysctl_path(const struct rec_sysctl *sc, char *buf, size_t len);
void rec_settings_changed(const struct rec_log *log, size_t at, char *buf, size_t len);
void rec_log_cc_params(const struct rec_log *log, int used[DETER_SYSCTL_MAX]);

/* Where @sc is, as deter show prints it: "net.ipv4", "route", "tcp_cubic", ... */
static inline const char *rec_sysctl_dir(const struct rec_sysctl *sc)
{
	return sc->module ? sc->module : sc->route ? "route" :
	       sc->core ? "net.core" : "net.ipv4";
}

/* A CONFIG SYSCTL event's value, sign-extended if its setting is signed. */
static inline long long rec_sysctl_value(uint64_t a)
{
	return rec_sysctls[a >> 32].sgn ? (long long)(int32_t)a : (long long)(uint32_t)a;
}

#endif /* _REC_SYSCTL_H */
