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
 * An unreadable log is said on stderr and left out; the exit status is 1
 * then, 0 otherwise.
 */
#include "rec_ls.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "deter_abi.h"
#include "deter_err.h"
#include "rec_cli.h"
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
	if (!json)
		printf("%-16s  %-21s  %-21s  %-19s  %9s  %10s  %10s  %7s  %3s  %5s  %3s  %4s  %s\n",
		       "ID", "LOCAL", "REMOTE", "START (UTC)", "DUR_MS", "TX_BYTES",
		       "RX_BYTES", "RETRANS", "RTO", "DROPS", "CE", "ZWND", "STATUS");
	for (i = 0; i < n; i++) {
		const struct deter_log_header *h = &e[i].h;

		if (incomplete && !(h->status & DETER_LOG_INCOMPLETE))
			continue;
		if (flagged && !rec_log_flagged(h))
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
			       h->total_retrans, h->total_rto, h->drops, h->reorders);
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
			       h->total_rto, h->drops, h->ce_marks, h->zero_wnd, st);
		}
	}
	rec_entries_free(e, n);
	return bad;
}
