// SPDX-License-Identifier: GPL-2.0
/*
 * tcpwl: the TCP workloads deter's scenarios record and replay.
 *
 *   tcpwl server [-b ADDR] [-p PORT] [--rpc REQ:RESP] [--read-size N]
 *                [--read-delay-us N] [--rcvbuf N] [--quickack]
 *                [--window-clamp N] [--resp-delay-ms K:MS] [--splice-read]
 *                [--pipe-size N] [--pipe-keep N] [--zerocopy-receive]
 *                [--accept N [--workers K]] [SOCKET OPTIONS]
 *   tcpwl client -c ADDR [-p PORT] [--bytes N] [--write-size N]
 *                [--rpc COUNT:REQ:RESP [--conns N]] [--pause-ms N] [--sndbuf N] [--cc NAME]
 *                [SOCKET OPTIONS] [--tos-at K:TOS] [--cc-at K:NAME] [--reset-opts]
 *                [--sendfile] [--errqueue poll|zerocopy|tx-timestamps] [--ulp NAME]
 *   SOCKET OPTIONS: [--tos TOS] [--keepalive IDLE:INTVL:CNT]
 *                   [--user-timeout MS] [--notsent-lowat N] [--syncnt N]
 *                   [--linger2 S] [--linger S] [--thin-lto] [--max-pacing-rate BPS]
 *                   [--priority N] [--mark N] [--rcvtimeo-ms N] [--sndtimeo-ms N]
 *                   [--nonblock] [--poll-out] [--signal-us N] [--signal-connect]
 *                   [--connect-once] [--fastopen]
 *
 * The server accepts one connection. In bulk mode it reads to EOF and
 * closes; in RPC mode it answers each REQ-byte request with RESP bytes.
 * Connection churn, in RPC mode: the server's --accept N serves N
 * connections in all, K processes (--workers K) taking them from one
 * listener, and prints "connections N served M"; the client's --conns N
 * makes N connections one after another, each COUNT requests, then
 * shutdown() and close(), and prints "connections N rpc M".
 * Socket options go on the listener (the accepted socket inherits them)
 * and before connect(), except the client's --keepalive, set after
 * connect(), and --tos-at and --cc-at, which set IP_TOS and
 * TCP_CONGESTION before request K. The server's --window-clamp sets
 * TCP_WINDOW_CLAMP on the accepted socket, and --quickack TCP_QUICKACK
 * after each read (bulk) or request (RPC), as latency-minded servers do;
 * --resp-delay-ms holds its K-th response (from 1) back MS ms. In bulk
 * mode, --splice-read reads with splice() into a pipe, as proxies do,
 * and empties the pipe after each call; it prints "splice_reads N".
 * --pipe-size sets the pipe's size (F_SETPIPE_SZ), and --pipe-keep N
 * leaves up to N bytes in it after every other call, so that the next
 * call finds it part full, as a proxy's pipe is when its peer is slow.
 * --fastopen asks for TCP Fast Open: TCP_FASTOPEN on the listener,
 * TCP_FASTOPEN_CONNECT on the client (its first send goes in the SYN
 * once it has a cookie; the namespaces' tcp_fastopen must allow it).
 * --zerocopy-receive reads with getsockopt(TCP_ZEROCOPY_RECEIVE), its
 * bytes copied into a buffer larger than the receive queue can grow
 * (--rcvbuf 65536 is set with it), polling when none are there, and
 * prints "zerocopy_receives N"; it ends at EOF (EIO) without a recv(). A call
 * that times out (--rcvtimeo-ms, --sndtimeo-ms) is counted and made
 * again, as an application with timeouts would after logging it; the
 * count is printed as "timeouts N". --force-bufs sets --sndbuf and
 * --rcvbuf with SO_SNDBUFFORCE and SO_RCVBUFFORCE, past net.core's
 * wmem_max and rmem_max (which SO_SNDBUF and SO_RCVBUF stop at).
 * --reset-opts sets SO_KEEPALIVE and TCP_NODELAY again, to the values
 * they have, before every request but the first and before shutdown()
 * (as some applications do): calls that take the socket lock and change
 * nothing deter records. --nonblock makes the connected socket
 * O_NONBLOCK and waits in poll() whenever a call would block, as event
 * loops do (tcp_poll() then runs between the calls), and prints how many
 * calls said EAGAIN as "eagain send N recv N". The client's --poll-out
 * (with --nonblock) polls for room before every send(), as loops that
 * keep POLLOUT armed do. --signal-us sends the process SIGALRM every N
 * us once connected (an interval timer, a handler without SA_RESTART),
 * so that blocking calls end early, as in applications with timers or
 * profilers; calls that said EINTR are made again and counted, printed
 * as "eintr send N recv N connect N". The client's --signal-connect
 * starts the timer before connect() instead, so that signals end its wait
 * for the handshake too; connect() is then made again (it returns 0 once
 * the handshake is done, or waits again); with --connect-once it is not,
 * and the first send() waits for the handshake. With --sndtimeo-ms, a
 * connect() that times out (EINPROGRESS: the handshake goes on) is
 * counted too, and the client's calls follow (a send() waits for the
 * connection). --linger
 * sets SO_LINGER with S seconds; the bulk client then closes right
 * after its last send() (no shutdown(), no wait for the server's close)
 * and prints how long close() took as "close_ms N". The bulk client's
 * --sendfile sends with sendfile() from a memfd instead of send();
 * --sendfile-at OFF from offset OFF of it on; --sendfile-each makes
 * each write a file of its own, sent from that offset (as a server
 * sends one file per request). The client's --errqueue reads the
 * socket's error queue after every send(), until it is empty, as
 * applications that use it do: "poll" only reads it (it stays empty),
 * "zerocopy" sends with MSG_ZEROCOPY on a socket with SO_ZEROCOPY (the
 * queue gets their completions), "tx-timestamps" sets SO_TIMESTAMPING
 * for software transmit timestamps once connected (the queue gets the
 * timestamps), and after the last send() waits up to 2 s for something
 * there; it prints "errqueue reads N messages M". The client's
 * --ulp sets TCP_ULP NAME once connected (a layer above TCP); --ulp
 * tls-tx sets the "tls" ULP and a TLS 1.2 AES-GCM-128 transmit key (of
 * zeros), so that kTLS encrypts every send into records.
 * Each side prints one summary line on stdout. Payload is zeros: deter
 * never looks at payload bytes. Exit 0 ok, 1 failure, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/tls.h>
#include <linux/net_tstamp.h>

struct wl_opts {
	const char *addr;		/* server: bind; client: connect */
	int port;
	unsigned long long bytes;	/* bulk: bytes to send */
	size_t io_size;			/* bytes per send()/recv() call */
	unsigned int rpc_count;		/* RPC: requests, 0 for bulk */
	size_t rpc_req, rpc_resp;	/* RPC: request and response bytes */
	unsigned int read_delay_us;	/* server: pause between reads */
	int splice_read;		/* server: read with splice() */
	int pipe_size;			/* ... into a pipe this large, 0 = default */
	int pipe_keep;			/* ... left with up to N bytes every other call */
	int fastopen;			/* TCP Fast Open: TCP_FASTOPEN(_CONNECT) */
	int zc_receive;			/* server: read with TCP_ZEROCOPY_RECEIVE */
	int sndbuf, rcvbuf;		/* SO_SNDBUF/SO_RCVBUF, 0 = default */
	int force_bufs;			/* ... as SO_SNDBUFFORCE/SO_RCVBUFFORCE */
	const char *cc;			/* TCP_CONGESTION, NULL = default */
	unsigned int pause_ms;		/* client RPC: pause between requests */
	int tos;			/* IP_TOS, -1 = default */
	int ka_idle, ka_intvl, ka_cnt;	/* SO_KEEPALIVE + TCP_KEEP*, 0 = off */
	int user_timeout;		/* TCP_USER_TIMEOUT, ms, 0 = default */
	int notsent_lowat;		/* TCP_NOTSENT_LOWAT, 0 = default */
	int reset_opts;			/* client RPC: redundant setsockopt()s */
	unsigned int tos_at;		/* client RPC: request to change TOS before */
	int tos_at_val;			/* ... to this */
	unsigned int cc_at;		/* client RPC: request to change cc before */
	char cc_at_name[16];		/* ... to this */
	int syncnt, linger2;		/* TCP_SYNCNT, TCP_LINGER2; 0 = default */
	int linger;			/* SO_LINGER seconds, -1 = off */
	int thin_lto;			/* TCP_THIN_LINEAR_TIMEOUTS */
	unsigned long long max_pacing;	/* SO_MAX_PACING_RATE, B/s; 0 = default */
	int priority, mark;		/* SO_PRIORITY, SO_MARK; -1/0 = default */
	unsigned int rcvtimeo_ms, sndtimeo_ms;	/* SO_RCVTIMEO/SNDTIMEO, 0 = none */
	unsigned long long delay_at;	/* server RPC: response to hold back */
	unsigned int delay_ms;		/* ... by this */
	int quickack;			/* server: TCP_QUICKACK after each read */
	int window_clamp;		/* server: TCP_WINDOW_CLAMP, 0 = default */
	int nonblock;			/* O_NONBLOCK, poll() before calls */
	int poll_out;			/* ... and before every send() */
	int sendfile;			/* bulk client: sendfile() from a memfd */
	unsigned long sendfile_at;	/* ... from this offset in it on */
	int errqueue;			/* client: WL_ERRQ_* */
	const char *ulp;		/* client: TCP_ULP once connected */
	int sendfile_each;		/* ... each write from that offset again */
	unsigned int signal_us;		/* SIGALRM interval once connected, 0 = none */
	int signal_connect;		/* client: ... from before connect() */
	int connect_once;		/* ... and no connect() again after EINTR */
	unsigned int accept_n;		/* server RPC: connections in all, 0 = one */
	unsigned int workers;		/* ... processes accepting them */
	unsigned int conns;		/* client RPC: connections, 0 = one */
};

