/*
 * Unit tests of the tuning policy (launcher/host/tune.c) in its steady
 * phase, on a small simulated machine whose ksmd scans at the rate of the
 * knobs the tuner writes and whose writes break merged pages: the period
 * follows the churn, a boost ends on progress, lost merges boost once.
 * No root, nothing changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/counters.h"
#include "host/knobs.h"
#include "host/tune.h"
#include "tune_samples.h"
#include "unit.h"

/*
 * A small machine for the steady phase: ksmd scans at the rate of the
 * knobs the tuner wrote, SCAN_PAGES pages a full scan (smart scan skips
 * the rest), at 3 us of CPU a page; writes break WRITES merged pages a
 * second, and a page broken merges again once two full scans have ended.
 */
struct world {
	double t, cpu, acc, writes;
	long long scans, scanned, base, broken_new, broken_old, tracked, pages, sleep_ms;
};

#define SCAN_PAGES 50000
#define CPU_PER_PAGE 3e-6

static void world_sample(const struct world *w, struct sys_sample *s)
{
	long long sharing = w->base - w->broken_new - w->broken_old;

	sample_at(s, w->t, sharing, w->tracked, w->scans);
	s->v[7] = w->scanned;
	s->ksmd_cpu = w->cpu;
}

static void world_knobs(struct world *w, const struct knob_set *out)
{
	const char *v;

	if ((v = knob_lookup(out, "pages_to_scan")))
		w->pages = atoll(v);
	if ((v = knob_lookup(out, "sleep_millisecs")))
		w->sleep_ms = atoll(v);
}

static void world_second(struct world *w)
{
	double rate = (double)w->pages * 1000.0 / (double)w->sleep_ms;

	w->t += 1;
	w->scanned += (long long)rate;
	w->cpu += rate * CPU_PER_PAGE;
	w->acc += rate;
	w->broken_new += (long long)w->writes;
	while (w->acc >= SCAN_PAGES) {
		w->acc -= SCAN_PAGES;
		w->scans++;
		w->broken_old = w->broken_new;
		w->broken_new = 0;
	}
}

/* Runs the world and the tuner for SECONDS; returns the tuner's phase changes. */
static int world_run(struct world *w, struct tuner *t, struct sys_sample *s0, double seconds, int *boosts)
{
	struct sys_sample s;
	struct knob_set out;
	struct tune_input in = { .first = s0, .now = &s, .candidate_pages = -1, .pressure = -1, .ksmd_cpu_pct = -1 };
	int changes = 0;
	enum tune_phase was = t->phase;

	for (double end = w->t + seconds; w->t < end;) {
		world_second(w);
		world_sample(w, &s);
		tune_tick(t, &in, &out);
		world_knobs(w, &out);
		if (t->phase != was) {
			changes++;
			if (t->phase == TUNE_BOOST && boosts)
				(*boosts)++;
			was = t->phase;
		}
	}
	return changes;
}

static void world_start(struct world *w, struct tuner *t, struct sys_sample *s0, double writes)
{
	struct knob_set want = { 0 };

	memset(w, 0, sizeof *w);
	w->base = 40000;
	w->tracked = 200000;
	w->writes = writes;
	tune_start(t, NULL, "20", false, 0.0, &want);
	world_knobs(w, &want);
	world_sample(w, s0);
}

/*
 * Memory that stays: after the boost, the period grows to the ceiling
 * (120 s) within the first minutes, and the rate is the pages a full scan
 * really scans over it, as 100 pages with a longer sleep; the cost an
 * hour measured in the boost is said.  Memory of which 5% is written a
 * minute: a period that keeps the savings within 5% of their peak, no
 * boost again.
 */
static void test_tune_steady_follows_the_churn(void)
{
	struct world w;
	struct tuner t;
	struct sys_sample s0;
	int boosts = 0;
	double per_s;
	char want[128];

	world_start(&w, &t, &s0, 0);
	world_run(&w, &t, &s0, 60, &boosts);
	CHECK(t.phase == TUNE_STEADY);
	world_run(&w, &t, &s0, 600, &boosts);
	CHECK(t.phase == TUNE_STEADY && boosts == 0);
	CHECK(t.period_s == 120);
	/* 50,000 pages in 120 s: 417 a second, 100 pages every 240 ms. */
	CHECK(w.pages == 100 && w.sleep_ms == 100LL * 1000 / (SCAN_PAGES / 120));
	per_s = 100 * 1000.0 / (double)w.sleep_ms;
	snprintf(want, sizeof want, "ksmd about %.0f CPU-seconds an hour, %.2f%% of a core", per_s * CPU_PER_PAGE * 3600,
		 per_s * CPU_PER_PAGE * 100);
	CHECK(strstr(t.handover, want) != NULL);
	/* Under 1% of a core over the last ten minutes. */
	{
		double cpu0 = w.cpu;
		world_run(&w, &t, &s0, 600, &boosts);
		CHECK((w.cpu - cpu0) / 600 < 0.01);
	}

	/* 7% of the merged pages lost for good (under the tenth that boosts):
	 * the period shortens, finds nothing to win back, and grows again. */
	world_start(&w, &t, &s0, 0);
	world_run(&w, &t, &s0, 600, &boosts);
	CHECK(t.period_s == 120);
	w.base -= 2800;
	world_run(&w, &t, &s0, 120, &boosts);
	CHECK(t.period_s < 120);
	world_run(&w, &t, &s0, 1200, &boosts);
	CHECK(t.phase == TUNE_STEADY && boosts == 0 && t.period_s == 120);

	/* 5% of the 40,000 merged pages written a minute. */
	world_start(&w, &t, &s0, 40000 * 0.05 / 60);
	world_run(&w, &t, &s0, 1800, &boosts);
	CHECK(t.phase == TUNE_STEADY && boosts == 0);
	/* Two periods of 33 pages a second within 2,000 pages: about 30 s. */
	CHECK(t.period_s >= 25 && t.period_s <= 35);
	CHECK(w.broken_new + w.broken_old < 40000 / 10);
}

