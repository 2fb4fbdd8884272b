// SPDX-License-Identifier: GPL-2.0
/*
 * The socket-call generator: the application side of a replay.
 *
 * deter.ko replays the kernel side of a connection end, but the calls
 * into it must come from somewhere: this generator stands in for the
 * recorded application. It opens the connection the way it was opened
 * and then issues each recorded call with the recorded size and flags
 * and a synthetic payload (zeros: logs hold no payload):
 *
 *   passive:  socket  SO_REUSEADDR  TCP_CONGESTION  [options]  bind(saddr:sport)
 *             listen  -> "L" ->  accept
 *   active:   socket  TCP_CONGESTION  [options]  bind(saddr:sport)
 *             connect(daddr:dport)
 *   then, per recorded thread tid, in that thread's order:
 *             [the options the log has changed before the call]
 *             send | recv | shutdown | close  ->  compare with CALL_DONE
 *
 * A send the log has with MSG_SPLICE_PAGES came from sendfile() or
 * splice(): TCP took the file's pages into its segments rather than
 * copying into its own page fragment, and the replay must too. The
 * thread fills a pipe of its own with that many bytes from a memfd of
 * zeros and splice()s them to the socket in one call, which reaches TCP
 * as one such sendmsg() (MSG_MORE if the log has it). Where its bytes
 * start in their page, and whether they go on from the last spliced
 * send's in the same page (DETER_SPLICE_*), decide how TCP merges and
 * splits them: the thread takes them from the memfd where
 * they lie so, after its last send's bytes, or from a page of their own.
 * A send that returned short is followed, inside the same splice(), by
 * the kernel's own sends of the bytes left (splice_to_socket()), which
 * the log has as calls of their own (replay_call.cont): the thread's
 * one splice() makes them too, and returns what they all took.
 * What a send cut short left in the pipe is dropped, and the next send
 * starts again from the first byte not sent, as sendfile() does (a
 * nonblocking socket's, each time its send buffer fills). (A send whose pages
 * deter.ko did not see, DETER_SPLICE_KNOWN clear, takes the bytes after
 * its last send's, as one file sent front to back from a page boundary.)
 *
 * A splice read (splice() from the socket into a pipe, as proxies read)
 * moves bytes until the pipe is full: TCP adds a pipe buffer per
 * fragment of its segments. The thread reads into a pipe of its own
 * given, before each call, the room the log has (DETER_SPLICE_RD_*): the
 * smallest size that holds it, emptied, topped up with one-byte buffers
 * (a packet-mode pipe does not merge writes), and the
 * socket nonblocking for the call if the original's was (shared by the
 * threads: a log whose threads read so at once would diverge). The
 * pipe is emptied after the call.
 *
 * One generator thread per recorded thread, all started at once. deter.ko
 * holds each call until the application's next turn in the recorded lock
 * order, but any thread's call may take that turn: between threads the
 * generator keeps the log's order itself (replay_gen_turn()). A call
 * starts once every other thread's calls logged before it have started,
 * and those that returned (or shut down, or closed) before it have
 * returned here too: a process's exit closing a socket its workers used,
 * or a thread handing a connection to another, replay in order.
 *
 * A return value that differs from the recorded one (bytes, or -errno)
 * is a divergence, reported at once: the thread stops, the others may
 * then wait for good in deter.ko, which is why the generator runs in a
 * process its parent can kill.
 *
 * Socket options (replay_plan_build()): those the connection started
 * with are set before connect() or listen() (an accepted socket inherits
 * the listener's). Later ones are set before the call the log shows them
 * changed at. Most setsockopt()s take the socket lock, which is itself an
 * event, so an option is set only when the log shows it changed, exactly
 * as often as the application must have set it. tp->nonagle has
 * TCP_NAGLE_OFF = 1 for TCP_NODELAY and TCP_NAGLE_CORK = 2 for TCP_CORK.
 */

#include "replay_gen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <unistd.h>

/* tp->nonagle bits (include/net/tcp.h). */
enum {
	REPLAY_GEN_NAGLE_OFF = 1,	/* TCP_NODELAY */
	REPLAY_GEN_NAGLE_CORK = 2,	/* TCP_CORK */
};

/*
 * The kernel's "restart the call" error (include/linux/errno.h): a call
 * that deter.ko ends as a signal did returns it, since the replay has no
 * signal pending that would make the kernel restart the call.
 */
#define REPLAY_GEN_ERESTARTSYS 512

/* include/uapi/linux/in.h; glibc's netinet/in.h lacks it. */
#ifndef IP_PROTOCOL
#define IP_PROTOCOL 52
#endif

/* Pending connections on the listener: one is expected. */
#define REPLAY_GEN_BACKLOG 16

struct replay_gen_ctx {
	const struct replay_gen_cfg *cfg;
	int fd;			/* the connection's socket */
	uint8_t *sbuf;		/* zeros, the largest send of the plan */
	size_t slen;		/* its length, bytes */
	int mfd;		/* spliced sends' source: a memfd, or -1 */
	size_t mlen;		/* its length: REPLAY_GEN_MEMFD */
	uint64_t opt[DETER_CFG_MAX];	/* options as last set (0: never) */
	pthread_mutex_t opt_lock;	/* serialises setting them */
	pthread_mutex_t report_lock;	/* serialises report lines */
	/* the order of calls between threads: replay_gen_turn() */
	pthread_mutex_t turn_lock;
	pthread_cond_t turn_cond;
	struct replay_gen_worker *w;	/* the threads */
	size_t nw;
};