static void __attribute__((noreturn, format(printf, 2, 3)))
wl_die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tcpwl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static unsigned long long wl_num(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		wl_die(2, "%s: '%s' is not a number", opt, s);
	return v;
}

static void wl_setint(int fd, int level, int opt, int val, const char *name)
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

static void wl_sockopts(int fd, const struct wl_opts *o)
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
static void wl_reset_opts(int fd)
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

static void wl_keepalive(int fd, const struct wl_opts *o)
{
	if (!o->ka_idle)
		return;
	wl_setint(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
	wl_setint(fd, IPPROTO_TCP, TCP_KEEPIDLE, o->ka_idle, "TCP_KEEPIDLE");
	wl_setint(fd, IPPROTO_TCP, TCP_KEEPINTVL, o->ka_intvl, "TCP_KEEPINTVL");
	wl_setint(fd, IPPROTO_TCP, TCP_KEEPCNT, o->ka_cnt, "TCP_KEEPCNT");
}

/* -b or -c ADDR, IPv4 or IPv6 (:: or ::ffff:a.b.c.d for IPv4 peers too). */
static socklen_t wl_sockaddr(const struct wl_opts *o, struct sockaddr_storage *ss)
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

/* Calls that timed out (SO_RCVTIMEO, SO_SNDTIMEO) and were made again. */
static unsigned long long wl_timeouts;

/* --nonblock: the connected socket is O_NONBLOCK; calls that said EAGAIN. */
static int wl_nonblock, wl_poll_out;
static unsigned long long wl_eagain_send, wl_eagain_recv;

static void wl_print_eagain(void)
{
	if (wl_nonblock)
		printf("eagain send %llu recv %llu\n", wl_eagain_send, wl_eagain_recv);
}

static void wl_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		wl_die(1, "O_NONBLOCK: %s", strerror(errno));
	wl_nonblock = 1;
}

