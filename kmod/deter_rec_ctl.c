// SPDX-License-Identifier: GPL-2.0
/*
 * Recording's switch and counters.
 *
 * Recording selects connections as they start (deter_rec_hook.c): a
 * connection is recorded, from its first segment to its close, if
 * recording was armed when it started and one of its ports is listed
 * (or no port is). Disarming stops selecting; connections already
 * selected still emit what they have until they close, and their
 * batches are flushed at "stop" (deter_ctl.c).
 *
 *   selected = armed && (nports == 0 || sport or dport in ports[])
 *              && IPv4 (else counted in connections_not_ipv4)
 *
 * A socket deter could not even track (no memory for its state) is told
 * to the recorder by a deter_lost record while armed: it never shows up
 * as a connection recorded in part without notice.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "deter_rec_ctl.h"

#include <linux/seq_file.h>
#include <net/inet_sock.h>

#include "deter_rec_emit.h"
#include "deter_trace.h"

bool deter_rec_armed __read_mostly;
u32 deter_rec_threshold_ns __read_mostly = DETER_SAMPLE_THRESHOLD_NS;
static u16 deter_rec_ports[DETER_REC_PORTS_MAX] __read_mostly;
static unsigned int deter_rec_nports __read_mostly;

atomic64_t deter_rec_conns;
atomic64_t deter_rec_not_ipv4;
atomic64_t deter_rec_tx_pkts;
atomic64_t deter_rec_tx_orphan;

/**
 * deter_rec_start() - arm recording of new connections
 * @threshold_ns: send-time sampling threshold (deter_sample.c)
 * @ports: the ports to record; a connection with either end's matches
 * @n: how many (0: every port), at most DETER_REC_PORTS_MAX
 *
 * Under the control file's mutex, recording disarmed.
 */
void deter_rec_start(u32 threshold_ns, const u16 *ports, unsigned int n)
{
	memcpy(deter_rec_ports, ports, n * sizeof(*ports));
	WRITE_ONCE(deter_rec_nports, n);
	WRITE_ONCE(deter_rec_threshold_ns, threshold_ns);
	/* Ports and threshold are visible before the armed flag. */
	smp_store_release(&deter_rec_armed, true);
}

/**
 * deter_rec_disarm() - select no more connections
 */
void deter_rec_disarm(void)
{
	WRITE_ONCE(deter_rec_armed, false);
}

/**
 * deter_rec_port_match() - is a starting connection on a port recorded?
 * @sk: its socket, ports set
 *
 * Return: true if either end's port is listed, or none is.
 */
bool deter_rec_port_match(const struct sock *sk)
{
	u16 sport = ntohs(inet_sk(sk)->inet_sport);
	u16 dport = ntohs(inet_sk(sk)->inet_dport);
	unsigned int i, n = READ_ONCE(deter_rec_nports);

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		if (deter_rec_ports[i] == sport || deter_rec_ports[i] == dport)
			return true;
	return false;
}

/**
 * deter_rec_lost() - tell the recorder a socket could not be tracked
 * @sk: the socket
 * @reason: enum deter_rec_lost_reason
 */
void deter_rec_lost(const struct sock *sk, u32 reason)
{
	if (READ_ONCE(deter_rec_armed))
		trace_deter_lost(0, reason);
}

/**
 * deter_rec_ctl_show() - recording's state, as deter/control shows it
 * @m: the file
 */
void deter_rec_ctl_show(struct seq_file *m)
{
	unsigned int i;

	seq_printf(m, "%s threshold_ns=%u ports=",
		   READ_ONCE(deter_rec_armed) ? "recording" : "stopped",
		   READ_ONCE(deter_rec_threshold_ns));
	for (i = 0; i < READ_ONCE(deter_rec_nports); i++)
		seq_printf(m, "%s%u", i ? "," : "", deter_rec_ports[i]);
	seq_puts(m, "\n");
}

/**
 * deter_rec_stats_show() - recording's counters, as deter/stats shows them
 * @m: the file
 */
void deter_rec_stats_show(struct seq_file *m)
{
	seq_printf(m, "connections_recorded %lld\n",
		   (long long)atomic64_read(&deter_rec_conns));
	seq_printf(m, "connections_not_ipv4 %lld\n",
		   (long long)atomic64_read(&deter_rec_not_ipv4));
	seq_printf(m, "events_emitted %llu\n", deter_rec_events_total());
	seq_printf(m, "tx_packets_sampled %lld\n",
		   (long long)atomic64_read(&deter_rec_tx_pkts));
	seq_printf(m, "tx_packets_orphaned %lld\n",
		   (long long)atomic64_read(&deter_rec_tx_orphan));
}