struct replay_gen_worker {
	struct replay_gen_ctx *ctx;
	const struct replay_thread *t;
	pthread_t thread;
	int ret;		/* 0, or 1 once it reported D or E */
	size_t splice_most;	/* its largest spliced send, 0 if none */
	int pipe[2];		/* spliced sends go through it; -1 if none */
	size_t inpipe;		/* bytes in it, not yet sent */
	off_t moff;		/* where the next bytes come from in ctx->mfd */
	int rpipe[2];		/* splice reads fill it; -1 until the first */
	unsigned int rslots;	/* its size, buffers */
	/* under ctx->turn_lock: its calls started, and returned */
	size_t started, returned;
};

/* The memfd spliced sends cycle through: a multiple of the page size. */
#define REPLAY_GEN_MEMFD	(4u << 20)
/* The page size of the hosts (x86): where spliced bytes start in a page. */
#define REPLAY_GEN_PAGE		4096u

static void __attribute__((format(printf, 3, 4)))
replay_gen_report(struct replay_gen_ctx *ctx, char kind, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%c ", kind);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	pthread_mutex_lock(&ctx->report_lock);
	if (write(ctx->cfg->report_fd, line, n) != n)
		n = -1;
	pthread_mutex_unlock(&ctx->report_lock);
}

static void replay_gen_addr(char *buf, size_t len, uint32_t addr, uint16_t port)
{
	struct in_addr in = { .s_addr = htonl(addr) };
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &in, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, port);
}

static int replay_gen_setopt(struct replay_gen_ctx *ctx, int fd, int level, int opt,
			     const void *val, socklen_t len, const char *name, uint32_t seq)
{
	if (!setsockopt(fd, level, opt, val, len))
		return 0;
	if (seq)
		replay_gen_report(ctx, 'E', "event %u: setsockopt %s: %s", seq, name,
				  strerror(errno));
	else
		replay_gen_report(ctx, 'E', "setsockopt %s: %s", name, strerror(errno));
	return -1;
}

static int replay_gen_setint(struct replay_gen_ctx *ctx, int fd, int level, int opt,
			     int val, const char *name, uint32_t seq)
{
	return replay_gen_setopt(ctx, fd, level, opt, &val, sizeof(val), name, seq);
}

/*
 * TCP_CONGESTION, by the name's first DETER_CC_BYTES bytes: a longer
 * name is the one the kernel offers that starts with them.
 */
static int replay_gen_cc(struct replay_gen_ctx *ctx, int fd, uint64_t v, uint32_t seq)
{
	char name[DETER_CC_BYTES + 1], avail[512], *tok, *save;
	const char *use;
	FILE *f;

	rec_cc_name(v, name);
	use = name;
	f = strlen(name) == DETER_CC_BYTES ?
	    fopen("/proc/sys/net/ipv4/tcp_available_congestion_control", "r") : NULL;
	if (f) {
		if (fgets(avail, sizeof(avail), f))
			for (tok = strtok_r(avail, "\n ", &save); tok;
			     tok = strtok_r(NULL, "\n ", &save))
				if (!strncmp(tok, name, DETER_CC_BYTES)) {
					use = tok;
					break;
				}
		fclose(f);
	}
	return replay_gen_setopt(ctx, fd, IPPROTO_TCP, TCP_CONGESTION, use, strlen(use),
				 "TCP_CONGESTION", seq);
}

/* One DETER_CFG_TCP option; TCP_THIN_LINEAR_TIMEOUTS and TCP_TX_DELAY lock. */
static int replay_gen_tcpopt(struct replay_gen_ctx *ctx, int fd, uint64_t v,
			     uint32_t seq, uint32_t *locks)
{
	long long val = rec_tcpopt_value(v);
	struct timeval tv = { 0 };
	uint64_t rate = val;

	switch (DETER_TCPOPT_ID(v)) {
	case DETER_TCPOPT_THIN_LTO:
		(*locks)++;
		return replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS, val,
					 "TCP_THIN_LINEAR_TIMEOUTS", seq);
	case DETER_TCPOPT_SYNCNT:
		/* 0 is the sysctl's: setsockopt() cannot ask for it. */
		return val ? replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_SYNCNT, val,
					       "TCP_SYNCNT", seq) : 0;
	case DETER_TCPOPT_LINGER2:
		return replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_LINGER2, val,
					 "TCP_LINGER2", seq);
	case DETER_TCPOPT_TX_DELAY:
		(*locks)++;
		return replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_TX_DELAY, val,
					 "TCP_TX_DELAY", seq);
	case DETER_TCPOPT_MAX_PACING_RATE:
		return replay_gen_setopt(ctx, fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate,
					 sizeof(rate), "SO_MAX_PACING_RATE", seq);
	case DETER_TCPOPT_PRIORITY:	/* without the lock */
		return replay_gen_setint(ctx, fd, SOL_SOCKET, SO_PRIORITY, val,
					 "SO_PRIORITY", seq);
	case DETER_TCPOPT_MARK:
		(*locks)++;
		return replay_gen_setint(ctx, fd, SOL_SOCKET, SO_MARK, val, "SO_MARK", seq);
	case DETER_TCPOPT_RCVTIMEO:
	case DETER_TCPOPT_SNDTIMEO:
		/*
		 * A replay runs many times slower than the original, and a
		 * timeout would end a wait the original's did not: none is
		 * set (deter.ko times out the waits the log says did). A
		 * zero timeout, calls that never wait, is set as such.
		 */
		tv.tv_sec = val ? 0 : -1;
		(*locks)++;
		return replay_gen_setopt(ctx, fd, SOL_SOCKET,
					 DETER_TCPOPT_ID(v) == DETER_TCPOPT_RCVTIMEO ?
					 SO_RCVTIMEO : SO_SNDTIMEO, &tv, sizeof(tv),
					 "SO_RCVTIMEO/SO_SNDTIMEO", seq);
	}
	return 0;
}

