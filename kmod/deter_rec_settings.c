// SPDX-License-Identifier: GPL-2.0
/*
 * Recording's settings: the configuration TCP reads, logged where it
 * changes, and digests of it compared at checkpoints.
 *
 * Two kinds, logged two ways:
 *
 *   the socket's own (setsockopt: buffers, NODELAY, TOS, keepalive,
 *   timeouts, TCP options; the route's device offloads)
 *       compared with the last logged value at every app lock,
 *       deter_rec_config(): one compare per item; CONFIG <item> when
 *       it changed.
 *
 *   the host's (the namespace's TCP sysctls, net.core.rmem_max, the
 *   route's metrics, the congestion controls' module parameters)
 *       logged once at ESTABLISHED, deter_rec_settings(): those that
 *       differ from a new namespace's defaults as CONFIG SYSCTL, plus a
 *       digest of those TCP reads after the handshake:
 *
 *         sum' = ((sum ^ v) * GOLDEN_RATIO_64) ^ (... >> 29)
 *
 *       compared at checkpoints, at most every DETER_REC_SETTINGS_EVERY,
 *       and at close (deter_rec_settings_check()). A change logs VALUE
 *       MISSING SETTINGS (the log does not say where TCP first read
 *       the new value) and every setting again, for the reader to name it.
 *
 * A checkpoint (a STATE record of the socket's counters, which replay
 * compares) follows every 64th event, DETER_REC_CHECKPOINT_MASK.
 *
 * Congestion-control module parameters are static to their modules:
 * `deter record` reads them from sysfs and writes them to the control
 * file ("param ID VALUE"); until then, 6.12's defaults are assumed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_rec_settings.h"

#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/netdevice.h>
#include <net/dst.h>
#include <net/inet_ecn.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../include/deter_abi.h"
#include "deter_conn.h"
#include "deter_debug.h"
#include "deter_rec_emit.h"

/* A checkpoint every this many events: ~1.5 bytes/event once encoded. */
#define DETER_REC_CHECKPOINT_MASK 63

/* At a checkpoint, look for settings changed, at most this often. */
#define DETER_REC_SETTINGS_EVERY (HZ / 10)

/**
 * deter_rec_checkpoint() - a checkpoint after the event numbered @seq,
 *	if it is due
 * @ds: the connection's state
 * @sk: the socket, its state quiet (not owned by another context)
 * @seq: the event just emitted
 */
void deter_rec_checkpoint(struct deter_sock *ds, struct sock *sk, u32 seq)
{
	if ((seq & DETER_REC_CHECKPOINT_MASK) != DETER_REC_CHECKPOINT_MASK)
		return;
	seq = deter_rec_state_ev(ds, sk, DETER_STATE_CHECKPOINT,
				 ds->rx_zero_wnd);
	if (unlikely(deter_debug_clock))
		deter_debug_state("rec", sk, seq);
	/* After it: the replay compares a checkpoint right after its event. */
	deter_rec_settings_check(ds, sk, false);
}

/*
 * Where each sysctl (enum deter_sysctl) lives in struct netns_ipv4, or
 * for the host's own (net.core) which variable it is, and the value
 * tcp_sk_init() gives a new namespace, in the kernel's units.
 */
#define DETER_SYSCTL_ALWAYS	S64_MIN	/* logged whatever its value */

struct deter_rec_sysctl {
	const u32 *global;	/* the host's, or NULL: at off in netns_ipv4 */
	u16 off;
	u8 size;
	u8 unit;	/* shown as stored, or DETER_REC_SC_SEC/MS from jiffies */
	bool sgn;
	/*
	 * TCP reads it only until the connection is established, so a
	 * change after cannot matter (deter_rec_settings_check())
	 */
	bool setup;
	s64 def;
};

#define DETER_REC_SC_SEC	1
#define DETER_REC_SC_MS		2

