// SPDX-License-Identifier: GPL-2.0
/*
 * tcpwl_io: the calls that move tcpwl's bytes, made again until done.
 *
 * Every send(), recv(), sendfile() and splice() goes through wl_again(),
 * which decides whether a call that failed is made again:
 *
 *   n >= 0                       -> no: the caller uses n
 *   EAGAIN, --nonblock           -> poll() for the event, count, again
 *   EAGAIN, SO_RCVTIMEO/SNDTIMEO -> count a timeout, again
 *   EINTR (--signal-us)          -> count, again
 *   anything else                -> no: the caller dies with errno
 *
 * so that a workload with timeouts, signals or an event loop still moves
 * every byte, and the counts printed at the end say how often each path
 * ran. The error queue (--errqueue) is drained after every send(); the
 * server's other readers are splice() into a pipe (--splice-read) and
 * getsockopt(TCP_ZEROCOPY_RECEIVE) (--zerocopy-receive).
 */
#include "tcpwl_io.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Calls that timed out (SO_RCVTIMEO, SO_SNDTIMEO) and were made again. */
unsigned long long wl_timeouts;

/* --nonblock: the connected socket is O_NONBLOCK; calls that said EAGAIN. */
int wl_nonblock, wl_poll_out;
static unsigned long long wl_eagain_send, wl_eagain_recv;

void wl_print_eagain(void)
{
	if (wl_nonblock)
		printf("eagain send %llu recv %llu\n", wl_eagain_send, wl_eagain_recv);
}

void wl_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		wl_die(1, "O_NONBLOCK: %s", strerror(errno));
	wl_nonblock = 1;
}

/* --signal-us: SIGALRM every N us while connected; calls that said EINTR. */
unsigned int wl_signal_us;
static unsigned long long wl_eintr_send, wl_eintr_recv;
unsigned long long wl_eintr_connect;

static void wl_alarm(int sig)
{
	(void)sig;
}

/* Start (@on) or stop --signal-us's timer, and print the counts when stopped. */
void wl_signals(int on)
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
int wl_again(int fd, ssize_t n, short events)
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
int wl_sendfile_src(const char *buf, size_t bufsz, unsigned long long len)
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
void wl_sendfile_all(int fd, int mfd, off_t *off, size_t len)
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

int wl_errq;
unsigned long long wl_errq_reads, wl_errq_msgs;

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
void wl_errq_wait(int fd)
{
	struct pollfd p = { .fd = fd };

	if (wl_errq != WL_ERRQ_ZEROCOPY && wl_errq != WL_ERRQ_TXSTAMP)
		return;
	if (poll(&p, 1, 2000) > 0 && (p.revents & POLLERR))
		wl_errq_drain(fd);
}

void wl_send_all(int fd, const char *buf, size_t len)
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
void wl_pipe_drain(int fd, char *buf, size_t bufsz, int keep)
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
int wl_recv_all(int fd, char *buf, size_t len)
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
ssize_t wl_zc_read(int fd)
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
