// SPDX-License-Identifier: GPL-2.0
/*
 * Connection logs: encode a connection's events compactly, decode strictly.
 *
 * A log is a struct deter_log_header followed by one zstd frame (format
 * 9: one or more, see below). Inside,
 * each record is a tag byte (event type << 4 | sub) and a type-specific
 * payload of varints, most of them deltas against what the decoder can
 * predict:
 *
 *   LOCK       a (DETER_LOCK_F_* bits; BACKLOG: the owner's check)
 *   RX         zigzag(idx - expected idx), flags byte, segs
 *              (expected idx = previous RX's idx + its segs)
 *   NET        zigzag(idx - last RX idx), count
 *   CALL       bytes, flags << 32 | tid      -- or CALLREF: dictionary index
 *   CALL_DONE  zigzag(ret - the last same CALL's bytes): 0 when all done.
 *              Format 12, a send's: that << 1 | 1 if b follows (a
 *              spliced send's pages, DETER_SPLICE_*, and from format 13
 *              what it put on the error queue, DETER_SEND_*; nonzero),
 *              else << 1
 *   SAMPLE     idx - previous sample idx, time, gap (m << 6 | tz for
 *              m << tz: deter.ko picks round gaps). The time (format 6)
 *              is a reference byte in a stream of its own, then
 *              zigzag(delta): the reference is the newest of the last 32
 *              TCP clock values at or before the sample (its age, 0-31;
 *              the clock read that sent the packet, so the delta is the
 *              stack's and the qdisc's delay), and the delta is taken
 *              from the previous sample's, so a steady delay costs 0;
 *              63 is no reference, the delta then is from the previous
 *              sample's time. Bit 7 set: the delta is in ns, else in us.
 *              (Formats 4 and 5: zigzag(ns - previous sample's ns).)
 *              Format 7 puts zigzag(delta) and the gap in streams of
 *              their own, each as a low byte and the rest (RS_SMPLO and
 *              RS_SMPHI, RS_GAPLO and RS_GAPHI).
 *   CONFIG     value
 *   VALUE      a (deltas for the clocks, as deter.ko emits them). A
 *              CLOCK delta (format 7) has a code, 1 + us when it is
 *              whole microseconds, as deter.ko makes them, else 0: its
 *              low byte goes to RS_CLOCK, code >> 8 (a varint), and for
 *              code 0 the ns, to RS_CLKHI (format 6: (us << 1), or 1
 *              then ns, in RS_CLOCK). Format 8 uses that pair of streams
 *              for deltas whose last other event was a segment (RX,
 *              NET), RS_CLOCK_LOCK and RS_CLKHI_LOCK after a LOCK, and
 *              RS_CLOCK_OTHER and RS_CLKHI_OTHER after anything else
 *   STATE      DETER_ST_MAX x zigzag(value - previous state's value)
 *   RUN        n: the previous LOCK or RX repeats n more times, each with
 *              sequence + 1 (and, for RX, the expected idx)
 *   SEQGAP     g: the next record's sequence number is the last + g + 2
 *              (otherwise it is the last + 1)
 *
 * Format 9 cuts the body into chunks, each such a body (stream lengths,
 * then streams) of the events since the last chunk, in a zstd frame of
 * its own; the context (previous event, clock ring, dictionary, ...) goes
 * on from one chunk to the next. deter record writes a chunk per 64 KiB
 * encoded (rec_log_writer_add()), so it holds no connection whole;
 * deter compact makes the body one chunk again. Format 10 is encoded
 * as 9; only where a deferred handler's LOCK sits changed.
 *
 * The body (format 8) is RS_MAX streams, their lengths (varints) first:
 * the tags in one, run lengths and sequence gaps in another, each kind's
 * fields in their own (enum rec_stream). The stream of tags repeats the
 * same few patterns and compresses to a few percent; what remains is the
 * clock and send-time noise, in streams of their own.
 *
 * Runs make the common case, a stream of in-order segments received in
 * softirq or a burst of lock acquisitions by one context, cost bytes per
 * run instead of per event (DETER §4: run-length lock owners). Socket
 * calls repeat (fixed-size application I/O), so the last 64 distinct
 * (bytes, flags, tid) triples form a dictionary (DETER: call patterns).
 *
 * Format 7 (still read) has the streams up to RS_GAPHI, every clock delta
 * in RS_CLOCK and RS_CLKHI; format 6 those up to RS_SMPREF; formats 4 and
 * 5 lack that one too and log clock deltas in ns. Formats 2 and 3 have
 * one stream, a sequence delta after every tag, CALL_DONE as zigzag(ret)
 * and the gap as is.
 *
 * Decoding is strict: every varint is bounded, every field range-checked,
 * the event count must match the header; an error names file and offset
 * ("body+N" counts from the start of the decompressed body). Logs are
 * written to a temporary file, fsync'd and renamed, mode 0600, so a
 * killed recorder never leaves a partial log under a log's name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "rec_log.h"
#include "rec_varint.h"

_Static_assert(sizeof(struct deter_log_header) == 232, "log header layout");
_Static_assert(DETER_V_MAX <= 16 && DETER_CFG_MAX <= 16 && DETER_NET_MAX <= 16,
	       "a record's sub is 4 bits");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "logs are little-endian; add conversions for this host");

enum {
	REC_LOG_DICT = 64,		/* dictionary entries */
	/* No log may claim more events than this (a 32-bit seq space). */
	REC_LOG_MAX_EVENTS = 1 << 28,
	REC_LOG_CLK_RING = 32,		/* clock values a sample may refer to */
	REC_LOG_SMP_NOREF = 63,		/* a sample with no clock reference */
	REC_LOG_SMP_NS = 0x80,		/* its delta is in ns, not us */
	/* What a CLOCK delta came after (format 8): its pair of streams. */
	REC_LOG_CLK_RX = 0,		/* a segment: RS_CLOCK, RS_CLKHI */
	REC_LOG_CLK_LOCK,		/* RS_CLOCK_LOCK, RS_CLKHI_LOCK */
	REC_LOG_CLK_OTHER,		/* RS_CLOCK_OTHER, RS_CLKHI_OTHER */
};

/* Format 4's streams: a record's tag, and its fields by kind. */
enum rec_stream {
	RS_TAG,		/* tag bytes, one per record */
	RS_MISC,	/* run lengths, sequence gaps */
	RS_LOCK,	/* LOCK */
	RS_RX,		/* RX, NET */
	RS_CALL,	/* CALL, CALLREF, CALL_DONE */
	RS_SAMPLE,	/* SAMPLE */
	RS_CLOCK,	/* VALUE CLOCK: the one stream of noise */
	RS_VALUE,	/* other VALUEs, CONFIG */
	RS_STATE,	/* STATE */
	RS_SMPREF,	/* SAMPLE's clock references (format 6) */
	RS_CLKHI,	/* VALUE CLOCK: all but the low byte (format 7) */
	RS_SMPLO,	/* SAMPLE's time delta: the low byte (format 7) */
	RS_SMPHI,	/*   and the rest */
	RS_GAPLO,	/* SAMPLE's gap: the low byte (format 7) */
	RS_GAPHI,	/*   and the rest */
	RS_CLOCK_LOCK,	/* RS_CLOCK and RS_CLKHI after a LOCK (format 8) */
	RS_CLKHI_LOCK,
	RS_CLOCK_OTHER,	/*   and after anything but a LOCK or segment */
	RS_CLKHI_OTHER,
	RS_MAX,
};

/* enum deter_tcpopt's names, as setsockopt() knows them. */
const char *const rec_tcpopts[DETER_TCPOPT_MAX] = {
	[DETER_TCPOPT_THIN_LTO] = "thin_linear_timeouts",
	[DETER_TCPOPT_SYNCNT] = "syncnt",
	[DETER_TCPOPT_LINGER2] = "linger2_s",
	[DETER_TCPOPT_TX_DELAY] = "tx_delay_us",
	[DETER_TCPOPT_MAX_PACING_RATE] = "max_pacing_rate",
	[DETER_TCPOPT_PRIORITY] = "priority",
	[DETER_TCPOPT_MARK] = "mark",
	[DETER_TCPOPT_RCVTIMEO] = "rcvtimeo_us",
	[DETER_TCPOPT_SNDTIMEO] = "sndtimeo_us",
};

const char *const rec_call_names[DETER_ABI_CALL_MAX] = {
	"sendmsg", "recvmsg", "shutdown", "close", "setsockopt", "splice_read",
	"recv_errqueue",
};

/**
 * rec_setsockopt_name() - the option of a CALL SETSOCKOPT
 * @opt: the event's flags (b >> 32)
 *
 * Return: its name, or NULL for an option deter does not record as a
 * call (which replay then cannot issue).
 */
const char *rec_setsockopt_name(uint64_t opt)
{
	switch (opt) {
	case TCP_QUICKACK:
		return "TCP_QUICKACK";
	case TCP_WINDOW_CLAMP:
		return "TCP_WINDOW_CLAMP";
	}
	return NULL;
}

/**
 * rec_missing_what() - what a VALUE MISSING says its log lacks
 * @why: the event's a, enum deter_abi_missing
 *
 * Return: it in words, or NULL for a reason this deter does not know.
 */
const char *rec_missing_what(uint64_t why)
{
	switch (why) {
	case DETER_MISSING_HANDSHAKE:
		return "the SYN's IP ID and the SYN-ACK's clocks";
	case DETER_MISSING_CALLS:
		return "calls that reach TCP past deter's hooks: another layer or unseen reads";
	case DETER_MISSING_FASTOPEN:
		return "TCP Fast Open: cookies from the server's key and the client's cache";
	case DETER_MISSING_SETTINGS:
		return "a setting TCP reads changed during the connection";
	}
	return NULL;
}

/* A set of CONFIG SYSCTL values, by enum deter_sysctl. */
struct rec_settings {
	long long v[DETER_SYSCTL_MAX];
	char have[DETER_SYSCTL_MAX];	/* else at its default */
};

/* Appends one setting's change, "DIR.NAME[ELEM] OLD -> NEW", to @buf. */
static void rec_settings_diff1(char *buf, size_t len, unsigned int id,
			       const struct rec_settings *o, const struct rec_settings *n)
{
	const struct rec_sysctl *sc = &rec_sysctls[id];
	size_t at = strlen(buf);
	char ov[24] = "default", nv[24] = "default", elem[16] = "";

	static const long long param_def[DETER_PARAMS] = DETER_PARAM_DEFAULTS;

	if (sc->elem >= 0)
		snprintf(elem, sizeof(elem), "[%d]", sc->elem);
	/* A module parameter's default is known here; a sysctl's, the kernel's. */
	if (id >= DETER_PARAM_FIRST) {
		snprintf(ov, sizeof(ov), "%lld", param_def[id - DETER_PARAM_FIRST]);
		snprintf(nv, sizeof(nv), "%lld", param_def[id - DETER_PARAM_FIRST]);
	}
	if (o->have[id])
		snprintf(ov, sizeof(ov), "%lld", o->v[id]);
	if (n->have[id])
		snprintf(nv, sizeof(nv), "%lld", n->v[id]);
	snprintf(buf + at, len - at, "%s%s.%s%s %s -> %s", at ? ", " : "",
		 rec_sysctl_dir(sc), sc->name, elem, ov, nv);
}

/**
 * rec_settings_changed() - what a VALUE MISSING SETTINGS says changed
 * @log: the log
 * @at: that event's index in @log->evs
 * @buf: filled with the settings that differ, "net.ipv4.tcp_wmem[2]
 *       65536 -> 4194304, ..." ("default": at the kernel's default, which
 *       deter knows for module parameters only), or with "" when none
 *       does (a change undone by the time deter.ko logged them again)
 * @len: its size
 *
 * The CONFIG SYSCTL events after the event are every setting off its
 * default then; those before it, since the start or the last such event,
 * the settings before. Module parameters only of the congestion controls
 * the log's end used.
 */
void rec_settings_changed(const struct rec_log *log, size_t at, char *buf, size_t len)
{
	struct rec_settings *set = calloc(2, sizeof(*set));
	int used[DETER_SYSCTL_MAX] = { 0 };
	const struct rec_ev *e;
	unsigned int id;
	size_t i;
	int k = 0;

	if (len)
		buf[0] = '\0';
	if (!set || !len)
		goto out;
	/* Parameters count for the congestion controls the end used. */
	rec_log_cc_params(log, used);
	for (i = 0; i < log->nevs; i++) {
		e = &log->evs[i];
		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_MISSING &&
		    e->a == DETER_MISSING_SETTINGS) {
			if (i > at)
				break;
			k = i == at;
			memset(&set[k], 0, sizeof(set[k]));
		} else if (e->type == DETER_EV_CONFIG && e->sub == DETER_CFG_SYSCTL) {
			id = e->a >> 32;
			if (id < DETER_SYSCTL_MAX) {
				set[k].v[id] = rec_sysctl_value(e->a);
				set[k].have[id] = 1;
			}
		}
	}
	for (id = 0; id < DETER_SYSCTL_MAX; id++)
		if ((id < DETER_PARAM_FIRST || used[id]) &&
		    (set[0].have[id] != set[1].have[id] ||
		     (set[0].have[id] && set[0].v[id] != set[1].v[id])))
			rec_settings_diff1(buf, len, id, &set[0], &set[1]);
