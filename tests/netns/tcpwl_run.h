/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for tcpwl_run.c: tcpwl's two sides. Each runs one workload
 * from @o to its end, prints its summary on stdout and returns the exit
 * status (0 ok, 1 failure); a failed call exits through wl_die().
 */
#ifndef TCPWL_RUN_H
#define TCPWL_RUN_H

#include "tcpwl.h"

/* The server: bulk or RPC on one connection, or --accept N (churn). */
int wl_server(const struct wl_opts *o);
/* The client: bulk or RPC on one connection. */
int wl_client(const struct wl_opts *o);
/* --conns N: N connections one after another, each the RPC session. */
int wl_churn_client(const struct wl_opts *o);

#endif /* TCPWL_RUN_H */