/* --signal-us: SIGALRM every N us while connected; calls that said EINTR. */
static unsigned int wl_signal_us;
static unsigned long long wl_eintr_send, wl_eintr_recv, wl_eintr_connect;

static void wl_alarm(int sig)
{
	(void)sig;
}

/* Start (@on) or stop --signal-us's timer, and print the counts when stopped. */
static void wl_signals(int on)
{
	struct sigaction sa = { .sa_handler = wl_alarm };
	struct itimerval it = {};

	if (!wl_signal_us)
		return;
	if (on && sigaction(SIGALRM, &sa, NULL))
		wl_die(1, "sigaction: %s", strerror(errno));
	if (on) {
		it.it_interval.tv_sec = wl_signal_us / 1000000;
		it.it_interval.tv_usec = wl_signal_us % 1000000;
	}
	it.it_value = it.it_interval;
	if (setitimer(ITIMER_REAL, &it, NULL))
		wl_die(1, "setitimer: %s", strerror(errno));
	if (!on)
		printf("eintr send %llu recv %llu connect %llu\n", wl_eintr_send,
		       wl_eintr_recv, wl_eintr_connect);
}

/* Wait until poll() says @events on @fd (or a signal came). */
static void wl_poll(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (poll(&p, 1, -1) < 0 && errno != EINTR)
		wl_die(1, "poll: %s", strerror(errno));
}