out:
	free(set);
}

/**
 * rec_tcpopt_value() - a DETER_CFG_TCP event's value, in the option's units
 * @a: the event's value
 *
 * Return: the value; TCP_LINGER2's sign-extended, SO_MAX_PACING_RATE's
 * "none" as UINT64_MAX (cast), a timeout in us with -1 for none.
 */
long long rec_tcpopt_value(uint64_t a)
{
	uint64_t v = DETER_TCPOPT_VAL(a);

	if (DETER_TCPOPT_ID(a) == DETER_TCPOPT_LINGER2)
		return (int32_t)v;
	if (DETER_TCPOPT_ID(a) == DETER_TCPOPT_MAX_PACING_RATE && v == DETER_TCPOPT_RATE_MAX)
		return (long long)UINT64_MAX;
	if (DETER_TCPOPT_ID(a) == DETER_TCPOPT_RCVTIMEO ||
	    DETER_TCPOPT_ID(a) == DETER_TCPOPT_SNDTIMEO)
		return (long long)v - 1;
	return v;
}

/**
 * rec_cc_name() - a DETER_CFG_CC event's congestion control name
 * @a: the event's value
 * @name: filled, NUL-terminated (its first DETER_CC_BYTES bytes)
 */
void rec_cc_name(uint64_t a, char name[DETER_CC_BYTES + 1])
{
	int i;

	for (i = 0; i < DETER_CC_BYTES; i++)
		name[i] = (char)(a >> (8 * i));
	name[DETER_CC_BYTES] = '\0';
}

/*
 * Mark in @used the module parameters congestion control @cc (or its
 * fallback, dctcp-reno) reads: those of module tcp_NAME.
 */
static void rec_cc_params_used(const char *cc, int used[DETER_SYSCTL_MAX])
{
	unsigned int id;
	size_t n;

	for (id = DETER_PARAM_FIRST; id < DETER_SYSCTL_MAX; id++) {
		n = strlen(rec_sysctls[id].module) - strlen("tcp_");
		if (!strncmp(cc, rec_sysctls[id].module + strlen("tcp_"), n) &&
		    (cc[n] == '\0' || cc[n] == '-'))
			used[id] = 1;
	}
}

/**
 * rec_log_cc_params() - the module parameters a log's end may have read
 * @log: the log
 * @used: set to 1 at the enum deter_sysctl id of each parameter of the
 *	  congestion controls the end used: at ESTABLISHED, and any
 *	  TCP_CONGESTION later
 */
void rec_log_cc_params(const struct rec_log *log, int used[DETER_SYSCTL_MAX])
{
	char cc[DETER_CC_BYTES + 1];
	size_t i;

	rec_cc_params_used(log->hdr.cc, used);
	for (i = 0; i < log->nevs; i++) {
		if (log->evs[i].type == DETER_EV_CONFIG && log->evs[i].sub == DETER_CFG_CC) {
			rec_cc_name(log->evs[i].a, cc);
			rec_cc_params_used(cc, used);
		}
	}
}

/*
 * enum deter_sysctl's names (under net.ipv4, net.core, ip route, or a
 * module's parameters), vector element, signedness.
 */
const struct rec_sysctl rec_sysctls[DETER_SYSCTL_MAX] = {
	[DETER_SYSCTL_TCP_ECN] = { "tcp_ecn", .elem = -1 },
	[DETER_SYSCTL_TCP_ECN_FALLBACK] = { "tcp_ecn_fallback", .elem = -1 },
	[DETER_SYSCTL_TCP_SACK] = { "tcp_sack", .elem = -1 },
	[DETER_SYSCTL_TCP_WINDOW_SCALING] = { "tcp_window_scaling", .elem = -1 },
	[DETER_SYSCTL_TCP_TIMESTAMPS] = { "tcp_timestamps", .elem = -1 },
	[DETER_SYSCTL_TCP_DSACK] = { "tcp_dsack", .elem = -1 },
	[DETER_SYSCTL_TCP_EARLY_RETRANS] = { "tcp_early_retrans", .elem = -1 },
	[DETER_SYSCTL_TCP_RECOVERY] = { "tcp_recovery", .elem = -1 },
	[DETER_SYSCTL_TCP_REORDERING] = { "tcp_reordering", .elem = -1 },
	[DETER_SYSCTL_TCP_MAX_REORDERING] = { "tcp_max_reordering", .elem = -1 },
	[DETER_SYSCTL_TCP_FRTO] = { "tcp_frto", .elem = -1 },
	[DETER_SYSCTL_TCP_RETRIES1] = { "tcp_retries1", .elem = -1 },
	[DETER_SYSCTL_TCP_RETRIES2] = { "tcp_retries2", .elem = -1 },
	[DETER_SYSCTL_TCP_ORPHAN_RETRIES] = { "tcp_orphan_retries", .elem = -1 },
	[DETER_SYSCTL_TCP_SYN_RETRIES] = { "tcp_syn_retries", .elem = -1 },
	[DETER_SYSCTL_TCP_SYNACK_RETRIES] = { "tcp_synack_retries", .elem = -1 },
	[DETER_SYSCTL_TCP_SYN_LINEAR_TIMEOUTS] = { "tcp_syn_linear_timeouts", .elem = -1 },
	[DETER_SYSCTL_TCP_THIN_LINEAR_TIMEOUTS] = { "tcp_thin_linear_timeouts", .elem = -1 },
	[DETER_SYSCTL_TCP_SLOW_START_AFTER_IDLE] = { "tcp_slow_start_after_idle", .elem = -1 },
	[DETER_SYSCTL_TCP_RETRANS_COLLAPSE] = { "tcp_retrans_collapse", .elem = -1 },
	[DETER_SYSCTL_TCP_APP_WIN] = { "tcp_app_win", .elem = -1 },
	[DETER_SYSCTL_TCP_ADV_WIN_SCALE] = { "tcp_adv_win_scale", .elem = -1, .sgn = 1 },
	[DETER_SYSCTL_TCP_MODERATE_RCVBUF] = { "tcp_moderate_rcvbuf", .elem = -1 },
	[DETER_SYSCTL_TCP_TSO_WIN_DIVISOR] = { "tcp_tso_win_divisor", .elem = -1 },
	[DETER_SYSCTL_TCP_TSO_RTT_LOG] = { "tcp_tso_rtt_log", .elem = -1 },
	[DETER_SYSCTL_TCP_MIN_TSO_SEGS] = { "tcp_min_tso_segs", .elem = -1 },
	[DETER_SYSCTL_TCP_AUTOCORKING] = { "tcp_autocorking", .elem = -1 },
	[DETER_SYSCTL_TCP_LIMIT_OUTPUT_BYTES] = { "tcp_limit_output_bytes", .elem = -1 },
	[DETER_SYSCTL_TCP_NOTSENT_LOWAT] = { "tcp_notsent_lowat", .elem = -1 },
	[DETER_SYSCTL_TCP_MIN_RTT_WLEN] = { "tcp_min_rtt_wlen", .elem = -1 },
	[DETER_SYSCTL_TCP_PACING_SS_RATIO] = { "tcp_pacing_ss_ratio", .elem = -1 },
	[DETER_SYSCTL_TCP_PACING_CA_RATIO] = { "tcp_pacing_ca_ratio", .elem = -1 },
	[DETER_SYSCTL_TCP_COMP_SACK_DELAY_NS] = { "tcp_comp_sack_delay_ns", .elem = -1 },
	[DETER_SYSCTL_TCP_COMP_SACK_SLACK_NS] = { "tcp_comp_sack_slack_ns", .elem = -1 },
	[DETER_SYSCTL_TCP_COMP_SACK_NR] = { "tcp_comp_sack_nr", .elem = -1 },
	[DETER_SYSCTL_TCP_BACKLOG_ACK_DEFER] = { "tcp_backlog_ack_defer", .elem = -1 },
	[DETER_SYSCTL_TCP_PINGPONG_THRESH] = { "tcp_pingpong_thresh", .elem = -1 },
	[DETER_SYSCTL_TCP_RTO_MIN_US] = { "tcp_rto_min_us", .elem = -1 },
	[DETER_SYSCTL_TCP_MTU_PROBING] = { "tcp_mtu_probing", .elem = -1 },
	[DETER_SYSCTL_TCP_BASE_MSS] = { "tcp_base_mss", .elem = -1 },
	[DETER_SYSCTL_TCP_MIN_SND_MSS] = { "tcp_min_snd_mss", .elem = -1 },
	[DETER_SYSCTL_TCP_PROBE_THRESHOLD] = { "tcp_probe_threshold", .elem = -1 },
	[DETER_SYSCTL_TCP_PROBE_INTERVAL] = { "tcp_probe_interval", .elem = -1 },
	[DETER_SYSCTL_TCP_MTU_PROBE_FLOOR] = { "tcp_mtu_probe_floor", .elem = -1 },
	[DETER_SYSCTL_TCP_KEEPALIVE_TIME] = { "tcp_keepalive_time", .elem = -1 },
	[DETER_SYSCTL_TCP_KEEPALIVE_PROBES] = { "tcp_keepalive_probes", .elem = -1 },
	[DETER_SYSCTL_TCP_KEEPALIVE_INTVL] = { "tcp_keepalive_intvl", .elem = -1 },
	[DETER_SYSCTL_TCP_FIN_TIMEOUT] = { "tcp_fin_timeout", .elem = -1 },
	[DETER_SYSCTL_TCP_STDURG] = { "tcp_stdurg", .elem = -1 },
	[DETER_SYSCTL_TCP_RFC1337] = { "tcp_rfc1337", .elem = -1 },
	[DETER_SYSCTL_TCP_WORKAROUND_SIGNED_WINDOWS] = {
		"tcp_workaround_signed_windows", .elem = -1 },
	[DETER_SYSCTL_TCP_SHRINK_WINDOW] = { "tcp_shrink_window", .elem = -1 },
	[DETER_SYSCTL_TCP_CHALLENGE_ACK_LIMIT] = { "tcp_challenge_ack_limit", .elem = -1 },
	[DETER_SYSCTL_TCP_INVALID_RATELIMIT] = { "tcp_invalid_ratelimit", .elem = -1 },
	[DETER_SYSCTL_TCP_NOMETRICS_SAVE] = { "tcp_no_metrics_save", .elem = -1 },
	[DETER_SYSCTL_TCP_NO_SSTHRESH_METRICS_SAVE] = {
		"tcp_no_ssthresh_metrics_save", .elem = -1 },
	[DETER_SYSCTL_TCP_FASTOPEN] = { "tcp_fastopen", .elem = -1 },
	[DETER_SYSCTL_TCP_PLB_ENABLED] = { "tcp_plb_enabled", .elem = -1 },
	[DETER_SYSCTL_TCP_RMEM0] = { "tcp_rmem", .elem = 0 },
	[DETER_SYSCTL_TCP_RMEM1] = { "tcp_rmem", .elem = 1 },
	[DETER_SYSCTL_TCP_RMEM2] = { "tcp_rmem", .elem = 2 },
	[DETER_SYSCTL_TCP_WMEM0] = { "tcp_wmem", .elem = 0 },
	[DETER_SYSCTL_TCP_WMEM1] = { "tcp_wmem", .elem = 1 },
	[DETER_SYSCTL_TCP_WMEM2] = { "tcp_wmem", .elem = 2 },
	[DETER_SYSCTL_CORE_RMEM_MAX] = { "rmem_max", .elem = -1, .core = 1 },
	/* As ip route takes them; rto_min in ms, the last three locked. */
	[DETER_SYSCTL_ROUTE_INITCWND] = { "initcwnd", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_INITRWND] = { "initrwnd", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_WINDOW] = { "window", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_ADVMSS] = { "advmss", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_RTO_MIN] = { "rto_min", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_CWND] = { "cwnd", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_SSTHRESH] = { "ssthresh", .elem = -1, .route = 1 },
	[DETER_SYSCTL_ROUTE_REORDERING] = { "reordering", .elem = -1, .route = 1 },
	/* /sys/module/MODULE/parameters/NAME */
#define REC_PARAM(n, s, m) { n, .elem = -1, .sgn = s, .module = m }
	[DETER_SYSCTL_CUBIC_FAST_CONVERGENCE] = REC_PARAM("fast_convergence", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_BETA] = REC_PARAM("beta", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_INITIAL_SSTHRESH] = REC_PARAM("initial_ssthresh", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_BIC_SCALE] = REC_PARAM("bic_scale", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_TCP_FRIENDLINESS] = REC_PARAM("tcp_friendliness", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_HYSTART] = REC_PARAM("hystart", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_HYSTART_DETECT] = REC_PARAM("hystart_detect", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_HYSTART_LOW_WINDOW] = REC_PARAM("hystart_low_window", 1, "tcp_cubic"),
	[DETER_SYSCTL_CUBIC_HYSTART_ACK_DELTA_US] =
		REC_PARAM("hystart_ack_delta_us", 1, "tcp_cubic"),
	[DETER_SYSCTL_DCTCP_SHIFT_G] = REC_PARAM("dctcp_shift_g", 0, "tcp_dctcp"),
	[DETER_SYSCTL_DCTCP_ALPHA_ON_INIT] = REC_PARAM("dctcp_alpha_on_init", 0, "tcp_dctcp"),
	[DETER_SYSCTL_BIC_FAST_CONVERGENCE] = REC_PARAM("fast_convergence", 1, "tcp_bic"),
	[DETER_SYSCTL_BIC_MAX_INCREMENT] = REC_PARAM("max_increment", 1, "tcp_bic"),
	[DETER_SYSCTL_BIC_LOW_WINDOW] = REC_PARAM("low_window", 1, "tcp_bic"),
	[DETER_SYSCTL_BIC_BETA] = REC_PARAM("beta", 1, "tcp_bic"),
	[DETER_SYSCTL_BIC_INITIAL_SSTHRESH] = REC_PARAM("initial_ssthresh", 1, "tcp_bic"),
	[DETER_SYSCTL_BIC_SMOOTH_PART] = REC_PARAM("smooth_part", 1, "tcp_bic"),
	[DETER_SYSCTL_HTCP_USE_RTT_SCALING] = REC_PARAM("use_rtt_scaling", 1, "tcp_htcp"),
	[DETER_SYSCTL_HTCP_USE_BANDWIDTH_SWITCH] =
		REC_PARAM("use_bandwidth_switch", 1, "tcp_htcp"),
	[DETER_SYSCTL_VEGAS_ALPHA] = REC_PARAM("alpha", 1, "tcp_vegas"),
	[DETER_SYSCTL_VEGAS_BETA] = REC_PARAM("beta", 1, "tcp_vegas"),
	[DETER_SYSCTL_VEGAS_GAMMA] = REC_PARAM("gamma", 1, "tcp_vegas"),
	[DETER_SYSCTL_HYBLA_RTT0] = REC_PARAM("rtt0", 1, "tcp_hybla"),
	[DETER_SYSCTL_NV_PAD] = REC_PARAM("nv_pad", 1, "tcp_nv"),
	[DETER_SYSCTL_NV_RESET_PERIOD] = REC_PARAM("nv_reset_period", 1, "tcp_nv"),
	[DETER_SYSCTL_NV_MIN_CWND] = REC_PARAM("nv_min_cwnd", 1, "tcp_nv"),
	[DETER_SYSCTL_CDG_WINDOW] = REC_PARAM("window", 1, "tcp_cdg"),
	[DETER_SYSCTL_CDG_BACKOFF_BETA] = REC_PARAM("backoff_beta", 0, "tcp_cdg"),
	[DETER_SYSCTL_CDG_BACKOFF_FACTOR] = REC_PARAM("backoff_factor", 0, "tcp_cdg"),
	[DETER_SYSCTL_CDG_HYSTART_DETECT] = REC_PARAM("hystart_detect", 0, "tcp_cdg"),
	[DETER_SYSCTL_CDG_USE_INEFF] = REC_PARAM("use_ineff", 0, "tcp_cdg"),
	[DETER_SYSCTL_CDG_USE_SHADOW] = REC_PARAM("use_shadow", 0, "tcp_cdg"),
	[DETER_SYSCTL_CDG_USE_TOLERANCE] = REC_PARAM("use_tolerance", 0, "tcp_cdg"),
#undef REC_PARAM
};