#define DETER_REC_SC(f, d, u, s) {					\
	.off = offsetof(struct netns_ipv4, sysctl_##f),			\
	.size = sizeof_field(struct netns_ipv4, sysctl_##f),		\
	.def = (d), .unit = (u), .sgn = (s) }

#define DETER_REC_SC_SETUP(f, d) {					\
	.off = offsetof(struct netns_ipv4, sysctl_##f),			\
	.size = sizeof_field(struct netns_ipv4, sysctl_##f),		\
	.def = (d), .setup = true }

static const struct deter_rec_sysctl deter_rec_sysctl[DETER_SYSCTL_ROUTE_INITCWND] = {
	[DETER_SYSCTL_TCP_ECN] = DETER_REC_SC_SETUP(tcp_ecn, 2),
	[DETER_SYSCTL_TCP_ECN_FALLBACK] = DETER_REC_SC_SETUP(tcp_ecn_fallback, 1),
	[DETER_SYSCTL_TCP_SACK] = DETER_REC_SC_SETUP(tcp_sack, 1),
	[DETER_SYSCTL_TCP_WINDOW_SCALING] = DETER_REC_SC_SETUP(tcp_window_scaling, 1),
	[DETER_SYSCTL_TCP_TIMESTAMPS] = DETER_REC_SC_SETUP(tcp_timestamps, 1),
	[DETER_SYSCTL_TCP_DSACK] = DETER_REC_SC(tcp_dsack, 1, 0, false),
	[DETER_SYSCTL_TCP_EARLY_RETRANS] = DETER_REC_SC(tcp_early_retrans, 3, 0, false),
	[DETER_SYSCTL_TCP_RECOVERY] = DETER_REC_SC(tcp_recovery, 1, 0, false),
	[DETER_SYSCTL_TCP_REORDERING] = DETER_REC_SC(tcp_reordering, 3, 0, false),
	[DETER_SYSCTL_TCP_MAX_REORDERING] = DETER_REC_SC(tcp_max_reordering, 300, 0, false),
	[DETER_SYSCTL_TCP_FRTO] = DETER_REC_SC(tcp_frto, 2, 0, false),
	[DETER_SYSCTL_TCP_RETRIES1] = DETER_REC_SC(tcp_retries1, 3, 0, false),
	[DETER_SYSCTL_TCP_RETRIES2] = DETER_REC_SC(tcp_retries2, 15, 0, false),
	[DETER_SYSCTL_TCP_ORPHAN_RETRIES] = DETER_REC_SC(tcp_orphan_retries, 0, 0, false),
	[DETER_SYSCTL_TCP_SYN_RETRIES] = DETER_REC_SC_SETUP(tcp_syn_retries, 6),
	[DETER_SYSCTL_TCP_SYNACK_RETRIES] = DETER_REC_SC_SETUP(tcp_synack_retries, 5),
	[DETER_SYSCTL_TCP_SYN_LINEAR_TIMEOUTS] = DETER_REC_SC_SETUP(tcp_syn_linear_timeouts, 4),
	[DETER_SYSCTL_TCP_THIN_LINEAR_TIMEOUTS] =
		DETER_REC_SC(tcp_thin_linear_timeouts, 0, 0, false),
	[DETER_SYSCTL_TCP_SLOW_START_AFTER_IDLE] =
		DETER_REC_SC(tcp_slow_start_after_idle, 1, 0, false),
	[DETER_SYSCTL_TCP_RETRANS_COLLAPSE] = DETER_REC_SC(tcp_retrans_collapse, 1, 0, false),
	[DETER_SYSCTL_TCP_APP_WIN] = DETER_REC_SC(tcp_app_win, 31, 0, false),
	[DETER_SYSCTL_TCP_ADV_WIN_SCALE] = DETER_REC_SC(tcp_adv_win_scale, 1, 0, true),
	[DETER_SYSCTL_TCP_MODERATE_RCVBUF] = DETER_REC_SC(tcp_moderate_rcvbuf, 1, 0, false),
	[DETER_SYSCTL_TCP_TSO_WIN_DIVISOR] = DETER_REC_SC(tcp_tso_win_divisor, 3, 0, false),
	[DETER_SYSCTL_TCP_TSO_RTT_LOG] = DETER_REC_SC(tcp_tso_rtt_log, 9, 0, false),
	[DETER_SYSCTL_TCP_MIN_TSO_SEGS] = DETER_REC_SC(tcp_min_tso_segs, 2, 0, false),
	[DETER_SYSCTL_TCP_AUTOCORKING] = DETER_REC_SC(tcp_autocorking, 1, 0, false),
	[DETER_SYSCTL_TCP_LIMIT_OUTPUT_BYTES] =
		DETER_REC_SC(tcp_limit_output_bytes, 16 * 65536, 0, false),
	[DETER_SYSCTL_TCP_NOTSENT_LOWAT] = DETER_REC_SC(tcp_notsent_lowat, U32_MAX, 0, false),
	[DETER_SYSCTL_TCP_MIN_RTT_WLEN] = DETER_REC_SC(tcp_min_rtt_wlen, 300, 0, false),
	[DETER_SYSCTL_TCP_PACING_SS_RATIO] = DETER_REC_SC(tcp_pacing_ss_ratio, 200, 0, false),
	[DETER_SYSCTL_TCP_PACING_CA_RATIO] = DETER_REC_SC(tcp_pacing_ca_ratio, 120, 0, false),
	[DETER_SYSCTL_TCP_COMP_SACK_DELAY_NS] =
		DETER_REC_SC(tcp_comp_sack_delay_ns, 1000000, 0, false),
	[DETER_SYSCTL_TCP_COMP_SACK_SLACK_NS] =
		DETER_REC_SC(tcp_comp_sack_slack_ns, 100000, 0, false),
	[DETER_SYSCTL_TCP_COMP_SACK_NR] = DETER_REC_SC(tcp_comp_sack_nr, 44, 0, false),
	[DETER_SYSCTL_TCP_BACKLOG_ACK_DEFER] = DETER_REC_SC(tcp_backlog_ack_defer, 1, 0, false),
	[DETER_SYSCTL_TCP_PINGPONG_THRESH] = DETER_REC_SC(tcp_pingpong_thresh, 1, 0, false),
	[DETER_SYSCTL_TCP_RTO_MIN_US] = DETER_REC_SC(tcp_rto_min_us, 200000, 0, false),
	[DETER_SYSCTL_TCP_MTU_PROBING] = DETER_REC_SC(tcp_mtu_probing, 0, 0, false),
	[DETER_SYSCTL_TCP_BASE_MSS] = DETER_REC_SC(tcp_base_mss, 1024, 0, false),
	[DETER_SYSCTL_TCP_MIN_SND_MSS] = DETER_REC_SC(tcp_min_snd_mss, 48, 0, false),
	[DETER_SYSCTL_TCP_PROBE_THRESHOLD] = DETER_REC_SC(tcp_probe_threshold, 8, 0, false),
	[DETER_SYSCTL_TCP_PROBE_INTERVAL] = DETER_REC_SC(tcp_probe_interval, 600, 0, false),
	[DETER_SYSCTL_TCP_MTU_PROBE_FLOOR] = DETER_REC_SC(tcp_mtu_probe_floor, 48, 0, false),
	[DETER_SYSCTL_TCP_KEEPALIVE_TIME] =
		DETER_REC_SC(tcp_keepalive_time, TCP_KEEPALIVE_TIME, DETER_REC_SC_SEC, false),
	[DETER_SYSCTL_TCP_KEEPALIVE_PROBES] = DETER_REC_SC(tcp_keepalive_probes, 9, 0, false),
	[DETER_SYSCTL_TCP_KEEPALIVE_INTVL] =
		DETER_REC_SC(tcp_keepalive_intvl, TCP_KEEPALIVE_INTVL, DETER_REC_SC_SEC, false),
	[DETER_SYSCTL_TCP_FIN_TIMEOUT] =
		DETER_REC_SC(tcp_fin_timeout, TCP_FIN_TIMEOUT, DETER_REC_SC_SEC, false),
	[DETER_SYSCTL_TCP_STDURG] = DETER_REC_SC(tcp_stdurg, 0, 0, false),
	[DETER_SYSCTL_TCP_RFC1337] = DETER_REC_SC(tcp_rfc1337, 0, 0, false),
	[DETER_SYSCTL_TCP_WORKAROUND_SIGNED_WINDOWS] =
		DETER_REC_SC(tcp_workaround_signed_windows, 0, 0, false),
	[DETER_SYSCTL_TCP_SHRINK_WINDOW] = DETER_REC_SC(tcp_shrink_window, 0, 0, false),
	[DETER_SYSCTL_TCP_CHALLENGE_ACK_LIMIT] =
		DETER_REC_SC(tcp_challenge_ack_limit, INT_MAX, 0, false),
	[DETER_SYSCTL_TCP_INVALID_RATELIMIT] =
		DETER_REC_SC(tcp_invalid_ratelimit, HZ / 2, DETER_REC_SC_MS, false),
	[DETER_SYSCTL_TCP_NOMETRICS_SAVE] = DETER_REC_SC(tcp_nometrics_save, 0, 0, false),
	[DETER_SYSCTL_TCP_NO_SSTHRESH_METRICS_SAVE] =
		DETER_REC_SC(tcp_no_ssthresh_metrics_save, 1, 0, false),
	[DETER_SYSCTL_TCP_FASTOPEN] = DETER_REC_SC_SETUP(tcp_fastopen, 1),
	[DETER_SYSCTL_TCP_PLB_ENABLED] = DETER_REC_SC(tcp_plb_enabled, 0, 0, false),
	[DETER_SYSCTL_TCP_RMEM0] = DETER_REC_SC(tcp_rmem[0], DETER_SYSCTL_ALWAYS, 0, false),
	[DETER_SYSCTL_TCP_RMEM1] = DETER_REC_SC_SETUP(tcp_rmem[1], DETER_SYSCTL_ALWAYS),
	[DETER_SYSCTL_TCP_RMEM2] = DETER_REC_SC(tcp_rmem[2], DETER_SYSCTL_ALWAYS, 0, false),
	[DETER_SYSCTL_TCP_WMEM0] = DETER_REC_SC(tcp_wmem[0], DETER_SYSCTL_ALWAYS, 0, false),
	[DETER_SYSCTL_TCP_WMEM1] = DETER_REC_SC_SETUP(tcp_wmem[1], DETER_SYSCTL_ALWAYS),
	[DETER_SYSCTL_TCP_WMEM2] = DETER_REC_SC(tcp_wmem[2], DETER_SYSCTL_ALWAYS, 0, false),
	/*
	 * The window scale TCP offers is for the largest of the buffer,
	 * tcp_rmem[2] and rmem_max (tcp_select_initial_window()). Global,
	 * and a host's default need not be the kernel's: always logged.
	 */
	[DETER_SYSCTL_CORE_RMEM_MAX] = { .global = &sysctl_rmem_max, .size = 4,
					 .setup = true, .def = DETER_SYSCTL_ALWAYS },
};

#undef DETER_REC_SC
#undef DETER_REC_SC_SETUP

/* Adds @v to the digest @sum of the settings a connection started with. */
static u64 deter_rec_sum(u64 sum, u64 v)
{
	sum = (sum ^ v) * GOLDEN_RATIO_64;
	return sum ^ sum >> 29;
}

/* Sysctl @c's value, in the kernel's units; @base: the namespace's. */
static s64 deter_rec_sysctl_get(const struct deter_rec_sysctl *c,
				const void *base)
{
	const void *p = c->global ?: base + c->off;

	switch (c->size) {
	case 1:
		return READ_ONCE(*(const u8 *)p);
	case 4:
		return c->sgn ? (s64)READ_ONCE(*(const s32 *)p) :
				(s64)READ_ONCE(*(const u32 *)p);
	default:
		return READ_ONCE(*(const unsigned long *)p);
	}
}

/*
 * The namespace's TCP sysctls that differ from a new namespace's (and
 * tcp_rmem, tcp_wmem, and the host's rmem_max), as CONFIG SYSCTL events,
 * in the units the sysctl shows, when @ds. Return: a digest of those TCP
 * reads once established.
 */
static u64 deter_rec_sysctls(struct deter_sock *ds, const struct sock *sk)
{
	const void *base = &sock_net(sk)->ipv4;
	const struct deter_rec_sysctl *c;
	u64 sum = 0;
	u32 id;
	s64 v;

	for (id = 0; id < ARRAY_SIZE(deter_rec_sysctl); id++) {
		c = &deter_rec_sysctl[id];
		v = deter_rec_sysctl_get(c, base);
		if (!c->setup)
			sum = deter_rec_sum(sum, v);
		if (!ds || (c->def != DETER_SYSCTL_ALWAYS && v == c->def))
			continue;
		if (c->unit == DETER_REC_SC_SEC)
			v = div_s64(v, HZ);
		else if (c->unit == DETER_REC_SC_MS)
			v = jiffies_to_msecs(v);
		deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_SYSCTL,
			       (u64)id << 32 | (u32)v, 0, 0);
	}
	return sum;
}

/*
 * The metrics of @sk's route that TCP reads, as CONFIG SYSCTL ROUTE_*
 * events when @ds, where the route sets them (TCP reads them at the
 * start: initial windows, MSS, cached metrics; initcwnd again after an
 * idle period, rto_min at every RTT sample). Those TCP takes only locked,
 * only when locked. Return: a digest of those it reads once established,
 * never 0, or 0 when @sk has no route (TCP dropped it, to look it up
 * again at its next send).
 */
static u64 deter_rec_route(struct deter_sock *ds, struct sock *sk)
{
	/* established: TCP reads it after the start too */
	static const struct {
		u8 id, rtax;
		bool locked, established;
	} m[] = {
		{ DETER_SYSCTL_ROUTE_INITCWND, RTAX_INITCWND, false, true },
		{ DETER_SYSCTL_ROUTE_INITRWND, RTAX_INITRWND, false, false },
		{ DETER_SYSCTL_ROUTE_WINDOW, RTAX_WINDOW, false, false },
		{ DETER_SYSCTL_ROUTE_ADVMSS, RTAX_ADVMSS, false, false },
		{ DETER_SYSCTL_ROUTE_RTO_MIN, RTAX_RTO_MIN, true, true },
		{ DETER_SYSCTL_ROUTE_CWND, RTAX_CWND, true, false },
		{ DETER_SYSCTL_ROUTE_SSTHRESH, RTAX_SSTHRESH, true, false },
		{ DETER_SYSCTL_ROUTE_REORDERING, RTAX_REORDERING, true, false },
	};
	struct dst_entry *dst = sk_dst_get(sk);
	unsigned int i;
	u64 sum = 0;
	u32 v;

	if (!dst)
		return 0;
	for (i = 0; i < ARRAY_SIZE(m); i++) {
		v = dst_metric_raw(dst, m[i].rtax);
		if (!v || (m[i].locked && !dst_metric_locked(dst, m[i].rtax)))
			continue;
		if (m[i].established)
			sum = deter_rec_sum(sum, (u64)m[i].id << 32 | v);
		if (ds)
			deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_SYSCTL,
				       (u64)m[i].id << 32 | v, 0, 0);
	}
	dst_release(dst);
	return sum | 1;
}

