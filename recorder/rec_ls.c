// SPDX-License-Identifier: GPL-2.0
/*
 * deter ls: one line (or JSON object) per log of a directory, oldest
 * first, from the logs' headers alone (through the index where it is
 * current: rec_dir_scan()), filtered by what the headers say.
 *
 *   --open        part files too: connections being recorded, as far as
 *                 deter record has written them (status "open")
 *   --flagged     something went wrong on the wire or in the log
 *                 (rec_log_flagged()): the connections worth a look
 *
 * A log's drops are those its end counted, and, when the other end's log
 * is in the directory too, the packets lost at the edges of the peer's
 * IP ID series that only the pair shows (log/rec_edge.c): logs are
 * paired by sorting them on their connection's key, both ends alike.
 *
 * An unreadable log is said on stderr and left out; the exit status is 1
 * then, 0 otherwise.
 */
#include "rec_ls.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "deter_abi.h"
#include "deter_err.h"
#include "rec_cli.h"
#include "rec_edge.h"
#include "rec_index.h"
#include "rec_log.h"

void rec_usage_ls(FILE *f)
{
	fprintf(f,
		"usage: deter ls [-d DIR] [--json] [--flagged] [--incomplete] [--open] [--port P]\n"
		"\n"
		"List recorded connections, one per line, oldest first.\n"
		"\n"
		"  -d, --dir DIR    log directory (default ./%s)\n"
		"  -j, --json       one JSON object per line\n"
		"  -f, --flagged    only connections with retransmissions, RTOs, drops,\n"
		"                   CE marks, zero windows, an incomplete log, or settings\n"
		"                   TCP reads changed during it (settings-changed)\n"
		"  -i, --incomplete only incomplete logs\n"
		"  -o, --open       also connections being recorded: what deter record\n"
		"                   has written of them so far (status \"open\")\n"
		"  -p, --port P     only connections with local or remote port P\n",
		REC_DEFAULT_DIR);
}

/* A log's connection, the same from both ends: the lower end first. */
struct rec_ls_key {
	uint64_t lo, hi;		/* address << 16 | port of each end */
	uint32_t isn_lo, isn_hi;	/* each end's ISN */
	size_t i;			/* the entry */
};

static int rec_ls_key_cmp(const void *a, const void *b)
{
	const struct rec_ls_key *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->isn_lo != y->isn_lo)
		return x->isn_lo < y->isn_lo ? -1 : 1;
	if (x->isn_hi != y->isn_hi)
		return x->isn_hi < y->isn_hi ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * The drops only the pair of logs shows, per entry, in @edge (n zeroed
 * entries): each entry is paired with a neighbour in key order. Without
 * memory for the keys no pairs are made: the listing stays what each log
 * says alone.
 */
static void rec_ls_edges(const struct rec_entry *e, size_t n, uint32_t *edge)
{
	struct rec_ls_key *k = calloc(n ? n : 1, sizeof(*k));
	size_t i;

	if (!k)
		return;
	for (i = 0; i < n; i++) {
		const struct deter_log_header *h = &e[i].h;
		uint64_t me = (uint64_t)h->saddr << 16 | h->sport;
		uint64_t peer = (uint64_t)h->daddr << 16 | h->dport;
		int low = me < peer;

		k[i].lo = low ? me : peer;
		k[i].hi = low ? peer : me;
		k[i].isn_lo = low ? h->iss : h->irs;
		k[i].isn_hi = low ? h->irs : h->iss;
		k[i].i = i;
	}
	qsort(k, n, sizeof(*k), rec_ls_key_cmp);
	for (i = 0; i + 1 < n; i++) {
		const struct deter_log_header *a = &e[k[i].i].h, *b = &e[k[i + 1].i].h;

		if (!rec_edge_pair(a, b))
			continue;
		edge[k[i].i] = rec_edge_head(a, b) + rec_edge_tail(a, b);
		edge[k[i + 1].i] = rec_edge_head(b, a) + rec_edge_tail(b, a);
		i++;
	}
	free(k);
}

