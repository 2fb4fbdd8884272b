// SPDX-License-Identifier: GPL-2.0
/*
 * tcpwl: the TCP workloads deter's scenarios record and replay.
 *
 *   tcpwl server [-b ADDR] [-p PORT] [--rpc REQ:RESP] [--read-size N]
 *                [--read-delay-us N] [--rcvbuf N] [--quickack] [--delack]
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
 * --delack sets TCP_QUICKACK 0 on the listener once it listens, as haproxy
 * does: accepted sockets start in delayed-ACK (pingpong) mode, the
 * request's ACK left for the response to carry;
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
 *
 * Files: this one parses the command line and calls a side;
 * tcpwl_run.c runs the server and client (bulk, RPC, churn),
 * tcpwl_sock.c sets the socket options, tcpwl_io.c makes the calls
 * that move the bytes (again after EAGAIN, EINTR or a timeout).
 */
#include "tcpwl.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcpwl_io.h"
#include "tcpwl_run.h"

void __attribute__((noreturn, format(printf, 2, 3)))
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

static void wl_usage(FILE *f)
{
	fprintf(f,
		"usage: tcpwl server [-b ADDR] [-p PORT] [--rpc REQ:RESP] [--read-size N]\n"
		"                    [--read-delay-us N] [--rcvbuf N] [--quickack] [--delack]\n"
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
		{ "delack", no_argument, NULL, 259 },
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
		case 259:
			o.delack = 1;
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
	if (o.delack && !server)
		wl_die(2, "--delack is the server's");
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
