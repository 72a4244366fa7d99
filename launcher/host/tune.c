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
 * So the tuner follows what ksmd does, read at every step, in two phases:
 *  boost:  5000 pages every 10 ms while there is new memory to merge;
 *  steady: a rate sized for the pages that still change.
 *
 * The boost ends on progress, not on a clock.  A page merges on ksmd's
 * second look at it at the earliest (the first records its checksum, the
 * second finds its twin in the unstable tree), so memory that appeared is
 * merged once two full scans have passed over it.  The boost ends when
 * the candidate memory (the present anonymous memory of the processes KSM
 * may merge) has stopped growing and been scanned twice since, at least
 * three full scans have completed, and the last complete full scan added
 * under 2% to pages_sharing and no new pages to ksmd's tracking.  Where
 * ksmd gets less CPU than its knobs ask for (a busy host), the scans take
 * longer and so does the boost.  A minute after the memory last grew it
 * ends whatever the counters say: memory that never settles is no reason
 * to boost for ever.
 *
 * The steady phase costs what the churn needs.  At each full scan it
 * measures how far pages_sharing has fallen short of its peak (merged
 * pages written since, not yet merged again) and the pages new to ksmd's
 * tracking, and sets the time for a full scan so that under 5% of the
 * savings wait to be merged again (follow_churn): without churn, one full
 * scan every steady_scan_s (the ceiling the user sets); with much, every
 * 20 s at most often.  The rate is the pages ksmd actually scans in a full scan
 * (pages_scanned: smart scan skips pages found unique again and again)
 * over that time, at the sleep from before, or with longer sleeps of at
 * least 100 pages when that is fewer.  New candidate memory, a command or
 * attached processes registered by another instance, or merged memory
 * being lost by a tenth bring the boost back at once; a boost for lost
 * merges that won nothing back is not tried again until new memory comes.
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

#define BOOST_PAGES TUNE_BOOST_PAGES
#define BOOST_SLEEP "10"                /* TUNE_BOOST_SLEEP_MS, as the knob's text */
#define BOOST_MAX_S 60.0               /* after the memory last grew */
/* Full scans before judging: the first only records checksums. */
#define MIN_SCANS 3
#define STEADY_FASTEST_S 20.0          /* the shortest steady period, whatever the churn */
#define STEADY_CEILING_S 120           /* the default longest: --steady */
#define STEADY_MIN_PAGES 100
#define STEADY_MAX_SLEEP_MS 1000
/* The share of the savings that may wait to be merged again after a write. */
#define CHURN_SHARE 0.05
/* Candidate memory "grew": by more than 1% and 256 pages (1 MiB of 4 KiB pages). */
#define GROWTH_PAGES 256
/* In the steady phase, new memory worth a boost: 5% and 2048 pages. */
#define NEW_WORK_PAGES 2048
/* Merged memory "being lost": a tenth of the peak and 2048 pages. */
#define LOSS_PAGES 2048
#define COST_WINDOW_S 300.0

void tune_defaults(struct tune_config *cfg)
{
	cfg->steady_scan_s = STEADY_CEILING_S;
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
	t->sharing_at_loss = -1;
	t->boost_mark.t = -1;
}

static void mark_of(struct scan_mark *m, const struct sys_sample *s)
{
	m->t = s->t;
	m->scans = sys_value(s, "full_scans");
	m->sharing = sys_value(s, "pages_sharing");
	m->rmap = sys_rmap_items(s);
	m->scanned = sys_value(s, "pages_scanned");
	m->ksmd_cpu = s->ksmd_cpu;
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
	double s = t->period_s > 0 ? t->period_s : STEADY_FASTEST_S;

	if (t->cfg.adapt_to_pressure && pressure >= 0)
		s *= pressure > 0.2 ? 0.25 : pressure < 0.02 ? 2.0 : 1.0;
	return s;
}

/* The longest period the user allows, and the shortest the churn may ask for. */
static double ceiling_s(const struct tuner *t)
{
	return t->cfg.steady_scan_s > 0 ? t->cfg.steady_scan_s : STEADY_CEILING_S;
}

