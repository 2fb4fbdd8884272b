// SPDX-License-Identifier: GPL-2.0
/*
 * deter show: one log decoded into a readable event list.
 *
 *   header     connection, addresses, start, status, options, ISNs,
 *              totals: from struct deter_log_header
 *   events     one line (--json: one object) per event, in sequence
 *              order, named by kind: lock, rx, net, call, return,
 *              sample, config, value, checkpoint, summary
 *   --stats    instead of the events: where the log's bytes go, per
 *              record kind, biggest first (rec_log's per-tag counts)
 *
 * Each kind's fields are printed as deter.ko logged them, decoded only as
 * far as include/deter_abi.h defines them (flags, packed values); text
 * and JSON carry the same information.
 */
#include "rec_show.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "deter_abi.h"
#include "deter_err.h"
#include "rec_cli.h"
#include "rec_log.h"

static const char *const rec_value_names[DETER_V_MAX] = {
	[DETER_V_CLOCK] = "clock_ns",
	[DETER_V_JIFFIES] = "jiffies",
	[DETER_V_SYNACK_CLOCK] = "synack_clock_ns",
	[DETER_V_IP_ID] = "ip_id",
	[DETER_V_SYN_IPID] = "syn_ipid",
	[DETER_V_TSQ_FULL] = "tsq_full_after",
	[DETER_V_BACKLOG_LEN] = "backlog_after",
	[DETER_V_AUTOCORK] = "autocork_after",
	[DETER_V_HOST_QUEUED] = "host_queued_after",
	[DETER_V_PAGE_FRAG] = "page_frag_after",
	[DETER_V_CHILD_IPID] = "child_ipid",
	[DETER_V_MISSING] = "missing",
	[DETER_V_MEM] = "mem_after",
	[DETER_V_HOST_BUSY] = "host_busy_flips_after",
	[DETER_V_RANDOM] = "random",
	[DETER_V_HOST] = "host_after",
};

void rec_usage_show(FILE *f)
{
	fprintf(f,
		"usage: deter show [-d DIR] [--json | --stats] ID|FILE\n"
		"\n"
		"Print one connection's log as a list of events. ID is the hex id\n"
		"deter ls prints, or a unique prefix of it.\n"
		"\n"
		"  -d, --dir DIR  log directory (default ./%s)\n"
		"  -j, --json     one JSON object per event\n"
		"  -s, --stats    where the log's bytes go: records, events and\n"
		"                 encoded bytes (before compression) per event kind\n",
		REC_DEFAULT_DIR);
}

static const char *const rec_lock_names[DETER_LOCK_MAX] = {
	"app", "write-timer", "delack-timer", "keepalive-timer",
	"comp-ack-timer", "tsq", "backlog", "mtu-reduced",
};

static const char *const rec_net_names[DETER_NET_MAX] = {
	"gap", "late", "ce", "icmp", "tx-end", "shape", "synack-timer",
};

/* What the metrics cache gave, VALUE HOST DETER_HOST_CACHED_CWND_CLAMP on. */
#define REC_CACHED_KINDS (DETER_HOST_CACHED_RTT + 1 - DETER_HOST_CACHED_CWND_CLAMP)
static const char *const rec_cached_names[REC_CACHED_KINDS] = {
	"cwnd clamp", "ssthresh", "reordering", "rtt",
};

static const char *const rec_mem_names[DETER_MEM_MAX] = {
	"pressure", "above_tcp_mem0", "suppressed", "oom",
};

static const char *const rec_cfg_names[DETER_CFG_MAX] = {
	"sndbuf", "rcvbuf", "nodelay", "user_mss", "offload",
	"userlocks", "sysctl", "tos", "ttl", "keepalive", "user_timeout_ms",
	"notsent_lowat", "rcvlowat", "linger", "congestion", "tcp",
};