/*
 * Is a call on @fd that returned @n to be made again: interrupted, timed
 * out (counted), or (--nonblock) it would have blocked: then after
 * poll() says @events.
 */
static int wl_again(int fd, ssize_t n, short events)
{
	if (n >= 0)
		return 0;
	if ((errno == EAGAIN || errno == EWOULDBLOCK) && wl_nonblock) {
		if (events == POLLOUT)
			wl_eagain_send++;
		else
			wl_eagain_recv++;
		wl_poll(fd, events);
		return 1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		wl_timeouts++;
		return 1;
	}
	if (errno != EINTR)
		return 0;
	if (events == POLLOUT)
		wl_eintr_send++;
	else
		wl_eintr_recv++;
	return 1;
}

/*
 * --sendfile: a memfd of @len bytes of zeros, written (a hole would be
 * spliced as the zero page), to sendfile() from.
 */
static int wl_sendfile_src(const char *buf, size_t bufsz, unsigned long long len)
{
	int mfd = memfd_create("tcpwl", 0);
	size_t n;

	if (mfd < 0)
		wl_die(1, "memfd_create: %s", strerror(errno));
	for (; len; len -= n) {
		n = len < bufsz ? len : bufsz;
		if (write(mfd, buf, n) != (ssize_t)n)
			wl_die(1, "memfd write: %s", strerror(errno));
	}
	return mfd;
}

/* sendfile() @len bytes of @mfd from *@off on. */
static void wl_sendfile_all(int fd, int mfd, off_t *off, size_t len)
{
	ssize_t n;

	while (len) {
		if (wl_poll_out)
			wl_poll(fd, POLLOUT);
		n = sendfile(fd, mfd, off, len);
		if (wl_again(fd, n, POLLOUT))
			continue;
		if (n <= 0)
			wl_die(1, "sendfile: %s", n ? strerror(errno) : "end of file");
		len -= n;
	}
}

enum { WL_ERRQ_NONE, WL_ERRQ_POLL, WL_ERRQ_ZEROCOPY, WL_ERRQ_TXSTAMP };

static int wl_errq;
static unsigned long long wl_errq_reads, wl_errq_msgs;

/* --errqueue: read the error queue until it is empty. */
static void wl_errq_drain(int fd)
{
	char ctl[512];

	for (;;) {
		struct msghdr m = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		ssize_t n = recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT);

		wl_errq_reads++;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0)
			wl_die(1, "recvmsg(MSG_ERRQUEUE): %s", strerror(errno));
		wl_errq_msgs++;
	}
}