static double fastest_s(const struct tuner *t)
{
	return ceiling_s(t) < STEADY_FASTEST_S ? ceiling_s(t) : STEADY_FASTEST_S;
}

void tune_steady_rate(double scan_pages, double period_s, long long sleep_before_ms, long long *pages,
		      long long *sleep_ms)
{
	double per_s = period_s > 0 ? scan_pages / period_s : 0;
	long long p = (long long)(per_s * (double)sleep_before_ms / 1000);

	*sleep_ms = sleep_before_ms;
	if (p >= STEADY_MIN_PAGES) {
		*pages = p > BOOST_PAGES ? BOOST_PAGES : p;
		return;
	}
	*pages = STEADY_MIN_PAGES;
	if (per_s > 0 && 1000.0 * STEADY_MIN_PAGES / per_s > (double)*sleep_ms)
		*sleep_ms = (long long)(1000.0 * STEADY_MIN_PAGES / per_s);
	if (*sleep_ms > STEADY_MAX_SLEEP_MS)
		*sleep_ms = STEADY_MAX_SLEEP_MS > sleep_before_ms ? STEADY_MAX_SLEEP_MS : sleep_before_ms;
}

/* The steady rate: the pages of a full scan over the period. */
static void steady_rate(const struct tuner *t, double pressure, long long *pages, long long *sleep_ms)
{
	tune_steady_rate(t->scan_pages, steady_period(t, pressure), sleep_ms_of(t), pages, sleep_ms);
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
 * The steady rate's cost: the full scan's period at the rate in force
 * (the minimum rate or the CPU ceiling may make it other than planned),
 * ksmd's CPU an hour at that rate (from its cost per page, measured in
 * the boost), and, on a kernel without smart scan (before 6.7), that
 * every tracked page is rescanned each pass.
 */
static void describe_cost(const struct tuner *t, char *buf, size_t len)
{
	double per_s = (double)t->steady_pages * 1000.0 / (double)(t->steady_sleep_ms > 0 ? t->steady_sleep_ms : 1);
	double period = t->scan_pages > 0 && per_s > 0 ? t->scan_pages / per_s : t->cfg.steady_scan_s;
	size_t n = (size_t)snprintf(buf, len, " (a full scan about every %.*f s", period < 10 ? 1 : 0, period);

	if (t->cpu_per_page > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; ksmd about %.0f CPU-seconds an hour, %.2f%% of a core",
				      per_s * t->cpu_per_page * 3600, per_s * t->cpu_per_page * 100);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, ")");
	if (t->no_smart_scan && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; no smart scan in this kernel (Linux 6.7+): "
				      "all %lld tracked pages are rescanned on each pass, %.0f pages/s",
				      t->rmap_at_handover > 0 ? t->rmap_at_handover : 0, per_s);
	if (t->frugal && n < len)
		snprintf(buf + n, len - n, "; slowed to the minimum: merging did not pay for ksmd's CPU");
}

static void describe(struct tuner *t)
{
	char cost[384];

	describe_cost(t, cost, sizeof cost);
	/* Taken over in the steady phase (tune_resume_steady): this tuner never boosted. */
	if (!t->boosts) {
		snprintf(t->handover, sizeof t->handover, "taken over in the steady phase: %lld pages every %lld ms%s",
			 t->steady_pages, t->steady_sleep_ms, cost);
		return;
	}
	snprintf(t->handover, sizeof t->handover, "boost %d/%sms for %.0f s%s, then %lld pages every %lld ms%s",
		 BOOST_PAGES, BOOST_SLEEP, t->boost_total, t->boosts > 1 ? " in all (boosted again on new memory)" : "",
		 t->steady_pages, t->steady_sleep_ms, cost);
}