/* What the metrics cache gave (VALUE HOST b); the RTT as srtt_us scales it. */
static void rec_show_cached(uint64_t b, int json)
{
	unsigned int kind = (b >> 32) - DETER_HOST_CACHED_CWND_CLAMP;
	uint32_t v = b;

	printf(json ? ",\"answer\":\"cached %s\",\"value\":%u" : ": cached %s %u",
	       rec_cached_names[kind], v);
	if (b >> 32 == DETER_HOST_CACHED_RTT)
		printf(json ? ",\"rtt_us\":%u" : " (%u us)", v >> 3);
}

/* A VALUE MISSING SETTINGS @e: what changed (its names and values are plain). */
static void rec_show_settings(const struct rec_log *log, const struct rec_ev *e, int json)
{
	char what[1024];

	rec_settings_changed(log, e - log->evs, what, sizeof(what));
	if (json)
		printf(",\"why\":\"settings\",\"changed\":\"%s\"", what);
	else
		printf(" (%s: %s)", rec_missing_what(e->a), what[0] ? what : "none now");
}

/*
 * One event of @log; @connecting: no call came before it, so a signal
 * ended connect() (which is not a logged call).
 */
static void rec_show_event(const struct rec_log *log, const struct rec_ev *e,
			   int connecting, int json)
{
	const struct rec_state *s;

	if (json)
		printf("{\"seq\":%u,", e->seq);
	else
		printf("%8u  ", e->seq);
	switch (e->type) {
	case DETER_EV_LOCK:
		if (e->sub == DETER_LOCK_BACKLOG) {
			printf(json ? "\"event\":\"lock\",\"by\":\"%s\",\"check\":%llu}\n" :
				      "lock       %s (at the owner's check %llu)\n",
			       rec_lock_names[e->sub], (unsigned long long)e->a);
			break;
		}
		printf(json ? "\"event\":\"lock\",\"by\":\"%s\",\"deferred\":%s,\"not_due\":%s}\n" :
			      "lock       %s%s%s\n",
		       rec_lock_names[e->sub],
		       json ? (e->a & DETER_LOCK_F_DEFERRED ? "true" : "false") :
			      (e->a & DETER_LOCK_F_DEFERRED ? " (deferred, the owner ran it)" : ""),
		       json ? (e->a & DETER_LOCK_F_NOT_DUE ? "true" : "false") :
			      (e->a & DETER_LOCK_F_NOT_DUE ? " (not due: re-armed)" : ""));
		break;
	case DETER_EV_RX:
		if (json) {
			printf("\"event\":\"rx\",\"index\":%llu,\"segs\":%llu,\"ecn\":%llu,",
			       (unsigned long long)e->a,
			       (unsigned long long)(e->b & DETER_RX_TS ? 0 : e->c),
			       (unsigned long long)(e->b & DETER_RX_ECN_MASK));
			printf("\"backlogged\":%s,\"syn\":%s,\"time_wait\":%s",
			       e->b & DETER_RX_OWNED ? "true" : "false",
			       e->b & DETER_RX_SYN ? "true" : "false",
			       e->b & DETER_RX_CTL ? "true" : "false");
			if ((e->b & DETER_RX_TS) && e->c)
				printf(",\"tsval\":%llu", (unsigned long long)e->c - 1);
			printf("}\n");
		} else if (e->b & DETER_RX_CTL) {
			printf("rx         ipid 0 from the peer's ");
			if (e->c)
				printf("time-wait socket, TS value %llu",
				       (unsigned long long)e->c - 1);
			else
				printf("control socket, no TS");
			printf("%s\n", e->b & DETER_RX_OWNED ? " backlogged" : "");
		} else if (e->b & DETER_RX_SYN) {
			printf("rx         SYN");
			if (e->c)
				printf(", TS value %llu", (unsigned long long)e->c - 1);
			printf("%s\n", e->b & DETER_RX_OWNED ? " backlogged" : "");
		} else {
			printf("rx         ipid %llu x%llu ecn %llu%s\n",
			       (unsigned long long)(e->a & 0xffff), (unsigned long long)e->c,
			       (unsigned long long)(e->b & DETER_RX_ECN_MASK),
			       e->b & DETER_RX_OWNED ? " backlogged" : "");
		}
		break;
	case DETER_EV_NET:
		if (e->sub == DETER_NET_ICMP) {
			printf(json ? "\"event\":\"net\",\"action\":\"icmp\"," : "net        icmp");
			printf(json ? "\"type\":%llu,\"code\":%llu," : " type %llu code %llu",
			       (unsigned long long)(e->a >> 8 & 0xff),
			       (unsigned long long)(e->a & 0xff));
			printf(json ? "\"info\":%llu,\"quoted_seq\":%llu,\"owned\":%s}\n" :
				      " info %llu, quoting snd_una + %llu%s\n",
			       (unsigned long long)(e->b >> 32),
			       (unsigned long long)(e->b & 0xffffffff),
			       json ? (e->a & DETER_ICMP_F_OWNED ? "true" : "false") :
				      (e->a & DETER_ICMP_F_OWNED ? " (socket owned)" : ""));
			break;
		}
		if (e->sub == DETER_NET_SHAPE) {
			struct deter_shape sh;
			unsigned int i;

			deter_shape_unpack(e->a, e->b, e->c, &sh);
			if (json) {
				printf("\"event\":\"net\",\"action\":\"shape\",\"truesize\":%u,",
				       sh.truesize);
				printf("\"headroom\":%u,\"headlen\":%u,\"end_offset\":%u,",
				       sh.headroom, sh.headlen, sh.end_offset);
				printf("\"gso_size\":%u,\"nr_frags\":%u,\"runs\":%u,",
				       sh.gso_size, sh.nr_frags, sh.runs);
				printf("\"run_len\":[%u,%u,%u,%u],", sh.run_len[0], sh.run_len[1],
				       sh.run_len[2], sh.run_len[3]);
				printf("\"frag_list\":%u,\"flags\":%u}\n", sh.frag_list, sh.flags);
				break;
			}
			printf("net        shape truesize %u head %u+%u of %u gso_size %u",
			       sh.truesize, sh.headroom, sh.headlen, sh.end_offset, sh.gso_size);
			printf(" frags %u in %u runs", sh.nr_frags, sh.runs);
			for (i = 0; sh.runs > 1 && i < DETER_SHAPE_RUN_LENS && sh.run_len[i]; i++)
				printf("%s%u", i ? "+" : " (bytes ", sh.run_len[i]);
			printf("%s, %u in frag_list%s%s%s%s\n", sh.runs > 1 ? "+...)" : "",
			       sh.frag_list,
			       sh.flags & DETER_SHAPE_F_HEAD_FRAG ? " head-frag" : "",
			       sh.flags & DETER_SHAPE_F_CLONED ? " cloned" : "",
			       sh.flags & DETER_SHAPE_F_PP_RECYCLE ? " page-pool" : "",
			       sh.flags & DETER_SHAPE_F_CONT ? " cont" : "");
			break;
		}
		if (e->sub == DETER_NET_SYNACK_TIMER) {
			/* The request socket timed out and sent its SYN-ACK again. */
			const char *fmt = json ?
				"\"event\":\"net\",\"action\":\"synack-timer\",\"after\":%llu}\n" :
				"net        synack-timer after %llu of the peer's segments\n";

			printf(fmt, (unsigned long long)e->a);
			break;
		}
		printf(json ?
		       "\"event\":\"net\",\"action\":\"%s\",\"index\":%llu,\"count\":%llu}\n" :
		       "net        %s ipid %llu count %llu\n",
		       rec_net_names[e->sub], (unsigned long long)(json ? e->a : e->a & 0xffff),
		       (unsigned long long)e->b);
		break;
	case DETER_EV_CALL:
		if (e->sub == DETER_ABI_CALL_SETSOCKOPT) {
			printf(json ? "\"event\":\"call\",\"call\":\"setsockopt\"," :
				      "call       setsockopt");
			printf(json ? "\"option\":\"%s\"," : " %s",
			       rec_setsockopt_name(e->b >> 32) ?: "?");
			printf(json ? "\"value\":%lld,\"tid\":%llu}\n" : " = %lld tid %llu\n",
			       (long long)(int32_t)e->a, (unsigned long long)(e->b & 0xffffffff));
			break;
		}
		printf(json ? "\"event\":\"call\",\"call\":\"%s\",\"bytes\":%llu," :
			      "call       %s bytes %llu",
		       rec_call_names[e->sub], (unsigned long long)e->a);
		if (e->sub == DETER_ABI_CALL_SPLICE_READ) {
			/* Its pipe's room and socket mode. */
			uint32_t f = e->b >> 32;

			printf(json ? "\"flags\":%u," : " flags 0x%x", f & DETER_SPLICE_RD_FLAGS);
			if (DETER_SPLICE_RD_ROOM(f))
				printf(json ? "\"pipe_room\":%u," : ", pipe room %u",
				       DETER_SPLICE_RD_ROOM(f));
			if (f & DETER_SPLICE_RD_NONBLOCK)
				printf(json ? "\"nonblocking\":true," : ", nonblocking");
		} else {
			printf(json ? "\"flags\":%llu," : " flags 0x%llx",
			       (unsigned long long)(e->b >> 32));
		}
		if (e->sub != DETER_ABI_CALL_SPLICE_READ && (e->b >> 32) & DETER_MSG_SPLICE_PAGES)
			printf(json ? "\"spliced\":true," : " (spliced)");
		printf(json ? "\"tid\":%llu}\n" : " tid %llu\n",
		       (unsigned long long)(e->b & 0xffffffff));
		break;
	case DETER_EV_CALL_DONE:
		printf(json ? "\"event\":\"return\",\"call\":\"%s\",\"ret\":%lld" :
			      "return     %s = %lld",
		       rec_call_names[e->sub], (long long)e->a);
		/* A spliced send's pages. */
		if (e->b & DETER_SPLICE_OTHER)
			printf(json ? ",\"pages\":\"other\"" : ", pages not a file's");
		else if (e->b & DETER_SPLICE_KNOWN)
			printf(json ? ",\"page_offset\":%llu,\"pages_follow_on\":%s" :
				      ", pages from offset %llu%s",
			       (unsigned long long)(e->b & DETER_SPLICE_OFF),
			       json ? (e->b & DETER_SPLICE_CONT ? "true" : "false") :
			       (e->b & DETER_SPLICE_CONT ? ", on from the last" : ""));
		/* What it put on the error queue. */
		if (e->b & DETER_SEND_ZEROCOPY)
			printf(json ? ",\"zerocopy\":true" : ", zerocopy");
		if (e->b & DETER_SEND_TXSTAMP)
			printf(json ? ",\"tx_timestamps\":true" : ", transmit timestamps");
		printf(json ? "}\n" : "\n");
		break;
	case DETER_EV_SAMPLE:
		if (json) {
			printf("\"event\":\"sample\",\"index\":%llu,\"mono_ns\":%llu,",
			       (unsigned long long)e->a, (unsigned long long)e->b);
			printf("\"gap_ns\":%.3f}\n", e->c / 1024.0);
		} else {
			printf("sample     ipid %llu sent at +%.6f ms, then one every %.3f us\n",
			       (unsigned long long)(e->a & 0xffff),
			       (double)(int64_t)(e->b - log->hdr.mono_ns) / 1e6,
			       e->c / 1024.0 / 1000);
		}
		break;
	case DETER_EV_CONFIG:
		if (e->sub == DETER_CFG_SYSCTL) {
			const struct rec_sysctl *sc = &rec_sysctls[e->a >> 32];
			char elem[16] = "";

			if (sc->elem >= 0)
				snprintf(elem, sizeof(elem), "[%d]", sc->elem);
			if (json)
				printf("\"event\":\"config\",\"field\":\"sysctl\",\"name\":");
			printf(json ? "\"%s.%s%s\",\"value\":%lld}\n" :
				      "config     sysctl %s.%s%s = %lld\n",
			       rec_sysctl_dir(sc), sc->name, elem, rec_sysctl_value(e->a));
			break;
		}
		if (e->sub == DETER_CFG_CC) {
			char cc[DETER_CC_BYTES + 1];

			rec_cc_name(e->a, cc);
			if (json)
				printf("\"event\":\"config\",\"field\":\"congestion\",");
			printf(json ? "\"value\":\"%s\"}\n" : "config     congestion = %s\n", cc);
			break;
		}
		if (e->sub == DETER_CFG_TCP) {
			const char *name = rec_tcpopts[DETER_TCPOPT_ID(e->a)];
			long long v = rec_tcpopt_value(e->a);

			int none = (DETER_TCPOPT_ID(e->a) == DETER_TCPOPT_MAX_PACING_RATE &&
				    (uint64_t)v == UINT64_MAX) ||
				   ((DETER_TCPOPT_ID(e->a) == DETER_TCPOPT_RCVTIMEO ||
				     DETER_TCPOPT_ID(e->a) == DETER_TCPOPT_SNDTIMEO) && v < 0);

			if (json && none)
				printf("\"event\":\"config\",\"field\":\"%s\",\"value\":null}\n",
				       name);
			else if (json)
				printf("\"event\":\"config\",\"field\":\"%s\",\"value\":%lld}\n",
				       name, v);
			else if (none)
				printf("config     %s = none\n", name);
			else
				printf("config     %s = %lld\n", name, v);
			break;
		}
		if (e->sub == DETER_CFG_OFFLOAD && !json) {
			printf("config     offload tso %s gso %s gro %s",
			       e->a & DETER_OFFLOAD_TSO ? "on" : "off",
			       e->a & DETER_OFFLOAD_GSO ? "on" : "off",
			       e->a & DETER_OFFLOAD_GRO ? "on" : "off");
			if (DETER_OFFLOAD_MTU(e->a))
				printf(", mtu %u", DETER_OFFLOAD_MTU(e->a));
			if (e->a & DETER_OFFLOAD_LOOPBACK)
				printf(", over lo");
			printf("\n");
			break;
		}
		if (e->sub == DETER_CFG_KEEPALIVE && !json) {
			printf("config     keepalive %s idle %u s intvl %u s cnt %u%s\n",
			       e->a & DETER_KA_ON ? "on" : "off", DETER_KA_IDLE(e->a),
			       DETER_KA_INTVL(e->a), DETER_KA_CNT(e->a),
			       !DETER_KA_IDLE(e->a) || !DETER_KA_INTVL(e->a) ||
			       !DETER_KA_CNT(e->a) ? " (0: the sysctl's)" : "");
			break;
		}
		if (e->sub == DETER_CFG_LINGER && !json) {
			printf("config     linger %s %llu s\n", e->a & 1 ? "on" : "off",
			       (unsigned long long)(e->a >> 1));
			break;
		}
		printf(json ? "\"event\":\"config\",\"field\":\"%s\",\"value\":%llu}\n" :
		       e->sub == DETER_CFG_TOS ? "config     %s = 0x%llx\n" :
			      "config     %s = %llu\n",
		       rec_cfg_names[e->sub], (unsigned long long)e->a);
		break;
	case DETER_EV_VALUE:
		if (json)
			printf("\"event\":\"value\",\"what\":\"%s\",\"value\":%llu",
			       rec_value_names[e->sub], (unsigned long long)e->a);
		else
			printf("value      %s %s%llu", rec_value_names[e->sub],
			       e->sub == DETER_V_CLOCK || e->sub == DETER_V_JIFFIES ? "+" : "",
			       (unsigned long long)e->a);
		if (e->sub == DETER_V_BACKLOG_LEN)
			printf(json ? ",\"bytes\":%llu" : ": %llu B",
			       (unsigned long long)e->b);
		else if (e->sub == DETER_V_MEM)
			printf(json ? ",\"decision\":\"%s\",\"now\":%llu" : ": %s now %llu",
			       rec_mem_names[(e->b >> 1) % DETER_MEM_MAX],
			       (unsigned long long)(e->b & 1));
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_XMIT)
			printf(json ? ",\"answer\":\"output refused\",\"result\":%d" :
				      ": output refused %d%s", (int)(uint32_t)e->b,
			       json ? "" : (uint32_t)e->b == 1 ? " (NET_XMIT_DROP)" :
			       (uint32_t)e->b == 2 ? " (NET_XMIT_CN)" : "");
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_NOSPACE)
			printf(json ? ",\"answer\":\"send buffer full\",\"now\":%u" :
				      ": send buffer marked full now %u", (unsigned int)(e->b & 1));
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_CONNECT_WAIT)
			printf(json ? ",\"answer\":\"connect waited\"" :
				      ": connect() waits for the handshake");
		else if (e->sub == DETER_V_HOST && e->b >> 32 >= DETER_HOST_CACHED_CWND_CLAMP)
			rec_show_cached(e->b, json);
		else if (e->sub == DETER_V_HOST && e->b >> 32 == DETER_HOST_SIGNAL)
			printf(json ? ",\"answer\":\"signal\"%s" : ": a signal ends the call%s",
			       !connecting ? "" : json ? ",\"call\":\"connect\"" : " (connect())");
		else if (e->sub == DETER_V_HOST)
			printf(json ? ",\"answer\":\"wait timed out\"" : ": wait timed out");
		else if (e->sub == DETER_V_MISSING && json && e->a == DETER_MISSING_CALLS)
			printf(",\"why\":\"unseen calls\"");
		else if (e->sub == DETER_V_MISSING && json && e->a == DETER_MISSING_FASTOPEN)
			printf(",\"why\":\"fast open\"");
		else if (e->sub == DETER_V_MISSING && json && e->a == DETER_MISSING_SYNACK_TIMER)
			printf(",\"why\":\"synack timer\"");
		else if (e->sub == DETER_V_MISSING && e->a == DETER_MISSING_SETTINGS)
			rec_show_settings(log, e, json);
		else if (e->sub == DETER_V_MISSING && !json && rec_missing_what(e->a))
			printf(" (%s)", rec_missing_what(e->a));
		else if (e->sub == DETER_V_CHILD_IPID)
			printf(json ? ",\"segs\":%llu" : " x%llu",
			       (unsigned long long)(e->b ? e->b : 1));
		else if (e->sub == DETER_V_PAGE_FRAG)
			printf(json ? ",\"offset\":%llu,\"page_bytes\":%llu" :
				      ": offset %llu of a %llu B page",
			       (unsigned long long)(e->b & 0xffff),
			       4096ULL << ((e->b >> 16) & 15));
		printf(json ? "}\n" : "\n");
		break;
	case DETER_EV_STATE:
		s = &log->states[e->a];
		printf(json ? "\"event\":\"%s\",\"snd_una\":%llu,\"snd_nxt\":%llu," :
			      "%-10s snd_una %llu snd_nxt %llu",
		       e->sub ? "summary" : "checkpoint",
		       (unsigned long long)s->v[DETER_ST_SND_UNA],
		       (unsigned long long)s->v[DETER_ST_SND_NXT]);
		printf(json ? "\"rcv_nxt\":%llu,\"cwnd\":%llu,\"ssthresh\":%llu," :
			      " rcv_nxt %llu cwnd %llu ssthresh %llu",
		       (unsigned long long)s->v[DETER_ST_RCV_NXT],
		       (unsigned long long)s->v[DETER_ST_CWND],
		       (unsigned long long)s->v[DETER_ST_SSTHRESH]);
		printf(json ? "\"packets_out\":%llu,\"retrans_out\":%llu}\n" :
			      " in_flight %llu retrans_out %llu\n",
		       (unsigned long long)s->v[DETER_ST_PACKETS_OUT],
		       (unsigned long long)s->v[DETER_ST_RETRANS_OUT]);
		break;
	}
}