/*
 * --errqueue zerocopy|tx-timestamps, after the last send(): wait up to
 * 2 s for the error queue to hold something (POLLERR) and drain it, so
 * that at least one read finds a message however fast the sends went.
 */
static void wl_errq_wait(int fd)
{
	struct pollfd p = { .fd = fd };

	if (wl_errq != WL_ERRQ_ZEROCOPY && wl_errq != WL_ERRQ_TXSTAMP)
		return;
	if (poll(&p, 1, 2000) > 0 && (p.revents & POLLERR))
		wl_errq_drain(fd);
}

static void wl_send_all(int fd, const char *buf, size_t len)
{
	int flags = wl_errq == WL_ERRQ_ZEROCOPY ? MSG_ZEROCOPY : 0;
	ssize_t n;

	while (len) {
		if (wl_poll_out)
			wl_poll(fd, POLLOUT);
		n = send(fd, buf, len, flags);
		if (wl_again(fd, n, POLLOUT))
			continue;
		if (n < 0)
			wl_die(1, "send: %s", strerror(errno));
		len -= n;
		if (wl_errq)
			wl_errq_drain(fd);
	}
}

/* Read the pipe down to at most @keep bytes. */
static void wl_pipe_drain(int fd, char *buf, size_t bufsz, int keep)
{
	int in;
	ssize_t m;

	for (;;) {
		if (ioctl(fd, FIONREAD, &in))
			wl_die(1, "FIONREAD on the pipe: %s", strerror(errno));
		if (in <= keep)
			return;
		m = read(fd, buf, (size_t)(in - keep) < bufsz ? (size_t)(in - keep) : bufsz);
		if (m <= 0)
			wl_die(1, "read from the pipe: %s", m ? strerror(errno) : "end of file");
	}
}

/* Read exactly @len bytes; return 0 at a clean EOF before the first byte. */
static int wl_recv_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, 0);
		if (wl_again(fd, n, POLLIN))
			continue;
		if (n < 0)
			wl_die(1, "recv: %s", strerror(errno));
		if (n == 0) {
			if (!got)
				return 0;
			wl_die(1, "connection closed inside a message");
		}
		got += n;
	}
	return 1;
}

/*
 * --zerocopy-receive: one getsockopt(TCP_ZEROCOPY_RECEIVE) that copies
 * what the receive queue holds into a buffer (no mapping: the buffer
 * holds more than the queue can), polling first when it is empty.
 * Return: the bytes read, 0 at EOF.
 */
static ssize_t wl_zc_read(int fd)
{
	/* linux/tcp.h's (6.12), which netinet/tcp.h has only the start of */
	struct {
		unsigned long long address;
		unsigned int length, recv_skip_hint, inq;
		int err;
		unsigned long long copybuf_address;
		int copybuf_len;
		unsigned int flags;
		unsigned long long msg_control, msg_controllen;
		unsigned int msg_flags, reserved;
	} zc;
	static char copybuf[1 << 20];
	socklen_t len = sizeof(zc);

	for (;;) {
		memset(&zc, 0, sizeof(zc));
		zc.copybuf_address = (unsigned long)copybuf;
		zc.copybuf_len = sizeof(copybuf);
		if (getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &len)) {
			if (errno == EIO)
				return 0;	/* the queue is empty and the peer done */
			wl_die(1, "TCP_ZEROCOPY_RECEIVE: %s", strerror(errno));
		}
		if (zc.err)
			wl_die(1, "TCP_ZEROCOPY_RECEIVE: error %d", zc.err);
		if (zc.copybuf_len > 0)
			return zc.copybuf_len;
		if (zc.recv_skip_hint)
			wl_die(1, "TCP_ZEROCOPY_RECEIVE: %u bytes left past the buffer",
			       zc.recv_skip_hint);
		wl_poll(fd, POLLIN);
	}
}

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
static int wl_churn_client(const struct wl_opts *o)
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

static int wl_server(const struct wl_opts *o)
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

/* --ulp: TCP_ULP @name, or "tls-tx": kTLS with a transmit key. */
static void wl_ulp(int fd, const char *name)
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

