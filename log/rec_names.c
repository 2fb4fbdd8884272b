// SPDX-License-Identifier: GPL-2.0
/*
 * Names of what a log records, as deter show prints them and the replay
 * reports them, and the values of the events that pack two into one:
 *
 *   CALL      sub: the socket call (rec_call_names[]); a SETSOCKOPT's
 *             option is b >> 32 (rec_setsockopt_name())
 *   CONFIG    TCP: a socket option, DETER_TCPOPT_PACK(id, value), in
 *             the option's units (rec_tcpopts[], rec_tcpopt_value());
 *             CC: a congestion control's name, its first DETER_CC_BYTES
 *             bytes little-endian in a (rec_cc_name())
 *   VALUE     MISSING: a = what the log lacks (rec_missing_what())
 *
 * The host-wide settings a log records (CONFIG SYSCTL) have their own
 * table, rec_sysctl.c. Tables and pure functions; thread-safe.
 */
#include "rec_names.h"

#include <netinet/tcp.h>
#include <stddef.h>
#include <stdint.h>

/* enum deter_tcpopt's names, as setsockopt() knows them. */
const char *const rec_tcpopts[DETER_TCPOPT_MAX] = {
	[DETER_TCPOPT_THIN_LTO] = "thin_linear_timeouts",
	[DETER_TCPOPT_SYNCNT] = "syncnt",
	[DETER_TCPOPT_LINGER2] = "linger2_s",
	[DETER_TCPOPT_TX_DELAY] = "tx_delay_us",
	[DETER_TCPOPT_MAX_PACING_RATE] = "max_pacing_rate",
	[DETER_TCPOPT_PRIORITY] = "priority",
	[DETER_TCPOPT_MARK] = "mark",
	[DETER_TCPOPT_RCVTIMEO] = "rcvtimeo_us",
	[DETER_TCPOPT_SNDTIMEO] = "sndtimeo_us",
};

/* enum deter_abi_call's names, as deter show prints them. */
const char *const rec_call_names[DETER_ABI_CALL_MAX] = {
	"sendmsg", "recvmsg", "shutdown", "close", "setsockopt", "splice_read",
	"recv_errqueue",
};

/**
 * rec_setsockopt_name() - the option of a CALL SETSOCKOPT
 * @opt: the event's flags (b >> 32)
 *
 * Return: its name, or NULL for an option deter does not record as a
 * call (which replay then cannot issue).
 */
const char *rec_setsockopt_name(uint64_t opt)
{
	switch (opt) {
	case TCP_QUICKACK:
		return "TCP_QUICKACK";
	case TCP_WINDOW_CLAMP:
		return "TCP_WINDOW_CLAMP";
	}
	return NULL;
}

/**
 * rec_missing_what() - what a VALUE MISSING says its log lacks
 * @why: the event's a, enum deter_abi_missing
 *
 * Return: it in words, or NULL for a reason this deter does not know.
 */
const char *rec_missing_what(uint64_t why)
{
	switch (why) {
	case DETER_MISSING_HANDSHAKE:
		return "the SYN's IP ID and the SYN-ACK's clocks";
	case DETER_MISSING_CALLS:
		return "calls that reach TCP past deter's hooks: another layer or unseen reads";
	case DETER_MISSING_FASTOPEN:
		return "TCP Fast Open: cookies from the server's key and the client's cache";
	case DETER_MISSING_SETTINGS:
		return "a setting TCP reads changed during the connection";
	case DETER_MISSING_SYNACK_TIMER:
		return "when its request socket's timer sent the SYN-ACK again";
	}
	return NULL;
}

/**
 * rec_tcpopt_value() - a DETER_CFG_TCP event's value, in the option's units
 * @a: the event's value
 *
 * Return: the value; TCP_LINGER2's sign-extended, SO_MAX_PACING_RATE's
 * "none" as UINT64_MAX (cast), a timeout in us with -1 for none.
 */
long long rec_tcpopt_value(uint64_t a)
{
	uint64_t v = DETER_TCPOPT_VAL(a);

	if (DETER_TCPOPT_ID(a) == DETER_TCPOPT_LINGER2)
		return (int32_t)v;
	if (DETER_TCPOPT_ID(a) == DETER_TCPOPT_MAX_PACING_RATE && v == DETER_TCPOPT_RATE_MAX)
		return (long long)UINT64_MAX;
	if (DETER_TCPOPT_ID(a) == DETER_TCPOPT_RCVTIMEO ||
	    DETER_TCPOPT_ID(a) == DETER_TCPOPT_SNDTIMEO)
		return (long long)v - 1;
	return v;
}

/**
 * rec_cc_name() - a DETER_CFG_CC event's congestion control name
 * @a: the event's value
 * @name: filled, NUL-terminated (its first DETER_CC_BYTES bytes)
 */
void rec_cc_name(uint64_t a, char name[DETER_CC_BYTES + 1])
{
	int i;

	for (i = 0; i < DETER_CC_BYTES; i++)
		name[i] = (char)(a >> (8 * i));
	name[DETER_CC_BYTES] = '\0';
}
