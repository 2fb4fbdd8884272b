// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the naming tables (log/rec_sysctl.c, log/rec_names.c):
 * sysctls, module parameters, congestion control names and TCP options
 * come back named and signed as logged, an id deter.ko does not have is
 * refused, and a MISSING SETTINGS event says which settings changed.
 */
#include "rec_log.h"
#include "rec_codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

/* CONFIG SYSCTL: a known sysctl round-trips, signed; an unknown one is an error. */
static void test_sysctl(void)
{
	struct rec_ev ev[2] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_ADV_WIN_SCALE << 32 | (uint32_t)-2 },
		{ .seq = 2, .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL,
		  .a = (uint64_t)DETER_SYSCTL_TCP_NOTSENT_LOWAT << 32 | 0xffffffffu },
	};
	struct rec_log log = { 0 };
	char *err = NULL;
	unsigned int id;
	uint8_t *buf;
	size_t len;

	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 2, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 2);
	if (log.nevs == 2) {
		UNIT_CHECK(rec_sysctl_value(log.evs[0].a) == -2);
		UNIT_CHECK(rec_sysctl_value(log.evs[1].a) == 0xffffffffLL);
		UNIT_CHECK(!strcmp(rec_sysctls[log.evs[0].a >> 32].name, "tcp_adv_win_scale"));
	}
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].a = (uint64_t)DETER_SYSCTL_MAX << 32 | 1;
	UNIT_CHECK(rec_log_encode(ev, 2, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 2, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown sysctl"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
	/* Every id has a name; the route's metrics say so. */
	for (id = 0; id < DETER_SYSCTL_MAX; id++)
		UNIT_CHECK(rec_sysctls[id].name);
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_ROUTE_INITCWND]), "route"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_CORE_RMEM_MAX]), "net.core"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_CUBIC_BETA]), "tcp_cubic"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_DCTCP_SHIFT_G]), "tcp_dctcp"));
	UNIT_CHECK(!strcmp(rec_sysctl_dir(&rec_sysctls[DETER_SYSCTL_BIC_BETA]), "tcp_bic"));
	UNIT_CHECK(!strcmp(rec_sysctls[DETER_SYSCTL_CDG_USE_TOLERANCE].name, "use_tolerance"));
	for (id = DETER_PARAM_FIRST; id < DETER_SYSCTL_MAX; id++)
		UNIT_CHECK(rec_sysctls[id].module);
}

/* Module parameters as sysfs shows them: numbers, and a bool's Y or N. */
static void test_param_parse(void)
{
	long long v = 7;

	UNIT_CHECK(rec_param_parse("819\n", &v) == 0 && v == 819);
	UNIT_CHECK(rec_param_parse("-3", &v) == 0 && v == -3);
	UNIT_CHECK(rec_param_parse("4294967295\n", &v) == 0 && v == 4294967295LL);
	UNIT_CHECK(rec_param_parse("Y\n", &v) == 0 && v == 1);
	UNIT_CHECK(rec_param_parse("N", &v) == 0 && v == 0);
	UNIT_CHECK(rec_param_parse("", &v) != 0);
	UNIT_CHECK(rec_param_parse("Yes\n", &v) != 0);
	UNIT_CHECK(rec_param_parse("12x\n", &v) != 0);
	UNIT_CHECK(rec_param_parse("4294967296\n", &v) != 0);
	UNIT_CHECK(rec_param_parse("-2147483649\n", &v) != 0);
}

/* CONFIG CC and TCP: names and values back; an unknown option is refused. */
static void test_tcpopt(void)
{
	struct rec_ev ev[3] = {
		{ .seq = 1, .type = DETER_EV_CONFIG, .sub = DETER_CFG_CC,
		  .a = 'h' | 'i' << 8 | (uint64_t)'g' << 16 | (uint64_t)'h' << 24 |
		       (uint64_t)'s' << 32 | (uint64_t)'p' << 40 | (uint64_t)'e' << 48 |
		       (uint64_t)'e' << 56 },
		{ .seq = 2, .type = DETER_EV_CONFIG, .sub = DETER_CFG_TCP,
		  .a = DETER_TCPOPT_PACK(DETER_TCPOPT_LINGER2, (uint32_t)-1) },
		{ .seq = 3, .type = DETER_EV_CONFIG, .sub = DETER_CFG_TCP,
		  .a = DETER_TCPOPT_PACK(DETER_TCPOPT_MAX_PACING_RATE, DETER_TCPOPT_RATE_MAX) },
	};
	char name[DETER_CC_BYTES + 1];
	struct rec_log log = { 0 };
	char *err = NULL;
	uint8_t *buf;
	size_t len;

	UNIT_CHECK(rec_log_encode(ev, 3, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 3, &log, &err) == 0);
	UNIT_CHECK(log.nevs == 3);
	if (log.nevs == 3) {
		rec_cc_name(log.evs[0].a, name);
		UNIT_CHECK(!strcmp(name, "highspee"));
		UNIT_CHECK(rec_tcpopt_value(log.evs[1].a) == -1);
		UNIT_CHECK(!strcmp(rec_tcpopts[DETER_TCPOPT_ID(log.evs[1].a)], "linger2_s"));
		UNIT_CHECK((uint64_t)rec_tcpopt_value(log.evs[2].a) == UINT64_MAX);
	}
	rec_cc_name('r' | 'e' << 8 | 'n' << 16 | 'o' << 24, name);
	UNIT_CHECK(!strcmp(name, "reno"));
	free(buf);
	free(log.evs);
	free(log.states);
	memset(&log, 0, sizeof(log));
	ev[1].a = DETER_TCPOPT_PACK(DETER_TCPOPT_MAX, 1);
	UNIT_CHECK(rec_log_encode(ev, 3, NULL, &buf, &len, &err) == 0);
	UNIT_CHECK(rec_log_decode(buf, len, 3, &log, &err) != 0);
	UNIT_CHECK(err && strstr(err, "unknown TCP option"));
	free(err);
	free(buf);
	free(log.evs);
	free(log.states);
}