/*
 * Set option @o on @fd, as the application must have: only what changed
 * from ctx->opt (a keepalive change may be one of four options). @seq is
 * the call it comes before, 0 before connect() or listen(). *@locks
 * counts the setsockopt()s made that take the socket lock (6.12 sets
 * IP_TTL, TCP_USER_TIMEOUT, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_SYNCNT,
 * TCP_LINGER2 and SO_MAX_PACING_RATE without it).
 */
static int replay_gen_opt(struct replay_gen_ctx *ctx, int fd,
			  const struct replay_opt *o, uint32_t seq, uint32_t *locks)
{
	uint64_t old = ctx->opt[o->cfg], v = o->val, d = old ^ v;
	struct linger lg;
	int r = 0;

#define LOCKED(call) ((*locks)++, (call))
	ctx->opt[o->cfg] = v;
	switch (o->cfg) {
	case DETER_CFG_NODELAY:
		if (d & REPLAY_GEN_NAGLE_OFF)
			r = LOCKED(replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_NODELAY,
						     !!(v & REPLAY_GEN_NAGLE_OFF),
						     "TCP_NODELAY", seq));
		if (!r && d & REPLAY_GEN_NAGLE_CORK)
			r = LOCKED(replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_CORK,
						     !!(v & REPLAY_GEN_NAGLE_CORK),
						     "TCP_CORK", seq));
		return r;
	case DETER_CFG_USER_MSS:
		return v && d ? LOCKED(replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_MAXSEG,
							 v, "TCP_MAXSEG", seq)) : 0;
	case DETER_CFG_TOS:
		return LOCKED(replay_gen_setint(ctx, fd, IPPROTO_IP, IP_TOS, v, "IP_TOS",
						seq));
	case DETER_CFG_TTL:
		return replay_gen_setint(ctx, fd, IPPROTO_IP, IP_TTL, v ? (int)v : -1,
					 "IP_TTL", seq);
	case DETER_CFG_KEEPALIVE:
		/* 0 in a field is the sysctl's: setsockopt() cannot ask for it. */
		if (d & DETER_KA_ON)
			r = LOCKED(replay_gen_setint(ctx, fd, SOL_SOCKET, SO_KEEPALIVE,
						     v & DETER_KA_ON, "SO_KEEPALIVE", seq));
		if (!r && DETER_KA_IDLE(d) && DETER_KA_IDLE(v))
			r = LOCKED(replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_KEEPIDLE,
						     DETER_KA_IDLE(v), "TCP_KEEPIDLE", seq));
		if (!r && DETER_KA_INTVL(d) && DETER_KA_INTVL(v))
			r = replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_KEEPINTVL,
					      DETER_KA_INTVL(v), "TCP_KEEPINTVL", seq);
		if (!r && DETER_KA_CNT(d) && DETER_KA_CNT(v))
			r = replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_KEEPCNT,
					      DETER_KA_CNT(v), "TCP_KEEPCNT", seq);
		return r;
	case DETER_CFG_USER_TIMEOUT:
		return replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_USER_TIMEOUT, v,
					 "TCP_USER_TIMEOUT", seq);
	case DETER_CFG_NOTSENT_LOWAT:
		return LOCKED(replay_gen_setint(ctx, fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, v,
						"TCP_NOTSENT_LOWAT", seq));
	case DETER_CFG_RCVLOWAT:
		return LOCKED(replay_gen_setint(ctx, fd, SOL_SOCKET, SO_RCVLOWAT, v,
						"SO_RCVLOWAT", seq));
	case DETER_CFG_LINGER:
		lg.l_onoff = v & 1;
		lg.l_linger = v >> 1;
		return LOCKED(replay_gen_setopt(ctx, fd, SOL_SOCKET, SO_LINGER, &lg,
						sizeof(lg), "SO_LINGER", seq));
	case DETER_CFG_CC:
		return LOCKED(replay_gen_cc(ctx, fd, v, seq));
	case DETER_CFG_TCP:
		return replay_gen_tcpopt(ctx, fd, v, seq, locks);
	}