_Static_assert(sizeof((long long[])DETER_PARAM_DEFAULTS) == DETER_PARAMS * sizeof(long long),
	       "DETER_PARAM_DEFAULTS has one default per module parameter");

/**
 * rec_param_parse() - a module parameter's value as sysfs shows it
 * @s: the file's text: a decimal number, or Y or N for a bool
 * @v: the value; a bool's is 1 or 0, as deter.ko logs it and sysfs takes it
 *
 * Return: 0, or -1 if @s is neither.
 */
int rec_param_parse(const char *s, long long *v)
{
	char *end;

	if ((s[0] == 'Y' || s[0] == 'N') && (s[1] == '\0' || s[1] == '\n')) {
		*v = s[0] == 'Y';
		return 0;
	}
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (end == s || errno || (*end != '\0' && *end != '\n') ||
	    *v < INT32_MIN || *v > UINT32_MAX)
		return -1;
	return 0;
}

/* Where host-wide setting @sc is: a module parameter's or net.core's file. */
void rec_sysctl_path(const struct rec_sysctl *sc, char *buf, size_t len)
{
	if (sc->module)
		snprintf(buf, len, "/sys/module/%s/parameters/%s", sc->module, sc->name);
	else
		snprintf(buf, len, "/proc/sys/net/core/%s", sc->name);
}

/* Set *err (if err) to a malloc'd message; return -1. */
int rec_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		if (vasprintf(err, fmt, ap) < 0)
			*err = NULL;
		va_end(ap);
	}
	return -1;
}

struct rec_buf {
	uint8_t *p;
	size_t len, cap;
};

static int rec_buf_grow(struct rec_buf *b, size_t more)
{
	uint8_t *np;
	size_t cap;

	cap = b->cap ? b->cap * 2 : 4096;
	while (cap < b->len + more)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np)
		return -1;
	b->p = np;
	b->cap = cap;
	return 0;
}

static inline int rec_buf_reserve(struct rec_buf *b, size_t more)
{
	return b->len + more <= b->cap ? 0 : rec_buf_grow(b, more);
}

static inline int rec_buf_varint(struct rec_buf *b, uint64_t v)
{
	if (rec_buf_reserve(b, REC_VARINT_MAX))
		return -1;
	b->len += rec_varint_put(b->p + b->len, v);
	return 0;
}

static inline int rec_buf_byte(struct rec_buf *b, uint8_t v)
{
	if (rec_buf_reserve(b, 1))
		return -1;
	b->p[b->len++] = v;
	return 0;
}

/* What both encoder and decoder carry from one record to the next. */
struct rec_log_ctx {
	uint32_t seq;			/* last sequence number */
	struct rec_ev prev;		/* last event, for runs */
	uint64_t rx_expect;		/* expected idx of the next RX */
	uint64_t rx_last;		/* idx of the last RX */
	uint64_t smp_idx, smp_ns;	/* last SAMPLE */
	uint64_t smp_lag;		/* the last referenced SAMPLE's time - its reference */
	uint64_t clk;			/* the TCP clock: CLOCK deltas summed */
	unsigned int clk_ctx;		/* REC_LOG_CLK_*: the last non-CLOCK event */
	uint64_t clk_ring[REC_LOG_CLK_RING]; /* its last values */
	unsigned int nclk;		/* CLOCK values seen */
	uint64_t call_bytes[DETER_ABI_CALL_MAX]; /* last CALL's bytes, per call */
	struct rec_state state;		/* last STATE's values */
	uint64_t dict[REC_LOG_DICT][2];	/* CALL (a, b) dictionary */
	unsigned int ndict, dict_next;
};

static int rec_log_dict_find(const struct rec_log_ctx *c, uint64_t a, uint64_t b)
{
	unsigned int i;

	for (i = 0; i < c->ndict; i++)
		if (c->dict[i][0] == a && c->dict[i][1] == b)
			return i;
	return -1;
}

static void rec_log_dict_add(struct rec_log_ctx *c, uint64_t a, uint64_t b)
{
	c->dict[c->dict_next][0] = a;
	c->dict[c->dict_next][1] = b;
	c->dict_next = (c->dict_next + 1) % REC_LOG_DICT;
	if (c->ndict < REC_LOG_DICT)
		c->ndict++;
}

/* A CALL_DONE's result against its call's bytes, as zigzag. */
static uint64_t rec_log_done_zz(const struct rec_log_ctx *c, const struct rec_ev *e)
{
	return rec_zigzag_encode(e->a - (e->sub < DETER_ABI_CALL_MAX ?
					 c->call_bytes[e->sub] : 0));
}

/*
 * b of a send's CALL_DONE, as logs of @version have it: a spliced send's
 * pages (format 12), what the send put on the error queue (13); nonzero.
 */
static int rec_log_send_bits_ok(uint64_t b, unsigned int version)
{
	const uint64_t splice = DETER_SPLICE_OFF | DETER_SPLICE_CONT | DETER_SPLICE_OTHER;
	uint64_t known = splice | DETER_SPLICE_KNOWN;

	if (version >= 13)
		known |= DETER_SEND_ERRQ;
	return b && !(b & ~known) && (!(b & splice) || (b & DETER_SPLICE_KNOWN));
}

/*
 * The flags of a splice read's CALL, as logs of @version have it: the
 * splice flags (SPLICE_F_*, DETER_SPLICE_RD_FLAGS), and from format 14
 * on the pipe's room and the socket's mode (DETER_SPLICE_RD_*).
 */
static int rec_log_splice_read_ok(uint64_t flags, unsigned int version)
{
	uint64_t known = DETER_SPLICE_RD_FLAGS;

	if (version >= 14)
		known |= DETER_SPLICE_RD_NONBLOCK |
			 (uint64_t)DETER_SPLICE_RD_ROOM_MAX << DETER_SPLICE_RD_ROOM_SHIFT;
	return !(flags & ~known);
}

/* Update the context with an event just encoded or decoded. */
static void rec_log_ctx_after(struct rec_log_ctx *c, const struct rec_ev *e,
			      const struct rec_state *st)
{
	c->seq = e->seq;
	c->prev = *e;
	switch (e->type) {
	case DETER_EV_RX:
		c->rx_last = e->a;
		/* A CTL's c is a TS value, not segments: a is the expected. */
		c->rx_expect = e->a + (e->b & DETER_RX_CTL ? 0 : e->c);
		break;
	case DETER_EV_CALL:
		if (e->sub < DETER_ABI_CALL_MAX)
			c->call_bytes[e->sub] = e->a;
		break;
	case DETER_EV_SAMPLE:
		c->smp_idx = e->a;
		c->smp_ns = e->b;
		break;
	case DETER_EV_VALUE:
		if (e->sub == DETER_V_CLOCK) {
			c->clk += e->a;
			c->clk_ring[c->nclk++ % REC_LOG_CLK_RING] = c->clk;
			return;		/* leaves clk_ctx */
		}
		break;
	case DETER_EV_STATE:
		c->state = *st;
		break;
	}
	c->clk_ctx = e->type == DETER_EV_RX || e->type == DETER_EV_NET ? REC_LOG_CLK_RX :
		     e->type == DETER_EV_LOCK ? REC_LOG_CLK_LOCK : REC_LOG_CLK_OTHER;
}

static int rec_log_runnable(const struct rec_log_ctx *c, const struct rec_ev *e)
{
	const struct rec_ev *p = &c->prev;

	if (!c->seq || e->seq != p->seq + 1 || e->type != p->type ||
	    e->sub != p->sub)
		return 0;
	if (e->type == DETER_EV_LOCK)
		return e->a == p->a;
	if (e->type == DETER_EV_RX)
		return e->a == c->rx_expect && e->b == p->b && e->c == p->c;
	return 0;
}

/*
 * A sample's gap (format 4) without its trailing zero bits, which deter.ko
 * makes many of: m << 6 | tz for gap m << tz.
 */
static uint64_t rec_gap_pack(uint64_t gap)
{
	unsigned int tz = gap ? __builtin_ctzll(gap) : 0;

	return (gap >> tz) << 6 | tz;
}

static int rec_gap_unpack(uint64_t v, uint64_t *gap)
{
	unsigned int tz = v & 63;

	if (v >> 6 > UINT64_MAX >> tz)
		return -1;
	*gap = v >> 6 << tz;
	return 0;
}

/* The clock value @j reads before the newest (0: the newest). */
static uint64_t rec_smp_ref_ns(const struct rec_log_ctx *c, unsigned int j)
{
	return c->clk_ring[(c->nclk - 1 - j) % REC_LOG_CLK_RING];
}

