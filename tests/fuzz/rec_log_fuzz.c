// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the log decoder (recorder/rec_log.c): whatever the
 * bytes, rec_log_decode() either decodes them or returns an error naming
 * an offset inside the body; it never reads out of bounds, leaks or hangs.
 * The first 4 bytes are the event count the header would promise (modulo
 * 5 they pick the format: the current one, the three before it, or the
 * one-stream format 3).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rec_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_log log = { 0 };
	char *err = NULL;
	unsigned int version;
	uint32_t n;

	if (size < 4)
		return 0;
	memcpy(&n, data, 4);
	/* The current format (chunks), the three before it, the one-stream one. */
	version = n % 5 == 4 ? 3 : DETER_ABI_VERSION - n % 5;
	n = (n / 5) % 100000;
	if (rec_log_decode(data + 4, size - 4, version, n, &log, &err)) {
		if (!err || strncmp(err, "body+", 5))
			abort();
	} else if (log.nevs != n) {
		abort();
	}
	free(err);
	free(log.evs);
	free(log.states);
	return 0;
}