#undef LOCKED
	return 0;
}

/*
 * Before call @c: set the options the log shows changed, then take the
 * app lock turns the log has before @c that neither they nor @c take
 * (a getsockopt() or setsockopt() deter does not replay as such), each
 * with getsockopt(IP_PROTOCOL): lock, read inet_num, release; what the
 * lock's release does (backlog, deferred work) is the same whoever held
 * it.
 */
static int replay_gen_config(struct replay_gen_ctx *ctx,
			     const struct replay_call *c)
{
	const struct replay_plan *plan = ctx->cfg->plan;
	uint32_t i, locks = 1;	/* @c's own */
	socklen_t len;
	int r = 0, v;

	if (c->nopts) {
		pthread_mutex_lock(&ctx->opt_lock);
		for (i = 0; i < c->nopts && !r; i++)
			r = replay_gen_opt(ctx, ctx->fd, &plan->opts[c->opt_at + i], c->seq,
					   &locks);
		pthread_mutex_unlock(&ctx->opt_lock);
	}
	for (; !r && locks < c->locks; locks++) {
		len = sizeof(v);
		if (getsockopt(ctx->fd, IPPROTO_IP, IP_PROTOCOL, &v, &len)) {
			replay_gen_report(ctx, 'E', "event %u: getsockopt IP_PROTOCOL: %s",
					  c->seq, strerror(errno));
			r = -1;
		}
	}
	return r;
}

/*
 * Where the memfd's bytes of a spliced send with the logged @pages start,
 * the next byte after the thread's last send's being at @at: there if
 * they went on from it, else in the next page at the logged offset.
 */
static size_t replay_gen_splice_at(const struct replay_gen_ctx *ctx, uint64_t pages,
				   size_t at)
{
	size_t pg = REPLAY_GEN_PAGE;

	if (!(pages & DETER_SPLICE_KNOWN) || pages & (DETER_SPLICE_CONT | DETER_SPLICE_OTHER))
		return at;
	at = (at + pg - 1) / pg * pg + (pages & DETER_SPLICE_OFF) % pg;
	return at < ctx->mlen ? at : (pages & DETER_SPLICE_OFF) % pg;
}

/*
 * Drop the bytes left in @w's send pipe, and take the memfd's offset back
 * to the first of them. Return: 0, or -1 with errno set.
 */
static int replay_gen_unsplice(struct replay_gen_worker *w)
{
	struct replay_gen_ctx *ctx = w->ctx;
	uint8_t drop[REPLAY_GEN_PAGE];
	ssize_t n;

	w->moff = ((size_t)w->moff + ctx->mlen - w->inpipe) % ctx->mlen;
	for (; w->inpipe; w->inpipe -= n) {
		n = read(w->pipe[0], drop, w->inpipe < sizeof(drop) ? w->inpipe : sizeof(drop));
		if (n <= 0)
			return n ? -1 : (errno = EIO, -1);
	}
	return 0;
}

/*
 * A spliced send of @c->arg bytes: top the pipe up to that many from the
 * memfd, from where the logged pages say, then one splice() to the
 * socket. Return: as send() would.
 */
static ssize_t replay_gen_splice(struct replay_gen_worker *w, const struct replay_call *c)
{
	struct replay_gen_ctx *ctx = w->ctx;
	int fl, nb, e;
	size_t at, next;
	ssize_t n;
	size_t k;

	/* The next byte in the pipe, or from the memfd, lies at... */
	next = ((size_t)w->moff + ctx->mlen - w->inpipe) % ctx->mlen;
	at = replay_gen_splice_at(ctx, c->pages, next);
	if (at != next) {
		if (replay_gen_unsplice(w))
			return -1;
		w->moff = at;
	}
	while (w->inpipe < c->arg) {
		k = c->arg - w->inpipe;
		if (k > ctx->mlen - w->moff)
			k = ctx->mlen - w->moff;
		/* Never waits: the pipe holds a call's bytes and a page more. */
		n = splice(ctx->mfd, &w->moff, w->pipe[1], NULL, k, SPLICE_F_NONBLOCK);
		if (n <= 0)
			return n ? -1 : (errno = EIO, -1);
		w->inpipe += n;
		if ((size_t)w->moff == ctx->mlen)
			w->moff = 0;
	}
	/*
	 * A splice to a socket waits for send space unless the socket is
	 * nonblocking (splice_to_socket()): as the original's was, where the
	 * log has MSG_DONTWAIT.
	 */
	nb = !!(c->flags & MSG_DONTWAIT);
	fl = fcntl(ctx->fd, F_GETFL);
	if (fl < 0 || (!!(fl & O_NONBLOCK) != nb && fcntl(ctx->fd, F_SETFL, fl ^ O_NONBLOCK)))
		return -1;
	n = splice(w->pipe[0], NULL, ctx->fd, NULL, c->arg,
		   c->flags & MSG_MORE ? SPLICE_F_MORE : 0);
	e = errno;
	if (!!(fl & O_NONBLOCK) != nb && fcntl(ctx->fd, F_SETFL, fl))
		return -1;
	if (n > 0)
		w->inpipe -= n;
	/*
	 * What a nonblocking send left, sendfile() leaves in the file: its
	 * next call starts again from the first byte not sent, in pages laid
	 * out from there. So does the next call here.
	 */
	if (w->inpipe && replay_gen_unsplice(w))
		return -1;
	errno = e;
	return n;
}