/*
 * Congestion-control module parameters (enum deter_sysctl from
 * DETER_SYSCTL_CUBIC_FAST_CONVERGENCE on): global, and static to their
 * modules, so deter record reads them from sysfs and writes them here
 * (control "param ID VALUE"); until it does, 6.12's defaults.
 */
static const u32 deter_rec_param_def[DETER_PARAMS] = DETER_PARAM_DEFAULTS;

static u32 deter_rec_param[DETER_PARAMS] __read_mostly = DETER_PARAM_DEFAULTS;

/* "ID VALUE": set parameter ID (enum deter_sysctl) to VALUE, an int or uint. */
int deter_rec_param_set(char *p)
{
	char *tok = strsep(&p, " ");
	unsigned int id;
	long long v;

	if (!tok || kstrtouint(tok, 0, &id) || !p || kstrtoll(p, 0, &v) ||
	    id < DETER_PARAM_FIRST || id >= DETER_SYSCTL_MAX ||
	    v < S32_MIN || v > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(deter_rec_param[id - DETER_PARAM_FIRST], (u32)v);
	return 0;
}

/* Each congestion control's parameters, enum deter_sysctl first..last. */
static const struct {
	const char *cc;
	u8 first, last;
} deter_rec_cc_params[] = {
	{ "cubic", DETER_SYSCTL_CUBIC_FAST_CONVERGENCE,
	  DETER_SYSCTL_CUBIC_HYSTART_ACK_DELTA_US },
	{ "dctcp", DETER_SYSCTL_DCTCP_SHIFT_G, DETER_SYSCTL_DCTCP_ALPHA_ON_INIT },
	{ "bic", DETER_SYSCTL_BIC_FAST_CONVERGENCE, DETER_SYSCTL_BIC_SMOOTH_PART },
	{ "htcp", DETER_SYSCTL_HTCP_USE_RTT_SCALING,
	  DETER_SYSCTL_HTCP_USE_BANDWIDTH_SWITCH },
	{ "vegas", DETER_SYSCTL_VEGAS_ALPHA, DETER_SYSCTL_VEGAS_GAMMA },
	{ "hybla", DETER_SYSCTL_HYBLA_RTT0, DETER_SYSCTL_HYBLA_RTT0 },
	{ "nv", DETER_SYSCTL_NV_PAD, DETER_SYSCTL_NV_MIN_CWND },
	{ "cdg", DETER_SYSCTL_CDG_WINDOW, DETER_SYSCTL_CDG_USE_TOLERANCE },
};

/*
 * The parameters not at their defaults, as CONFIG SYSCTL events when
 * @ds. Return: a digest of those of @sk's congestion control.
 */
static u64 deter_rec_params(struct deter_sock *ds, const struct sock *sk)
{
	const char *cc = inet_csk(sk)->icsk_ca_ops->name;
	unsigned int i, first = 0, last = 0;
	u64 sum = 0;
	u32 v;

	for (i = 0; i < ARRAY_SIZE(deter_rec_cc_params); i++) {
		if (!strcmp(cc, deter_rec_cc_params[i].cc)) {
			first = deter_rec_cc_params[i].first - DETER_PARAM_FIRST;
			last = deter_rec_cc_params[i].last - DETER_PARAM_FIRST + 1;
			break;
		}
	}
	for (i = ds ? 0 : first; i < (ds ? DETER_PARAMS : last); i++) {
		v = READ_ONCE(deter_rec_param[i]);
		if (i >= first && i < last)
			sum = deter_rec_sum(sum, v);
		if (ds && v != deter_rec_param_def[i])
			deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_SYSCTL,
				       (u64)(DETER_PARAM_FIRST + i) << 32 | v,
				       0, 0);
	}
	return sum;
}