/* Writes the steady rate when it changed by more than a fifth (small changes are not worth a write). */
static bool set_steady_rate(struct tuner *t, const struct tune_input *in, struct knob_set *out, bool always)
{
	long long pages, sleep_ms;
	char v[32];

	steady_rate(t, in->pressure, &pages, &sleep_ms);
	pages = within_cpu(t, pages, in->ksmd_cpu_pct);
	if (!always && pages * 4 <= t->steady_pages * 5 && pages * 5 >= t->steady_pages * 4 &&
	    sleep_ms * 4 <= t->steady_sleep_ms * 5 && sleep_ms * 5 >= t->steady_sleep_ms * 4)
		return false;
	if (always || sleep_ms != t->steady_sleep_ms) {
		snprintf(v, sizeof v, "%lld", sleep_ms);
		knob_put(out, "sleep_millisecs", v);
	}
	t->steady_pages = pages;
	t->steady_sleep_ms = sleep_ms;
	snprintf(v, sizeof v, "%lld", pages);
	knob_put(out, "pages_to_scan", v);
	describe(t);
	return true;
}

/* ksmd's CPU per page scanned over the boost, where both can be read. */
static void measure_cost(struct tuner *t, const struct sys_sample *now)
{
	struct scan_mark m;
	double pages, cpu;

	if (t->boost_mark.t < 0)
		return;
	mark_of(&m, now);
	if (m.ksmd_cpu < 0 || t->boost_mark.ksmd_cpu < 0)
		return;
	cpu = m.ksmd_cpu - t->boost_mark.ksmd_cpu;
	/* Without pages_scanned (before 6.6) every tracked page is scanned each pass. */
	if (m.scanned != LLONG_MIN && t->boost_mark.scanned != LLONG_MIN)
		pages = (double)(m.scanned - t->boost_mark.scanned);
	else
		pages = (double)(m.scans - t->boost_mark.scans) * (double)(m.rmap > 0 ? m.rmap : 0);
	if (pages >= 10000 && cpu > 0)
		t->cpu_per_page = cpu / pages;
}

static void go_steady(struct tuner *t, const struct tune_input *in, struct knob_set *out, const char *why)
{
	long long sharing = sys_value(in->now, "pages_sharing");

	t->phase = TUNE_STEADY;
	t->boost_total += in->now->t - t->boost_start;
	t->rmap_at_handover = sys_rmap_items(in->now);
	t->no_smart_scan = sys_value(in->now, "pages_skipped") == LLONG_MIN;
	t->cand_at_handover = in->candidate_pages;
	measure_cost(t, in->now);
	/* A boost for lost merges that won nothing back: they are gone, the new baseline. */
	if (t->sharing_at_loss >= 0 && sharing <= t->sharing_at_loss + (t->sharing_at_loss / 50 > 64 ?
									 t->sharing_at_loss / 50 : 64))
		t->loss_futile = true;
	t->sharing_at_loss = -1;
	t->peak_sharing = sharing > 0 ? sharing : 0;
	t->rmap_at_peak = t->rmap_at_handover;
	/* Until a full scan has been measured: every tracked page, at the fastest period. */
	t->scan_pages = t->rmap_at_handover > 0 ? (double)t->rmap_at_handover : 0;
	t->period_s = fastest_s(t);
	mark_of(&t->steady_mark, in->now);
	t->steady_mark_ended_scan = false;
	set_steady_rate(t, in, out, true);
	snprintf(t->last_decision, sizeof t->last_decision, "steady (%s): %lld pages every %lld ms", why,
		 t->steady_pages, t->steady_sleep_ms);
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
	t->nmarks = 0;
	t->frugal = false;
	t->cheap_since = 0;
	mark_of(&t->boost_mark, in->now);
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
		 "slowed to %d pages every %lld ms: %.1f MiB saved for %.1f%% of a core, under the floor for %.0f s",
		 STEADY_MIN_PAGES, t->steady_sleep_ms, (double)gp / 1048576.0, in->ksmd_cpu_pct, COST_WINDOW_S);
}

/*
 * At each full scan of the steady phase: the pages it scanned, and the
 * period the churn allows.  A page written after it merged waits about
 * two periods to merge again, so under a steady churn the savings settle
 * short of their peak by the pages lost in two periods: that shortfall is
 * the churn made visible.  The pages short at a scan's end were written
 * during it: their number over its time is the churn a second, and the
 * period is set so that two periods of it stay under CHURN_SHARE of the
 * peak (at most four times as long as before, after a scan without any).
 * Pages new to ksmd's tracking need two scans too: their rate bounds the
 * period the same way.
 */
