/*
 * tune.c: the tuning policy, used when the user gives no rate.
 *
 * The kernel default (100 pages every 20 ms) is too slow to matter, and a
 * fixed high rate keeps ksmd busy for as long as it is set.  The kernel's
 * scan-time advisor does not fit either: it measures scan times in whole
 * seconds with a floor of 10% CPU, so when a full scan takes under a
 * second (a few hundred MiB of candidates) it drives pages_to_scan up to
 * advisor_max_pages_to_scan; measured on 6.18 with 8 Python workers, it
 * kept ksmd at about 50% of a core, more than the fixed boost rate.
 *
 * So the tuner does the scan-time idea itself, in two phases:
 *  boost:  5000 pages every 10 ms while there is new memory to merge;
 *  steady: the previous sleep_millisecs and a pages_to_scan sized for one
 *          full scan every steady_scan_s.
 * The boost ends when the candidate memory (the present anonymous memory
 * of the processes KSM may merge) has stopped growing and has been scanned
 * since, and the last WINDOW_S seconds (with a full scan in them) added
 * under 2% to pages_sharing: memory that arrives late and in waves (guests
 * that boot, then fill their RAM) is not left to the slow rate.  In the
 * steady phase, new candidate memory, or a command or attached processes
 * registered by another instance, brings the boost back at once.
 *
 * The daemon adds three rules (tune_config): under memory pressure the
 * steady phase scans four times as often, with plenty of memory half as
 * often; ksmd is held under max_cpu_pct of one core; and when what is
 * saved stops paying for ksmd's CPU (general_profit per percent of CPU
 * under profit_floor for COST_WINDOW_S) the rate drops to the minimum.
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
#define BOOST_MAX_S 60.0               /* after the memory last grew */
#define MIN_BOOST_S 10.0
#define WINDOW_S 5.0
/* Scans needed before judging: the first only records checksums. */
#define MIN_SCANS 3
#define STEADY_SCAN_S 20
#define STEADY_MIN_PAGES 100
/* Candidate memory "grew": by more than 1% and 256 pages (1 MiB of 4 KiB pages). */
#define GROWTH_PAGES 256
/* In the steady phase, new memory worth a boost: 5% and 2048 pages. */
#define NEW_WORK_PAGES 2048
#define COST_WINDOW_S 300.0

void tune_defaults(struct tune_config *cfg)
{
	cfg->steady_scan_s = STEADY_SCAN_S;
	cfg->max_cpu_pct = 0;
	cfg->profit_floor = 0;
	cfg->adapt_to_pressure = false;
}

static void reset(struct tuner *t, const struct tune_config *cfg, const char *sleep_before)
{
	memset(t, 0, sizeof *t);
	if (cfg)
		t->cfg = *cfg;
	else
		tune_defaults(&t->cfg);
	snprintf(t->sleep_before, sizeof t->sleep_before, "%s", sleep_before ? sleep_before : "20");
	t->start_scans = -1;
	t->cand_base = -1;
	t->scans_at_growth = -1;
}

void tune_start(struct tuner *t, const struct tune_config *cfg, const char *sleep_before,
		bool have_advisor, double now, struct knob_set *want)
{
	char v[16];

	reset(t, cfg, sleep_before);
	if (have_advisor)
		knob_put(want, "advisor_mode", "none");
	snprintf(v, sizeof v, "%d", BOOST_PAGES);
	knob_put(want, "pages_to_scan", v);
	knob_put(want, "sleep_millisecs", BOOST_SLEEP);
	t->phase = TUNE_BOOST;
	t->boosts = 1;
	t->boost_start = now;
	t->last_growth = now;
}

static long long sleep_ms_of(const struct tuner *t)
{
	long long ms = 20;

	parse_ll(t->sleep_before, 0, INT_MAX, &ms);
	return ms > 0 ? ms : 1;
}

/* The steady scan period, after memory pressure. */
static double steady_period(const struct tuner *t, double pressure)
{
	double s = t->cfg.steady_scan_s > 0 ? t->cfg.steady_scan_s : STEADY_SCAN_S;

	if (t->cfg.adapt_to_pressure && pressure >= 0)
		s *= pressure > 0.2 ? 0.25 : pressure < 0.02 ? 2.0 : 1.0;
	return s;
}

static long long steady_pages(const struct tuner *t, long long rmap, double pressure)
{
	long long p = (long long)((double)rmap * (double)sleep_ms_of(t) / (steady_period(t, pressure) * 1000));

	return p < STEADY_MIN_PAGES ? STEADY_MIN_PAGES : p > BOOST_PAGES ? BOOST_PAGES : p;
}

/* Within the CPU ceiling: fewer pages when ksmd used more than it may. */
static long long within_cpu(const struct tuner *t, long long pages, double cpu_pct)
{
	if (t->cfg.max_cpu_pct <= 0 || cpu_pct <= t->cfg.max_cpu_pct || cpu_pct <= 0)
		return pages;
	pages = (long long)((double)pages * t->cfg.max_cpu_pct / cpu_pct);
	return pages < STEADY_MIN_PAGES ? STEADY_MIN_PAGES : pages;
}

