// SPDX-License-Identifier: GPL-2.0
/*
 * tcpwl_run: tcpwl's server and client, in bulk, RPC and churn modes.
 *
 *   mode    server (wl_server)                client (wl_client)
 *   bulk    read to EOF, close                send --bytes, shutdown(),
 *                                             wait for the server's close
 *   RPC     answer each REQ with RESP         COUNT requests, shutdown()
 *   churn   --accept N: K workers take N      --conns N: N connections in
 *           connections from one listener     turn, each COUNT requests
 *           (wl_churn_server)                 (wl_churn_client)
 *
 * Options go on as tcpwl.c's comment says (tcpwl_sock.c sets them); every
 * byte moves through tcpwl_io.c. Each side prints its summary lines on
 * stdout at the end and returns the exit status.
 */
#include "tcpwl_run.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/net_tstamp.h>

#include "tcpwl_io.h"
#include "tcpwl_sock.h"

/*
 * --accept N: K processes take N connections in all from one listener,
 * each answering a connection's requests until its EOF, then closing it.
 * The counts are shared (an anonymous shared mapping).
 */
struct wl_churn {
	unsigned int next;		/* accept() tickets handed out */
	unsigned long long served;	/* responses sent */
};

static void wl_churn_worker(int lfd, const struct wl_opts *o, struct wl_churn *ch,
			    char *buf)
{
	int fd;

	while (__atomic_fetch_add(&ch->next, 1, __ATOMIC_RELAXED) < o->accept_n) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			wl_die(1, "accept: %s", strerror(errno));
		while (wl_recv_all(fd, buf, o->rpc_req)) {
			wl_send_all(fd, buf, o->rpc_resp);
			__atomic_fetch_add(&ch->served, 1, __ATOMIC_RELAXED);
		}
		close(fd);
	}
}

