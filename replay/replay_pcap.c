// SPDX-License-Identifier: GPL-2.0
/*
 * A replay's captures, re-timed to the original run (DETER §4): each
 * packet a host sent gets the send time its log infers for it, from the
 * rate samples (Algorithm 1: the sample before it, plus the sampled gap
 * per packet since); each packet it received gets its sender's inferred
 * send time plus the one-way delay the capture implies (the smallest
 * gap between a packet's send time and the next packet the receiver
 * sent after it arrived). A passive end's SYN-ACK gets its recorded
 * SYN-ACK clock. Packets of no recorded end keep their capture time.
 *
 * The files are tcpdump's (pcap, Ethernet link type, either byte order,
 * microsecond or nanosecond timestamps) and are rewritten in place.
 */

#include "replay_pcap.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deter_abi.h"
#include "corrector.h"
#include "rec_log.h"

#define PCAP_MAGIC_US	0xa1b2c3d4u
#define PCAP_MAGIC_NS	0xa1b23c4du
#define PCAP_LINK_ETH	1

/* One end's send-time model, from its log. */
struct pcap_end {
	uint32_t addr;			/* host order */
	const struct rec_ev **smp;	/* SAMPLE events, by index */
	size_t nsmp;
	int64_t real_off;		/* realtime - monotonic, ns */
	uint64_t synack_ns;		/* first SYN-ACK clock, 0 if none */
	uint64_t ref;			/* last extended IP ID seen */
};