/*
 * The steady rate's cost, said where it differs from the plan: the full
 * scan's period at the rate in force (the minimum rate or the CPU ceiling
 * may make it longer than the one asked for), and, on a kernel without
 * smart scan (before 6.7), that every tracked page is rescanned each pass.
 */
static void describe_cost(const struct tuner *t, char *buf, size_t len)
{
	double per_s = t->steady_pages * 1000.0 / sleep_ms_of(t);
	double period = t->rmap_at_handover > 0 && per_s > 0 ? (double)t->rmap_at_handover / per_s :
			t->cfg.steady_scan_s;
	size_t n = (size_t)snprintf(buf, len, " (a full scan about every %.*f s)", period < 10 ? 1 : 0, period);

	if (t->no_smart_scan && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; no smart scan in this kernel (Linux 6.7+): "
				      "all %lld tracked pages are rescanned on each pass, %.0f pages/s",
				      t->rmap_at_handover > 0 ? t->rmap_at_handover : 0, per_s);
	if (t->frugal && n < len)
		snprintf(buf + n, len - n, "; slowed to the minimum: merging did not pay for ksmd's CPU");
}

static void describe(struct tuner *t)
{
	char cost[256];

	describe_cost(t, cost, sizeof cost);
	/* Taken over in the steady phase (tune_resume_steady): this tuner never boosted. */
	if (!t->boosts) {
		snprintf(t->handover, sizeof t->handover, "taken over in the steady phase: %lld pages every %s ms%s",
			 t->steady_pages, t->sleep_before, cost);
		return;
	}
	snprintf(t->handover, sizeof t->handover, "boost %d/%sms for %.0f s%s, then %lld pages every %s ms%s",
		 BOOST_PAGES, BOOST_SLEEP, t->boost_total, t->boosts > 1 ? " in all (boosted again on new memory)" : "",
		 t->steady_pages, t->sleep_before, cost);
}

static void go_steady(struct tuner *t, const struct tune_input *in, struct knob_set *out, const char *why)
{
	char v[32];

	t->phase = TUNE_STEADY;
	t->boost_total += in->now->t - t->boost_start;
	t->rmap_at_handover = sys_rmap_items(in->now);
	t->no_smart_scan = sys_value(in->now, "pages_skipped") == LLONG_MIN;
	t->cand_at_handover = in->candidate_pages;
	t->steady_pages = within_cpu(t, steady_pages(t, t->rmap_at_handover, in->pressure), in->ksmd_cpu_pct);
	snprintf(v, sizeof v, "%lld", t->steady_pages);
	knob_put(out, "sleep_millisecs", t->sleep_before);
	knob_put(out, "pages_to_scan", v);
	describe(t);
	snprintf(t->last_decision, sizeof t->last_decision, "steady (%s): %lld pages every %s ms", why,
		 t->steady_pages, t->sleep_before);
}

static void boost_again(struct tuner *t, const struct tune_input *in, struct knob_set *out, const char *why)
{
	char v[32];

	snprintf(v, sizeof v, "%lld", within_cpu(t, BOOST_PAGES, in->ksmd_cpu_pct));
	t->phase = TUNE_BOOST;
	t->boosts++;
	t->boost_start = in->now->t;
	t->last_growth = in->now->t;
	t->start_scans = -1;
	t->nhist = 0;
	t->frugal = false;
	t->cheap_since = 0;
	knob_put(out, "pages_to_scan", v);
	knob_put(out, "sleep_millisecs", BOOST_SLEEP);
	snprintf(t->last_decision, sizeof t->last_decision, "boost (%s): %s pages every %s ms", why, v, BOOST_SLEEP);
	/* The report's history must end with the rate in force, not the steady one before. */
	if (t->handover[0]) {
		size_t n = strlen(t->handover);
		snprintf(t->handover + n, sizeof t->handover - n, "; then boosted again (%s): %s pages every %s ms",
			 why, v, BOOST_SLEEP);
	}
}

void tune_resume_steady(struct tuner *t, const struct tune_config *cfg, const char *sleep_before,
			const struct sys_sample *now, struct knob_set *want)
{
	struct tune_input in = { .now = now, .first = now, .candidate_pages = -1, .pressure = -1, .ksmd_cpu_pct = -1 };

	reset(t, cfg, sleep_before);
	t->boost_start = now->t;
	go_steady(t, &in, want, "taken over from a tuner that ended");
}

/* The memory to merge: follow its growth (for the end of a boost). */
static void follow_candidate(struct tuner *t, const struct tune_input *in, long long scans)
{
	long long c = in->candidate_pages;

	if (c < 0)
		return;
	if (t->cand_base < 0 || c > t->cand_base + t->cand_base / 100 + GROWTH_PAGES) {
		t->cand_base = c;
		t->last_growth = in->now->t;
		t->scans_at_growth = scans;
	}
}

