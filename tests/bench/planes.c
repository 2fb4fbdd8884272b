// SPDX-License-Identifier: GPL-2.0
/*
 * planes: encode a series of integers the way deter's log
 * encodes its noisy values, so that series deter does not log can be
 * sized against those it does (tests/bench/clock.sh).
 *
 *   planes [-d] < numbers > bytes
 *
 * Reads signed decimal integers, whitespace-separated; with -d, encodes
 * each one's difference from the one before (the first from 0). Each
 * value is zigzagged and split into its low byte and the rest: all the
 * low bytes first, then the rest as LEB128 varints. Compress the output
 * (zstd -19) to size it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put_varint(FILE *f, uint64_t v)
{
	while (v >= 0x80) {
		if (fputc((int)(v & 0x7f) | 0x80, f) == EOF)
			return -1;
		v >>= 7;
	}
	return fputc((int)v, f) == EOF ? -1 : 0;
}

int main(int argc, char **argv)
{
	int delta = argc == 2 && !strcmp(argv[1], "-d");
	uint64_t *zz = NULL;
	size_t n = 0, cap = 0, i;
	int64_t v, prev = 0;

	if (argc > 2 || (argc == 2 && !delta)) {
		fprintf(stderr, "usage: planes [-d] < numbers > bytes\n");
		return 2;
	}
	while (scanf("%" SCNd64, &v) == 1) {
		int64_t d = delta ? (int64_t)((uint64_t)v - (uint64_t)prev) : v;

		prev = v;
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			zz = realloc(zz, cap * sizeof(*zz));
			if (!zz) {
				perror("planes");
				return 1;
			}
		}
		zz[n++] = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
	}
	if (!feof(stdin)) {
		fprintf(stderr, "planes: not a number after %zu values\n", n);
		return 1;
	}
	for (i = 0; i < n; i++)
		if (putchar((int)(zz[i] & 0xff)) == EOF)
			return 1;
	for (i = 0; i < n; i++)
		if (put_varint(stdout, zz[i] >> 8))
			return 1;
	free(zz);
	return fflush(stdout) ? 1 : 0;
}
