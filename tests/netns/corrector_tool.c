// SPDX-License-Identifier: GPL-2.0
/*
 * corrector_tool: run the replay packet corrector on a hand-written plan,
 * for tests/netns/corrector.sh.
 *
 *   corrector_tool --queue N --plan FILE
 *
 * FILE lists flows and, under each, its original arrivals in order:
 *
 *   # comment
 *   flow 10.0.1.1:4000 10.0.2.1:5201     peer -> this host
 *   65530                                an arrival: packet index
 *   65536 ce                             one that arrived CE-marked
 *
 * Runs until SIGTERM or SIGINT, then prints one line on stdout:
 *   passed N dropped N marked N held_max N foreign N timeouts N
 * Exit 0 ok, 1 failure, 2 usage.
 */
#include "corrector.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by the signal handler; corr_run() reads it through a volatile pointer. */
static sig_atomic_t tool_stop;

struct tool_plan {
	struct corr_flow *flows;
	size_t nflows;
	struct corr_arrival **arrs;	/* per flow, owned */
	size_t *caps;
};

static void __attribute__((noreturn, format(printf, 2, 3)))
tool_die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "corrector_tool: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void tool_on_signal(int sig)
{
	(void)sig;
	tool_stop = 1;
}

static void *tool_realloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		tool_die(1, "out of memory");
	return p;
}

/* "A.B.C.D:PORT" to host byte order. */
static int tool_endpoint(const char *s, uint32_t *addr, uint16_t *port)
{
	char buf[64], *colon, *end;
	struct in_addr a;
	unsigned long p;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p > 65535)
		return -1;
	*addr = ntohl(a.s_addr);
	*port = (uint16_t)p;
	return 0;
}

static void tool_plan_read(const char *path, struct tool_plan *pl)
{
	char line[256], a[64], b[64], ce[8], extra[8];
	unsigned long long idx;
	unsigned int lineno = 0;
	FILE *f = fopen(path, "r");
	size_t i;

	if (!f)
		tool_die(1, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct corr_flow *fl;
		size_t n;
		int k;

		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (sscanf(line, "flow %63s %63s %7s", a, b, extra) == 2) {
			pl->flows = tool_realloc(pl->flows, (pl->nflows + 1) * sizeof(*pl->flows));
			pl->arrs = tool_realloc(pl->arrs, (pl->nflows + 1) * sizeof(*pl->arrs));
			pl->caps = tool_realloc(pl->caps, (pl->nflows + 1) * sizeof(*pl->caps));
			fl = &pl->flows[pl->nflows];
			memset(fl, 0, sizeof(*fl));
			pl->arrs[pl->nflows] = NULL;
			pl->caps[pl->nflows] = 0;
			if (tool_endpoint(a, &fl->saddr, &fl->sport) ||
			    tool_endpoint(b, &fl->daddr, &fl->dport))
				tool_die(1, "%s:%u: bad endpoint in '%s'",
					 path, lineno, strtok(line, "\n"));
			pl->nflows++;
			continue;
		}
		k = sscanf(line, "%llu %7s %7s", &idx, ce, extra);
		if (k < 1 || k > 2 || (k == 2 && strcmp(ce, "ce")))
			tool_die(1, "%s:%u: expected 'flow SRC:PORT DST:PORT' or 'INDEX [ce]'",
				 path, lineno);
		if (!pl->nflows)
			tool_die(1, "%s:%u: an arrival before any flow", path, lineno);
		i = pl->nflows - 1;
		fl = &pl->flows[i];
		n = fl->narr;
		if (n == pl->caps[i]) {
			pl->caps[i] = pl->caps[i] ? 2 * pl->caps[i] : 64;
			pl->arrs[i] = tool_realloc(pl->arrs[i], pl->caps[i] * sizeof(**pl->arrs));
		}
		pl->arrs[i][n].idx = idx;
		pl->arrs[i][n].ce = k == 2;
		fl->narr = n + 1;
	}
	fclose(f);
	for (i = 0; i < pl->nflows; i++)
		pl->flows[i].arr = pl->arrs[i];
}

static void tool_usage(FILE *out)
{
	fprintf(out, "usage: corrector_tool --queue N --plan FILE\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "plan", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool_plan pl = { 0 };
	struct corr_stats st;
	struct sigaction sa;
	const char *plan = NULL;
	long queue = -1;
	char *err, *end;
	size_t i;
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'q':
			errno = 0;
			queue = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || queue < 0 || queue > 65535)
				tool_die(2, "--queue: '%s' is not a queue number", optarg);
			break;
		case 'p':
			plan = optarg;
			break;
		case 'h':
			tool_usage(stdout);
			return 0;
		default:
			tool_usage(stderr);
			return 2;
		}
	}
	if (queue < 0 || !plan || optind != argc) {
		tool_usage(stderr);
		return 2;
	}
	tool_plan_read(plan, &pl);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tool_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (corr_run((uint16_t)queue, pl.flows, pl.nflows, &tool_stop, &st, &err)) {
		fprintf(stderr, "corrector_tool: %s\n", err);
		free(err);
		return 1;
	}
	printf("passed %" PRIu64 " dropped %" PRIu64 " marked %" PRIu64
	       " held_max %" PRIu64 " foreign %" PRIu64 " timeouts %" PRIu64 "\n",
	       st.passed, st.dropped, st.marked, st.held_max, st.foreign,
	       st.timeouts);
	for (i = 0; i < pl.nflows; i++)
		free(pl.arrs[i]);
	free(pl.arrs);
	free(pl.caps);
	free(pl.flows);
	return 0;
}