#define SC(id, v) { .type = DETER_EV_CONFIG, .sub = DETER_CFG_SYSCTL, \
		    .a = (uint64_t)(id) << 32 | (uint32_t)(v) }
#define MISSING_SETTINGS { .type = DETER_EV_VALUE, .sub = DETER_V_MISSING, \
			   .a = DETER_MISSING_SETTINGS }

/*
 * What a MISSING SETTINGS says changed: the settings logged after it
 * against those before it, since the start or the previous one; one
 * absent from either set is at its default (a module parameter's is
 * known).
 */
static void test_settings_changed(void)
{
	struct rec_ev ev[] = {
		SC(DETER_SYSCTL_TCP_WMEM2, 65536), SC(DETER_SYSCTL_TCP_ECN, 1),
		SC(DETER_SYSCTL_CUBIC_BETA, 512),
		{ .type = DETER_EV_LOCK },
		MISSING_SETTINGS,			/* 4 */
		SC(DETER_SYSCTL_TCP_WMEM2, 4194304), SC(DETER_SYSCTL_TCP_ECN, 1),
		{ .type = DETER_EV_SAMPLE },
		SC(DETER_SYSCTL_CUBIC_BETA, 512), SC(DETER_SYSCTL_ROUTE_RTO_MIN, 5),
		SC(DETER_SYSCTL_VEGAS_ALPHA, 3),
		MISSING_SETTINGS,			/* 11 */
		SC(DETER_SYSCTL_TCP_WMEM2, 4194304), SC(DETER_SYSCTL_TCP_ECN, 1),
		SC(DETER_SYSCTL_ROUTE_RTO_MIN, 5),
		MISSING_SETTINGS,			/* 15 */
		SC(DETER_SYSCTL_TCP_WMEM2, 4194304), SC(DETER_SYSCTL_TCP_ECN, 1),
		SC(DETER_SYSCTL_ROUTE_RTO_MIN, 5),
	};
	struct rec_log log = { .evs = ev, .nevs = ARRAY_SIZE(ev) };
	const char *first = "net.ipv4.tcp_wmem[2] 65536 -> 4194304, route.rto_min default -> 5";
	char buf[256], small[24];

	/* cubic, and dctcp set later (TCP_CONGESTION) */
	memcpy(log.hdr.cc, "cubic", 6);
	ev[3] = (struct rec_ev){ .type = DETER_EV_CONFIG, .sub = DETER_CFG_CC,
				 .a = 0x7063746364ULL };	/* "dctcp" */

	rec_settings_changed(&log, 4, buf, sizeof(buf));
	UNIT_CHECK(!strcmp(buf, first));
	/* Not tcp_vegas's alpha: neither cubic nor dctcp reads it. */
	rec_settings_changed(&log, 11, buf, sizeof(buf));
	UNIT_CHECK(!strcmp(buf, "tcp_cubic.beta 512 -> 717"));
	/* Changed and back before deter.ko logged them again. */
	rec_settings_changed(&log, 15, buf, sizeof(buf));
	UNIT_CHECK(!strcmp(buf, ""));
	/* Cut short, never past the buffer. */
	rec_settings_changed(&log, 4, small, sizeof(small));
	UNIT_CHECK_EQ(strlen(small), sizeof(small) - 1);
}

#undef SC
#undef MISSING_SETTINGS

int main(void)
{
	UNIT_RUN(test_settings_changed);
	UNIT_RUN(test_sysctl);
	UNIT_RUN(test_param_parse);
	UNIT_RUN(test_tcpopt);
	return unit_done();
}
