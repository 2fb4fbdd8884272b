// SPDX-License-Identifier: GPL-2.0
/*
 * Error messages of the log library, and of the modules of deter that
 * follow its convention: a function that fails returns -1 and fills
 * *err with a message, and only the command's main prints it (prefixed
 * with the command, "deter show: "). The message says where the input
 * went wrong as "FILE:OFFSET: what", offsets in bytes from the start of
 * the file ("body+N" from the start of the decompressed body).
 */
#include <stdarg.h>
#include <stdio.h>

#include "rec_err.h"

/**
 * rec_err() - fail with a message
 * @err: where the message goes (malloc'd), or NULL for none
 * @fmt: printf format of the message
 *
 * Return: -1.
 */
int rec_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		if (vasprintf(err, fmt, ap) < 0)
			*err = NULL;
		va_end(ap);
	}
	return -1;
}