/*
 * The settings TCP reads that are not the socket's own (its namespace's
 * sysctls, the host's rmem_max, its route's metrics, the congestion
 * controls' module parameters), as CONFIG SYSCTL events, and digests of
 * those it reads once established, to be compared with them later
 * (deter_rec_settings_check()).
 */
void deter_rec_settings(struct deter_sock *ds, struct sock *sk)
{
	ds->cfg[DETER_CFG_SYSCTL] = deter_rec_sysctls(ds, sk);
	ds->param_sum = deter_rec_params(ds, sk);
	ds->param_cc = inet_csk(sk)->icsk_ca_ops;
	ds->route_sum = deter_rec_route(ds, sk);
	ds->settings_next = jiffies + DETER_REC_SETTINGS_EVERY;
}

/*
 * Did a setting deter_rec_settings() logged change since? Then what the
 * connection did since its last look depended on one not logged where
 * TCP read it: say so (VALUE MISSING SETTINGS: the log has every event,
 * but not when TCP first read the new value), then log them all again,
 * for the reader to name what changed. At checkpoints, at least
 * DETER_REC_SETTINGS_EVERY apart, and at the end (@force). A change and
 * its undoing between two looks go unseen.
 */
void deter_rec_settings_check(struct deter_sock *ds, struct sock *sk,
			      bool force)
{
	u64 route, params;

	if (!ds->conn_sent ||
	    (!force && time_before(jiffies, ds->settings_next)))
		return;
	ds->settings_next = jiffies + DETER_REC_SETTINGS_EVERY;
	/* No route (TCP looks it up again at its next send): next time. */
	route = deter_rec_route(NULL, sk);
	if (!route)
		return;
	/* A first route, another congestion control (logged): from here. */
	if (!ds->route_sum)
		ds->route_sum = route;
	params = deter_rec_params(NULL, sk);
	if (ds->param_cc != inet_csk(sk)->icsk_ca_ops) {
		ds->param_cc = inet_csk(sk)->icsk_ca_ops;
		ds->param_sum = params;
	}
	if (deter_rec_sysctls(NULL, sk) == ds->cfg[DETER_CFG_SYSCTL] &&
	    params == ds->param_sum && route == ds->route_sum)
		return;
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING,
		       DETER_MISSING_SETTINGS, 0, 0);
	deter_rec_settings(ds, sk);
}