static const char *const rec_type_names[16] = {
	[REC_LOG_RUN] = "run", [DETER_EV_LOCK] = "lock", [DETER_EV_RX] = "rx",
	[DETER_EV_NET] = "net", [DETER_EV_CALL] = "call",
	[DETER_EV_CALL_DONE] = "return", [DETER_EV_SAMPLE] = "sample",
	[DETER_EV_CONFIG] = "config", [DETER_EV_VALUE] = "value",
	[DETER_EV_STATE] = "state", [REC_LOG_SEQGAP] = "seqgap",
	[REC_LOG_CALLREF] = "callref",
};

/* A record tag's sub as a name, or "" when its kind has none. */
static const char *rec_sub_name(unsigned int type, unsigned int sub)
{
	switch (type) {
	case REC_LOG_RUN:
		return sub < 16 && rec_type_names[sub] ? rec_type_names[sub] : "?";
	case DETER_EV_LOCK:
		return sub < DETER_LOCK_MAX ? rec_lock_names[sub] : "?";
	case DETER_EV_NET:
		return sub < DETER_NET_MAX ? rec_net_names[sub] : "?";
	case DETER_EV_CALL:
	case DETER_EV_CALL_DONE:
	case REC_LOG_CALLREF:
		return sub < DETER_ABI_CALL_MAX ? rec_call_names[sub] : "?";
	case DETER_EV_CONFIG:
		return sub < DETER_CFG_MAX ? rec_cfg_names[sub] : "?";
	case DETER_EV_VALUE:
		return sub < DETER_V_MAX ? rec_value_names[sub] : "?";
	case DETER_EV_STATE:
		return sub ? "summary" : "checkpoint";
	case REC_LOG_SEQGAP:
		return "lost or skipped";
	}
	return "";
}