/*
 * A sample's clock reference (format 6): the age of the newest of the
 * last REC_LOG_CLK_RING clock values at or before @ns, or
 * REC_LOG_SMP_NOREF.
 */
static unsigned int rec_smp_ref(const struct rec_log_ctx *c, uint64_t ns)
{
	unsigned int j, n = c->nclk < REC_LOG_CLK_RING ? c->nclk : REC_LOG_CLK_RING;

	for (j = 0; j < n; j++)
		if (rec_smp_ref_ns(c, j) <= ns)
			return j;
	return REC_LOG_SMP_NOREF;
}

/* The stream (format 4) each record kind's fields go to. */
static enum rec_stream rec_log_stream(unsigned int type, unsigned int sub)
{
	switch (type) {
	case DETER_EV_LOCK:
		return RS_LOCK;
	case DETER_EV_RX:
	case DETER_EV_NET:
		return RS_RX;
	case DETER_EV_CALL:
	case DETER_EV_CALL_DONE:
	case REC_LOG_CALLREF:
		return RS_CALL;
	case DETER_EV_SAMPLE:
		return RS_SAMPLE;
	case DETER_EV_VALUE:
		return sub == DETER_V_CLOCK ? RS_CLOCK : RS_VALUE;
	case DETER_EV_CONFIG:
		return RS_VALUE;
	case DETER_EV_STATE:
		return RS_STATE;
	}
	return RS_MISC;
}

/**
 * rec_log_encode() - encode events into a log body (before compression)
 * @evs: events sorted by sequence number
 * @n: how many
 * @states: the values STATE events index
 * @out: the body, malloc'd
 * @len: its length
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_encode(const struct rec_ev *evs, size_t n,
		   const struct rec_state *states, uint8_t **out, size_t *len,
		   char **err)
{
	return rec_log_encode_v(evs, n, states, DETER_ABI_VERSION, out, len, err);
}

/*
 * A clock delta (format 7): its code, 0 for ns (they follow in RS_CLKHI)
 * or 1 + whole us, split into the low byte (RS_CLOCK) and the rest
 * (RS_CLKHI, a varint). The low bytes are nearly noise, the rest nearly
 * constant: apart, zstd's entropy coder gets each right (-19 % on RPC
 * logs' clock values against one stream of varints). A sample's time
 * delta and gap are split the same way (-15 % on the samples).
 */
static int rec_buf_planes(struct rec_buf *lo, struct rec_buf *hi, uint64_t v)
{
	return rec_buf_byte(lo, (uint8_t)v) | rec_buf_varint(hi, v >> 8);
}

/*
 * The pair of streams a clock delta goes to: format 8 keeps apart those
 * after a segment (mostly an RTT since the segment it answers), after a
 * lock (an application's wake-up) and after the rest (within a call:
 * the stack's own delay), so each pair's entropy coder fits one spread.
 */
static void rec_log_clock_streams(unsigned int version, unsigned int ctx, int *lo, int *hi)
{
	if (version < 8 || ctx == REC_LOG_CLK_RX) {
		*lo = RS_CLOCK;
		*hi = RS_CLKHI;
	} else {
		*lo = ctx == REC_LOG_CLK_LOCK ? RS_CLOCK_LOCK : RS_CLOCK_OTHER;
		*hi = *lo + 1;
	}
}

static int rec_log_put_clock(struct rec_buf *bs, const struct rec_log_ctx *c,
			     unsigned int version, uint64_t ns)
{
	uint64_t code = ns % 1000 ? 0 : ns / 1000 + 1;
	int r, lo, hi;

	rec_log_clock_streams(version, c->clk_ctx, &lo, &hi);
	r = rec_buf_planes(&bs[lo], &bs[hi], code);
	if (!code)
		r |= rec_buf_varint(&bs[hi], ns);
	return r;
}

/* Streams a body of format @version has (a prefix of enum rec_stream). */
static int rec_log_nstreams(unsigned int version)
{
	return version >= 8 ? RS_MAX : version >= 7 ? RS_CLOCK_LOCK :
	       version >= 6 ? RS_CLKHI : RS_SMPREF;
}

/*
 * An encoder: the context and streams carried from one call of
 * rec_log_enc_add() to the next. Format 9 cuts a connection's body into
 * chunks (rec_log_enc_chunk()), each its streams' lengths and the
 * streams, with the context going on across them, so that the recorder
 * need not hold a long connection's events until it closes.
 */
struct rec_log_enc {
	unsigned int version;
	struct rec_log_ctx c;
	struct rec_buf bs[RS_MAX];
	uint64_t run;		/* events the open RUN stands for */
};

/**
 * rec_log_enc_new() - an encoder of log format @version, 6 to
 *	DETER_ABI_VERSION
 * @version: the format; older ones for tests of the decoder
 *
 * Return: the encoder (rec_log_enc_free() it), or NULL (out of memory or
 * a format it cannot write).
 */
struct rec_log_enc *rec_log_enc_new(unsigned int version)
{
	struct rec_log_enc *enc;

	if (version < 6 || version > DETER_ABI_VERSION)
		return NULL;
	enc = calloc(1, sizeof(*enc));
	if (enc)
		enc->version = version;
	return enc;
}

void rec_log_enc_free(struct rec_log_enc *enc)
{
	int k;

	if (!enc)
		return;
	for (k = 0; k < RS_MAX; k++)
		free(enc->bs[k].p);
	free(enc);
}

/* Bytes rec_log_enc_chunk() would return now, but for the lengths. */
size_t rec_log_enc_pending(const struct rec_log_enc *enc)
{
	size_t raw = 0;
	int k;

	for (k = 0; k < RS_MAX; k++)
		raw += enc->bs[k].len;
	return raw;
}

/* Close the open RUN, if any. */
static int rec_log_enc_run_end(struct rec_log_enc *enc)
{
	int r = 0;

	if (enc->run) {
		r |= rec_buf_byte(&enc->bs[RS_TAG], REC_LOG_RUN << 4);
		r |= rec_buf_varint(&enc->bs[RS_MISC], enc->run);
		enc->run = 0;
	}
	return r;
}

/**
 * rec_log_enc_add() - encode more of a connection's events
 * @enc: the encoder
 * @evs: events sorted by sequence number, all after the last ones added
 * @n: how many
 * @states: the values their STATE events index
 * @err: the error message
 *
 * Return: 0, or -1 with *err set (an event the format cannot hold; the
 * encoder is then unusable).
 */
int rec_log_enc_add(struct rec_log_enc *enc, const struct rec_ev *evs, size_t n,
		    const struct rec_state *states, char **err)
{
	struct rec_log_ctx *c = &enc->c;
	struct rec_buf *bs = enc->bs, *b;
	unsigned int version = enc->version;
	size_t i;
	int k, r = 0;

	for (i = 0; i < n && !r; i++) {
		const struct rec_ev *e = &evs[i];
		const struct rec_state *st = NULL;
		unsigned int j;

		if (e->type == DETER_EV_STATE)
			st = &states[e->a];
		if (rec_log_runnable(c, e)) {
			enc->run++;
			rec_log_ctx_after(c, e, st);
			continue;
		}
		r |= rec_log_enc_run_end(enc);
		if (e->sub > 15 || e->type == REC_LOG_RUN ||
		    e->type > DETER_EV_LAST || e->seq <= c->seq ||
		    (e->type == DETER_EV_CALL_DONE && version >= 12 &&
		     (e->sub == DETER_ABI_CALL_SENDMSG ? rec_log_done_zz(c, e) >> 63 :
		      e->b != 0))) {
			r = -2;
			break;
		}
		if (e->seq - c->seq > 1) {
			r |= rec_buf_byte(&bs[RS_TAG], REC_LOG_SEQGAP << 4);
			r |= rec_buf_varint(&bs[RS_MISC], e->seq - c->seq - 2);
		}
		k = e->type == DETER_EV_CALL ? rec_log_dict_find(c, e->a, e->b) : -1;
		r |= rec_buf_byte(&bs[RS_TAG], (k >= 0 ? REC_LOG_CALLREF : e->type) << 4 | e->sub);
		b = &bs[rec_log_stream(e->type, e->sub)];
		switch (e->type) {
		case DETER_EV_VALUE:
			if (e->sub == DETER_V_CLOCK && version >= 7) {
				r |= rec_log_put_clock(bs, c, version, e->a);
				break;
			}
			if (e->sub == DETER_V_CLOCK) {
				if (e->a % 1000 == 0) {
					r |= rec_buf_varint(b, e->a / 1000 << 1);
				} else {
					r |= rec_buf_varint(b, 1);
					r |= rec_buf_varint(b, e->a);
				}
				break;
			}
			r |= rec_buf_varint(b, e->a);
			if (deter_value_has_b(e->sub))
				r |= rec_buf_varint(b, e->b);
			break;
		case DETER_EV_LOCK:
		case DETER_EV_CONFIG:
			r |= rec_buf_varint(b, e->a);
			break;
		case DETER_EV_RX:
			r |= rec_buf_varint(b, rec_zigzag_encode(e->a - c->rx_expect));
			r |= rec_buf_byte(b, (uint8_t)e->b);
			r |= rec_buf_varint(b, e->c);
			break;
		case DETER_EV_NET:
			r |= rec_buf_varint(b, rec_zigzag_encode(e->a - c->rx_last));
			r |= rec_buf_varint(b, e->b);
			break;
		case DETER_EV_CALL:
			if (k >= 0) {
				r |= rec_buf_varint(b, k);
				break;
			}
			r |= rec_buf_varint(b, e->a);
			r |= rec_buf_varint(b, e->b);
			rec_log_dict_add(c, e->a, e->b);
			break;
		case DETER_EV_CALL_DONE:
			/* Mostly all the bytes asked: 0. */
			if (version < 12 || e->sub != DETER_ABI_CALL_SENDMSG) {
				r |= rec_buf_varint(b, rec_log_done_zz(c, e));
				break;
			}
			r |= rec_buf_varint(b, rec_log_done_zz(c, e) << 1 | !!e->b);
			if (e->b)
				r |= rec_buf_varint(b, e->b);
			break;
		case DETER_EV_SAMPLE: {
			unsigned int ref = rec_smp_ref(c, e->b);
			uint64_t lag = c->smp_lag;
			int64_t d;

			if (ref == REC_LOG_SMP_NOREF) {
				d = (int64_t)(e->b - c->smp_ns);
			} else {
				lag = e->b - rec_smp_ref_ns(c, ref);
				d = (int64_t)(lag - c->smp_lag);
			}
			if (d % 1000)
				ref |= REC_LOG_SMP_NS;
			else
				d /= 1000;
			r |= rec_buf_varint(b, e->a - c->smp_idx);
			r |= rec_buf_byte(&bs[RS_SMPREF], ref);
			if (version >= 7) {
				r |= rec_buf_planes(&bs[RS_SMPLO], &bs[RS_SMPHI],
						    rec_zigzag_encode(d));
				r |= rec_buf_planes(&bs[RS_GAPLO], &bs[RS_GAPHI],
						    rec_gap_pack(e->c));
			} else {
				r |= rec_buf_varint(b, rec_zigzag_encode(d));
				r |= rec_buf_varint(b, rec_gap_pack(e->c));
			}
			c->smp_lag = lag;
			break;
		}
		case DETER_EV_STATE:
			for (j = 0; j < DETER_ST_MAX; j++)
				r |= rec_buf_varint(b,
						    rec_zigzag_encode(st->v[j] - c->state.v[j]));
			break;
		}
		rec_log_ctx_after(c, e, st);
	}
	if (r == -2)
		return rec_err(err, "event %zu (seq %u): cannot encode type %u sub %u",
			       i, evs[i].seq, evs[i].type, evs[i].sub);
	if (r)
		return rec_err(err, "out of memory");
	return 0;
}