static int wl_client(const struct wl_opts *o)
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

static void wl_usage(FILE *f)
{
	fprintf(f,
		"usage: tcpwl server [-b ADDR] [-p PORT] [--rpc REQ:RESP] [--read-size N]\n"
		"                    [--read-delay-us N] [--rcvbuf N] [--quickack]\n"
		"                    [--window-clamp N] [--resp-delay-ms K:MS] [--splice-read]\n"
		"                    [--pipe-size N] [--pipe-keep N] [--zerocopy-receive]\n"
		"                    [--accept N [--workers K]] [SOCKET OPTIONS]\n"
		"       tcpwl client -c ADDR [-p PORT] [--bytes N] [--write-size N]\n"
		"                    [--rpc COUNT:REQ:RESP [--conns N]] [--pause-ms N] [--sndbuf N]\n"
		"                    [--cc NAME] [SOCKET OPTIONS] [--tos-at K:TOS] [--cc-at K:NAME]\n"
		"                    [--reset-opts] [--sendfile] [--sendfile-at OFF]\n"
		"                    [--sendfile-each] [--errqueue poll|zerocopy|tx-timestamps]\n"
		"                    [--ulp NAME]\n"
		"SOCKET OPTIONS: [--tos TOS] [--keepalive IDLE:INTVL:CNT] [--user-timeout MS]\n"
		"                [--notsent-lowat N] [--syncnt N] [--linger2 S] [--linger S]\n"
		"                [--thin-lto]\n"
		"                [--max-pacing-rate BPS] [--priority N] [--mark N]\n"
		"                [--rcvtimeo-ms N] [--sndtimeo-ms N] [--force-bufs] [--nonblock]\n"
		"                [--poll-out] [--signal-us N] [--signal-connect] [--connect-once]\n"
		"                [--fastopen]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bytes", required_argument, NULL, 'n' },
		{ "write-size", required_argument, NULL, 'w' },
		{ "read-size", required_argument, NULL, 'r' },
		{ "read-delay-us", required_argument, NULL, 'd' },
		{ "splice-read", no_argument, NULL, 'V' },
		{ "pipe-size", required_argument, NULL, 'i' },
		{ "pipe-keep", required_argument, NULL, 'l' },
		{ "fastopen", no_argument, NULL, 'a' },
		{ "zerocopy-receive", no_argument, NULL, 'g' },
		{ "rpc", required_argument, NULL, 'R' },
		{ "sndbuf", required_argument, NULL, 'S' },
		{ "rcvbuf", required_argument, NULL, 'B' },
		{ "force-bufs", no_argument, NULL, 'F' },
		{ "cc", required_argument, NULL, 'C' },
		{ "pause-ms", required_argument, NULL, 'P' },
		{ "tos", required_argument, NULL, 'T' },
		{ "tos-at", required_argument, NULL, 'A' },
		{ "keepalive", required_argument, NULL, 'K' },
		{ "user-timeout", required_argument, NULL, 'U' },
		{ "notsent-lowat", required_argument, NULL, 'L' },
		{ "reset-opts", no_argument, NULL, 'O' },
		{ "cc-at", required_argument, NULL, 'G' },
		{ "syncnt", required_argument, NULL, 'Y' },
		{ "linger2", required_argument, NULL, 'I' },
		{ "linger", required_argument, NULL, 'J' },
		{ "thin-lto", no_argument, NULL, 'H' },
		{ "max-pacing-rate", required_argument, NULL, 'M' },
		{ "priority", required_argument, NULL, 'X' },
		{ "resp-delay-ms", required_argument, NULL, 'D' },
		{ "mark", required_argument, NULL, 'k' },
		{ "rcvtimeo-ms", required_argument, NULL, 'e' },
		{ "signal-us", required_argument, NULL, 'Z' },
		{ "signal-connect", no_argument, NULL, 'z' },
		{ "connect-once", no_argument, NULL, 'y' },
		{ "sndtimeo-ms", required_argument, NULL, 'f' },
		{ "quickack", no_argument, NULL, 'Q' },
		{ "window-clamp", required_argument, NULL, 'W' },
		{ "nonblock", no_argument, NULL, 'N' },
		{ "poll-out", no_argument, NULL, 'o' },
		{ "sendfile", no_argument, NULL, 'j' },
		{ "sendfile-at", required_argument, NULL, 'q' },
		{ "sendfile-each", no_argument, NULL, 'E' },
		{ "errqueue", required_argument, NULL, 'x' },
		{ "ulp", required_argument, NULL, 'u' },
		{ "accept", required_argument, NULL, 256 },
		{ "workers", required_argument, NULL, 257 },
		{ "conns", required_argument, NULL, 258 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wl_opts o = {
		.addr = "0.0.0.0", .port = 5201, .bytes = 1 << 20, .io_size = 16384,
		.tos = -1, .priority = -1, .linger = -1, .workers = 1,
	};
	unsigned int count;
	size_t req, resp;
	int server, c;

	if (argc < 2) {
		wl_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		wl_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "server") && strcmp(argv[1], "client"))
		wl_die(2, "unknown mode '%s' (server, client)", argv[1]);
	server = !strcmp(argv[1], "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, "b:c:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
		case 'c':
			o.addr = optarg;
			break;
		case 'p':
			o.port = wl_num("-p", optarg);
			break;
		case 'n':
			o.bytes = wl_num("--bytes", optarg);
			break;
		case 'w':
		case 'r':
			o.io_size = wl_num("--write-size", optarg);
			break;
		case 'd':
			o.read_delay_us = wl_num("--read-delay-us", optarg);
			break;
		case 'g':
			o.zc_receive = 1;
			o.rcvbuf = 65536;
			break;
		case 'V':
			o.splice_read = 1;
			break;
		case 'i':
			o.pipe_size = wl_num("--pipe-size", optarg);
			break;
		case 'l':
			o.pipe_keep = wl_num("--pipe-keep", optarg);
			break;
		case 'a':
			o.fastopen = 1;
			break;
		case 'S':
			o.sndbuf = wl_num("--sndbuf", optarg);
			break;
		case 'B':
			o.rcvbuf = wl_num("--rcvbuf", optarg);
			break;
		case 'F':
			o.force_bufs = 1;
			break;
		case 'C':
			o.cc = optarg;
			break;
		case 'P':
			o.pause_ms = wl_num("--pause-ms", optarg);
			break;
		case 'T':
			o.tos = wl_num("--tos", optarg);
			break;
		case 'A':
			if (sscanf(optarg, "%u:%i", &o.tos_at, &o.tos_at_val) != 2 || !o.tos_at)
				wl_die(2, "--tos-at: '%s' is not K:TOS (K > 0)", optarg);
			break;
		case 'K':
			if (sscanf(optarg, "%d:%d:%d", &o.ka_idle, &o.ka_intvl, &o.ka_cnt) != 3 ||
			    o.ka_idle <= 0 || o.ka_intvl <= 0 || o.ka_cnt <= 0)
				wl_die(2, "--keepalive: '%s' is not IDLE:INTVL:CNT", optarg);
			break;
		case 'U':
			o.user_timeout = wl_num("--user-timeout", optarg);
			break;
		case 'L':
			o.notsent_lowat = wl_num("--notsent-lowat", optarg);
			break;
		case 'O':
			o.reset_opts = 1;
			break;
		case 'G':
			if (sscanf(optarg, "%u:%15s", &o.cc_at, o.cc_at_name) != 2 || !o.cc_at)
				wl_die(2, "--cc-at: '%s' is not K:NAME (K > 0)", optarg);
			break;
		case 'Y':
			o.syncnt = wl_num("--syncnt", optarg);
			break;
		case 'I':
			o.linger2 = wl_num("--linger2", optarg);
			break;
		case 'J':
			o.linger = wl_num("--linger", optarg);
			break;
		case 'H':
			o.thin_lto = 1;
			break;
		case 'M':
			o.max_pacing = wl_num("--max-pacing-rate", optarg);
			break;
		case 'X':
			o.priority = wl_num("--priority", optarg);
			break;
		case 'D':
			if (sscanf(optarg, "%llu:%u", &o.delay_at, &o.delay_ms) != 2 || !o.delay_at)
				wl_die(2, "--resp-delay-ms: '%s' is not K:MS (K > 0)", optarg);
			break;
		case 'k':
			o.mark = wl_num("--mark", optarg);
			break;
		case 'e':
			o.rcvtimeo_ms = wl_num("--rcvtimeo-ms", optarg);
			break;
		case 'f':
			o.sndtimeo_ms = wl_num("--sndtimeo-ms", optarg);
			break;
		case 'R':
			if (server ? sscanf(optarg, "%zu:%zu", &req, &resp) != 2 :
				     sscanf(optarg, "%u:%zu:%zu", &count, &req, &resp) != 3)
				wl_die(2, "--rpc: '%s' is not %s", optarg,
				       server ? "REQ:RESP" : "COUNT:REQ:RESP");
			o.rpc_count = server ? 1 : count;
			o.rpc_req = req;
			o.rpc_resp = resp;
			break;
		case 'Q':
			o.quickack = 1;
			break;
		case 'N':
			o.nonblock = 1;
			break;
		case 'o':
			o.poll_out = 1;
			break;
		case 'j':
			o.sendfile = 1;
			break;
		case 'E':
			o.sendfile = 1;
			o.sendfile_each = 1;
			break;
		case 'q':
			o.sendfile = 1;
			o.sendfile_at = wl_num("--sendfile-at", optarg);
			break;
		case 'x':
			if (!strcmp(optarg, "poll"))
				o.errqueue = WL_ERRQ_POLL;
			else if (!strcmp(optarg, "zerocopy"))
				o.errqueue = WL_ERRQ_ZEROCOPY;
			else if (!strcmp(optarg, "tx-timestamps"))
				o.errqueue = WL_ERRQ_TXSTAMP;
			else
				wl_die(2, "--errqueue: '%s' is not poll, zerocopy or tx-timestamps",
				       optarg);
			break;
		case 'u':
			o.ulp = optarg;
			break;
		case 'Z':
			o.signal_us = wl_num("--signal-us", optarg);
			break;
		case 'z':
			o.signal_connect = 1;
			break;
		case 'y':
			o.connect_once = 1;
			break;
		case 'W':
			o.window_clamp = wl_num("--window-clamp", optarg);
			break;
		case 256:
			o.accept_n = wl_num("--accept", optarg);
			break;
		case 257:
			o.workers = wl_num("--workers", optarg);
			break;
		case 258:
			o.conns = wl_num("--conns", optarg);
			break;
		case 'h':
			wl_usage(stdout);
			return 0;
		default:
			wl_usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		wl_die(2, "unexpected argument '%s'", argv[optind]);
	if (!o.io_size || (o.rpc_count && (!o.rpc_req || !o.rpc_resp)))
		wl_die(2, "sizes must be positive");
	if (o.signal_connect && (server || !o.signal_us))
		wl_die(2, "--signal-connect is the client's, with --signal-us");
	if (o.ulp && server)
		wl_die(2, "--ulp is the client's");
	if (o.errqueue && (server || o.sendfile))
		wl_die(2, "--errqueue is the client's, without --sendfile");
	if (o.connect_once && !o.signal_connect)
		wl_die(2, "--connect-once goes with --signal-connect");
	if ((o.accept_n && (!server || !o.rpc_count)) || (o.conns && (server || !o.rpc_count)))
		wl_die(2, "--accept is the server's, --conns the client's, in RPC mode");
	if (!o.workers || (o.workers > 1 && !o.accept_n))
		wl_die(2, "--workers: a number above 0, with --accept");
	wl_signal_us = o.signal_us;
	if (o.conns)
		return wl_churn_client(&o);
	return server ? wl_server(&o) : wl_client(&o);
}