/* deter show --stats: where a log's bytes go, biggest first. */
static void rec_show_stats(const struct rec_log *log)
{
	const struct rec_log_stat *stat = &log->stat[0][0];	/* by tag */
	const struct deter_log_header *h = &log->hdr;
	uint64_t raw = h->body_raw_len ? h->body_raw_len : 1, records = 0;
	unsigned int i, j, t, n = 0, order[256];

	for (t = 0; t < 256; t++) {
		if (!stat[t].records)
			continue;
		records += stat[t].records;
		/* Insert, biggest first. */
		for (j = n++; j > 0 && stat[order[j - 1]].bytes < stat[t].bytes; j--)
			order[j] = order[j - 1];
		order[j] = t;
	}
	printf("file       %zu B: header %zu B, body %u B compressed from %u B (%.1f %%), ",
	       sizeof(*h) + h->body_len, sizeof(*h), h->body_len, h->body_raw_len,
	       100.0 * h->body_len / raw);
	printf("%u chunk%s\n", log->nchunks, log->nchunks == 1 ? "" : "s");
	printf("events     %zu in %llu records\n\n", log->nevs, (unsigned long long)records);
	printf("%-7s %-18s %8s %8s %9s %6s %7s\n", "kind", "", "records", "events",
	       "bytes", "share", "B/event");
	for (i = 0; i < n; i++) {
		const struct rec_log_stat *st = &stat[order[i]];
		const char *k = rec_type_names[order[i] >> 4];

		printf("%-7s %-18s %8u %8u %9llu %5.1f%% %7.2f\n", k ? k : "?",
		       rec_sub_name(order[i] >> 4, order[i] & 15), st->records, st->events,
		       (unsigned long long)st->bytes, 100.0 * st->bytes / raw,
		       st->events ? (double)st->bytes / st->events : 0);
	}
	if (log->stat_index)
		printf("%-7s %-18s %8u %8u %9u %5.1f%%       -\n", "index", "stream lengths", 0, 0,
		       log->stat_index, 100.0 * log->stat_index / raw);
}