/* The offloads of the device @sk's route leaves by, DETER_OFFLOAD_*. */
static u64 deter_rec_offload(const struct sock *sk)
{
	const struct dst_entry *dst;
	netdev_features_t f = 0;
	u64 mtu = 0, lo = 0;

	rcu_read_lock();
	dst = __sk_dst_get((struct sock *)sk);
	if (dst && dst_dev_rcu(dst)) {
		f = READ_ONCE(dst_dev_rcu(dst)->features);
		mtu = dst_mtu(dst) & 0xffff;
		if (dst_dev_rcu(dst)->flags & IFF_LOOPBACK)
			lo = DETER_OFFLOAD_LOOPBACK;
	}
	rcu_read_unlock();
	if (!dst)
		return 0;
	return DETER_OFFLOAD_KNOWN | lo | mtu << 32 |
	       (f & NETIF_F_TSO ? DETER_OFFLOAD_TSO : 0) |
	       (f & NETIF_F_GSO ? DETER_OFFLOAD_GSO : 0) |
	       (f & NETIF_F_GRO ? DETER_OFFLOAD_GRO : 0);
}

/* SO_KEEPALIVE and TCP_KEEP*, DETER_KA_PACK()ed; seconds. */
static u64 deter_rec_keepalive(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return DETER_KA_PACK(sock_flag(sk, SOCK_KEEPOPEN),
			     READ_ONCE(tp->keepalive_probes),
			     READ_ONCE(tp->keepalive_intvl) / HZ,
			     READ_ONCE(tp->keepalive_time) / HZ);
}