static uint32_t pcap_u32(const uint8_t *p, int swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static void pcap_put_u32(uint8_t *p, uint32_t v, int swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

static int pcap_end_init(struct pcap_end *pe, const struct rec_log *log)
{
	size_t i;

	memset(pe, 0, sizeof(*pe));
	pe->addr = log->hdr.saddr;
	pe->real_off = (int64_t)(log->hdr.real_ns - log->hdr.mono_ns);
	pe->smp = calloc(log->nevs ? log->nevs : 1, sizeof(*pe->smp));
	if (!pe->smp)
		return -1;
	for (i = 0; i < log->nevs; i++) {
		const struct rec_ev *e = &log->evs[i];

		if (e->type == DETER_EV_SAMPLE)
			pe->smp[pe->nsmp++] = e;
		else if (e->type == DETER_EV_VALUE && e->sub == DETER_V_SYNACK_CLOCK &&
			 !pe->synack_ns)
			pe->synack_ns = e->a;
	}
	/* Indexes extend from the first sample's: the recorder's numbering. */
	pe->ref = pe->nsmp ? pe->smp[0]->a : 0;
	return 0;
}

/* Inferred send time of packet @idx, realtime ns; 0 if the log has no samples. */
static uint64_t pcap_send_ns(const struct pcap_end *pe, uint64_t idx)
{
	const struct rec_ev *s;
	size_t lo = 0, hi = pe->nsmp;

	if (!pe->nsmp)
		return 0;
	while (hi - lo > 1) {		/* last sample at or before idx */
		size_t mid = (lo + hi) / 2;

		if (pe->smp[mid]->a <= idx)
			lo = mid;
		else
			hi = mid;
	}
	s = pe->smp[lo];
	if (s->a > idx)
		return s->b + pe->real_off;
	return s->b + (idx - s->a) * s->c / 1024 + pe->real_off;
}

struct pcap_pkt {
	long off;			/* file offset of the record header */
	uint64_t ns;			/* new time, 0 to keep */
	int from_self;			/* 1: sent by the capturing host */
};

/**
 * replay_pcap_retime() - give a replay capture the original's times
 * @path: the capture of one host, rewritten in place
 * @self: that host's log
 * @peer: the other end's log
 * @err: set on failure
 *
 * Return: 0, or -1 with *err set (naming @path and the offset).
 */
int replay_pcap_retime(const char *path, const struct rec_log *self,
		       const struct rec_log *peer, char **err)
{
	struct pcap_end ends[2];
	struct pcap_pkt *pk = NULL;
	size_t npk = 0, cap = 0, i;
	uint8_t gh[24], rh[16], hdr[128];
	int64_t delay = -1;
	uint64_t last_rx = 0;
	int swap, nano, ret = -1;
	FILE *f;

	f = fopen(path, "r+b");
	if (!f)
		return rec_err(err, "%s: %s", path, strerror(errno));
	if (pcap_end_init(&ends[0], self) || pcap_end_init(&ends[1], peer)) {
		rec_err(err, "out of memory");
		goto out;
	}
	if (fread(gh, sizeof(gh), 1, f) != 1) {
		rec_err(err, "%s: offset 0: not a pcap file (too short)", path);
		goto out;
	}
	swap = pcap_u32(gh, 0) == __builtin_bswap32(PCAP_MAGIC_US) ||
	       pcap_u32(gh, 0) == __builtin_bswap32(PCAP_MAGIC_NS);
	nano = pcap_u32(gh, swap) == PCAP_MAGIC_NS;
	if (pcap_u32(gh, swap) != PCAP_MAGIC_US && !nano) {
		rec_err(err, "%s: offset 0: not a pcap file", path);
		goto out;
	}
	if ((pcap_u32(gh + 20, swap) & 0xffff) != PCAP_LINK_ETH) {
		rec_err(err, "%s: offset 20: link type %u, expected Ethernet", path,
			pcap_u32(gh + 20, swap));
		goto out;
	}
	for (;;) {
		long off = ftell(f);
		uint32_t incl, n;
		const uint8_t *ip;
		struct pcap_pkt *p;
		uint32_t src;
		int e;

		if (fread(rh, sizeof(rh), 1, f) != 1)
			break;
		incl = pcap_u32(rh + 8, swap);
		n = incl < sizeof(hdr) ? incl : sizeof(hdr);
		if (fread(hdr, 1, n, f) != n || fseek(f, (long)(incl - n), SEEK_CUR)) {
			rec_err(err, "%s: offset %ld: truncated packet record", path, off);
			goto out;
		}
		if (npk == cap) {
			struct pcap_pkt *np;

			cap = cap ? 2 * cap : 256;
			np = realloc(pk, cap * sizeof(*pk));
			if (!np) {
				rec_err(err, "out of memory");
				goto out;
			}
			pk = np;
		}
		p = &pk[npk++];
		p->off = off;
		p->ns = 0;
		p->from_self = 0;
		/* Ethernet, IPv4, TCP */
		if (n < 14 + 20 + 14 || hdr[12] != 0x08 || hdr[13] != 0x00 ||
		    (hdr[14] >> 4) != 4 || hdr[23] != 6)
			continue;
		ip = hdr + 14;
		src = (uint32_t)ip[12] << 24 | ip[13] << 16 | ip[14] << 8 | ip[15];
		e = src == ends[0].addr ? 0 : src == ends[1].addr ? 1 : -1;
		if (e < 0)
			continue;
		if (!(ip[4] | ip[5]) && n >= 14u + (ip[0] & 0xf) * 4 + 14 &&
		    (ip[(ip[0] & 0xf) * 4 + 13] & 0x12) == 0x12) {
			/* SYN-ACK: IP ID 0, not in the series */
			if (ends[e].synack_ns)
				p->ns = ends[e].synack_ns + ends[e].real_off;
		} else {
			uint16_t id = (uint16_t)(ip[4] << 8 | ip[5]);

			ends[e].ref = corr_idx_extend(ends[e].ref, id);
			p->ns = pcap_send_ns(&ends[e], ends[e].ref);
		}
		p->from_self = !e;
	}
	/* One-way delay: a received packet's send time to our next send. */
	for (i = 0; i < npk; i++) {
		if (!pk[i].ns)
			continue;
		if (!pk[i].from_self) {
			last_rx = pk[i].ns;
		} else if (last_rx && pk[i].ns >= last_rx &&
			   (delay < 0 || (int64_t)(pk[i].ns - last_rx) < delay)) {
			delay = (int64_t)(pk[i].ns - last_rx);
			last_rx = 0;
		}
	}
	if (delay < 0)
		delay = 0;
	for (i = 0; i < npk; i++) {
		uint64_t ns = pk[i].ns;

		if (!ns)
			continue;
		if (!pk[i].from_self)
			ns += delay;
		pcap_put_u32(rh, (uint32_t)(ns / 1000000000u), swap);
		pcap_put_u32(rh + 4, (uint32_t)(nano ? ns % 1000000000u :
						   ns % 1000000000u / 1000), swap);
		if (fseek(f, pk[i].off, SEEK_SET) || fwrite(rh, 8, 1, f) != 1) {
			rec_err(err, "%s: offset %ld: %s", path, pk[i].off, strerror(errno));
			goto out;
		}
	}
	if (fflush(f)) {
		rec_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(pk);
	free(ends[0].smp);
	free(ends[1].smp);
	fclose(f);
	return ret;
}
