/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface for tcpwl's modules: the options main() parses, which every
 * module reads and none writes, and the one error exit.
 *
 * tcpwl is one thread (the --workers processes of the churn server share
 * only the counters in their shared mapping), so the modules' state is
 * plain globals, read and written without locks.
 */
#ifndef TCPWL_H
#define TCPWL_H

#include <stddef.h>

/* --errqueue: what the client does with the socket's error queue. */
enum { WL_ERRQ_NONE, WL_ERRQ_POLL, WL_ERRQ_ZEROCOPY, WL_ERRQ_TXSTAMP };

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
	int delack;			/* server: TCP_QUICKACK 0 on the listener */
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

/* Print "tcpwl: " and the message on stderr and exit with @status. */
void __attribute__((noreturn, format(printf, 2, 3)))
wl_die(int status, const char *fmt, ...);

#endif /* TCPWL_H */