static void follow_churn(struct tuner *t, const struct sys_sample *now)
{
	struct scan_mark m, *was = &t->steady_mark;
	double dt, period, by_growth, allowed;
	long long shortfall;
	bool was_fastest;

	mark_of(&m, now);
	if (m.scans == LLONG_MIN || m.scans <= was->scans || (dt = m.t - was->t) <= 0)
		return;
	/* From a mark taken just after a scan ended (not the hand-over's, in mid-scan at the boost's rate). */
	if (m.scanned != LLONG_MIN && was->scanned != LLONG_MIN && m.scanned >= was->scanned) {
		if (t->steady_mark_ended_scan)
			t->scan_pages = (double)(m.scanned - was->scanned) / (double)(m.scans - was->scans);
	} else if (m.rmap >= 0) {
		t->scan_pages = (double)m.rmap;
	}
	t->steady_mark_ended_scan = true;
	t->hurried = false;
	period = t->period_s > 0 ? t->period_s : fastest_s(t);
	was_fastest = period <= fastest_s(t);
	/* The pages waiting now were written during the scan that ended: the churn per second. */
	shortfall = m.sharing >= 0 && t->peak_sharing > m.sharing ? t->peak_sharing - m.sharing : 0;
	allowed = CHURN_SHARE * (double)t->peak_sharing;
	if (shortfall > 0 && allowed * dt / (2 * (double)shortfall) < period * 4)
		period = allowed * dt / (2 * (double)shortfall);
	else
		period *= 4;
	by_growth = m.rmap > was->rmap && was->rmap >= 0 ?
		    allowed * dt / (2 * (double)(m.rmap - was->rmap)) : ceiling_s(t);
	if (by_growth < period)
		period = by_growth;
	t->period_s = period < fastest_s(t) ? fastest_s(t) : period > ceiling_s(t) ? ceiling_s(t) : period;
	/* Merges lost for good (pages written with content of their own) are
	 * not churn: a shortfall that even the fastest period does not win
	 * back fades, by half a scan, or it would hold the period there. */
	if (shortfall > 0 && t->period_s <= fastest_s(t) && was_fastest)
		t->peak_sharing = m.sharing + shortfall / 2;
	*was = m;
}

/*
 * Within a scan: when more than CHURN_SHARE of the savings already wait,
 * the period is too long for the churn; shorten it now (once a scan), not
 * at the scan's end.
 */
static void hurry(struct tuner *t, long long sharing)
{
	double allowed = CHURN_SHARE * (double)t->peak_sharing;
	long long shortfall = t->peak_sharing - sharing;

	if (t->hurried || sharing < 0 || (double)shortfall <= allowed || t->period_s <= fastest_s(t))
		return;
	t->hurried = true;
	t->period_s *= allowed / (double)shortfall;
	if (t->period_s < fastest_s(t))
		t->period_s = fastest_s(t);
}

