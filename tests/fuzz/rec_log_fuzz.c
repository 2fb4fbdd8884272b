// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the log decoder (log/rec_dec.c): whatever the
 * bytes, rec_log_decode() either decodes them into exactly the events
 * promised or returns an error naming an offset inside the body; it
 * never reads out of bounds, leaks or hangs. The first 4 bytes are the
 * event count the header would promise (modulo 100000), the rest the
 * decompressed body (tests/check.sh seeds it with the golden logs').
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rec_dec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_log log = { 0 };
	char *err = NULL;
	uint32_t n;

	if (size < 4)
		return 0;
	memcpy(&n, data, 4);
	n %= 100000;
	if (rec_log_decode(data + 4, size - 4, n, &log, &err)) {
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
