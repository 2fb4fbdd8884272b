// SPDX-License-Identifier: GPL-2.0
/*
 * tcpwl_sock: the socket options tcpwl sets, from its command line.
 *
 * Options that shape the whole connection (buffers, congestion control,
 * TOS, timeouts, linger, pacing, ...) go on a socket before connect(),
 * or on the listener, whose accepted sockets inherit them:
 *
 *   socket() -> wl_sockopts() -> connect() -> wl_keepalive() -> wl_ulp()
 *            \-> wl_sockopts() + wl_keepalive() -> bind(), listen()
 *
 * Each setsockopt() that fails ends the run (exit 1) naming the option
 * and its value: a workload that silently lacks an option proves nothing.
 */
#include "tcpwl_sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/tls.h>

void wl_setint(int fd, int level, int opt, int val, const char *name)
{
	if (setsockopt(fd, level, opt, &val, sizeof(val)))
		wl_die(1, "%s %d: %s", name, val, strerror(errno));
}

static void wl_timeo(int fd, int opt, unsigned int ms, const char *name)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };

	if (ms && setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)))
		wl_die(1, "%s %u ms: %s", name, ms, strerror(errno));
}

void wl_sockopts(int fd, const struct wl_opts *o)
{
	if (o->sndbuf)
		wl_setint(fd, SOL_SOCKET, o->force_bufs ? SO_SNDBUFFORCE : SO_SNDBUF,
			  o->sndbuf, "SO_SNDBUF");
	if (o->rcvbuf)
		wl_setint(fd, SOL_SOCKET, o->force_bufs ? SO_RCVBUFFORCE : SO_RCVBUF,
			  o->rcvbuf, "SO_RCVBUF");
	if (o->cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc, strlen(o->cc)))
		wl_die(1, "TCP_CONGESTION %s: %s", o->cc, strerror(errno));
	if (o->tos >= 0)
		wl_setint(fd, IPPROTO_IP, IP_TOS, o->tos, "IP_TOS");
	if (o->user_timeout)
		wl_setint(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, o->user_timeout,
			  "TCP_USER_TIMEOUT");
	if (o->notsent_lowat)
		wl_setint(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, o->notsent_lowat,
			  "TCP_NOTSENT_LOWAT");
	if (o->syncnt)
		wl_setint(fd, IPPROTO_TCP, TCP_SYNCNT, o->syncnt, "TCP_SYNCNT");
	if (o->linger2)
		wl_setint(fd, IPPROTO_TCP, TCP_LINGER2, o->linger2, "TCP_LINGER2");
	if (o->linger >= 0) {
		struct linger lg = { .l_onoff = 1, .l_linger = o->linger };

		if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
			wl_die(1, "SO_LINGER %d s: %s", o->linger, strerror(errno));
	}
	if (o->thin_lto)
		wl_setint(fd, IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS, 1,
			  "TCP_THIN_LINEAR_TIMEOUTS");
	if (o->max_pacing &&
	    setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &o->max_pacing, sizeof(o->max_pacing)))
		wl_die(1, "SO_MAX_PACING_RATE: %s", strerror(errno));
	if (o->priority >= 0)
		wl_setint(fd, SOL_SOCKET, SO_PRIORITY, o->priority, "SO_PRIORITY");
	if (o->mark)
		wl_setint(fd, SOL_SOCKET, SO_MARK, o->mark, "SO_MARK");
	wl_timeo(fd, SO_RCVTIMEO, o->rcvtimeo_ms, "SO_RCVTIMEO");
	wl_timeo(fd, SO_SNDTIMEO, o->sndtimeo_ms, "SO_SNDTIMEO");
}

/* SO_KEEPALIVE and TCP_NODELAY set again to what they are. */
void wl_reset_opts(int fd)
{
	socklen_t len;
	int v;

	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &len))
		wl_die(1, "SO_KEEPALIVE: %s", strerror(errno));
	wl_setint(fd, SOL_SOCKET, SO_KEEPALIVE, v, "SO_KEEPALIVE");
	len = sizeof(v);
	if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len))
		wl_die(1, "TCP_NODELAY: %s", strerror(errno));
	wl_setint(fd, IPPROTO_TCP, TCP_NODELAY, v, "TCP_NODELAY");
}

void wl_keepalive(int fd, const struct wl_opts *o)
{
	if (!o->ka_idle)
		return;
	wl_setint(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
	wl_setint(fd, IPPROTO_TCP, TCP_KEEPIDLE, o->ka_idle, "TCP_KEEPIDLE");
	wl_setint(fd, IPPROTO_TCP, TCP_KEEPINTVL, o->ka_intvl, "TCP_KEEPINTVL");
	wl_setint(fd, IPPROTO_TCP, TCP_KEEPCNT, o->ka_cnt, "TCP_KEEPCNT");
}

/* -b or -c ADDR, IPv4 or IPv6 (:: or ::ffff:a.b.c.d for IPv4 peers too). */
socklen_t wl_sockaddr(const struct wl_opts *o, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, o->addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(o->port);
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, o->addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(o->port);
		return sizeof(*sin6);
	}
	wl_die(2, "'%s' is not an IPv4 or IPv6 address", o->addr);
}

/* --ulp: TCP_ULP @name, or "tls-tx": kTLS with a transmit key. */
void wl_ulp(int fd, const char *name)
{
	struct tls12_crypto_info_aes_gcm_128 ci = {
		.info = { .version = TLS_1_2_VERSION, .cipher_type = TLS_CIPHER_AES_GCM_128 },
	};
	int tx = !strcmp(name, "tls-tx");

	if (tx)
		name = "tls";
	if (setsockopt(fd, IPPROTO_TCP, TCP_ULP, name, strlen(name)))
		wl_die(1, "TCP_ULP %s: %s", name, strerror(errno));
	if (tx && setsockopt(fd, SOL_TLS, TLS_TX, &ci, sizeof(ci)))
		wl_die(1, "TLS_TX: %s", strerror(errno));
}