/*
 * The boost ends on progress: three full scans, the last of them merging
 * nothing more.  Memory merged in the second scan: on a quiet machine
 * (a scan every 0.5 s) that is 2 s; where ksmd gets a quarter of that
 * CPU (a scan every 2 s), 8 s.  No minimum in seconds either way.
 */
static void test_tune_boost_ends_on_progress(void)
{
	double every[] = { 0.5, 2.0 }, ends[2];

	for (int k = 0; k < 2; k++) {
		struct knob_set want = { 0 }, out;
		struct sys_sample s0, s;
		struct tuner t;
		struct tune_input in = { .first = &s0, .now = &s, .candidate_pages = 50000, .pressure = -1,
					 .ksmd_cpu_pct = -1 };
		double now;

		tune_start(&t, NULL, "20", false, 0.0, &want);
		sample_at(&s0, 0, 0, 0, 0);
		for (now = 0.25; now <= 30 && t.phase == TUNE_BOOST; now += 0.25) {
			long long scans = (long long)(now / every[k]);
			sample_at(&s, now, scans >= 2 ? 20000 : 0, 50000, scans);
			tune_tick(&t, &in, &out);
		}
		ends[k] = now - 0.25;
		CHECK(t.phase == TUNE_STEADY && strstr(t.last_decision, "merging levelled off"));
	}
	CHECK(ends[0] >= 2.0 && ends[0] <= 2.25);
	CHECK(ends[1] >= 8.0 && ends[1] <= 8.25);
}

/*
 * Merged memory lost by a tenth while the candidate memory stays: boost
 * again.  A boost that won nothing back is not tried again, until new
 * memory comes.
 */
static void test_tune_boost_on_lost_merges(void)
{
	struct knob_set out;
	struct sys_sample s0, s;
	struct tuner t;
	struct tune_input in = { .first = &s0, .now = &s, .pressure = -1, .ksmd_cpu_pct = -1 };
	double now = to_steady(&t, NULL, &in, &s, 100000, 100000);

	CHECK(t.phase == TUNE_STEADY && t.peak_sharing == 40000);
	/* A command ended: its 20,000 merged pages went with their 60,000
	 * tracked pages.  Not lost to writes: no boost, the new baseline. */
	sample_at(&s, now, 20000, 40000, (long long)now);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_STEADY && t.peak_sharing == 20000);
	now = to_steady(&t, NULL, &in, &s, 100000, 100000);
	/* 9% lost: no boost. */
	sample_at(&s, now, 36400, 100000, (long long)now);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_STEADY);
	/* 25% lost: boost; its scans win nothing back. */
	for (now += 1; now < 200 && !(t.phase == TUNE_STEADY && t.boosts == 2); now += 1) {
		sample_at(&s, now, 30000, 100000, (long long)now);
		tune_tick(&t, &in, &out);
		if (t.boosts == 2 && t.phase == TUNE_BOOST)
			CHECK(strstr(t.handover, "then boosted again (merged memory is being lost)") != NULL);
	}
	CHECK(t.boosts == 2 && t.phase == TUNE_STEADY && t.loss_futile && t.peak_sharing == 30000);
	/* Lost again: not another boost. */
	sample_at(&s, now, 20000, 100000, (long long)now);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_STEADY);
	/* New memory: a boost, and lost merges count again after it. */
	in.candidate_pages = 200000;
	sample_at(&s, now + 1, 20000, 100000, (long long)now + 1);
	tune_tick(&t, &in, &out);
	CHECK(t.phase == TUNE_BOOST && !t.loss_futile);
}

UNIT_MAIN(UNIT_TEST(test_tune_steady_follows_the_churn), UNIT_TEST(test_tune_boost_ends_on_progress),
	  UNIT_TEST(test_tune_boost_on_lost_merges))