/* Empty a splice read's pipe (its read end is nonblocking). */
static int replay_gen_rpipe_drain(struct replay_gen_worker *w)
{
	uint8_t drop[REPLAY_GEN_PAGE];
	ssize_t n;

	while ((n = read(w->rpipe[0], drop, sizeof(drop))) > 0)
		continue;
	return n < 0 && errno == EAGAIN ? 0 : (errno = n ? errno : EIO, -1);
}

/*
 * A splice read of @c->arg bytes into a pipe with the room the log has
 * (replay_plan_check() refused a read whose room it lacks). Return: as
 * splice() would; -1 with errno set, and a report, if the pipe could
 * not be made so.
 */
static ssize_t replay_gen_splice_read(struct replay_gen_worker *w, const struct replay_call *c)
{
	struct replay_gen_ctx *ctx = w->ctx;
	unsigned int room = DETER_SPLICE_RD_ROOM(c->flags), slots = 1, i;
	int nb = !!(c->flags & DETER_SPLICE_RD_NONBLOCK), fl = -1, e;
	const char *what;
	ssize_t r;

	while (slots < room && slots <= INT_MAX / 2 / REPLAY_GEN_PAGE)
		slots <<= 1;
	what = "pipe";
	if (slots < room || REPLAY_GEN_PAGE != sysconf(_SC_PAGESIZE)) {
		errno = EINVAL;
		goto fail;
	}
	if (w->rpipe[0] < 0 && (pipe2(w->rpipe, O_CLOEXEC | O_DIRECT) ||
				fcntl(w->rpipe[0], F_SETFL, O_NONBLOCK)))
		goto fail;
	what = "pipe size";
	if (slots != w->rslots) {
		errno = EINVAL;		/* if it made another size */
		if (fcntl(w->rpipe[1], F_SETPIPE_SZ, (int)(slots * REPLAY_GEN_PAGE)) !=
		    (int)(slots * REPLAY_GEN_PAGE))
			goto fail;
	}
	w->rslots = slots;
	what = "pipe buffers";
	for (i = room; i < slots; i++)
		if (write(w->rpipe[1], "", 1) != 1)
			goto fail;
	what = "socket mode";
	fl = fcntl(ctx->fd, F_GETFL);
	if (fl < 0 || (!!(fl & O_NONBLOCK) != nb &&
		       fcntl(ctx->fd, F_SETFL, fl ^ O_NONBLOCK)))
		goto fail;
	r = splice(ctx->fd, NULL, w->rpipe[1], NULL, c->arg, c->flags & DETER_SPLICE_RD_FLAGS);
	e = errno;
	what = "socket mode";
	if (!!(fl & O_NONBLOCK) != nb && fcntl(ctx->fd, F_SETFL, fl))
		goto fail;
	what = "pipe";
	if (replay_gen_rpipe_drain(w))
		goto fail;
	errno = e;
	return r;
fail:
	e = errno;
	replay_gen_report(ctx, 'E', "event %u: splice read's %s (room for %u of %u buffers): %s",
			  c->seq, what, room, slots, strerror(e));
	errno = e;
	return -1;
}