static int wl_churn_server(int lfd, const struct wl_opts *o)
{
	size_t bufsz = o->rpc_req > o->rpc_resp ? o->rpc_req : o->rpc_resp;
	struct wl_churn *ch;
	unsigned int i;
	int status, bad = 0;
	char *buf = calloc(1, bufsz);
	pid_t pid;

	ch = mmap(NULL, sizeof(*ch), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (!buf || ch == MAP_FAILED)
		wl_die(1, "out of memory");
	for (i = 1; i < o->workers; i++) {
		pid = fork();
		if (pid < 0)
			wl_die(1, "fork: %s", strerror(errno));
		if (!pid) {
			wl_churn_worker(lfd, o, ch, buf);
			_exit(0);
		}
	}
	wl_churn_worker(lfd, o, ch, buf);
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	close(lfd);
	printf("connections %u served %llu\n", o->accept_n, ch->served);
	free(buf);
	return bad;
}

/* --conns N: N connections one after another, each the RPC session. */
int wl_churn_client(const struct wl_opts *o)
{
	struct sockaddr_storage sin;
	socklen_t slen = wl_sockaddr(o, &sin);
	size_t bufsz = o->rpc_req > o->rpc_resp ? o->rpc_req : o->rpc_resp;
	char *buf = calloc(1, bufsz);
	unsigned int c, i;
	int fd;

	if (!buf)
		wl_die(1, "out of memory");
	for (c = 0; c < o->conns; c++) {
		fd = socket(sin.ss_family, SOCK_STREAM, 0);
		if (fd < 0)
			wl_die(1, "socket: %s", strerror(errno));
		wl_sockopts(fd, o);
		if (connect(fd, (struct sockaddr *)&sin, slen))
			wl_die(1, "connection %u: connect %s:%d: %s", c + 1, o->addr, o->port,
			       strerror(errno));
		for (i = 0; i < o->rpc_count; i++) {
			wl_send_all(fd, buf, o->rpc_req);
			if (!wl_recv_all(fd, buf, o->rpc_resp))
				wl_die(1, "connection %u: server closed after %u responses",
				       c + 1, i);
		}
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	printf("connections %u rpc %llu\n", o->conns,
	       (unsigned long long)o->conns * o->rpc_count);
	free(buf);
	return 0;
}

int wl_server(const struct wl_opts *o)
{
	struct sockaddr_storage sin;
	socklen_t slen = wl_sockaddr(o, &sin);
	unsigned long long total = 0, served = 0;
	int lfd, fd, one = 1;
	size_t bufsz;
	char *buf;
	ssize_t n;

	lfd = socket(sin.ss_family, SOCK_STREAM, 0);
	if (lfd < 0)
		wl_die(1, "socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	wl_sockopts(lfd, o);
	wl_keepalive(lfd, o);
	if (o->fastopen)
		wl_setint(lfd, IPPROTO_TCP, TCP_FASTOPEN, 16, "TCP_FASTOPEN");
	if (bind(lfd, (struct sockaddr *)&sin, slen) || listen(lfd, o->accept_n ? 128 : 1))
		wl_die(1, "bind/listen %s:%d: %s", o->addr, o->port, strerror(errno));
	/* After listen(), which clears the delayed-ACK state (inet_csk_delack_init()). */
	if (o->delack)
		wl_setint(lfd, IPPROTO_TCP, TCP_QUICKACK, 0, "TCP_QUICKACK");
	if (o->accept_n)
		return wl_churn_server(lfd, o);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		wl_die(1, "accept: %s", strerror(errno));
	close(lfd);
	if (o->nonblock)
		wl_set_nonblock(fd);
	wl_signals(1);
	if (o->window_clamp)
		wl_setint(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, o->window_clamp,
			  "TCP_WINDOW_CLAMP");

	bufsz = o->io_size;
	if (o->rpc_count && o->rpc_req > bufsz)
		bufsz = o->rpc_req;
	if (o->rpc_count && o->rpc_resp > bufsz)
		bufsz = o->rpc_resp;
	buf = calloc(1, bufsz);
	if (!buf)
		wl_die(1, "out of memory");

	if (o->rpc_count) {
		while (wl_recv_all(fd, buf, o->rpc_req)) {
			if (o->quickack)
				wl_setint(fd, IPPROTO_TCP, TCP_QUICKACK, 1, "TCP_QUICKACK");
			if (served + 1 == o->delay_at)
				usleep(o->delay_ms * 1000);
			wl_send_all(fd, buf, o->rpc_resp);
			served++;
		}
		printf("served %llu\n", served);
	} else {
		unsigned long long splices = 0, zcs = 0;
		int p[2] = { -1, -1 };

		if (o->splice_read && pipe(p))
			wl_die(1, "pipe: %s", strerror(errno));
		if (o->splice_read && o->pipe_size &&
		    fcntl(p[1], F_SETPIPE_SZ, o->pipe_size) < 0)
			wl_die(1, "F_SETPIPE_SZ %d: %s", o->pipe_size, strerror(errno));
		for (;;) {
			if (o->zc_receive) {
				n = wl_zc_read(fd);
				zcs++;
			} else if (o->splice_read) {
				n = splice(fd, NULL, p[1], NULL, o->io_size, 0);
				splices++;
				/* Empty the pipe (--pipe-keep: but for a few bytes). */
				wl_pipe_drain(p[0], buf, bufsz, splices % 2 ? o->pipe_keep : 0);
			} else {
				n = recv(fd, buf, o->io_size, 0);
			}
			if (wl_again(fd, n, POLLIN))
				continue;
			if (n < 0)
				wl_die(1, "recv: %s", strerror(errno));
			if (n == 0)
				break;
			total += n;
			if (o->quickack)
				wl_setint(fd, IPPROTO_TCP, TCP_QUICKACK, 1, "TCP_QUICKACK");
			if (o->read_delay_us)
				usleep(o->read_delay_us);
		}
		printf("received %llu\n", total);
		if (o->zc_receive)
			printf("zerocopy_receives %llu\n", zcs);
		if (o->splice_read) {
			printf("splice_reads %llu\n", splices);
			close(p[0]);
			close(p[1]);
		}
	}
	wl_print_eagain();
	wl_signals(0);
	close(fd);
	free(buf);
	return 0;
}

int wl_client(const struct wl_opts *o)
{
	struct sockaddr_storage sin;
	socklen_t slen = wl_sockaddr(o, &sin);
	unsigned long long left;
	unsigned int i;
	size_t bufsz, chunk;
	char *buf;
	int fd;

	fd = socket(sin.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		wl_die(1, "socket: %s", strerror(errno));
	wl_sockopts(fd, o);
	if (o->fastopen)
		wl_setint(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1, "TCP_FASTOPEN_CONNECT");
	if (o->signal_connect)
		wl_signals(1);
	while (connect(fd, (struct sockaddr *)&sin, slen)) {
		if (errno == EINTR && o->signal_connect) {
			wl_eintr_connect++;
			if (o->connect_once)
				break;	/* the handshake goes on */
			continue;
		}
		if (errno != EINPROGRESS || !o->sndtimeo_ms)
			wl_die(1, "connect %s:%d: %s", o->addr, o->port, strerror(errno));
		wl_timeouts++;		/* the handshake goes on */
		break;
	}
	wl_keepalive(fd, o);
	if (o->nonblock)
		wl_set_nonblock(fd);
	wl_poll_out = o->nonblock && o->poll_out;
	wl_errq = o->errqueue;
	if (o->ulp)
		wl_ulp(fd, o->ulp);
	if (wl_errq == WL_ERRQ_ZEROCOPY)
		wl_setint(fd, SOL_SOCKET, SO_ZEROCOPY, 1, "SO_ZEROCOPY");
	/* OPT_ID wants a connected TCP socket. */
	if (wl_errq == WL_ERRQ_TXSTAMP)
		wl_setint(fd, SOL_SOCKET, SO_TIMESTAMPING,
			  SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
			  SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY,
			  "SO_TIMESTAMPING");
	if (!o->signal_connect)
		wl_signals(1);

	bufsz = o->io_size;
	if (o->rpc_req > bufsz)
		bufsz = o->rpc_req;
	if (o->rpc_resp > bufsz)
		bufsz = o->rpc_resp;
	buf = calloc(1, bufsz);
	if (!buf)
		wl_die(1, "out of memory");

	if (o->rpc_count) {
		for (i = 0; i < o->rpc_count; i++) {
			if (i && o->pause_ms)
				usleep(o->pause_ms * 1000);
			if (o->tos_at && i == o->tos_at)
				wl_setint(fd, IPPROTO_IP, IP_TOS, o->tos_at_val, "IP_TOS");
			if (o->cc_at && i == o->cc_at &&
			    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o->cc_at_name,
				       strlen(o->cc_at_name)))
				wl_die(1, "TCP_CONGESTION %s: %s", o->cc_at_name, strerror(errno));
			if (o->reset_opts && i)
				wl_reset_opts(fd);
			wl_send_all(fd, buf, o->rpc_req);
			if (!wl_recv_all(fd, buf, o->rpc_resp))
				wl_die(1, "server closed after %u responses", i);
		}
		if (o->reset_opts)
			wl_reset_opts(fd);
		shutdown(fd, SHUT_WR);
		printf("rpc %u\n", o->rpc_count);
		if (o->rcvtimeo_ms || o->sndtimeo_ms)
			printf("timeouts %llu\n", wl_timeouts);
	} else {
		int mfd = o->sendfile ? wl_sendfile_src(buf, bufsz,
							 o->bytes + o->sendfile_at) : -1;
		off_t off = o->sendfile_at;

		for (left = o->bytes; left; left -= chunk) {
			chunk = left < o->io_size ? left : o->io_size;
			if (o->sendfile_each)
				off = o->sendfile_at;
			if (mfd >= 0)
				wl_sendfile_all(fd, mfd, &off, chunk);
			else
				wl_send_all(fd, buf, chunk);
		}
		if (mfd >= 0)
			close(mfd);
		wl_errq_wait(fd);
		if (o->linger >= 0) {
			struct timespec t0, t1;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			close(fd);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			printf("sent %llu\nclose_ms %lld\n", o->bytes,
			       (long long)(t1.tv_sec - t0.tv_sec) * 1000 +
			       (t1.tv_nsec - t0.tv_nsec) / 1000000);
			free(buf);
			return 0;
		}
		shutdown(fd, SHUT_WR);
		/* Wait for the server's close: everything was delivered. */
		for (;;) {
			ssize_t n = recv(fd, buf, bufsz, 0);

			if (n > 0 || (n < 0 && (wl_nonblock || errno == EINTR) &&
				      wl_again(fd, n, POLLIN)))
				continue;
			break;
		}
		printf("sent %llu\n", o->bytes);
		if (o->sndtimeo_ms)
			printf("timeouts %llu\n", wl_timeouts);
	}
	if (wl_errq)
		printf("errqueue reads %llu messages %llu\n", wl_errq_reads, wl_errq_msgs);
	wl_print_eagain();
	wl_signals(0);
	close(fd);
	free(buf);
	return 0;
}