int rec_cmd_ls(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "flagged", no_argument, NULL, 'f' },
		{ "incomplete", no_argument, NULL, 'i' },
		{ "open", no_argument, NULL, 'o' },
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR;
	int json = 0, flagged = 0, incomplete = 0, open = 0, bad, c;
	unsigned long long port = 0;
	char src[32], dst[32], start[32], st[96];
	struct rec_entry *e;
	uint32_t *edge;
	size_t n, i;

	while ((c = deter_getopt(argc, argv, "d:jfiop:h", opts)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'f':
			flagged = 1;
			break;
		case 'i':
			incomplete = 1;
			break;
		case 'o':
			open = 1;
			break;
		case 'p':
			if (rec_cli_num(optarg, 65535, &port) || !port)
				return deter_usage_fail("--port: '%s' is not a port", optarg);
			break;
		case 'h':
			rec_usage_ls(stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc)
		return deter_usage_fail("unexpected argument '%s'", argv[optind]);
	if (rec_cli_scan(dir, open ? REC_SCAN_PARTS : 0, &e, &n, &bad))
		return 1;
	edge = calloc(n ? n : 1, sizeof(*edge));
	if (edge)
		rec_ls_edges(e, n, edge);
	if (!json)
		printf("%-16s  %-21s  %-21s  %-19s  %9s  %10s  %10s  %7s  %3s  %5s  %3s  %4s  %s\n",
		       "ID", "LOCAL", "REMOTE", "START (UTC)", "DUR_MS", "TX_BYTES",
		       "RX_BYTES", "RETRANS", "RTO", "DROPS", "CE", "ZWND", "STATUS");
	for (i = 0; i < n; i++) {
		const struct deter_log_header *h = &e[i].h;
		uint32_t drops = h->drops + (edge ? edge[i] : 0);

		if (incomplete && !(h->status & DETER_LOG_INCOMPLETE))
			continue;
		if (flagged && !rec_log_flagged(h) && drops == h->drops)
			continue;
		if (port && h->sport != port && h->dport != port)
			continue;
		rec_cli_addr(src, sizeof(src), h->saddr, h->sport);
		rec_cli_addr(dst, sizeof(dst), h->daddr, h->dport);
		rec_cli_time(start, sizeof(start), h->real_ns);
		rec_log_status_str(h->status, st, sizeof(st));
		if (rec_log_is_part(e[i].path))
			snprintf(st, sizeof(st), "open");
		if (json) {
			printf("{\"id\":\"%016llx\",\"local\":\"%s\",\"remote\":\"%s\",",
			       (unsigned long long)h->conn, src, dst);
			printf("\"start_ns\":%llu,\"duration_ns\":%llu,",
			       (unsigned long long)h->real_ns, (unsigned long long)h->duration_ns);
			printf("\"bytes_sent\":%llu,\"bytes_received\":%llu,",
			       (unsigned long long)h->bytes_acked,
			       (unsigned long long)h->bytes_received);
			printf("\"retransmissions\":%u,\"rtos\":%u,\"drops\":%u,\"reorders\":%u,",
			       h->total_retrans, h->total_rto, drops, h->reorders);
			printf("\"ce_marks\":%u,\"zero_windows\":%u,",
			       h->ce_marks, h->zero_wnd);
			printf("\"incomplete\":%s,\"status\":\"%s\",",
			       h->status & DETER_LOG_INCOMPLETE ? "true" : "false", st);
			printf("\"host\":\"%s\",\"cc\":\"%s\",\"file\":\"%s\"}\n",
			       h->host, h->cc, e[i].path);
		} else {
			printf("%016llx  %-21s  %-21s  %-19s  %9.3f  ",
			       (unsigned long long)h->conn, src, dst, start,
			       h->duration_ns / 1e6);
			printf("%10llu  %10llu  %7u  %3u  %5u  %3u  %4u  %s\n",
			       (unsigned long long)h->bytes_acked,
			       (unsigned long long)h->bytes_received, h->total_retrans,
			       h->total_rto, drops, h->ce_marks, h->zero_wnd, st);
		}
	}
	free(edge);
	rec_entries_free(e, n);
	return bad;
}