/**
 * rec_log_enc_chunk() - the body (or, format 9, the next chunk of it) of
 *	the events added since the last chunk
 * @enc: the encoder; its context goes on, its streams start empty again
 * @out: the bytes, malloc'd
 * @len: their length
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_enc_chunk(struct rec_log_enc *enc, uint8_t **out, size_t *len,
		      char **err)
{
	int k, nrd = rec_log_nstreams(enc->version), r;
	struct rec_buf body = { 0 };

	r = rec_log_enc_run_end(enc);
	for (k = 0; k < nrd && !r; k++)
		r |= rec_buf_varint(&body, enc->bs[k].len);
	for (k = 0; k < RS_MAX && !r; k++) {
		if (!enc->bs[k].len)
			continue;
		r |= rec_buf_reserve(&body, enc->bs[k].len);
		if (!r) {
			memcpy(body.p + body.len, enc->bs[k].p, enc->bs[k].len);
			body.len += enc->bs[k].len;
		}
	}
	if (r) {
		free(body.p);
		return rec_err(err, "out of memory");
	}
	for (k = 0; k < RS_MAX; k++)
		enc->bs[k].len = 0;
	*out = body.p;
	*len = body.len;
	return 0;
}

/**
 * rec_log_encode_v() - rec_log_encode() in format @version, 6 to 10
 * @evs: events sorted by sequence number
 * @n: how many
 * @states: the values STATE events index
 * @version: the log format; older ones for tests of the decoder
 * @out: the body (one chunk), malloc'd
 * @len: its length
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_encode_v(const struct rec_ev *evs, size_t n,
		     const struct rec_state *states, unsigned int version,
		     uint8_t **out, size_t *len, char **err)
{
	struct rec_log_enc *enc = rec_log_enc_new(version);
	int r;

	if (!enc)
		return version < 6 || version > DETER_ABI_VERSION ?
		       rec_err(err, "cannot encode log format %u", version) :
		       rec_err(err, "out of memory");
	r = rec_log_enc_add(enc, evs, n, states, err);
	if (!r)
		r = rec_log_enc_chunk(enc, out, len, err);
	rec_log_enc_free(enc);
	return r;
}

/* One stream of a body being decoded; offsets in errors count from the body. */
struct rec_log_rd {
	const uint8_t *p;
	size_t len, off, base;
	char **err;
};

static int rec_log_get(struct rec_log_rd *rd, uint64_t *v, const char *what)
{
	size_t used;

	if (rec_varint_get(rd->p + rd->off, rd->len - rd->off, v, &used))
		return rec_err(rd->err, "body+%zu: %s: %s", rd->base + rd->off, what,
			       errno == EMSGSIZE ? "truncated" : "bad varint");
	rd->off += used;
	return 0;
}

static int rec_log_get_byte(struct rec_log_rd *rd, uint64_t *v, const char *what)
{
	if (rd->off == rd->len)
		return rec_err(rd->err, "body+%zu: %s: truncated", rd->base + rd->off, what);
	*v = rd->p[rd->off++];
	return 0;
}

static int rec_log_push(struct rec_log *log, size_t *cap, const struct rec_ev *e)
{
	struct rec_ev *ne;

	if (log->nevs == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		ne = realloc(log->evs, *cap * sizeof(*ne));
		if (!ne)
			return -1;
		log->evs = ne;
	}
	log->evs[log->nevs++] = *e;
	return 0;
}

static void rec_log_stat(struct rec_log *log, unsigned int type, unsigned int sub,
			 size_t from, size_t to, uint64_t events)
{
	struct rec_log_stat *st = &log->stat[type & 15][sub & 15];

	st->records++;
	st->events += events;
	st->bytes += to - from;
}

/*
 * The readers of a body: format 4's RS_MAX streams, whose lengths lead
 * the body, or (formats 2 and 3) one stream every field comes from.
 */
struct rec_log_dec {
	struct rec_log_rd rd[RS_MAX];
	struct rec_log_rd *s[RS_MAX];
	int nrd;
};

/*
 * Readers for the streams of the body, or (format 9) of the chunk of it
 * at @buf, @base bytes into the body; *@end: where that chunk ends.
 */
static int rec_log_dec_init(struct rec_log_dec *d, const uint8_t *buf, size_t len,
			    size_t base, unsigned int version, size_t *end, char **err)
{
	struct rec_log_rd pre = { .p = buf, .len = len, .base = base, .err = err };
	int i, nrd = rec_log_nstreams(version);
	uint64_t sl[RS_MAX];
	size_t at;

	memset(d, 0, sizeof(*d));
	*end = base + len;
	if (version < 4) {
		d->rd[0] = pre;
		d->nrd = 1;
		for (i = 0; i < RS_MAX; i++)
			d->s[i] = &d->rd[0];
		return 0;
	}
	for (i = 0; i < nrd; i++)
		if (rec_log_get(&pre, &sl[i], "stream length"))
			return -1;
	at = pre.off;
	for (i = 0; i < nrd; i++) {
		if (sl[i] > len - at)
			return rec_err(err, "body+%zu: stream %d (%llu bytes) overruns the body",
				       base + at, i, (unsigned long long)sl[i]);
		d->rd[i] = (struct rec_log_rd){ .p = buf + at, .len = sl[i],
						.base = base + at, .err = err };
		d->s[i] = &d->rd[i];
		at += sl[i];
	}
	if (at != len && version < 9)
		return rec_err(err, "body+%zu: %zu bytes after the last stream", at, len - at);
	*end = base + at;
	for (; i < RS_MAX; i++) {	/* streams this format lacks: empty */
		d->rd[i] = (struct rec_log_rd){ .p = buf + at, .base = base + at, .err = err };
		d->s[i] = &d->rd[i];
	}
	d->nrd = RS_MAX;
	return 0;
}

/* Bytes the readers have consumed, all streams together. */
static size_t rec_log_dec_used(const struct rec_log_dec *d)
{
	size_t n = 0;
	int i;

	for (i = 0; i < d->nrd; i++)
		n += d->rd[i].off;
	return n;
}

/* A value rec_buf_planes() split, from streams @lo and @hi. */
static int rec_log_get_planes(struct rec_log_rd *lo, struct rec_log_rd *hi,
			      uint64_t *v, const char *what)
{
	uint64_t l = 0, h = 0;

	if (rec_log_get_byte(lo, &l, what) || rec_log_get(hi, &h, what))
		return -1;
	if (h > UINT64_MAX >> 8)
		return rec_err(hi->err, "body+%zu: %s out of range",
			       hi->base + hi->off - 1, what);
	*v = h << 8 | l;
	return 0;
}

/* A clock delta (format 7 and 8, rec_log_put_clock()) into *@ns. */
static int rec_log_dec_clock(struct rec_log_dec *d, const struct rec_log_ctx *c,
			     unsigned int version, uint64_t *ns, size_t at, char **err)
{
	uint64_t code;
	int lo, hi;

	rec_log_clock_streams(version, c->clk_ctx, &lo, &hi);
	if (rec_log_get_planes(d->s[lo], d->s[hi], &code, "clock"))
		return -1;
	if (!code)
		return rec_log_get(d->s[hi], ns, "clock (ns)");
	if (code - 1 > UINT64_MAX / 1000)
		return rec_err(err, "body+%zu: bad clock value", at);
	*ns = (code - 1) * 1000;
	return 0;
}

/* A format-6 or 7 sample's time: its clock reference, then the delta. */
static int rec_log_dec_sample(struct rec_log_dec *d, struct rec_log_ctx *c,
			      struct rec_ev *e, unsigned int version, size_t at,
			      char **err)
{
	uint64_t ref = 0, v = 0;
	unsigned int j;
	int64_t dt;

	if (rec_log_get_byte(d->s[RS_SMPREF], &ref, "sample reference"))
		return -1;
	if (version >= 7 ?
	    rec_log_get_planes(d->s[RS_SMPLO], d->s[RS_SMPHI], &v, "sample time") :
	    rec_log_get(d->s[RS_SAMPLE], &v, "sample time"))
		return -1;
	j = ref & ~REC_LOG_SMP_NS;
	if (j != REC_LOG_SMP_NOREF && j >= REC_LOG_CLK_RING)
		return rec_err(err, "body+%zu: bad sample reference byte 0x%02x",
			       d->s[RS_SMPREF]->base + d->s[RS_SMPREF]->off - 1,
			       (unsigned int)ref);
	if (j != REC_LOG_SMP_NOREF && j >= c->nclk)
		return rec_err(err, "body+%zu: sample refers to clock value %u of %u",
			       d->s[RS_SMPREF]->base + d->s[RS_SMPREF]->off - 1, j, c->nclk);
	dt = rec_zigzag_decode(v);
	if (!(ref & REC_LOG_SMP_NS)) {
		if (dt > INT64_MAX / 1000 || dt < INT64_MIN / 1000)
			return rec_err(err, "body+%zu: sample time out of range", at);
		dt *= 1000;
	}
	if (j == REC_LOG_SMP_NOREF) {
		e->b = c->smp_ns + (uint64_t)dt;
	} else {
		c->smp_lag += dt;
		e->b = rec_smp_ref_ns(c, j) + (uint64_t)c->smp_lag;
	}
	return 0;
}