/* SO_LINGER: on | seconds << 1. */
static u64 deter_rec_linger(const struct sock *sk)
{
	u64 secs = READ_ONCE(sk->sk_lingertime) / HZ;

	return sock_flag(sk, SOCK_LINGER) | min_t(u64, secs, U32_MAX) << 1;
}

/*
 * SO_RCVTIMEO/SO_SNDTIMEO as DETER_TCPOPT_RCVTIMEO has it: 0 for none,
 * else 1 + the timeout in us (1: calls do not wait at all), at most
 * DETER_TCPOPT_VAL_MASK.
 */
static u64 deter_rec_timeo(long timeo)
{
	const u64 max = (DETER_TCPOPT_VAL_MASK - 1) / USEC_PER_SEC * HZ;

	if (timeo == MAX_SCHEDULE_TIMEOUT)
		return 0;
	if (timeo <= 0)
		return 1;
	if ((u64)timeo >= max)
		return DETER_TCPOPT_VAL_MASK;
	return 1 + mul_u64_u32_div(timeo, USEC_PER_SEC, HZ);
}

/* A congestion control's name as DETER_CFG_CC has it. */
static u64 deter_rec_cc(const char *name)
{
	u64 v = 0;
	int i;

	for (i = 0; i < DETER_CC_BYTES && name[i]; i++)
		v |= (u64)(u8)name[i] << (8 * i);
	return v;
}