/* Has the memory stopped growing, and been scanned since?  (True when unknown.) */
static bool candidate_settled(const struct tuner *t, long long scans)
{
	return t->cand_base < 0 || t->scans_at_growth < 0 || scans >= t->scans_at_growth + 2;
}

/* The daemon's cost rule: general_profit per percent of ksmd CPU, over COST_WINDOW_S. */
static void cost_check(struct tuner *t, const struct tune_input *in, struct knob_set *out)
{
	long long gp = sys_value(in->now, "general_profit");
	char v[16];

	if (t->cfg.profit_floor <= 0 || in->ksmd_cpu_pct <= 0 || gp == LLONG_MIN || t->frugal)
		return;
	if ((double)gp / in->ksmd_cpu_pct >= t->cfg.profit_floor) {
		t->cheap_since = 0;
		return;
	}
	if (!t->cheap_since) {
		t->cheap_since = in->now->t;
		return;
	}
	if (in->now->t - t->cheap_since < COST_WINDOW_S)
		return;
	t->frugal = true;
	t->steady_pages = STEADY_MIN_PAGES;
	snprintf(v, sizeof v, "%d", STEADY_MIN_PAGES);
	knob_put(out, "pages_to_scan", v);
	describe(t);
	snprintf(t->last_decision, sizeof t->last_decision,
		 "slowed to %d pages every %s ms: %.1f MiB saved for %.1f%% of a core, under the floor for %.0f s",
		 STEADY_MIN_PAGES, t->sleep_before, (double)gp / 1048576.0, in->ksmd_cpu_pct, COST_WINDOW_S);
}

static void steady_tick(struct tuner *t, const struct tune_input *in, struct knob_set *out)
{
	long long rmap = sys_rmap_items(in->now), want, c = in->candidate_pages;
	char v[32];

	if (in->new_work) {
		boost_again(t, in, out, "a command or attached processes registered");
		return;
	}
	if (c >= 0 && t->cand_at_handover >= 0 && c > t->cand_at_handover + t->cand_at_handover / 20 + NEW_WORK_PAGES) {
		boost_again(t, in, out, "new memory to merge");
		return;
	}
	if (rmap < 0)
		return;
	if (rmap > t->rmap_at_handover * 3 / 2 && rmap - t->rmap_at_handover > 25600) {
		boost_again(t, in, out, "the tracked pages grew by half");
		return;
	}
	/* Less memory than at the hand-over: the new baseline. */
	if (c >= 0 && c < t->cand_at_handover)
		t->cand_at_handover = c;
	cost_check(t, in, out);
	if (t->frugal)
		return;
	want = within_cpu(t, steady_pages(t, rmap, in->pressure), in->ksmd_cpu_pct);
	/* Small changes are not worth a write. */
	if (want * 4 > t->steady_pages * 5 || want * 5 < t->steady_pages * 4) {
		t->steady_pages = want;
		snprintf(v, sizeof v, "%lld", want);
		knob_put(out, "pages_to_scan", v);
		describe(t);
		snprintf(t->last_decision, sizeof t->last_decision, "steady rate %lld pages every %s ms", want,
			 t->sleep_before);
	}
}

void tune_tick(struct tuner *t, const struct tune_input *in, struct knob_set *out)
{
	long long scans = sys_value(in->now, "full_scans");
	long long sharing = sys_value(in->now, "pages_sharing");
	double now = in->now->t;
	int n = (int)(sizeof t->hist / sizeof t->hist[0]);

	out->n = 0;
	t->last_decision[0] = '\0';
	if (t->phase == TUNE_STEADY)
		steady_tick(t, in, out);
	if (t->phase != TUNE_BOOST || scans == LLONG_MIN || sharing == LLONG_MIN)
		return;
	if (t->start_scans < 0)
		t->start_scans = t->boosts == 1 ? sys_value(in->first, "full_scans") : scans;
	follow_candidate(t, in, scans);
	if (t->nhist == n) {
		memmove(t->hist, t->hist + 1, sizeof t->hist[0] * (size_t)(n - 1));
		t->nhist--;
	}
	t->hist[t->nhist].t = now;
	t->hist[t->nhist].scans = scans;
	t->hist[t->nhist].sharing = sharing;
	t->nhist++;
	if (now - (t->last_growth > t->boost_start ? t->last_growth : t->boost_start) > BOOST_MAX_S) {
		go_steady(t, in, out, "a minute without new memory");
		return;
	}
	if (now - t->boost_start < MIN_BOOST_S || scans - t->start_scans < MIN_SCANS ||
	    !candidate_settled(t, scans))
		return;
	/* The newest sample at least WINDOW_S old: did the window merge much? */
	for (int i = t->nhist - 1; i >= 0; i--) {
		if (now - t->hist[i].t < WINDOW_S)
			continue;
		long long growth = sharing - t->hist[i].sharing;
		long long small = sharing / 50 > 64 ? sharing / 50 : 64;
		if (scans > t->hist[i].scans && growth <= small)
			go_steady(t, in, out, "merging levelled off");
		return;
	}
}
