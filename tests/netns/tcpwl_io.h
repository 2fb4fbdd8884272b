/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for tcpwl_io.c: the calls that move tcpwl's bytes and the
 * counts they keep. The globals are set once, by main() or the client
 * after connect(), before the first call that reads them; tcpwl is one
 * thread, so nothing locks them.
 */
#ifndef TCPWL_IO_H
#define TCPWL_IO_H

#include <sys/types.h>

#include "tcpwl.h"

extern unsigned long long wl_timeouts;	/* calls made again after SO_*TIMEO */
extern int wl_nonblock;			/* the connected socket is O_NONBLOCK */
extern int wl_poll_out;			/* ... and poll() before every send() */
extern unsigned int wl_signal_us;	/* SIGALRM interval, us; 0 = none */
extern unsigned long long wl_eintr_connect;	/* connect()s that said EINTR */
extern int wl_errq;			/* --errqueue: WL_ERRQ_* */
extern unsigned long long wl_errq_reads, wl_errq_msgs;	/* recvmsg()s, messages */

/* --nonblock: print the calls that said EAGAIN. */
void wl_print_eagain(void);
/* Make @fd O_NONBLOCK and set wl_nonblock. */
void wl_set_nonblock(int fd);
/* Start (@on) or stop --signal-us's timer, and print the counts when stopped. */
void wl_signals(int on);
/* Is a call on @fd that returned @n to be made again (after poll() for @events)? */
int wl_again(int fd, ssize_t n, short events);
/* --sendfile: a memfd of @len zero bytes, written from @buf of @bufsz. */
int wl_sendfile_src(const char *buf, size_t bufsz, unsigned long long len);
/* sendfile() @len bytes of @mfd from *@off on. */
void wl_sendfile_all(int fd, int mfd, off_t *off, size_t len);
/* --errqueue zerocopy|tx-timestamps: wait up to 2 s for the queue, drain it. */
void wl_errq_wait(int fd);
/* send() all @len bytes of @buf. */
void wl_send_all(int fd, const char *buf, size_t len);
/* Read the pipe @fd down to at most @keep bytes, through @buf of @bufsz. */
void wl_pipe_drain(int fd, char *buf, size_t bufsz, int keep);
/* Read exactly @len bytes; return 0 at a clean EOF before the first byte. */
int wl_recv_all(int fd, char *buf, size_t len);
/* --zerocopy-receive: one read; return the bytes read, 0 at EOF. */
ssize_t wl_zc_read(int fd);

#endif /* TCPWL_IO_H */