/* Record configuration item @i if it is not @v any more. */
static void deter_rec_cfg(struct deter_sock *ds, enum deter_cfg i, u64 v)
{
	if (likely(ds->cfg[i] == v))
		return;
	ds->cfg[i] = v;
	deter_rec_emit(ds, DETER_EV_CONFIG, i, v, 0, 0);
}

/* The same for TCP option @i (DETER_CFG_TCP). */
static void deter_rec_tcpopt(struct deter_sock *ds, enum deter_tcpopt i, u64 v)
{
	if (likely(ds->tcpopt[i] == v))
		return;
	ds->tcpopt[i] = v;
	deter_rec_emit(ds, DETER_EV_CONFIG, DETER_CFG_TCP, DETER_TCPOPT_PACK(i, v),
		       0, 0);
}

/* Calls reached @sk past deter's hooks: the log is incomplete from here on. */
static void deter_rec_unseen(struct deter_sock *ds)
{
	if (ds->unseen_calls)
		return;
	ds->unseen_calls = true;
	deter_rec_emit(ds, DETER_EV_VALUE, DETER_V_MISSING, DETER_MISSING_CALLS,
		       0, 0);
}

/*
 * Whether the application's calls on @sk go through a layer above TCP
 * that calls TCP past deter's hooks: a ULP (kTLS, MPTCP's subflows,
 * espintcp) or a BPF sockmap, which replace sk_prot (tcpv6_prot has
 * TCP's own recvmsg and sendmsg, as tcp_prot does).
 */
static bool deter_rec_other_layer(const struct sock *sk)
{
	const struct proto *prot = READ_ONCE(sk->sk_prot);

	return READ_ONCE(inet_csk(sk)->icsk_ulp_ops) ||
	       prot->recvmsg != tcp_prot.recvmsg ||
	       prot->sendmsg != tcp_prot.sendmsg;
}

/*
 * Before a read call, shutdown or close, with no read under way: bytes
 * read since the last read call returned were read past deter's hooks
 * (TCP_ZEROCOPY_RECEIVE, a kernel reader's tcp_read_sock(), a sockmap's
 * tcp_read_skb()). tcp_check_urg() steps over the urgent byte at the
 * read point on its own.
 */
void deter_rec_reads_seen(struct deter_sock *ds, const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 moved = READ_ONCE(tp->copied_seq) - ds->rd_end;

	if (!ds->rd_known || ds->rd_open || !moved)
		return;
	if (moved == 1 && tp->urg_seq == ds->rd_end) {
		ds->rd_end++;
		return;
	}
	deter_rec_unseen(ds);
}

