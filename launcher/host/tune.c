/*
 * tune.c: the default tuning policy, used when the user gives no rate.
 *
 * The kernel default (100 pages every 20 ms) is too slow to matter, and a
 * fixed high rate keeps ksmd busy for as long as it is set.  The kernel's
 * scan-time advisor does not fit a single command either: it measures scan
 * times in whole seconds with a floor of 10% CPU, so when a full scan takes
 * under a second (a few hundred MiB of candidates) it drives pages_to_scan
 * up to advisor_max_pages_to_scan; measured on 6.18 with 8 Python workers,
 * it kept ksmd at about 50% of a core, more than the fixed boost rate.
 *
 * So ksm-run does the scan-time idea itself, in two phases:
 *  boost:  5000 pages every 10 ms while the command's memory is merged;
 *  steady: once the last WINDOW_S seconds (with a full scan in them) added
 *          under 2% to pages_sharing, the previous sleep_millisecs and a
 *          pages_to_scan sized for one full scan every STEADY_SCAN_S.
 * The steady rate follows the number of candidate pages; if they grow by
 * half (the command allocated much more), it boosts again.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"
#include "host/counters.h"
#include "host/knobs.h"
#include "host/tune.h"

#define BOOST_PAGES 5000
#define BOOST_SLEEP "10"
#define BOOST_MAX_S 60.0
#define MIN_BOOST_S 10.0
#define WINDOW_S 5.0
/* Scans needed before judging: the first only records checksums. */
#define MIN_SCANS 3
#define STEADY_SCAN_S 20
#define STEADY_MIN_PAGES 100

void tune_start(struct tuner *t, const char *sleep_before, bool have_advisor, double now,
		struct knob_set *want)
{
	char v[16];

	memset(t, 0, sizeof *t);
	snprintf(t->sleep_before, sizeof t->sleep_before, "%s", sleep_before ? sleep_before : "20");
	if (have_advisor)
		knob_put(want, "advisor_mode", "none");
	snprintf(v, sizeof v, "%d", BOOST_PAGES);
	knob_put(want, "pages_to_scan", v);
	knob_put(want, "sleep_millisecs", BOOST_SLEEP);
	t->phase = TUNE_BOOST;
	t->boosts = 1;
	t->boost_start = now;
	t->start_scans = -1;
}

static long long steady_pages(long long rmap, long long sleep_ms)
{
	long long p = rmap * (sleep_ms > 0 ? sleep_ms : 1) / (STEADY_SCAN_S * 1000);

	return p < STEADY_MIN_PAGES ? STEADY_MIN_PAGES : p > BOOST_PAGES ? BOOST_PAGES : p;
}

static void describe(struct tuner *t)
{
	snprintf(t->handover, sizeof t->handover,
		 "boost %d/%sms for %.0f s%s, then %lld pages every %s ms (a full scan about every %d s)",
		 BOOST_PAGES, BOOST_SLEEP, t->boost_total, t->boosts > 1 ? " in all (boosted again on growth)" : "",
		 t->steady_pages, t->sleep_before, STEADY_SCAN_S);
}

static void go_steady(struct tuner *t, const struct sys_sample *ss, struct knob_set *out)
{
	char v[32];
	long long sleep_ms = 20;

	parse_ll(t->sleep_before, 0, INT_MAX, &sleep_ms);
	t->phase = TUNE_STEADY;
	t->boost_total += ss->t - t->boost_start;
	t->rmap_at_handover = sys_rmap_items(ss);
	t->steady_pages = steady_pages(t->rmap_at_handover, sleep_ms);
	snprintf(v, sizeof v, "%lld", t->steady_pages);
	knob_put(out, "sleep_millisecs", t->sleep_before);
	knob_put(out, "pages_to_scan", v);
	describe(t);
}

static void boost_again(struct tuner *t, const struct sys_sample *ss, struct knob_set *out)
{
	char v[16];

	snprintf(v, sizeof v, "%d", BOOST_PAGES);
	t->phase = TUNE_BOOST;
	t->boosts++;
	t->boost_start = ss->t;
	t->start_scans = -1;
	t->nhist = 0;
	knob_put(out, "pages_to_scan", v);
	knob_put(out, "sleep_millisecs", BOOST_SLEEP);
}

static void steady_tick(struct tuner *t, const struct sys_sample *ss, struct knob_set *out)
{
	long long rmap = sys_rmap_items(ss), sleep_ms = 20, want;
	char v[32];

	if (rmap < 0)
		return;
	if (rmap > t->rmap_at_handover * 3 / 2 && rmap - t->rmap_at_handover > 25600) {
		boost_again(t, ss, out);
		return;
	}
	parse_ll(t->sleep_before, 0, INT_MAX, &sleep_ms);
	want = steady_pages(rmap, sleep_ms);
	/* Small changes are not worth a write. */
	if (want * 4 > t->steady_pages * 5 || want * 5 < t->steady_pages * 4) {
		t->steady_pages = want;
		snprintf(v, sizeof v, "%lld", want);
		knob_put(out, "pages_to_scan", v);
		describe(t);
	}
}

void tune_tick(struct tuner *t, const struct sys_sample *first, const struct sys_sample *last,
	       struct knob_set *out)
{
	long long scans = sys_value(last, "full_scans");
	long long sharing = sys_value(last, "pages_sharing");
	double now = last->t;
	int n = (int)(sizeof t->hist / sizeof t->hist[0]);

	out->n = 0;
	if (t->phase == TUNE_STEADY)
		steady_tick(t, last, out);
	if (t->phase != TUNE_BOOST || scans == LLONG_MIN || sharing == LLONG_MIN)
		return;
	if (t->start_scans < 0)
		t->start_scans = t->boosts == 1 ? sys_value(first, "full_scans") : scans;
	if (t->nhist == n) {
		memmove(t->hist, t->hist + 1, sizeof t->hist[0] * (size_t)(n - 1));
		t->nhist--;
	}
	t->hist[t->nhist].t = now;
	t->hist[t->nhist].scans = scans;
	t->hist[t->nhist].sharing = sharing;
	t->nhist++;
	if (now - t->boost_start > BOOST_MAX_S) {
		go_steady(t, last, out);
		return;
	}
	if (now - t->boost_start < MIN_BOOST_S || scans - t->start_scans < MIN_SCANS)
		return;
	/* The newest sample at least WINDOW_S old: did the window merge much? */
	for (int i = t->nhist - 1; i >= 0; i--) {
		if (now - t->hist[i].t < WINDOW_S)
			continue;
		long long growth = sharing - t->hist[i].sharing;
		long long small = sharing / 50 > 64 ? sharing / 50 : 64;
		if (scans > t->hist[i].scans && growth <= small)
			go_steady(t, last, out);
		return;
	}
}
