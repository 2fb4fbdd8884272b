// SPDX-License-Identifier: GPL-2.0
/*
 * The host-wide settings a log records, and what changed of them.
 *
 * deter.ko logs the settings TCP reads from outside the socket as CONFIG
 * SYSCTL events, each id << 32 | value with id an enum deter_sysctl:
 * net.ipv4 and net.core sysctls, the connection's route metrics (as ip
 * route takes them), and the module parameters of the congestion
 * controls (/sys/module/tcp_NAME/parameters/). rec_sysctls[] names them:
 *
 *   DIR.NAME[ELEM]    DIR = net.ipv4 | net.core | route | tcp_MODULE
 *
 * At the start of a connection the log has every setting off its
 * default; when deter.ko sees one change mid-connection it logs VALUE
 * MISSING SETTINGS and then every setting off its default again, so
 * that the settings before and after a change are the CONFIG SYSCTL
 * events before and after that event (rec_settings_changed()). Of the
 * module parameters only the congestion controls the connection used
 * count (rec_log_cc_params()): the one at ESTABLISHED, the header's, and
 * any TCP_CONGESTION later (CONFIG CC).
 *
 * Tables and functions of their arguments only; thread-safe.
 */
#include "rec_sysctl.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec_names.h"

/* A set of CONFIG SYSCTL values, by enum deter_sysctl. */
struct rec_settings {
	long long v[DETER_SYSCTL_MAX];	/* values, as rec_sysctl_value() */
	char have[DETER_SYSCTL_MAX];	/* logged; else at its default */
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