/**
 * rec_log_decode() - decode a log body
 * @buf: the decompressed body
 * @len: its length
 * @version: the log's format version (DETER_ABI_VERSION_MIN ... _VERSION)
 * @nevents: events the header promises
 * @log: filled: evs, nevs, states, nstates
 * @err: the error message ("body+N: ...")
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_decode(const uint8_t *buf, size_t len, unsigned int version,
		   uint32_t nevents, struct rec_log *log, char **err)
{
	struct rec_log_ctx *c = calloc(1, sizeof(*c));
	struct rec_log_dec *d = calloc(1, sizeof(*d));
	struct rec_log_rd *tag, *rs;
	size_t cap = 0, scap = 0, at, used, end;
	uint64_t v, n, i, gap = 0;
	struct rec_ev e;
	unsigned int type, j;

	if (!c || !d) {
		free(c);
		free(d);
		return rec_err(err, "out of memory");
	}
	if (rec_log_dec_init(d, buf, len, 0, version, &end, err))
		goto fail;
	log->stat_index = d->nrd > 1 ? d->rd[0].base : 0;
	log->nchunks = 1;
	tag = d->s[RS_TAG];
next_chunk:
	while (tag->off < tag->len) {
		at = tag->base + tag->off;
		used = rec_log_dec_used(d);
		type = tag->p[tag->off] >> 4;
		memset(&e, 0, sizeof(e));
		e.sub = tag->p[tag->off++] & 0xf;
		if (version >= 4 && type == REC_LOG_SEQGAP) {
			if (gap) {
				rec_err(err, "body+%zu: two sequence gaps in a row", at);
				goto fail;
			}
			if (rec_log_get(d->s[RS_MISC], &v, "sequence gap"))
				goto fail;
			if (v > UINT32_MAX - 2) {
				rec_err(err, "body+%zu: sequence gap too large", at);
				goto fail;
			}
			gap = v + 1;
			rec_log_stat(log, REC_LOG_SEQGAP, 0, used, rec_log_dec_used(d), 0);
			continue;
		}
		if (type == REC_LOG_RUN) {
			if (!c->seq || gap ||
			    (c->prev.type != DETER_EV_LOCK && c->prev.type != DETER_EV_RX)) {
				rec_err(err, "body+%zu: run without an event to repeat", at);
				goto fail;
			}
			if (rec_log_get(d->s[RS_MISC], &n, "run length"))
				goto fail;
			if (n > nevents - log->nevs) {
				rec_err(err, "body+%zu: run of %llu exceeds the %u events in the header",
					at, (unsigned long long)n, nevents);
				goto fail;
			}
			for (i = 0; i < n; i++) {
				e = c->prev;
				e.seq++;
				if (e.type == DETER_EV_RX)
					e.a = c->rx_expect;
				if (rec_log_push(log, &cap, &e))
					goto nomem;
				rec_log_ctx_after(c, &e, NULL);
			}
			rec_log_stat(log, REC_LOG_RUN, c->prev.type, used,
				     rec_log_dec_used(d), n);
			continue;
		}
		if (type > DETER_EV_LAST && type != REC_LOG_CALLREF) {
			rec_err(err, "body+%zu: unknown event type %u", at, type);
			goto fail;
		}
		if (log->nevs == nevents) {
			rec_err(err, "body+%zu: more events than the %u in the header",
				at, nevents);
			goto fail;
		}
		e.type = type == REC_LOG_CALLREF ? DETER_EV_CALL : type;
		if (version >= 4) {
			v = 1 + gap;
			gap = 0;
		} else if (rec_log_get(tag, &v, "sequence delta")) {
			goto fail;
		}
		if (!v || v > UINT32_MAX - c->seq) {
			rec_err(err, "body+%zu: sequence number does not advance", at);
			goto fail;
		}
		e.seq = c->seq + v;
		if ((e.type == DETER_EV_CALL || e.type == DETER_EV_CALL_DONE) &&
		    (e.sub >= DETER_ABI_CALL_MAX ||
		     (version < 13 && e.sub == DETER_ABI_CALL_RECV_ERRQUEUE))) {
			rec_err(err, "body+%zu: unknown socket call %u", at, e.sub);
			goto fail;
		}
		rs = d->s[rec_log_stream(type, e.sub)];
		switch (type) {
		case DETER_EV_LOCK:
			if (e.sub >= DETER_LOCK_MAX) {
				rec_err(err, "body+%zu: unknown lock owner %u", at, e.sub);
				goto fail;
			}
			if (rec_log_get(rs, &e.a, "lock"))
				goto fail;
			break;
		case DETER_EV_CONFIG:
			if (e.sub >= DETER_CFG_MAX) {
				rec_err(err, "body+%zu: unknown config field %u", at, e.sub);
				goto fail;
			}
			if (rec_log_get(rs, &e.a, "config value"))
				goto fail;
			if (e.sub == DETER_CFG_SYSCTL && e.a >> 32 >= DETER_SYSCTL_MAX) {
				rec_err(err, "body+%zu: unknown sysctl %llu", at,
					(unsigned long long)(e.a >> 32));
				goto fail;
			}
			if (e.sub == DETER_CFG_TCP &&
			    DETER_TCPOPT_ID(e.a) >= (version >= 6 ? DETER_TCPOPT_MAX :
							      DETER_TCPOPT_PRIORITY)) {
				rec_err(err, "body+%zu: unknown TCP option %u", at,
					DETER_TCPOPT_ID(e.a));
				goto fail;
			}
			break;
		case DETER_EV_VALUE:
			if (e.sub >= (version >= 6 ? DETER_V_MAX : DETER_V_HOST)) {
				rec_err(err, "body+%zu: unknown value %u", at, e.sub);
				goto fail;
			}
			if (version >= 7 && e.sub == DETER_V_CLOCK) {
				if (rec_log_dec_clock(d, c, version, &e.a, at, err))
					goto fail;
			} else if (rec_log_get(rs, &e.a, "value")) {
				goto fail;
			} else if (version >= 6 && e.sub == DETER_V_CLOCK) {
				if (e.a == 1) {
					if (rec_log_get(rs, &e.a, "clock (ns)"))
						goto fail;
				} else if (e.a & 1 || e.a >> 1 > UINT64_MAX / 1000) {
					rec_err(err, "body+%zu: bad clock value", at);
					goto fail;
				} else {
					e.a = (e.a >> 1) * 1000;
				}
			}
			if (deter_value_has_b(e.sub) &&
			    rec_log_get(rs, &e.b, "value's second field"))
				goto fail;
			if (e.sub == DETER_V_HOST && e.b >> 32 >= DETER_HOST_MAX) {
				rec_err(err, "body+%zu: unknown host answer %llu", at,
					(unsigned long long)(e.b >> 32));
				goto fail;
			}
			if (e.sub == DETER_V_MEM && e.b >> 1 >= DETER_MEM_MAX) {
				rec_err(err, "body+%zu: unknown memory decision %llu", at,
					(unsigned long long)(e.b >> 1));
				goto fail;
			}
			break;
		case DETER_EV_RX:
			if (rec_log_get(rs, &v, "rx index"))
				goto fail;
			e.a = c->rx_expect + rec_zigzag_decode(v);
			if (rec_log_get_byte(rs, &e.b, "rx flags") ||
			    rec_log_get(rs, &e.c, "rx segments"))
				goto fail;
			if (e.b & ~(uint64_t)(version >= 11 ? DETER_RX_FLAGS :
					      DETER_RX_CTL - 1)) {
				rec_err(err, "body+%zu: unknown rx flags 0x%llx", at,
					(unsigned long long)e.b);
				goto fail;
			}
			if ((e.b & DETER_RX_CTL) && e.c > UINT32_MAX + 1ULL) {
				rec_err(err, "body+%zu: rx TS value %llu out of range", at,
					(unsigned long long)e.c - 1);
				goto fail;
			}
			break;
		case DETER_EV_NET:
			if (e.sub >= DETER_NET_MAX) {
				rec_err(err, "body+%zu: unknown network action %u", at, e.sub);
				goto fail;
			}
			if (rec_log_get(rs, &v, "net index") ||
			    rec_log_get(rs, &e.b, "net count"))
				goto fail;
			e.a = c->rx_last + rec_zigzag_decode(v);
			break;
		case REC_LOG_CALLREF:
			if (rec_log_get(rs, &v, "call reference"))
				goto fail;
			if (v >= c->ndict) {
				rec_err(err, "body+%zu: call reference %llu not in dictionary",
					at, (unsigned long long)v);
				goto fail;
			}
			e.a = c->dict[v][0];
			e.b = c->dict[v][1];
			break;
		case DETER_EV_CALL:
			if (rec_log_get(rs, &e.a, "call bytes") ||
			    rec_log_get(rs, &e.b, "call flags"))
				goto fail;
			rec_log_dict_add(c, e.a, e.b);
			break;
		case DETER_EV_CALL_DONE:
			if (rec_log_get(rs, &v, "call result"))
				goto fail;
			if (version >= 12 && e.sub == DETER_ABI_CALL_SENDMSG) {
				if (v & 1 && rec_log_get(rs, &e.b, "spliced send's pages"))
					goto fail;
				if (v & 1 && !rec_log_send_bits_ok(e.b, version)) {
					rec_err(err, "body+%zu: bad bits %#llx on a send's return",
						at, (unsigned long long)e.b);
					goto fail;
				}
				v >>= 1;
			}
			e.a = (uint64_t)rec_zigzag_decode(v);
			if (version >= 4)
				e.a += c->call_bytes[e.sub];
			break;
		case DETER_EV_SAMPLE:
			if (rec_log_get(rs, &v, "sample index"))
				goto fail;
			e.a = c->smp_idx + v;
			if (version >= 6) {
				if (rec_log_dec_sample(d, c, &e, version, at, err))
					goto fail;
			} else {
				if (rec_log_get(rs, &v, "sample time"))
					goto fail;
				e.b = c->smp_ns + rec_zigzag_decode(v);
			}
			if (version >= 7 ?
			    rec_log_get_planes(d->s[RS_GAPLO], d->s[RS_GAPHI], &e.c,
					       "sample gap") :
			    rec_log_get(rs, &e.c, "sample gap"))
				goto fail;
			if (version >= 4 && rec_gap_unpack(e.c, &e.c)) {
				rec_err(err, "body+%zu: sample gap out of range", at);
				goto fail;
			}
			break;
		case DETER_EV_STATE: {
			struct rec_state *ns, st;

			for (j = 0; j < DETER_ST_MAX; j++) {
				if (rec_log_get(rs, &v, "state value"))
					goto fail;
				st.v[j] = c->state.v[j] + rec_zigzag_decode(v);
			}
			if (log->nstates == scap) {
				scap = scap ? scap * 2 : 64;
				ns = realloc(log->states, scap * sizeof(*ns));
				if (!ns)
					goto nomem;
				log->states = ns;
			}
			e.a = log->nstates;
			log->states[log->nstates++] = st;
			rec_log_ctx_after(c, &e, &st);
			if (rec_log_push(log, &cap, &e))
				goto nomem;
			rec_log_stat(log, type, e.sub, used, rec_log_dec_used(d), 1);
			continue;
		}
		default:
			rec_err(err, "body+%zu: unknown event type %u", at, type);
			goto fail;
		}
		if (e.type == DETER_EV_CALL && e.sub == DETER_ABI_CALL_SPLICE_READ &&
		    !rec_log_splice_read_ok(e.b >> 32, version)) {
			rec_err(err, "body+%zu: bad flags %#llx on a splice read", at,
				(unsigned long long)(e.b >> 32));
			goto fail;
		}
		rec_log_ctx_after(c, &e, NULL);
		if (rec_log_push(log, &cap, &e))
			goto nomem;
		rec_log_stat(log, type, e.sub, used, rec_log_dec_used(d), 1);
	}
	for (j = 1; j < (unsigned int)d->nrd; j++)
		if (d->rd[j].off != d->rd[j].len) {
			rec_err(err, "body+%zu: %zu bytes left in stream %u",
				d->rd[j].base + d->rd[j].off, d->rd[j].len - d->rd[j].off, j);
			goto fail;
		}
	/* Format 9 on: the next chunk, its context that of the last event. */
	if (end < len) {
		at = end;
		if (rec_log_dec_init(d, buf + at, len - at, at, version, &end, err))
			goto fail;
		log->stat_index += d->rd[0].base - at;
		log->nchunks++;
		tag = d->s[RS_TAG];
		goto next_chunk;
	}
	if (gap) {
		rec_err(err, "body+%zu: sequence gap at the end", tag->base + tag->off);
		goto fail;
	}
	if (log->nevs != nevents) {
		rec_err(err, "body+%zu: %zu events, header says %u",
			tag->base + tag->off, log->nevs, nevents);
		goto fail;
	}
	free(c);
	free(d);
	return 0;
nomem:
	rec_err(err, "out of memory");
fail:
	free(c);
	free(d);
	return -1;
}

/* deter record --zstd-level; 0: rec_log_zstd_init()'s parameters. */
int rec_log_zstd_level;

/* One compression context for every log written, not one per log. */
static struct ZSTD_CCtx_s *rec_log_cctx;	/* ZSTD_CCtx */

/*
 * The compression parameters, set once: a level, or by default zstd's
 * double-fast matcher with 16 KiB tables. On RPC logs (callgrind, zstd
 * 1.5.4) that costs about level 3's instructions (a third of level 5's,
 * a quarter of level 9's) for a body 3 % smaller than level 3's, 6 %
 * larger than level 5's, 9 % larger than level 9's. The window: 128 KiB.
 */
static int rec_log_zstd_init(struct ZSTD_CCtx_s *cctx)
{
	static const struct {
		ZSTD_cParameter p;
		int v;
	} def[] = {
		{ ZSTD_c_strategy, ZSTD_dfast },
		{ ZSTD_c_windowLog, 17 },
		{ ZSTD_c_hashLog, 14 },
		{ ZSTD_c_chainLog, 14 },
		{ ZSTD_c_minMatch, 4 },
	};
	size_t i;

	if (rec_log_zstd_level)
		return ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
							   rec_log_zstd_level)) ? -1 : 0;
	for (i = 0; i < ARRAY_SIZE(def); i++)
		if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, def[i].p, def[i].v)))
			return -1;
	return 0;
}

/* A stream this long gets zstd blocks of its own (rec_log_zcompress()). */
#define REC_LOG_BLOCK_MIN 1024

/* Room for a body of @rawlen bytes compressed by rec_log_zcompress(). */
static size_t rec_log_zbound(size_t rawlen)
{
	return ZSTD_compressBound(rawlen) + 2 * RS_MAX * 3 + 64;	/* block headers */
}

/*
 * Compress the body @raw of a log of format @version into @z, ending
 * zstd's block before and after each stream of REC_LOG_BLOCK_MIN bytes
 * or more: the literals of a block share one entropy table, so each
 * noisy stream gets its own (RPC logs of format 8: -6 %; one block had
 * them all). Return: the compressed size, or a zstd error code.
 */
static size_t rec_log_zcompress(ZSTD_CCtx *cctx, void *z, size_t zcap,
				const uint8_t *raw, size_t rawlen, unsigned int version)
{
	size_t cut[2 * RS_MAX + 1], ncut = 0, at = 0, pos, used, r, i;
	int k, nrd = version >= 4 ? rec_log_nstreams(version) : 0;
	ZSTD_outBuffer out = { z, zcap, 0 };
	uint64_t sl[RS_MAX];

	for (k = 0; k < nrd; k++, at += used)
		if (rec_varint_get(raw + at, rawlen - at, &sl[k], &used)) {
			nrd = 0;	/* not ours to judge: one block */
			break;
		}
	for (k = 0, pos = at; k < nrd && sl[k] <= rawlen - pos; pos += sl[k++]) {
		if (sl[k] < REC_LOG_BLOCK_MIN)
			continue;
		if (pos && (!ncut || cut[ncut - 1] < pos))
			cut[ncut++] = pos;
		if (pos + sl[k] < rawlen)
			cut[ncut++] = pos + sl[k];
	}
	cut[ncut++] = rawlen;
	r = ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setPledgedSrcSize(cctx, rawlen);
	for (i = 0, at = 0; i < ncut && !ZSTD_isError(r); at = cut[i++]) {
		ZSTD_inBuffer in = { raw + at, cut[i] - at, 0 };
		ZSTD_EndDirective end = i + 1 < ncut ? ZSTD_e_flush : ZSTD_e_end;

		do {
			r = ZSTD_compressStream2(cctx, &out, &in, end);
		} while (!ZSTD_isError(r) && r && out.pos < out.size);
		if (!ZSTD_isError(r) && r)
			r = (size_t)-ZSTD_error_dstSize_tooSmall;
	}
	return ZSTD_isError(r) ? r : out.pos;
}

/** rec_log_write_end() - free what rec_log_write() keeps between logs */
void rec_log_write_end(void)
{
	ZSTD_freeCCtx(rec_log_cctx);
	rec_log_cctx = NULL;
}

/*
 * Write a log file @dst, 0600, through a new temporary file of a name of
 * its own in the same directory (mkostemp(): never an existing file or a
 * link someone planted), renamed over it: a reader never sees half a
 * log, a crash leaves the old file or none.
 */