static void steady_tick(struct tuner *t, const struct tune_input *in, struct knob_set *out)
{
	long long rmap = sys_rmap_items(in->now), c = in->candidate_pages;
	long long sharing = sys_value(in->now, "pages_sharing");

	if (in->new_work) {
		boost_again(t, in, out, "a command or attached processes registered");
		return;
	}
	if (c >= 0 && t->cand_at_handover >= 0 && c > t->cand_at_handover + t->cand_at_handover / 20 + NEW_WORK_PAGES) {
		t->loss_futile = false;
		boost_again(t, in, out, "new memory to merge");
		return;
	}
	if (rmap < 0)
		return;
	if (rmap > t->rmap_at_handover * 3 / 2 && rmap - t->rmap_at_handover > 25600) {
		t->loss_futile = false;
		boost_again(t, in, out, "the tracked pages grew by half");
		return;
	}
	/* Less memory than at the hand-over (a command ended): the new baseline. */
	if (c >= 0 && c < t->cand_at_handover) {
		t->cand_at_handover = c;
		t->peak_sharing = sharing;
	}
	/* Merged pages that went with their memory (a process ended, memory was
	 * unmapped) took their rmap items along: no churn, the new baseline.
	 * A write that breaks a merge leaves the page tracked. */
	if (rmap < t->rmap_at_peak && t->rmap_at_peak - rmap >= (t->peak_sharing - sharing) / 2)
		t->rmap_at_peak = rmap, t->peak_sharing = sharing;
	if (sharing > t->peak_sharing)
		t->rmap_at_peak = rmap, t->peak_sharing = sharing;
	if (!t->loss_futile && sharing >= 0 &&
	    sharing < t->peak_sharing - (t->peak_sharing / 10 > LOSS_PAGES ? t->peak_sharing / 10 : LOSS_PAGES)) {
		t->sharing_at_loss = sharing;
		boost_again(t, in, out, "merged memory is being lost");
		return;
	}
	follow_churn(t, in->now);
	hurry(t, sharing);
	cost_check(t, in, out);
	if (t->frugal)
		return;
	if (set_steady_rate(t, in, out, false))
		snprintf(t->last_decision, sizeof t->last_decision,
			 "steady rate %lld pages every %lld ms (a full scan every %.0f s for the churn)",
			 t->steady_pages, t->steady_sleep_ms, steady_period(t, in->pressure));
}

/* Keeps the counters of each full scan that ended in the boost. */
static void mark_scan(struct tuner *t, const struct sys_sample *now, long long scans)
{
	int n = (int)(sizeof t->marks / sizeof t->marks[0]);

	if (t->nmarks && t->marks[t->nmarks - 1].scans == scans)
		return;
	if (t->nmarks == n) {
		memmove(t->marks, t->marks + 1, sizeof t->marks[0] * (size_t)(n - 1));
		t->nmarks--;
	}
	mark_of(&t->marks[t->nmarks++], now);
}

/*
 * The boost's end: judged over the newest stretch that holds one whole
 * full scan (from a mark two scans back: the scan under way at a mark
 * began before it).
 */
static void boost_tick(struct tuner *t, const struct tune_input *in, struct knob_set *out, long long scans,
		       long long sharing)
{
	long long rmap = sys_rmap_items(in->now);

	if (t->start_scans < 0) {
		t->start_scans = t->boosts == 1 ? sys_value(in->first, "full_scans") : scans;
		if (t->boosts == 1)
			mark_of(&t->boost_mark, in->first);
	}
	follow_candidate(t, in, scans);
	mark_scan(t, in->now, scans);
	if (in->now->t - (t->last_growth > t->boost_start ? t->last_growth : t->boost_start) > BOOST_MAX_S) {
		go_steady(t, in, out, "a minute without new memory");
		return;
	}
	if (scans - t->start_scans < MIN_SCANS || !candidate_settled(t, scans))
		return;
	for (int i = t->nmarks - 1; i >= 0; i--) {
		const struct scan_mark *m = &t->marks[i];
		if (m->scans > scans - 2)
			continue;
		/* New pages still coming into ksmd's tracking: not scanned twice yet. */
		if (rmap >= 0 && m->rmap >= 0 && rmap - m->rmap > m->rmap / 100 + GROWTH_PAGES)
			return;
		if (sharing - m->sharing <= (sharing / 50 > 64 ? sharing / 50 : 64))
			go_steady(t, in, out, "merging levelled off: a full scan merged under 2% more");
		return;
	}
}

void tune_tick(struct tuner *t, const struct tune_input *in, struct knob_set *out)
{
	long long scans = sys_value(in->now, "full_scans");
	long long sharing = sys_value(in->now, "pages_sharing");

	out->n = 0;
	t->last_decision[0] = '\0';
	if (t->phase == TUNE_STEADY)
		steady_tick(t, in, out);
	if (t->phase != TUNE_BOOST || scans == LLONG_MIN || sharing == LLONG_MIN)
		return;
	boost_tick(t, in, out, scans, sharing);
}