/* The pipe of a thread that splices; 0, or -1 after reporting E. */
static int replay_gen_pipe(struct replay_gen_worker *w)
{
	size_t most = w->splice_most;
	int sz;

	w->pipe[0] = -1;
	w->pipe[1] = -1;
	w->rpipe[0] = -1;
	w->rpipe[1] = -1;
	if (!most)
		return 0;
	if (w->ctx->mfd < 0) {
		replay_gen_report(w->ctx, 'E', "spliced sends: no memfd to send from");
		return -1;
	}
	/* Bytes left from a call cut short start mid-page: room for both ends. */
	sz = most > INT_MAX / 4 ? INT_MAX : (int)(most + 2 * REPLAY_GEN_PAGE);
	if (pipe2(w->pipe, O_CLOEXEC) || fcntl(w->pipe[1], F_SETPIPE_SZ, sz) < 0) {
		replay_gen_report(w->ctx, 'E',
				  "thread %u: a pipe for spliced sends of up to %zu bytes: %s",
				  w->t->tid, most, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Whether thread @o is far enough for a call logged at @seq to start:
 * its calls logged before @seq started, and those of them that returned
 * before @seq in the log (shutdown and close: that ended) returned here.
 */
static int replay_gen_passed(const struct replay_gen_worker *o, uint32_t seq)
{
	const struct replay_thread *t = o->t;
	size_t lo = 0, hi = t->ncalls, j;

	while (lo < hi) {			/* its calls logged before @seq */
		size_t mid = lo + (hi - lo) / 2;

		if (t->calls[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (o->started < lo)
		return 0;
	for (j = lo; j > o->returned; j--) {
		const struct replay_call *c = &t->calls[j - 1];

		if ((c->done_seq && c->done_seq < seq) || c->call == DETER_ABI_CALL_SHUTDOWN ||
		    c->call == DETER_ABI_CALL_CLOSE)
			return 0;
	}
	return 1;
}

/* Wait until call @c of @w may start (see the top), and mark it started. */
static void replay_gen_turn(struct replay_gen_worker *w, const struct replay_call *c)
{
	struct replay_gen_ctx *ctx = w->ctx;
	size_t i;

	pthread_mutex_lock(&ctx->turn_lock);
	for (i = 0; i < ctx->nw;) {
		if (&ctx->w[i] == w || replay_gen_passed(&ctx->w[i], c->seq)) {
			i++;
			continue;
		}
		pthread_cond_wait(&ctx->turn_cond, &ctx->turn_lock);
		i = 0;
	}
	w->started++;
	pthread_mutex_unlock(&ctx->turn_lock);
}

/* @n more of @w's calls started: the kernel's own, with the one before. */
static void replay_gen_started(struct replay_gen_worker *w, size_t n)
{
	struct replay_gen_ctx *ctx = w->ctx;

	if (!n)
		return;
	pthread_mutex_lock(&ctx->turn_lock);
	w->started += n;
	pthread_cond_broadcast(&ctx->turn_cond);
	pthread_mutex_unlock(&ctx->turn_lock);
}

/* @w's calls returned: @n more, or all of them (@n 0: it stopped). */
static void replay_gen_returned(struct replay_gen_worker *w, size_t n)
{
	struct replay_gen_ctx *ctx = w->ctx;

	pthread_mutex_lock(&ctx->turn_lock);
	if (n) {
		w->returned += n;
	} else {
		w->started = w->t->ncalls;
		w->returned = w->t->ncalls;
	}
	pthread_cond_broadcast(&ctx->turn_cond);
	pthread_mutex_unlock(&ctx->turn_lock);
}

static void *replay_gen_thread(void *arg)
{
	struct replay_gen_worker *w = arg;
	struct replay_gen_ctx *ctx = w->ctx;
	uint8_t *rbuf = MAP_FAILED;
	size_t rlen = 1, i, conts = 0;
	char gots[96];
	ssize_t r;
	int64_t got, want;
	int v;

	for (i = 0; i < w->t->ncalls; i++)
		if (w->t->calls[i].call == DETER_ABI_CALL_RECVMSG && w->t->calls[i].arg > rlen)
			rlen = w->t->calls[i].arg;
	rbuf = mmap(NULL, rlen, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rbuf == MAP_FAILED) {
		replay_gen_report(ctx, 'E', "thread %u: %zu-byte receive buffer: %s",
				  w->t->tid, rlen, strerror(errno));
		replay_gen_returned(w, 0);
		w->ret = 1;
		return NULL;
	}
	if (replay_gen_pipe(w)) {
		replay_gen_returned(w, 0);
		munmap(rbuf, rlen);
		w->ret = 1;
		return NULL;
	}
	for (i = 0; i < w->t->ncalls; i += 1 + conts) {
		const struct replay_call *c = &w->t->calls[i];

		replay_gen_turn(w, c);
		/* The kernel's sends of what this one leaves: its own. */
		want = c->ret;
		for (conts = 0; i + 1 + conts < w->t->ncalls && c[1 + conts].cont; conts++)
			want += c[1 + conts].ret > 0 ? c[1 + conts].ret : 0;
		replay_gen_started(w, conts);
		if (replay_gen_config(ctx, c)) {
			w->ret = 1;
			break;
		}
		switch (c->call) {
		case DETER_ABI_CALL_SENDMSG:
			if (c->flags & DETER_MSG_SPLICE_PAGES)
				r = replay_gen_splice(w, c);
			else
				r = send(ctx->fd, ctx->sbuf, c->arg, c->flags);
			break;
		case DETER_ABI_CALL_RECVMSG:
			r = recv(ctx->fd, rbuf, c->arg, c->flags);
			break;
		case DETER_ABI_CALL_SPLICE_READ:
			r = replay_gen_splice_read(w, c);
			break;
		case DETER_ABI_CALL_SHUTDOWN:
			r = shutdown(ctx->fd, (int)c->arg - 1);
			break;
		case DETER_ABI_CALL_SETSOCKOPT:
			v = (int)c->arg;
			r = setsockopt(ctx->fd, IPPROTO_TCP, (int)c->flags, &v, sizeof(v));
			break;
		case DETER_ABI_CALL_CLOSE:
			r = close(ctx->fd);
			break;
		default:	/* replay_plan_check() refused the rest */
			errno = EOPNOTSUPP;
			r = -1;
			break;
		}
		got = r < 0 ? -errno : r;
		replay_gen_returned(w, 1 + conts);
		if (c->done_seq && got != want) {
			if (got < 0)
				snprintf(gots, sizeof(gots), "%lld (%s)", (long long)got,
					 strerror(-got));
			else
				snprintf(gots, sizeof(gots), "%lld", (long long)got);
			if (c->call == DETER_ABI_CALL_SETSOCKOPT)
				replay_gen_report(ctx, 'D',
						  "event %u: setsockopt of TCP option %u to %d returned %s, expected %lld",
						  c->seq, c->flags, (int)c->arg, gots,
						  (long long)c->ret);
			else
				replay_gen_report(ctx, 'D',
						  "event %u: %s of %llu bytes returned %s, expected %lld",
						  c->seq, replay_call_name(c->call),
						  (unsigned long long)c->arg, gots,
						  (long long)want);
			w->ret = 1;
			break;
		}
		/*
		 * shutdown() of a socket TCP already closed (a reset came)
		 * shuts it down and says ENOTCONN; the log has no return.
		 */
		if (c->call == DETER_ABI_CALL_SHUTDOWN && got == -ENOTCONN)
			continue;
		if (!c->done_seq && got < 0) {
			replay_gen_report(ctx, 'D', "event %u: %s failed: %s", c->seq,
					  replay_call_name(c->call), strerror(-got));
			w->ret = 1;
			break;
		}
	}
	replay_gen_returned(w, 0);
	munmap(rbuf, rlen);
	if (w->pipe[0] >= 0) {
		close(w->pipe[0]);
		close(w->pipe[1]);
	}
	if (w->rpipe[0] >= 0) {
		close(w->rpipe[0]);
		close(w->rpipe[1]);
	}
	return NULL;
}

/* A buffer size the app set: @bytes as the kernel keeps it, 0 for none. */
static int replay_gen_setbuf(struct replay_gen_ctx *ctx, int fd, int opt,
			     uint32_t bytes, const char *name)
{
	int val = bytes / 2;

	if (!bytes || !setsockopt(fd, SOL_SOCKET, opt, &val, sizeof(val)))
		return 0;
	replay_gen_report(ctx, 'E', "%s %d: %s", name, val, strerror(errno));
	return -1;
}

/*
 * O_NONBLOCK on @fd or off: the calls carry the logged MSG_DONTWAIT
 * themselves. Return: 0, or -1 after reporting E.
 */
static int replay_gen_nonblock(struct replay_gen_ctx *ctx, int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0 && !fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK))
		return 0;
	replay_gen_report(ctx, 'E', "O_NONBLOCK: %s", strerror(errno));
	return -1;
}

/* The connection's socket, opened as recorded; -1 after reporting E. */
static int replay_gen_open(struct replay_gen_ctx *ctx)
{
	const struct replay_gen_cfg *cfg = ctx->cfg;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char local[32], remote[32];
	int fd, lfd = -1, one = 1, e, intr;
	uint32_t locks = 0;	/* before connect(): not in the log */
	uint32_t n;		/* connect() calls made */
	size_t i;

	replay_gen_addr(local, sizeof(local), cfg->saddr, cfg->sport);
	replay_gen_addr(remote, sizeof(remote), cfg->daddr, cfg->dport);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		replay_gen_report(ctx, 'E', "socket: %s", strerror(errno));
		return -1;
	}
	if (!cfg->active &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		replay_gen_report(ctx, 'E', "SO_REUSEADDR: %s", strerror(errno));
		goto fail;
	}
	if (cfg->cc[0] &&
	    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cfg->cc, strlen(cfg->cc))) {
		replay_gen_report(ctx, 'E', "congestion control '%s': %s%s", cfg->cc,
				  strerror(errno),
				  errno == ENOENT ? " (not built into this kernel)" : "");
		goto fail;
	}
	/*
	 * The kernel doubles what SO_*BUF asks for; FORCE skips the
	 * [rw]mem_max cap the recording host may not have had.
	 */
	if (replay_gen_setbuf(ctx, fd, SO_SNDBUFFORCE, cfg->plan->sndbuf, "SO_SNDBUFFORCE") ||
	    replay_gen_setbuf(ctx, fd, SO_RCVBUFFORCE, cfg->plan->rcvbuf, "SO_RCVBUFFORCE"))
		goto fail;
	for (i = 0; i < cfg->plan->ninit; i++)
		if (replay_gen_opt(ctx, fd, &cfg->plan->init[i], 0, &locks))
			goto fail;
	sa.sin_addr.s_addr = htonl(cfg->saddr);
	sa.sin_port = htons(cfg->sport);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		replay_gen_report(ctx, 'E', "bind %s: %s", local, strerror(errno));
		goto fail;
	}
	if (cfg->active) {
		sa.sin_addr.s_addr = htonl(cfg->daddr);
		sa.sin_port = htons(cfg->dport);
		/*
		 * EINPROGRESS: the original's connect() timed out
		 * (SO_SNDTIMEO), and deter.ko ended the replay's wait where
		 * it did; the handshake goes on, as the calls that follow
		 * expect. ERESTARTSYS (no signal is pending to restart the
		 * call, so it reaches us) or EINTR: a signal ended the
		 * original's wait there, and deter.ko ended the replay's;
		 * connect() again if the application or the kernel's restart
		 * did (plan->connects), else go on to the calls, as the
		 * handshake does. Only the log's signals end it. A connect()
		 * that did not wait in the original (a nonblocking socket's)
		 * does not here: EINPROGRESS, and the calls that follow take
		 * their lock turns once the handshake is through, as logged.
		 */
		if (!cfg->plan->connect_waits && replay_gen_nonblock(ctx, fd, 1))
			goto fail;
		for (n = 1;; n++) {
			e = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
			intr = e && (errno == REPLAY_GEN_ERESTARTSYS || errno == EINTR);
			if (!intr || n >= cfg->plan->connects)
				break;
		}
		if (e && errno != EINPROGRESS && !intr) {
			replay_gen_report(ctx, 'D', "connect %s -> %s: %s", local, remote,
					  strerror(errno));
			goto fail;
		}
		if (!cfg->plan->connect_waits && replay_gen_nonblock(ctx, fd, 0))
			goto fail;
		return fd;
	}
	if (listen(fd, REPLAY_GEN_BACKLOG)) {
		replay_gen_report(ctx, 'E', "listen %s: %s", local, strerror(errno));
		goto fail;
	}
	lfd = fd;
	replay_gen_report(ctx, 'L', "%s", local);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		replay_gen_report(ctx, 'D', "accept on %s: %s", local, strerror(errno));
		fd = lfd;
		goto fail;
	}
	/* The listener stays open until the generator exits, as a server's does. */
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * The memfd spliced sends come from: REPLAY_GEN_MEMFD bytes of zeros,
 * written (a hole would be spliced as the zero page, one page for all).
 * Return: 0, or -1 after reporting E.
 */
static int replay_gen_memfd(struct replay_gen_ctx *ctx)
{
	static const uint8_t zeros[65536];
	size_t done;

	ctx->mlen = REPLAY_GEN_MEMFD;
	ctx->mfd = memfd_create("deter-replay", MFD_CLOEXEC);
	for (done = 0; ctx->mfd >= 0 && done < ctx->mlen; done += sizeof(zeros))
		if (write(ctx->mfd, zeros, sizeof(zeros)) != (ssize_t)sizeof(zeros))
			break;
	if (ctx->mfd >= 0 && done == ctx->mlen)
		return 0;
	replay_gen_report(ctx, 'E', "memfd for spliced sends: %s", strerror(errno));
	return -1;
}

/**
 * replay_gen_run() - issue one end's recorded socket calls
 * @cfg: the end and its plan
 *
 * Runs in the caller's network namespace; reports on cfg->report_fd
 * (see replay_gen.h). May never return if the replay diverges.
 *
 * Return: 0 if every call returned as recorded, 1 if not.
 */
int replay_gen_run(const struct replay_gen_cfg *cfg)
{
	struct replay_gen_ctx ctx = { .cfg = cfg, .sbuf = MAP_FAILED, .slen = 1, .mfd = -1 };
	struct replay_gen_worker *w;
	size_t i, j, started = 0;
	int ret = 1, e, splices = 0;

	pthread_mutex_init(&ctx.report_lock, NULL);
	pthread_mutex_init(&ctx.opt_lock, NULL);
	pthread_mutex_init(&ctx.turn_lock, NULL);
	pthread_cond_init(&ctx.turn_cond, NULL);
	signal(SIGPIPE, SIG_IGN);
	w = calloc(cfg->plan->nthreads ? cfg->plan->nthreads : 1, sizeof(*w));
	for (i = 0; w && i < cfg->plan->nthreads; i++)
		for (j = 0; j < cfg->plan->threads[i].ncalls; j++) {
			const struct replay_call *c = &cfg->plan->threads[i].calls[j];

			if (c->call != DETER_ABI_CALL_SENDMSG)
				continue;
			if (c->arg > ctx.slen)
				ctx.slen = c->arg;
			if ((c->flags & DETER_MSG_SPLICE_PAGES) && c->arg > w[i].splice_most) {
				w[i].splice_most = c->arg;
				splices = 1;
			}
		}
	ctx.sbuf = mmap(NULL, ctx.slen, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ctx.w = w;
	ctx.nw = cfg->plan->nthreads;
	if (ctx.sbuf == MAP_FAILED || !w) {
		replay_gen_report(&ctx, 'E', "%zu-byte send buffer: %s", ctx.slen,
				  strerror(errno));
		goto out;
	}
	if (splices && replay_gen_memfd(&ctx))
		goto out;
	ctx.fd = replay_gen_open(&ctx);
	if (ctx.fd < 0)
		goto out;
	for (i = 0; i < cfg->plan->nthreads; i++) {
		w[i].ctx = &ctx;
		w[i].t = &cfg->plan->threads[i];
	}
	for (i = 0; i < cfg->plan->nthreads; i++) {
		e = pthread_create(&w[i].thread, NULL, replay_gen_thread, &w[i]);
		if (e) {
			replay_gen_report(&ctx, 'E', "thread for tid %u: %s",
					  w[i].t->tid, strerror(e));
			for (j = i; j < cfg->plan->nthreads; j++)
				replay_gen_returned(&w[j], 0);
			break;
		}
		started++;
	}
	ret = started == cfg->plan->nthreads ? 0 : 1;
	for (i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		ret |= w[i].ret;
	}
	if (!ret)
		replay_gen_report(&ctx, 'K', "%zu threads", started);
out:
	if (ctx.sbuf != MAP_FAILED)
		munmap(ctx.sbuf, ctx.slen);
	if (ctx.mfd >= 0)
		close(ctx.mfd);
	free(w);
	return ret;
}