static int rec_log_put(const char *dst, const struct deter_log_header *hdr,
		       const void *z, size_t zlen, char **err)
{
	const char *base = strrchr(dst, '/');
	char *tmp = NULL;
	int fd, ret = -1;

	base = base ? base + 1 : dst;
	if (asprintf(&tmp, "%.*s.%s.XXXXXX", (int)(base - dst), dst, base) < 0)
		return rec_err(err, "out of memory");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	if (fchmod(fd, 0600) ||
	    write(fd, hdr, sizeof(*hdr)) != (ssize_t)sizeof(*hdr) ||
	    write(fd, z, zlen) != (ssize_t)zlen || fsync(fd)) {
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		rec_err(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

/*
 * A log being written while its connection goes on (format 9): events
 * are encoded as they come (rec_log_writer_add()), every
 * REC_LOG_CHUNK_RAW encoded bytes make a chunk compressed into a zstd
 * frame of its own, and every REC_LOG_SPILL compressed bytes go to the
 * log's part file, DIR/.ID.dlog.part (0600), so that what the recorder
 * holds for a connection stays bounded however long it lives. The part
 * file is a log: its header, rewritten after each spill, says the frames
 * before it and "not closed", so that a recorder killed mid-connection
 * leaves a log of what it spilled (rec_log_recover()).
 * rec_log_writer_finish() adds the last frames and the final header and
 * renames it into place (or, for a log that never spilled, writes it).
 */
size_t rec_log_chunk_bytes = 64 << 10;
size_t rec_log_spill_bytes = 64 << 10;
#define REC_LOG_CHUNK_RAW	rec_log_chunk_bytes
#define REC_LOG_SPILL		rec_log_spill_bytes

/*
 * What one log holds (test knobs): its events, and its body's bytes
 * before compression, which the header counts in 32 bits; 1/128 of that
 * is left for what zstd may add to incompressible chunks.
 */
size_t rec_log_max_events = REC_LOG_MAX_EVENTS;
uint64_t rec_log_max_raw = UINT32_MAX - UINT32_MAX / 128;

/* The most bytes one event encodes to: a STATE's, a RUN and a SEQGAP. */
#define REC_LOG_EV_RAW_MAX	(REC_VARINT_MAX * (DETER_ST_MAX + 6))

struct rec_log_writer {
	struct rec_log_enc *enc;
	struct rec_buf z;	/* frames not in the part file yet */
	char *part;		/* the part file, once there is one */
	uint64_t zlen, rawlen;	/* every frame's bytes, and decompressed */
	uint64_t nevents;	/* events added */
	uint64_t framed;	/* of those, in frames */
	uint64_t file_zlen;	/* frame bytes in the part file */
};

/** rec_log_writer_new() - a log to write, of format DETER_ABI_VERSION */
struct rec_log_writer *rec_log_writer_new(void)
{
	struct rec_log_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->enc = rec_log_enc_new(DETER_ABI_VERSION);
	if (!w->enc) {
		free(w);
		return NULL;
	}
	return w;
}

/*
 * rec_log_writer_free() - free a writer; a log not finished keeps its
 * part file, a log of what was spilled (rec_log_recover())
 */
void rec_log_writer_free(struct rec_log_writer *w)
{
	if (!w)
		return;
	free(w->part);
	rec_log_enc_free(w->enc);
	free(w->z.p);
	free(w);
}

/** rec_log_writer_drop() - free a writer and its part file: no log */
void rec_log_writer_drop(struct rec_log_writer *w)
{
	if (w && w->part)
		unlink(w->part);
	rec_log_writer_free(w);
}

static int rec_log_cctx_get(char **err)
{
	if (!rec_log_cctx) {
		rec_log_cctx = ZSTD_createCCtx();
		if (rec_log_cctx && rec_log_zstd_init(rec_log_cctx)) {
			rec_log_write_end();
			return rec_err(err, "zstd: cannot set the compression parameters");
		}
	}
	return rec_log_cctx ? 0 : rec_err(err, "out of memory");
}

/* The events encoded since the last frame, as a frame of their own. */
static int rec_log_writer_frame(struct rec_log_writer *w, char **err)
{
	uint8_t *raw = NULL;
	size_t rawlen, zlen;
	int ret = -1;

	if (rec_log_enc_chunk(w->enc, &raw, &rawlen, err) || rec_log_cctx_get(err))
		goto out;
	if (rec_buf_reserve(&w->z, rec_log_zbound(rawlen))) {
		rec_err(err, "out of memory");
		goto out;
	}
	zlen = rec_log_zcompress(rec_log_cctx, w->z.p + w->z.len, w->z.cap - w->z.len,
				 raw, rawlen, DETER_ABI_VERSION);
	if (ZSTD_isError(zlen)) {
		rec_err(err, "zstd: %s", ZSTD_getErrorName(zlen));
		goto out;
	}
	w->z.len += zlen;
	w->zlen += zlen;
	w->rawlen += rawlen;
	w->framed = w->nevents;
	ret = 0;
out:
	free(raw);
	return ret;
}

/* @hdr as a log of format DETER_ABI_VERSION with @nevents in @zlen bytes. */
static int rec_log_hdr_fill(struct deter_log_header *hdr, uint64_t nevents,
			    uint64_t zlen, uint64_t rawlen, char **err)
{
	if (nevents > REC_LOG_MAX_EVENTS || zlen > UINT32_MAX || rawlen > UINT32_MAX)
		return rec_err(err,
			       "connection %016llx: %llu events, %llu bytes: more than a log holds",
			       (unsigned long long)hdr->conn, (unsigned long long)nevents,
			       (unsigned long long)rawlen);
	memcpy(hdr->magic, DETER_LOG_MAGIC, sizeof(hdr->magic));
	hdr->version = DETER_ABI_VERSION;
	hdr->header_len = sizeof(*hdr);
	hdr->nevents = nevents;
	hdr->body_len = zlen;
	hdr->body_raw_len = rawlen;
	hdr->pad = 0;
	return 0;
}

/*
 * The frames held in memory onto the end of the part file (@flags: to
 * open it with), then the header @h, which says them; with @sync, on disk.
 */
static int rec_log_part_put(struct rec_log_writer *w, const struct deter_log_header *h,
			    int flags, int sync, char **err)
{
	int fd = open(w->part, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags, 0600);

	if (fd < 0)
		return rec_err(err, "%s: %s", w->part, strerror(errno));
	if (pwrite(fd, w->z.p, w->z.len, sizeof(*h) + w->file_zlen) != (ssize_t)w->z.len ||
	    pwrite(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) || (sync && fsync(fd))) {
		rec_err(err, "%s: %s", w->part, strerror(errno));
		close(fd);
		return -1;
	}
	if (close(fd))
		return rec_err(err, "%s: %s", w->part, strerror(errno));
	w->file_zlen += w->z.len;
	w->z.len = 0;
	return 0;
}

/* The frames held in memory, into the part file, with a header "not closed". */
static int rec_log_writer_spill(struct rec_log_writer *w, const char *dir,
				const struct deter_log_header *hdr, char **err)
{
	struct deter_log_header ph = *hdr;
	int flags = 0;

	if (!w->part) {
		if (asprintf(&w->part, "%s/.%016llx.dlog.part", dir,
			     (unsigned long long)hdr->conn) < 0) {
			w->part = NULL;
			return rec_err(err, "out of memory");
		}
		unlink(w->part);	/* a stale one of an earlier boot's id */
		flags = O_CREAT | O_EXCL;
	}
	ph.status |= DETER_LOG_NOT_CLOSED;
	if (rec_log_hdr_fill(&ph, w->framed, w->zlen, w->rawlen, err))
		return -1;
	return rec_log_part_put(w, &ph, flags, 0, err);
}

/**
 * rec_log_writer_full() - would @n more events take @w past what a log
 *	holds?
 * @w: the log
 * @n: events
 *
 * A connection that outlives its log (2^28 events, or 4 GiB encoded)
 * ends its log there (DETER_LOG_CUT): the log stays one the decoder and
 * the replay can take whole.
 */
int rec_log_writer_full(const struct rec_log_writer *w, size_t n)
{
	uint64_t raw = w->rawlen + rec_log_enc_pending(w->enc);

	return n > rec_log_max_events - w->nevents ||
	       raw > rec_log_max_raw ||
	       n > (rec_log_max_raw - raw) / REC_LOG_EV_RAW_MAX;
}

/**
 * rec_log_writer_add() - encode more of a connection's events
 * @w: the log
 * @dir: its directory (for the part file)
 * @hdr: the connection's header as it is so far (for the part file's)
 * @evs: events sorted by sequence number, all after those added before
 * @n: how many
 * @states: the values their STATE events index
 * @err: the error message
 *
 * Return: 0, or -1 with *err set (also when the log would be full:
 * check rec_log_writer_full() first).
 */
int rec_log_writer_add(struct rec_log_writer *w, const char *dir,
		       const struct deter_log_header *hdr,
		       const struct rec_ev *evs, size_t n,
		       const struct rec_state *states, char **err)
{
	if (rec_log_writer_full(w, n))
		return rec_err(err, "connection %016llx: %llu events: more than a log holds",
			       (unsigned long long)hdr->conn,
			       (unsigned long long)(w->nevents + n));
	if (rec_log_enc_add(w->enc, evs, n, states, err))
		return -1;
	w->nevents += n;
	if (rec_log_enc_pending(w->enc) < REC_LOG_CHUNK_RAW)
		return 0;
	if (rec_log_writer_frame(w, err))
		return -1;
	return w->z.len < REC_LOG_SPILL ? 0 : rec_log_writer_spill(w, dir, hdr, err);
}

/*
 * DIR/ID.dlog, or if a log has that name (the part of the connection a
 * killed recorder had written, made a log of), DIR/ID-N.dlog. Malloc'd.
 */
static char *rec_log_new_name(const char *dir, uint64_t conn)
{
	unsigned int i;
	char *p;

	for (i = 0; i < 1000; i++) {
		if ((i ? asprintf(&p, "%s/%016llx-%u.dlog", dir, (unsigned long long)conn, i) :
			 asprintf(&p, "%s/%016llx.dlog", dir, (unsigned long long)conn)) < 0)
			return NULL;
		if (access(p, F_OK))
			return p;
		free(p);
	}
	return NULL;
}

/**
 * rec_log_writer_finish() - write the log into @dir
 * @w: the log, every event added (rec_log_writer_free() it after)
 * @dir: the log directory
 * @hdr: the header; body_len, body_raw_len and nevents are filled in
 * @path: the file written, malloc'd
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_writer_finish(struct rec_log_writer *w, const char *dir,
			  struct deter_log_header *hdr, char **path, char **err)
{
	char *dst = NULL;

	/* The last chunk: what is left, or the whole body (maybe empty). */
	if ((!w->zlen || rec_log_enc_pending(w->enc) || w->enc->run) &&
	    rec_log_writer_frame(w, err))
		return -1;
	if (rec_log_hdr_fill(hdr, w->nevents, w->zlen, w->rawlen, err))
		return -1;
	dst = rec_log_new_name(dir, hdr->conn);
	if (!dst)
		return rec_err(err, "%s: no name left for a log of connection %016llx",
			       dir, (unsigned long long)hdr->conn);
	if (!w->part) {
		if (rec_log_put(dst, hdr, w->z.p, w->z.len, err)) {
			free(dst);
			return -1;
		}
		*path = dst;
		return 0;
	}
	/* The part file becomes the log: the rest of it, its header, its name. */
	if (rec_log_part_put(w, hdr, 0, 1, err)) {
		free(dst);
		return -1;
	}
	if (rename(w->part, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		free(dst);
		return -1;
	}
	free(w->part);
	w->part = NULL;
	*path = dst;
	return 0;
}

/**
 * rec_log_recover() - make the part file a recorder left into a log
 * @part: DIR/.ID.dlog.part, left by a recorder killed while the
 *	connection was open
 * @path: the log it became (malloc'd), named as rec_log_writer_finish()
 *	names logs; NULL when the part file held no events yet and was removed
 * @hdr: the log's header
 * @err: the error message, naming the part file and the offset
 *
 * The log is what the recorder had spilled: marked incomplete, not
 * closed. Frames written after the part file's last header are cut off.
 * A part file that does not decode is left as it is.
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_recover(const char *part, char **path, struct deter_log_header *hdr,
		    char **err)
{
	const char *slash = strrchr(part, '/');
	struct deter_log_header h;
	struct rec_log *log;
	char *dir, *dst;
	struct stat st;
	int fd;

	*path = NULL;
	fd = open(part, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st)) {
		rec_err(err, "%s: %s", part, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* A header that checks out says how much of the file is the log. */
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !rec_log_check_header(part, &h, st.st_size, NULL)) {
		if (!h.body_len) {
			close(fd);
			unlink(part);	/* no frame spilled yet: nothing to keep */
			return 0;
		}
		if (ftruncate(fd, sizeof(h) + (uint64_t)h.body_len)) {
			rec_err(err, "%s: %s", part, strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	log = rec_log_read(part, err);	/* header, frames, events: all checked */
	if (!log)
		return -1;
	*hdr = log->hdr;
	rec_log_free(log);
	dir = slash ? strndup(part, slash - part) : strdup(".");
	dst = dir ? rec_log_new_name(dir, hdr->conn) : NULL;
	free(dir);
	if (!dst)
		return rec_err(err, "%s: no name left for its log", part);
	if (rename(part, dst)) {
		rec_err(err, "%s: %s", dst, strerror(errno));
		free(dst);
		return -1;
	}
	*path = dst;
	return 0;
}

/**
 * rec_log_write() - write one connection's log into @dir
 * @dir: the log directory
 * @hdr: the header; body_len, body_raw_len and nevents are filled in
 * @evs: events sorted by sequence
 * @n: how many
 * @states: the values STATE events index
 * @path: the file written, malloc'd
 * @err: the error message
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_write(const char *dir, struct deter_log_header *hdr,
		  const struct rec_ev *evs, size_t n,
		  const struct rec_state *states, char **path, char **err)
{
	struct rec_log_writer *w = rec_log_writer_new();
	int r;

	if (!w)
		return rec_err(err, "out of memory");
	r = rec_log_writer_add(w, dir, hdr, evs, n, states, err);
	if (!r)
		r = rec_log_writer_finish(w, dir, hdr, path, err);
	rec_log_writer_drop(w);
	return r;
}

/**
 * rec_log_is_part() - is @path a part file (a log being written, or left
 *	by a killed recorder: DIR/.ID.dlog.part)?
 * @path: a file name, with or without its directory
 */
int rec_log_is_part(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	return base[0] == '.' && len > 10 && !strcmp(base + len - 10, ".dlog.part");
}

/**
 * rec_log_check_header() - check a log's header against its file's size
 * @path: the log, for the message (and: is it a part file?)
 * @h: the header
 * @size: the file's size, or -1 not to check it
 * @err: the error message, "PATH:OFFSET: what", or NULL for none
 *
 * Return: 0, or -1 (with *err set).
 */
int rec_log_check_header(const char *path, const struct deter_log_header *h,
			 off_t size, char **err)
{
	if (memcmp(h->magic, DETER_LOG_MAGIC, sizeof(h->magic)))
		return rec_err(err, "%s:0: not a deter log (bad magic)", path);
	if (h->version < DETER_ABI_VERSION_MIN || h->version > DETER_ABI_VERSION)
		return rec_err(err,
			       "%s:8: log format version %u, this deter reads versions %d to %d",
			       path, h->version, DETER_ABI_VERSION_MIN, DETER_ABI_VERSION);
	if (h->header_len != sizeof(*h))
		return rec_err(err, "%s:12: header length %u, expected %zu",
			       path, h->header_len, sizeof(*h));
	if (h->nevents > REC_LOG_MAX_EVENTS)
		return rec_err(err, "%s:112: %u events is more than a log can hold",
			       path, h->nevents);
	/* A log being written (a part file) may have a frame past its header's. */
	if (size >= 0 && (uint64_t)size != sizeof(*h) + (uint64_t)h->body_len &&
	    !(rec_log_is_part(path) && (uint64_t)size > sizeof(*h) + (uint64_t)h->body_len))
		return rec_err(err, "%s:%lld: file is %lld bytes, header says %zu",
			       path, (long long)(size < (off_t)sizeof(*h) + h->body_len ?
			       size : (off_t)sizeof(*h) + h->body_len),
			       (long long)size, sizeof(*h) + h->body_len);
	if (h->cc[sizeof(h->cc) - 1] || h->host[sizeof(h->host) - 1])
		return rec_err(err, "%s:148: unterminated string in header", path);
	return 0;
}

/**
 * rec_log_read_header() - read and check a log's header only
 * @path: the log
 * @hdr: filled
 * @err: the error message, "PATH:OFFSET: what"
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_read_header(const char *path, struct deter_log_header *hdr,
			char **err)
{
	struct stat st;
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return rec_err(err, "%s: %s", path, strerror(errno));
	}
	got = read(fd, hdr, sizeof(*hdr));
	close(fd);
	if (got < 0)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (got < 8 || memcmp(hdr->magic, DETER_LOG_MAGIC, 8))
		return rec_err(err, "%s:0: not a deter log (bad magic)", path);
	if ((size_t)got < sizeof(*hdr))
		return rec_err(err, "%s:%zd: truncated header (%zd of %zu bytes)",
			       path, got, got, sizeof(*hdr));
	return rec_log_check_header(path, hdr, st.st_size, err);
}

/*
 * The decompressed size of the zstd frame at @z (format 9, @many: of the
 * frames there, one per chunk), each of which must say its size; else
 * ZSTD_CONTENTSIZE_ERROR.
 */
static unsigned long long rec_log_frames_size(const void *z, size_t zlen, int many)
{
	unsigned long long sum = 0, one;
	size_t at = 0, flen;

	do {
		flen = ZSTD_findFrameCompressedSize((const char *)z + at, zlen - at);
		one = ZSTD_getFrameContentSize((const char *)z + at, zlen - at);
		if (ZSTD_isError(flen) || one >= ZSTD_CONTENTSIZE_ERROR ||
		    one > UINT32_MAX - sum || (!many && flen != zlen))
			return ZSTD_CONTENTSIZE_ERROR;
		sum += one;
		at += flen;
	} while (at < zlen);
	return sum;
}

/*
 * Read, check, decompress and decode the log at @path, header and all,
 * into @log; its decompressed body in *@raw (malloc'd, length
 * log->hdr.body_raw_len).
 */
static int rec_log_load(const char *path, struct rec_log *log, uint8_t **raw,
			char **err)
{
	unsigned long long rawlen;
	char *derr = NULL;
	uint8_t *z = NULL;
	FILE *f = NULL;
	size_t got;
	int ret = -1;

	*raw = NULL;
	if (rec_log_read_header(path, &log->hdr, err))
		return -1;
	f = fopen(path, "rb");
	z = malloc(log->hdr.body_len ? log->hdr.body_len : 1);
	*raw = malloc(log->hdr.body_raw_len ? log->hdr.body_raw_len : 1);
	if (!f || !z || !*raw) {
		rec_err(err, "%s: %s", path, f ? "out of memory" : strerror(errno));
		goto out;
	}
	if (fseek(f, sizeof(log->hdr), SEEK_SET) ||
	    fread(z, 1, log->hdr.body_len, f) != log->hdr.body_len) {
		rec_err(err, "%s:%zu: truncated body", path, sizeof(log->hdr));
		goto out;
	}
	rawlen = rec_log_frames_size(z, log->hdr.body_len, log->hdr.version >= 9);
	if (rawlen != log->hdr.body_raw_len) {
		rec_err(err, "%s:%zu: corrupt body (zstd frame size %lld, header says %u)",
			path, sizeof(log->hdr), (long long)rawlen, log->hdr.body_raw_len);
		goto out;
	}
	got = ZSTD_decompress(*raw, log->hdr.body_raw_len, z, log->hdr.body_len);
	if (ZSTD_isError(got) || got != log->hdr.body_raw_len) {
		rec_err(err, "%s:%zu: corrupt body (%s)", path, sizeof(log->hdr),
			ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
		goto out;
	}
	if (rec_log_decode(*raw, got, log->hdr.version, log->hdr.nevents, log, &derr)) {
		rec_err(err, "%s:%s", path, derr ? derr : "decode error");
		free(derr);
		goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	free(z);
	if (ret) {
		free(*raw);
		*raw = NULL;
	}
	return ret;
}

/**
 * rec_log_read() - read, check and decode a whole log
 * @path: the log
 * @err: the error message, "PATH:OFFSET: what"
 *
 * Return: the log (rec_log_free() it), or NULL with *err set.
 */
struct rec_log *rec_log_read(const char *path, char **err)
{
	struct rec_log *log = calloc(1, sizeof(*log));
	uint8_t *raw;

	if (!log) {
		rec_err(err, "out of memory");
		return NULL;
	}
	if (rec_log_load(path, log, &raw, err)) {
		rec_log_free(log);
		return NULL;
	}
	free(raw);
	return log;
}

/**
 * rec_log_compact() - compress a log's body again, at zstd @level
 * @path: the log; replaced only by a smaller one with the same events
 * @level: zstd level, 1 to 19
 * @before: its size
 * @after: its size now (@before if it was left alone)
 * @err: the error message, "PATH:OFFSET: what"
 *
 * The log is read and decoded whole first: a log that does not decode
 * is an error and is left as it is. The header stays but for body_len.
 *
 * Return: 0, or -1 with *err set.
 */
int rec_log_compact(const char *path, int level, size_t *before, size_t *after,
		    char **err)
{
	struct rec_log *log = calloc(1, sizeof(*log));
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	struct deter_log_header hdr;
	uint8_t *raw = NULL, *z = NULL;
	size_t zcap, zlen, rawlen;
	struct stat st;
	int ret = -1;

	if (!log || !cctx) {
		free(log);
		ZSTD_freeCCtx(cctx);
		return rec_err(err, "out of memory");
	}
	/* Replacing a link would cut it, or move the log out from under it. */
	if (lstat(path, &st)) {
		rec_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		rec_err(err, "%s: not a regular file with one link; left as it is", path);
		goto out;
	}
	if (rec_log_load(path, log, &raw, err))
		goto out;
	hdr = log->hdr;
	*before = *after = sizeof(hdr) + hdr.body_len;
	rawlen = hdr.body_raw_len;
	if (hdr.version >= 9) {
		/* The recorder's chunks, as one: one frame, one set of tables. */
		free(raw);
		raw = NULL;
		if (rec_log_encode_v(log->evs, log->nevs, log->states, hdr.version,
				     &raw, &rawlen, err))
			goto out;
		if (rawlen > UINT32_MAX) {
			rec_err(err, "%s: body of %zu bytes: too large for one chunk",
				path, rawlen);
			goto out;
		}
		hdr.body_raw_len = rawlen;
	}
	zcap = rec_log_zbound(rawlen);
	z = malloc(zcap);
	if (!z) {
		rec_err(err, "out of memory");
		goto out;
	}
	zlen = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(zlen))
		zlen = rec_log_zcompress(cctx, z, zcap, raw, rawlen, hdr.version);
	if (ZSTD_isError(zlen)) {
		rec_err(err, "%s: zstd: %s", path, ZSTD_getErrorName(zlen));
		goto out;
	}
	ret = 0;
	if (zlen >= hdr.body_len)
		goto out;
	hdr.body_len = zlen;
	ret = rec_log_put(path, &hdr, z, zlen, err);
	if (!ret)
		*after = sizeof(hdr) + zlen;
out:
	rec_log_free(log);
	ZSTD_freeCCtx(cctx);
	free(raw);
	free(z);
	return ret;
}

/**
 * rec_log_flagged() - whether deter ls --flagged lists a log
 * @h: its header
 *
 * Return: 1 for a connection with retransmissions, RTOs, drops, CE marks
 * or zero windows, or a log that is incomplete or says its settings
 * changed; else 0.
 */
int rec_log_flagged(const struct deter_log_header *h)
{
	return h->total_retrans || h->total_rto || h->drops || h->ce_marks ||
	       h->zero_wnd || h->status;
}

/**
 * rec_log_status_str() - a log header's status, as deter ls prints it
 * @status: DETER_LOG_* bits
 * @buf: where to write it
 * @len: its size
 *
 * Return: @buf: "complete", or "incomplete," and the reasons; then
 * ",settings-changed" if a setting changed during the connection.
 */
const char *rec_log_status_str(uint32_t status, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s%s%s",
		 status & DETER_LOG_INCOMPLETE ? "incomplete" : "complete",
		 status & DETER_LOG_LOST_EVENTS ? ",lost-events" : "",
		 status & DETER_LOG_NOT_CLOSED ? ",not-closed" : "",
		 status & DETER_LOG_NO_IDENTITY ? ",no-identity" : "",
		 status & DETER_LOG_MISSING_VALUES ? ",missing-values" : "",
		 status & DETER_LOG_CUT ? ",cut" : "",
		 status & DETER_LOG_UNSEEN_CALLS ? ",unseen-calls" : "",
		 status & DETER_LOG_SETTINGS_CHANGED ? ",settings-changed" : "");
	return buf;
}

void rec_log_free(struct rec_log *log)
{
	if (!log)
		return;
	free(log->evs);
	free(log->states);
	free(log);
}