int rec_cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	char src[32], dst[32], start[32], st[96], *path, *err = NULL;
	const struct deter_log_header *h;
	struct rec_log *log;
	int json = 0, stats = 0, c;
	size_t i;
	int connecting = 1;	/* no call yet: a signal ended connect() */

	while ((c = deter_getopt(argc, argv, "d:jsh", opts)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 's':
			stats = 1;
			break;
		case 'h':
			rec_usage_show(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc)
		return deter_usage_fail(optind == argc ? "no connection given" :
					"more than one connection given");
	if (json && stats)
		return deter_usage_fail("--json and --stats do not go together");
	path = rec_cli_find(dir, argv[optind]);
	if (!path)
		return 1;
	log = rec_log_read(path, &err);
	free(path);
	if (!log) {
		deter_fail("%s", err ? err : "cannot read log");
		free(err);
		return 1;
	}
	h = &log->hdr;
	rec_cli_addr(src, sizeof(src), h->saddr, h->sport);
	rec_cli_addr(dst, sizeof(dst), h->daddr, h->dport);
	rec_cli_time(start, sizeof(start), h->real_ns);
	rec_log_status_str(h->status, st, sizeof(st));
	if (!json) {
		printf("connection %016llx  %s -> %s  (%s, host %s, netns %u)\n",
		       (unsigned long long)h->conn, src, dst,
		       h->flags & DETER_CONN_ACTIVE ? "active open" : "passive open",
		       h->host, h->netns);
		printf("started    %s UTC, %.3f ms, %s, cc %s, mss %u, wscale %u/%u%s%s%s",
		       start, h->duration_ns / 1e6, st, h->cc, h->mss, h->wscale >> 4,
		       h->wscale & 0xf, h->flags & DETER_CONN_TS ? ", timestamps" : "",
		       h->flags & DETER_CONN_SACK ? ", sack" : "",
		       h->flags & DETER_CONN_ECN ? ", ecn" : "");
		if (DETER_CONN_PINGPONG(h->flags))
			printf(", delayed ACKs (pingpong %u)", DETER_CONN_PINGPONG(h->flags));
		printf("\n");
		printf("isn        local %u remote %u, next ip id %u, ts offset %u\n",
		       h->iss, h->irs, h->ipid, h->tsoffset);
		printf("totals     sent %llu B, received %llu B, %u retransmissions, %u RTOs, ",
		       (unsigned long long)h->bytes_acked, (unsigned long long)h->bytes_received,
		       h->total_retrans, h->total_rto);
		printf("%u drops, %u reorderings, %u CE, %u zero windows\n",
		       h->drops, h->reorders, h->ce_marks, h->zero_wnd);
		if (!stats)
			printf("events     %zu\n\n", log->nevs);
	}
	if (stats) {
		rec_show_stats(log);
		rec_log_free(log);
		return 0;
	}
	for (i = 0; i < log->nevs; i++) {
		/* The error queue's reads do not end it (replay_plan_connects()). */
		connecting &= log->evs[i].type != DETER_EV_CALL ||
			      log->evs[i].sub == DETER_ABI_CALL_RECV_ERRQUEUE;
		rec_show_event(log, &log->evs[i], connecting, json);
	}
	rec_log_free(log);
	return 0;
}
