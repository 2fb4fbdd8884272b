// SPDX-License-Identifier: GPL-2.0
/*
 * The replay testbed: one network namespace per connection end.
 *
 *        dtr-<pid>-a (active end)              dtr-<pid>-b (passive end)
 *   +------------------------------+      +------------------------------+
 *   | lo up                        |      |                        lo up |
 *   | dtr-a  A/32                  |------|                  B/32  dtr-b |
 *   |   route B/32 dev dtr-a       | veth |       route A/32 dev dtr-b   |
 *   | prerouting: tcp -> queue 0   |      |   prerouting: tcp -> queue 1 |
 *   |   then CORR_CE_MARK -> CE    |      |    then CORR_CE_MARK -> CE   |
 *   +------------------------------+      +------------------------------+
 *
 * A and B are the recorded addresses, so the 4-tuples (which deter.ko
 * matches scripts by) are the recorded ones. Each stack gets the
 * recorded connection's negotiated options as sysctls (tcp_timestamps,
 * tcp_sack, tcp_window_scaling, tcp_ecn), so the handshake negotiates the
 * same, and the host its logged net.core.rmem_max (which sets the window
 * scale offered) and congestion-control module parameters (global,
 * restored when the testbed goes). The veth
 * queues are 10000 packets long so that the link never drops (drops are
 * the corrector's to reproduce). Every incoming TCP packet goes to that
 * host's NFQUEUE (no bypass: with no corrector bound it is dropped, never
 * delivered uncorrected); the next chain sets ECN to CE in the IP header
 * of those the corrector accepted with CORR_CE_MARK, as a switch does.
 *
 * A connection whose route went out of lo (the logs' CONFIG OFFLOAD says
 * so, or both ends have one address, or one is 127.0.0.0/8) had both ends
 * on one host, in one namespace: it replays on one host too, over lo,
 * which segments, checksums, sizes (truesize) and hands over packets as
 * it did, and gives the sender's IP IDs unchanged:
 *
 *                       dtr-<pid>-l (both ends)
 *   +-----------------------------------------------------------------+
 *   | lo up, MTU and offloads as logged, A/32 and B/32 unless 127/8   |
 *   | prerouting: tcp to A:port a -> queue 0, to B:port b -> queue 1  |
 *   |   other tcp dropped; then CORR_CE_MARK -> CE                    |
 *   +-----------------------------------------------------------------+
 *
 * Without a drop, late arrival or CE mark in either log (net->direct,
 * lo's usual case), there are no queues and no correctors: lo delivers
 * each segment as it did when recorded, in the sender's transmit (the
 * softirq its local_bh_enable() runs), before the sender goes on. A
 * corrector would deliver it later, after the sender perhaps freed its
 * copy of the segment before (an ACK), and the receiver would coalesce
 * into an skb no longer shared where the original could not.
 *
 * Both ends share the namespace's sysctls and route: logs that want
 * different ones, or route metrics (on the local route), are refused.
 *
 * Everything is done with ip(8), sysctl(8), nft(8) and ethtool(8) run
 * through fork/exec, so a failure reads as the tool's own one-line
 * message: ip(8) with -batch, each tool once per host and entered into
 * its namespace with setns(), not ip netns exec (an exec costs ~70 ms in
 * the emulated testbed VM).
 */
#include "replay_net.h"

#include "corrector.h"
#include "rec_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Generous: a whole window of 64 KB GSO packets and then some. */
#define REPLAY_NET_TXQUEUELEN "10000"
/* NFQUEUE of host a; host b's is the next one. */
#define REPLAY_NET_QUEUE 0
/* Where the logs of a connection over lo disagree, what is said first. */
#define REPLAY_NET_ONE_HOST "both ends on one host, which the logs set differently"
/* Output kept from a helper for its error message. */
#define REPLAY_NET_OUT_MAX 4096

static void replay_net_ip(char *buf, size_t len, uint32_t addr)
{
	struct in_addr in = { .s_addr = htonl(addr) };

	inet_ntop(AF_INET, &in, buf, len);
}

/* The last non-empty line of @out, in place. */
static const char *replay_net_last_line(char *out)
{
	char *p;

	for (p = out + strlen(out); p > out && (p[-1] == '\n' || p[-1] == ' '); p--)
		p[-1] = '\0';
	p = strrchr(out, '\n');
	return p ? p + 1 : out;
}