/*
 * Record socket configuration that changed since the last socket call:
 * what setsockopt() sets and TCP reads, not what TCP tunes itself
 * (inet->tos's ECN bits, the buffers' autotuning is replayed anyway).
 * Items in enum order (SYSCTL: the namespace's, logged at the start),
 * then TCP options; one compare each, as it runs at every socket call.
 */
void deter_rec_config(struct deter_sock *ds, const struct sock *sk)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	const struct inet_sock *inet = inet_sk(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	int ttl = READ_ONCE(inet->uc_ttl);
	int linger2 = READ_ONCE(tp->linger2);

	BUILD_BUG_ON(ARRAY_SIZE(ds->cfg) != DETER_CFG_MAX);
	BUILD_BUG_ON(DETER_CFG_MAX > 16);

	deter_rec_cfg(ds, DETER_CFG_SNDBUF, READ_ONCE(sk->sk_sndbuf));
	deter_rec_cfg(ds, DETER_CFG_RCVBUF, READ_ONCE(sk->sk_rcvbuf));
	deter_rec_cfg(ds, DETER_CFG_NODELAY, tp->nonagle);
	deter_rec_cfg(ds, DETER_CFG_USER_MSS, tp->rx_opt.user_mss);
	deter_rec_cfg(ds, DETER_CFG_OFFLOAD, deter_rec_offload(sk));
	deter_rec_cfg(ds, DETER_CFG_USERLOCKS,
		      (sk->sk_userlocks & SOCK_SNDBUF_LOCK ? DETER_LOCK_SNDBUF : 0) |
		      (sk->sk_userlocks & SOCK_RCVBUF_LOCK ? DETER_LOCK_RCVBUF : 0));
	deter_rec_cfg(ds, DETER_CFG_TOS, READ_ONCE(inet->tos) & ~INET_ECN_MASK);
	deter_rec_cfg(ds, DETER_CFG_TTL, ttl < 0 ? 0 : ttl);
	deter_rec_cfg(ds, DETER_CFG_KEEPALIVE, deter_rec_keepalive(sk));
	deter_rec_cfg(ds, DETER_CFG_USER_TIMEOUT, READ_ONCE(icsk->icsk_user_timeout));
	deter_rec_cfg(ds, DETER_CFG_NOTSENT_LOWAT, READ_ONCE(tp->notsent_lowat));
	deter_rec_cfg(ds, DETER_CFG_RCVLOWAT, READ_ONCE(sk->sk_rcvlowat));
	deter_rec_cfg(ds, DETER_CFG_LINGER, deter_rec_linger(sk));
	/*
	 * The application's choice only, by a name it can ask for: dctcp
	 * without ECN falls back to an unregistered "dctcp-reno" (key 0).
	 */
	if (icsk->icsk_ca_setsockopt && icsk->icsk_ca_ops && icsk->icsk_ca_ops->key)
		deter_rec_cfg(ds, DETER_CFG_CC, deter_rec_cc(icsk->icsk_ca_ops->name));

	deter_rec_tcpopt(ds, DETER_TCPOPT_THIN_LTO, tp->thin_lto);
	deter_rec_tcpopt(ds, DETER_TCPOPT_SYNCNT, READ_ONCE(icsk->icsk_syn_retries));
	deter_rec_tcpopt(ds, DETER_TCPOPT_LINGER2,
			 (u32)(linger2 < 0 ? -1 : linger2 / HZ));
	deter_rec_tcpopt(ds, DETER_TCPOPT_TX_DELAY, READ_ONCE(tp->tcp_tx_delay));
	deter_rec_tcpopt(ds, DETER_TCPOPT_MAX_PACING_RATE,
			 min_t(u64, READ_ONCE(sk->sk_max_pacing_rate),
			       DETER_TCPOPT_RATE_MAX));
	deter_rec_tcpopt(ds, DETER_TCPOPT_PRIORITY, READ_ONCE(sk->sk_priority));
	deter_rec_tcpopt(ds, DETER_TCPOPT_MARK, READ_ONCE(sk->sk_mark));
	deter_rec_tcpopt(ds, DETER_TCPOPT_RCVTIMEO,
			 deter_rec_timeo(READ_ONCE(sk->sk_rcvtimeo)));
	deter_rec_tcpopt(ds, DETER_TCPOPT_SNDTIMEO,
			 deter_rec_timeo(READ_ONCE(sk->sk_sndtimeo)));

	if (unlikely(!ds->unseen_calls && deter_rec_other_layer(sk)))
		deter_rec_unseen(ds);
}
