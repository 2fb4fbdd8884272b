/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for tcpwl_sock.c: socket options from tcpwl's options. Each
 * function exits through wl_die() when a call fails.
 */
#ifndef TCPWL_SOCK_H
#define TCPWL_SOCK_H

#include <sys/socket.h>

#include "tcpwl.h"

/* setsockopt(@fd, @level, @opt) to the int @val; @name for the message. */
void wl_setint(int fd, int level, int opt, int val, const char *name);
/* The options of @o that go before connect() or listen(). */
void wl_sockopts(int fd, const struct wl_opts *o);
/* --reset-opts: SO_KEEPALIVE and TCP_NODELAY set again to what they are. */
void wl_reset_opts(int fd);
/* --keepalive: SO_KEEPALIVE and TCP_KEEPIDLE/KEEPINTVL/KEEPCNT. */
void wl_keepalive(int fd, const struct wl_opts *o);
/* @o's address and port in @ss; return its length (exit 2 if no address). */
socklen_t wl_sockaddr(const struct wl_opts *o, struct sockaddr_storage *ss);
/* --ulp: TCP_ULP @name, or "tls-tx": kTLS with a transmit key. */
void wl_ulp(int fd, const char *name);

#endif /* TCPWL_SOCK_H */