/*
 * Start @argv in namespace @ns (NULL: this one), its output on *@out and
 * @input (NULL: /dev/null) on its standard input, from a memory file: no
 * pipe to fill or to break (SIGPIPE) if it exits without reading.
 */
static pid_t replay_net_spawn(const char *ns, char *const argv[], const char *input,
			      int *out)
{
	int pfd[2], in = -1;
	size_t len = input ? strlen(input) : 0;
	char *err = NULL;
	pid_t pid;

	if (input) {
		in = memfd_create("deter-input", MFD_CLOEXEC);
		if (in < 0 || write(in, input, len) != (ssize_t)len ||
		    lseek(in, 0, SEEK_SET)) {
			if (in >= 0)
				close(in);
			return -1;
		}
	} else {
		in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		if (in >= 0)
			close(in);
		return -1;
	}
	pid = fork();
	if (!pid) {
		if (in >= 0)
			dup2(in, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (ns && replay_net_enter(ns, &err)) {
			dprintf(2, "%s\n", err);
			_exit(127);
		}
		execvp(argv[0], argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (in >= 0)
		close(in);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -1;
	}
	*out = pfd[0];
	return pid;
}

/*
 * Append what is readable on @fd to @buf, keeping its tail. Return: 1 if
 * something was read, 0 at end of file (or error), -1 if nothing is
 * there yet.
 */
static int replay_net_drain(int fd, char *buf, size_t cap)
{
	_Static_assert(REPLAY_NET_OUT_MAX > 1024, "drain buffer");
	size_t len = strlen(buf);
	char tmp[1024];
	ssize_t n;

	n = read(fd, tmp, sizeof(tmp));
	if (n <= 0)
		return n < 0 && (errno == EAGAIN || errno == EINTR) ? -1 : 0;
	/* cap > sizeof(tmp): dropping the head of @buf always makes room. */
	if (len + n >= cap) {
		size_t drop = len + n - cap + 1;

		memmove(buf, buf + drop, len - drop + 1);
		len -= drop;
	}
	memcpy(buf + len, tmp, n);
	buf[len + n] = '\0';
	return 1;
}

static void replay_net_cmdline(char *buf, size_t len, char *const argv[])
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/*
 * Run a helper to completion in namespace @ns (NULL: this one), with
 * @input (NULL: none) on its standard input. Return: 0 if it exited 0,
 * else -1 with *err set to the command and its last line of output.
 */
static int replay_net_run(const char *ns, char *const argv[], const char *input,
			  char **err)
{
	char out[REPLAY_NET_OUT_MAX] = "", cmd[256];
	int fd, status;
	pid_t pid;

	pid = replay_net_spawn(ns, argv, input, &fd);
	if (pid < 0)
		return rec_err(err, "%s: %s", argv[0], strerror(errno));
	while (replay_net_drain(fd, out, sizeof(out)) != 0)
		continue;
	close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return rec_err(err, "%s: %s", argv[0], strerror(errno));
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	replay_net_cmdline(cmd, sizeof(cmd), argv);
	if (*replay_net_last_line(out))
		return rec_err(err, "%s: %s", cmd, replay_net_last_line(out));
	return rec_err(err, "%s: exit status %d", cmd,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

#define REPLAY_RUN(ns, err, ...) \
	replay_net_run(ns, (char *const[]){ __VA_ARGS__, NULL }, NULL, err)

/* The module parameters' defaults, which deter.ko does not log. */
static const long long param_def[DETER_PARAMS] = DETER_PARAM_DEFAULTS;

/*
 * The namespace's TCP sysctls the log recorded at the start (those not at
 * a new namespace's value, and tcp_rmem, tcp_wmem), into h->sysctl. A vector's
 * elements come one per event: joined, once all are there. Host-wide
 * settings into h->global: rmem_max if logged; for each congestion
 * control the end used, its module's parameters, as logged or (deter.ko
 * logs only those that differ) at their defaults.
 */
static void replay_net_sysctl_collect(struct replay_host *h, const struct rec_log *log)
{
	int have[DETER_SYSCTL_MAX] = { 0 }, used[DETER_SYSCTL_MAX] = { 0 }, changed = 0;
	long long val[DETER_SYSCTL_MAX];
	const struct rec_sysctl *sc;
	unsigned int id;
	size_t k;

	/* Settings: those at the start, before any VALUE MISSING SETTINGS. */
	rec_log_cc_params(log, used);
	for (k = 0; k < log->nevs; k++) {
		const struct rec_ev *e = &log->evs[k];

		if (e->type == DETER_EV_VALUE && e->sub == DETER_V_MISSING &&
		    e->a == DETER_MISSING_SETTINGS)
			changed = 1;
		if (changed || e->type != DETER_EV_CONFIG || e->sub != DETER_CFG_SYSCTL)
			continue;
		id = e->a >> 32;
		val[id] = rec_sysctl_value(e->a);
		have[id] = 1;
	}
	if (have[DETER_SYSCTL_CORE_RMEM_MAX]) {
		h->global[DETER_SYSCTL_CORE_RMEM_MAX] = val[DETER_SYSCTL_CORE_RMEM_MAX];
		h->want[DETER_SYSCTL_CORE_RMEM_MAX] = 1;
	}
	for (id = DETER_PARAM_FIRST; id < DETER_SYSCTL_MAX; id++) {
		if (!used[id])
			continue;
		h->global[id] = have[id] ? val[id] : param_def[id - DETER_PARAM_FIRST];
		h->want[id] = 1;
	}
	h->nsysctl = 0;
	h->route[0] = '\0';
	for (id = 0; id < DETER_SYSCTL_MAX; id++) {
		sc = &rec_sysctls[id];
		if (have[id] && sc->route) {
			size_t len = strlen(h->route);

			snprintf(h->route + len, sizeof(h->route) - len, " %s%s %lld%s",
				 sc->name, id >= DETER_SYSCTL_ROUTE_CWND ? " lock" : "",
				 val[id], id == DETER_SYSCTL_ROUTE_RTO_MIN ? "ms" : "");
			continue;
		}
		if (!have[id] || sc->elem > 0 || sc->core || sc->module)
			continue;
		if (sc->elem < 0)
			snprintf(h->sysctl[h->nsysctl++], sizeof(h->sysctl[0]),
				 "net.ipv4.%s=%lld", sc->name, val[id]);
		else if (have[id + 1] && have[id + 2])	/* elements 0, 1, 2 */
			snprintf(h->sysctl[h->nsysctl++], sizeof(h->sysctl[0]),
				 "net.ipv4.%s=%lld %lld %lld", sc->name,
				 val[id], val[id + 1], val[id + 2]);
	}
}

/* The negotiated options' sysctls, as sysctl(8) takes them. */
struct replay_net_opts {
	char ts[40];		/* net.ipv4.tcp_timestamps=0|1 */
	char sack[40];		/* net.ipv4.tcp_sack=0|1 */
	char ws[48];		/* net.ipv4.tcp_window_scaling=0|1 */
	char ecn[32];		/* net.ipv4.tcp_ecn=0|1 */
};

/*
 * Host @h's sysctl(8) command line into @argv (DETER_SYSCTL_MAX + 7
 * slots): the recorded sysctls, then the negotiated options (set last:
 * the handshake must negotiate what it did), in one run.
 */
static void replay_net_sysctl_argv(const struct replay_host *h, struct replay_net_opts *o,
				   char **argv)
{
	int n = 0, i;

	snprintf(o->ts, sizeof(o->ts), "net.ipv4.tcp_timestamps=%d",
		 !!(h->flags & DETER_CONN_TS));
	snprintf(o->sack, sizeof(o->sack), "net.ipv4.tcp_sack=%d",
		 !!(h->flags & DETER_CONN_SACK));
	snprintf(o->ws, sizeof(o->ws), "net.ipv4.tcp_window_scaling=%d",
		 !!(h->flags & DETER_CONN_WSCALE));
	snprintf(o->ecn, sizeof(o->ecn), "net.ipv4.tcp_ecn=%d",
		 !!(h->flags & DETER_CONN_ECN));
	argv[n++] = "sysctl";
	argv[n++] = "-qw";
	for (i = 0; i < h->nsysctl; i++)
		argv[n++] = (char *)h->sysctl[i];
	argv[n++] = o->ts;
	argv[n++] = o->sack;
	argv[n++] = o->ws;
	argv[n++] = o->ecn;
	argv[n] = NULL;
}

/* The recorded offloads on device @dev of namespace @ns, if logged. */
static int replay_net_ethtool(const char *ns, const char *dev, uint64_t offload, char **err)
{
	if (!(offload & DETER_OFFLOAD_KNOWN))
		return 0;
	return REPLAY_RUN(ns, err, "ethtool", "-K", (char *)dev,
			  "tso", offload & DETER_OFFLOAD_TSO ? "on" : "off",
			  "gso", offload & DETER_OFFLOAD_GSO ? "on" : "off",
			  "gro", offload & DETER_OFFLOAD_GRO ? "on" : "off");
}

static int replay_net_host(struct replay_host *h, char **err)
{
	char addr[INET_ADDRSTRLEN], peer[INET_ADDRSTRLEN], batch[512], rules[512];
	char *argv[DETER_SYSCTL_MAX + 8], mtu[24] = "";
	struct replay_net_opts opts;

	replay_net_ip(addr, sizeof(addr), h->addr);
	replay_net_ip(peer, sizeof(peer), h->peer);
	/* The recorded route's MTU (logs before it was logged: veth's). */
	if (DETER_OFFLOAD_MTU(h->offload))
		snprintf(mtu, sizeof(mtu), " mtu %u", DETER_OFFLOAD_MTU(h->offload));
	snprintf(batch, sizeof(batch),
		 "link set lo up\n"
		 "addr add %s/32 dev %s\n"
		 "link set %s%s up\n"
		 "route add %s/32 dev %s%s\n",
		 addr, h->dev, h->dev, mtu, peer, h->dev, h->route);
	replay_net_sysctl_argv(h, &opts, argv);
	snprintf(rules, sizeof(rules),
		 "add table inet deter_replay; "
		 "add chain inet deter_replay ingress { type filter hook prerouting priority -300; }; "
		 "add rule inet deter_replay ingress meta l4proto tcp queue num %u; "
		 "add chain inet deter_replay ce { type filter hook prerouting priority -299; }; "
		 "add rule inet deter_replay ce meta mark 0x%08x ip ecn set ce meta mark set 0",
		 h->queue, CORR_CE_MARK);
	if (replay_net_run(h->ns, (char *const[]){ "ip", "-batch", "-", NULL }, batch, err) ||
	    replay_net_run(h->ns, argv, NULL, err) ||
	    REPLAY_RUN(h->ns, err, "nft", rules))
		return -1;
	return replay_net_ethtool(h->ns, h->dev, h->offload, err);
}

static int replay_net_loopback(uint32_t a)
{
	return (a >> 24) == 127;
}

/*
 * The one host of a connection recorded over lo: lo with the logged MTU
 * and offloads, the ends' addresses on it (127.0.0.0/8 is lo's already),
 * the shared sysctls, and each end's arrivals (by destination address and
 * port: the two ends' differ) to its own queue. TCP to neither end is
 * dropped, never delivered uncorrected.
 */
static int replay_net_local_host(struct replay_net *net, char **err)
{
	struct replay_host *a = &net->host[0], *b = &net->host[1];
	char ipa[INET_ADDRSTRLEN], ipb[INET_ADDRSTRLEN], batch[512], rules[768];
	char *argv[DETER_SYSCTL_MAX + 8];
	struct replay_net_opts opts;
	size_t len;

	replay_net_ip(ipa, sizeof(ipa), a->addr);
	replay_net_ip(ipb, sizeof(ipb), b->addr);
	len = snprintf(batch, sizeof(batch), "link set lo up\n");
	/* A route's MTU stops at 65535: that is lo's own 65536, left as it is. */
	if (DETER_OFFLOAD_MTU(a->offload) && DETER_OFFLOAD_MTU(a->offload) < 65535)
		len += snprintf(batch + len, sizeof(batch) - len, "link set lo mtu %u\n",
				DETER_OFFLOAD_MTU(a->offload));
	if (!replay_net_loopback(a->addr))
		len += snprintf(batch + len, sizeof(batch) - len, "addr add %s/32 dev lo\n", ipa);
	if (!replay_net_loopback(b->addr) && b->addr != a->addr)
		snprintf(batch + len, sizeof(batch) - len, "addr add %s/32 dev lo\n", ipb);
	replay_net_sysctl_argv(a, &opts, argv);
	snprintf(rules, sizeof(rules),
		 "add table inet deter_replay; "
		 "add chain inet deter_replay ingress { type filter hook prerouting priority -300; }; "
		 "add rule inet deter_replay ingress ip daddr %s tcp dport %u queue num %u; "
		 "add rule inet deter_replay ingress ip daddr %s tcp dport %u queue num %u; "
		 "add rule inet deter_replay ingress meta l4proto tcp drop; "
		 "add chain inet deter_replay ce { type filter hook prerouting priority -299; }; "
		 "add rule inet deter_replay ce meta mark 0x%08x ip ecn set ce meta mark set 0",
		 ipa, a->port, a->queue, ipb, b->port, b->queue, CORR_CE_MARK);
	if (replay_net_run(a->ns, (char *const[]){ "ip", "-batch", "-", NULL }, batch, err) ||
	    replay_net_run(a->ns, argv, NULL, err) ||
	    (!net->direct && REPLAY_RUN(a->ns, err, "nft", rules)))
		return -1;
	return replay_net_ethtool(a->ns, "lo", a->offload, err);
}

/*
 * Whether the logs' two ends can share one host (replay_net_create()
 * decided they were on one): the settings of their namespace and of lo
 * that the logs give must be the same. Return: 0, or -1 with *err set.
 */
static int replay_net_local_check(const struct replay_net *net, char **err)
{
	const struct replay_host *a = &net->host[0], *b = &net->host[1];
	const uint64_t lo_mask = DETER_OFFLOAD_TSO | DETER_OFFLOAD_GSO | DETER_OFFLOAD_GRO |
				 DETER_OFFLOAD_KNOWN | 0xffffffffULL << 32;
	char ip[INET_ADDRSTRLEN];
	int i;

	replay_net_ip(ip, sizeof(ip), a->addr);
	if (a->addr == b->addr && a->port == b->port)
		return rec_err(err, "%s:%u: a connection to itself: cannot replay", ip, a->port);
	if ((a->offload & lo_mask) != (b->offload & lo_mask))
		return rec_err(err, "%s: lo's offloads or MTU: active end 0x%llx, passive 0x%llx",
			       REPLAY_NET_ONE_HOST, (unsigned long long)(a->offload & lo_mask),
			       (unsigned long long)(b->offload & lo_mask));
	for (i = 0; i < a->nsysctl || i < b->nsysctl; i++)
		if (i >= a->nsysctl || i >= b->nsysctl || strcmp(a->sysctl[i], b->sysctl[i]))
			return rec_err(err, "%s: sysctls: active end %s, passive %s",
				       REPLAY_NET_ONE_HOST,
				       i < a->nsysctl ? a->sysctl[i] : "default",
				       i < b->nsysctl ? b->sysctl[i] : "default");
	if ((a->flags ^ b->flags) & ~DETER_CONN_ACTIVE)
		return rec_err(err, "%s: negotiated options: active end 0x%x, passive 0x%x",
			       REPLAY_NET_ONE_HOST, a->flags & ~DETER_CONN_ACTIVE,
			       b->flags & ~DETER_CONN_ACTIVE);
	if (a->route[0] || b->route[0])
		return rec_err(err, "%s: route metrics on the local route (%s): not replayed",
			       REPLAY_NET_ONE_HOST, a->route[0] ? a->route + 1 : b->route + 1);
	return 0;
}

#define REPLAY_NET_HOST_LOCK "/run/deter-replay-host.lock"

/* Read or write host-wide setting @id. */
static int replay_net_global_rw(unsigned int id, long long *val, int write, char **err)
{
	const struct rec_sysctl *sc = &rec_sysctls[id];
	char path[128], text[32];
	FILE *f;
	int ok;

	rec_sysctl_path(sc, path, sizeof(path));
	f = fopen(path, write ? "w" : "r");
	if (!f && write && sc->module && errno == EACCES)
		return rec_err(err, "%s: %s (read-only: boot with %s.%s=%lld or load with %s=%lld)",
			       path, strerror(errno), sc->module, sc->name, *val, sc->name, *val);
	if (!f)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (write)
		ok = fprintf(f, "%lld\n", *val) > 0;
	else if (sc->module)	/* a bool's Y or N too */
		ok = fgets(text, sizeof(text), f) && !rec_param_parse(text, val);
	else
		ok = fscanf(f, "%lld", val) == 1;
	if ((fclose(f) || !ok) && write)
		return rec_err(err, "%s: cannot write %lld: %s", path, *val, strerror(errno));
	if (!ok)
		return rec_err(err, "%s: cannot read a number", path);
	return 0;
}

/* Open and flock() REPLAY_NET_HOST_LOCK into net->lock; -1 if either fails. */
static int replay_net_host_lock(struct replay_net *net)
{
	net->lock = open(REPLAY_NET_HOST_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return net->lock < 0 || flock(net->lock, LOCK_EX | LOCK_NB) ? -1 : 0;
}

/*
 * Settings that are the host's, not a namespace's: net.core.rmem_max,
 * which sets the window scale TCP offers, and the congestion controls'
 * module parameters. One value for both replayed ends, which share this
 * kernel: two ends that need different ones are refused. Each is set to
 * the value the logs want until replay_net_restore_host(), under an
 * exclusive flock() on REPLAY_NET_HOST_LOCK: a replay side by side that
 * needs another value is refused, never given the first one's. (One that
 * finds the values it needs changes nothing; if the changer puts the
 * host's back before its handshake, the replay's checks say so.)
 */
static int replay_net_globals(struct replay_net *net, char **err)
{
	const struct replay_host *a = &net->host[0], *b = &net->host[1];
	const struct rec_sysctl *sc;
	long long want, cur;
	char *why = NULL;
	unsigned int id;

	for (id = 0; id < DETER_SYSCTL_MAX; id++) {
		if (!a->want[id] && !b->want[id])
			continue;
		sc = &rec_sysctls[id];
		if (a->want[id] && b->want[id] && a->global[id] != b->global[id])
			return rec_err(err,
				       "%s.%s: active end %lld, passive %lld; one kernel replays both",
				       rec_sysctl_dir(sc), sc->name, a->global[id], b->global[id]);
		want = a->want[id] ? a->global[id] : b->global[id];
		if (sc->module) {
			char path[128];

			/*
			 * Not loaded: setting TCP_CONGESTION loads it, at its
			 * defaults; for others, load it now.
			 */
			rec_sysctl_path(sc, path, sizeof(path));
			if (access(path, F_OK) && want == param_def[id - DETER_PARAM_FIRST])
				continue;
			if (access(path, F_OK) &&
			    REPLAY_RUN(NULL, &why, "modprobe", "-q", (char *)sc->module)) {
				rec_err(err, "%s.%s: the logs want %lld, and %s is not loaded: %s",
					sc->module, sc->name, want, sc->module,
					why ? why : "modprobe failed");
				free(why);
				return -1;
			}
		}
		if (replay_net_global_rw(id, &cur, 0, err))
			return -1;
		if (cur == want)
			continue;
		if (net->lock < 0 && replay_net_host_lock(net)) {
			if (net->lock < 0)
				return rec_err(err, "%s: %s", REPLAY_NET_HOST_LOCK,
					       strerror(errno));
			close(net->lock);
			net->lock = -1;
			return rec_err(err, "%s.%s is %lld, the logs want %lld: a replay holds %s",
				       rec_sysctl_dir(sc), sc->name, cur, want,
				       REPLAY_NET_HOST_LOCK);
		}
		if (replay_net_global_rw(id, &want, 1, err))
			return -1;
		net->set[net->nset].id = id;
		net->set[net->nset++].saved = cur;
	}
	return 0;
}

/**
 * replay_net_restore_host() - put back the host-wide settings
 *	replay_net_create() changed (net.core.rmem_max, module parameters)
 * @net: as replay_net_create() left it
 * @err: set on failure (the first one; the others are still put back)
 *
 * Return: 0, or -1 with *err set.
 */
int replay_net_restore_host(struct replay_net *net, char **err)
{
	int r = 0;

	while (net->nset > 0) {
		struct replay_global *g = &net->set[--net->nset];

		if (replay_net_global_rw(g->id, &g->saved, 1, r ? NULL : err))
			r = -1;
	}
	if (net->lock >= 0)
		close(net->lock);	/* and its lock */
	net->lock = -1;
	return r;
}

/* The first offload settings a log recorded; 0 if it has none. */
static uint64_t replay_net_offload(const struct rec_log *log)
{
	size_t i;

	for (i = 0; i < log->nevs; i++)
		if (log->evs[i].type == DETER_EV_CONFIG &&
		    log->evs[i].sub == DETER_CFG_OFFLOAD)
			return log->evs[i].a;
	return 0;
}

static int replay_net_addr_ok(uint32_t a, int local)
{
	return a && (local || !replay_net_loopback(a)) && (a >> 28) != 0xe &&
	       a != 0xffffffff;
}

/**
 * replay_net_create() - build the testbed: two hosts, or one for a
 *	connection over lo
 * @net: filled; destroy with replay_net_destroy() even on failure
 * @log: the logs of the active end [0] and the passive end [1]
 * @keep_host: leave host-wide settings (net.core.rmem_max, congestion
 *	controls' module parameters) as they are
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set.
 */
int replay_net_create(struct replay_net *net, const struct rec_log *log[2],
		      int keep_host, char **err)
{
	const struct deter_log_header *hdr[2] = { &log[0]->hdr, &log[1]->hdr };
	char ip[INET_ADDRSTRLEN], batch[512];
	int i, corrected = 0;

	memset(net, 0, sizeof(*net));
	net->lock = -1;
	for (i = 0; i < 2; i++) {
		struct replay_host *h = &net->host[i];

		h->name[0] = i ? 'b' : 'a';
		h->addr = hdr[i]->saddr;
		h->peer = hdr[i]->daddr;
		h->port = hdr[i]->sport;
		h->flags = hdr[i]->flags;
		h->offload = replay_net_offload(log[i]);
		replay_net_sysctl_collect(h, log[i]);
		h->queue = REPLAY_NET_QUEUE + i;
		net->local |= !!(h->offload & DETER_OFFLOAD_LOOPBACK) ||
			      replay_net_loopback(h->addr) || h->addr == h->peer;
		corrected |= hdr[i]->drops || hdr[i]->reorders || hdr[i]->ce_marks;
	}
	net->direct = net->local && !corrected;
	for (i = 0; i < 2; i++) {
		struct replay_host *h = &net->host[i];

		replay_net_ip(ip, sizeof(ip), h->addr);
		if (!replay_net_addr_ok(h->addr, net->local))
			return rec_err(err, "address %s: not replayable on %s", ip,
				       net->local ? "lo" : "veth");
		snprintf(h->ns, sizeof(h->ns), "dtr-%d-%s", (int)getpid(),
			 net->local ? "l" : h->name);
		snprintf(h->dev, sizeof(h->dev), "%s%s", net->local ? "lo" : "dtr-",
			 net->local ? "" : h->name);
		if (net->local)
			snprintf(h->filter, sizeof(h->filter),
				 "tcp and src host %s and src port %u", ip, h->port);
		else
			snprintf(h->filter, sizeof(h->filter), "tcp");
	}
	if (net->local && replay_net_local_check(net, err))
		return -1;
	if (!keep_host && replay_net_globals(net, err))
		return -1;
	if (net->local) {
		net->host[0].made = 1;	/* the one namespace, deleted once */
		if (REPLAY_RUN(NULL, err, "ip", "netns", "add", net->host[0].ns))
			return -1;
		return replay_net_local_host(net, err);
	}
	/* Both namespaces and the veth pair, in one ip(8) run. */
	snprintf(batch, sizeof(batch),
		 "netns add %s\n"
		 "netns add %s\n"
		 "link add %s txqueuelen %s netns %s type veth peer name %s txqueuelen %s netns %s\n",
		 net->host[0].ns, net->host[1].ns,
		 net->host[0].dev, REPLAY_NET_TXQUEUELEN, net->host[0].ns,
		 net->host[1].dev, REPLAY_NET_TXQUEUELEN, net->host[1].ns);
	/* Deleted if there, whatever the batch did. */
	net->host[0].made = 1;
	net->host[1].made = 1;
	if (replay_net_run(NULL, (char *const[]){ "ip", "-batch", "-", NULL }, batch, err))
		return -1;
	for (i = 0; i < 2; i++)
		if (replay_net_host(&net->host[i], err))
			return -1;
	return 0;
}

/**
 * replay_net_destroy() - delete the testbed's namespaces, and put back the
 *	host-wide settings replay_net_create() changed
 * @net: as replay_net_create() left it
 * @err: set on failure (the first one; the other host is still deleted)
 *
 * Return: 0, or -1 with *err set.
 */
int replay_net_destroy(struct replay_net *net, char **err)
{
	char batch[128] = "", path[128];
	size_t len = 0;
	int i, r;

	r = replay_net_restore_host(net, err);
	for (i = 0; i < 2; i++) {
		if (!net->host[i].made)
			continue;
		net->host[i].made = 0;
		snprintf(path, sizeof(path), "/run/netns/%s", net->host[i].ns);
		if (access(path, F_OK))		/* never made */
			continue;
		len += snprintf(batch + len, sizeof(batch) - len, "netns del %s\n",
				net->host[i].ns);
	}
	if (!len)
		return r;
	if (replay_net_run(NULL, (char *const[]){ "ip", "-force", "-batch", "-", NULL },
			   batch, r ? NULL : err))
		return -1;
	return r;
}

/**
 * replay_net_enter() - move the calling thread into a testbed namespace
 * @ns: the namespace's name (under /run/netns)
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set.
 */
int replay_net_enter(const char *ns, char **err)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (setns(fd, CLONE_NEWNET)) {
		int e = errno;

		close(fd);
		return rec_err(err, "setns %s: %s", ns, strerror(e));
	}
	close(fd);
	return 0;
}

static long long replay_net_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/**
 * replay_proc_start() - start a helper and wait until it is ready
 * @p: filled
 * @what: names it in messages
 * @ns: the namespace it runs in (NULL: this one)
 * @argv: its command line
 * @ready: text its output prints once ready, or NULL not to wait
 * @timeout_ms: how long to wait for @ready
 * @err: set on failure (it exited, or never got ready: it is then killed)
 *
 * Return: 0, or -1 with *err set.
 */
int replay_proc_start(struct replay_proc *p, const char *what, const char *ns,
		      char *const argv[], const char *ready, int timeout_ms,
		      char **err)
{
	char out[REPLAY_NET_OUT_MAX] = "";
	long long end = replay_net_now_ms() + timeout_ms;
	struct pollfd pfd;
	int status;

	memset(p, 0, sizeof(*p));
	snprintf(p->what, sizeof(p->what), "%s", what);
	p->pid = replay_net_spawn(ns, argv, NULL, &p->out);
	if (p->pid < 0) {
		p->pid = 0;
		return rec_err(err, "%s: %s", what, strerror(errno));
	}
	pfd.fd = p->out;
	pfd.events = POLLIN;
	while (ready && !strstr(out, ready)) {
		long long left = end - replay_net_now_ms();

		if (left <= 0) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, NULL, 0);
			close(p->out);
			p->pid = 0;
			return rec_err(err, "%s: not ready after %d s%s%s", what,
				       timeout_ms / 1000, *out ? ": " : "",
				       replay_net_last_line(out));
		}
		if (poll(&pfd, 1, left) > 0 && !replay_net_drain(p->out, out, sizeof(out))) {
			waitpid(p->pid, &status, 0);
			close(p->out);
			p->pid = 0;
			return rec_err(err, "%s: exited: %s", what,
				       *replay_net_last_line(out) ?
				       replay_net_last_line(out) : "no output");
		}
	}
	fcntl(p->out, F_SETFL, O_NONBLOCK);
	return 0;
}

/**
 * replay_proc_stop() - signal a helper and wait for it to exit cleanly
 * @p: started by replay_proc_start(); may be stopped already
 * @sig: the signal that stops it (SIGINT for tcpdump and trace-cmd)
 * @timeout_ms: how long to wait before killing it
 * @err: set on failure (killed, or exited non-zero)
 *
 * Return: 0, or -1 with *err set.
 */
int replay_proc_stop(struct replay_proc *p, int sig, int timeout_ms, char **err)
{
	char out[REPLAY_NET_OUT_MAX] = "";
	long long end = replay_net_now_ms() + timeout_ms;
	int status, ret = 0;
	pid_t r;

	if (!p->pid)
		return 0;
	kill(p->pid, sig);
	for (;;) {
		while (replay_net_drain(p->out, out, sizeof(out)) > 0)
			continue;
		r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid)
			break;
		if (replay_net_now_ms() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &status, 0);
			ret = rec_err(err, "%s: did not stop within %d s, killed",
				      p->what, timeout_ms / 1000);
			goto out;
		}
		usleep(20000);
	}
	while (replay_net_drain(p->out, out, sizeof(out)) > 0)
		continue;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ret = rec_err(err, "%s: %s", p->what,
			      *replay_net_last_line(out) ? replay_net_last_line(out) :
			      "exited with an error");
out:
	close(p->out);
	p->pid = 0;
	return ret;
}
