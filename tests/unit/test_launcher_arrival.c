/*
 * Unit tests of the boost paced to the memory's arrival (launcher/host/
 * arrival.c, and its use in tune.c): the arithmetic, and a small machine
 * where memory arrives for 10 s (guests booting) and ksmd can scan no
 * more than a core allows.  No root, nothing changed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/arrival.h"
#include "host/counters.h"
#include "host/knobs.h"
#include "host/tune.h"
#include "unit.h"

/* 33,000 pages a second for ten ticks: paced to twice that; then full. */
static void test_arrival_pace(void)
{
	struct arrival a;
	long long c = 0;

	arrival_reset(&a);
	CHECK(arrival_boost_pages(&a, 0, 100, 5000, 10) == 5000);
	arrival_follow(&a, 0.0, 100000);          /* there from the start: no arrival */
	CHECK(a.t0 < 0 && arrival_boost_pages(&a, 100000, 100, 5000, 10) == 5000);
	arrival_follow(&a, 1.0, 100000);
	CHECK(arrival_boost_pages(&a, 100000, 100, 5000, 10) == 5000);
	for (int i = 1; i <= 10; i++) {
		c = 100000 + 33000LL * i;
		arrival_follow(&a, 1.0 + i, c);
		CHECK(a.t0 == 1.0 && a.pages_per_s == 33000);
		CHECK(arrival_boost_pages(&a, c, 100, 5000, 10) == 660);
	}
	/* No growth: still arriving for 3 s, at the rate since it began. */
	arrival_follow(&a, 12.0, c + 100);
	CHECK(a.t0 == 1.0 && arrival_boost_pages(&a, c + 100, 100, 5000, 10) == 601);
	arrival_follow(&a, 13.0, c + 100);
	CHECK(a.t0 == 1.0);
	arrival_follow(&a, 14.0, c + 100);
	CHECK(a.t0 < 0 && arrival_boost_pages(&a, c + 100, 100, 5000, 10) == 5000);
	/* A trickle, 200 pages a tick: growth counts from the last growth; the
	 * floor of one full scan in 20 s. */
	for (int i = 1; i <= 3; i++)
		arrival_follow(&a, 14.0 + i, c + 100 + 200 * i);
	CHECK(a.t0 == 14.0 && a.pages_per_s == 200);
	CHECK(arrival_boost_pages(&a, c + 700, 100, 5000, 10) == (c + 700 + 1999) / 2000);
	/* Steps of 2 MiB every 2 s, sampled every second: one arrival. */
	arrival_reset(&a);
	arrival_follow(&a, 0.0, 1000);
	for (int i = 1; i <= 8; i++) {
		arrival_follow(&a, (double)i, 1000 + 512LL * ((i + 1) / 2));
		CHECK(a.t0 == 0.0);
	}
	CHECK(arrival_boost_pages(&a, 1000 + 512 * 4, 100, 5000, 10) == 100);
	arrival_follow(&a, 9.0, -1);              /* unknown */
	CHECK(arrival_boost_pages(&a, 3000, 100, 5000, 10) == 5000);
}

/*
 * Four guests' memory, 330,000 pages, arrives over 10 s; ksmd scans what
 * its knobs ask up to 130,000 pages a second (a core); a page merges at
 * the end of the second full scan that began after it came, and half of
 * all pages are copies.
 */
struct machine {
	double t;
	long long pages, sleep_ms, scans, scanned, cand, tracked, sharing;
	double pos;                  /* pages into the current full scan */
	long long came_before[2];    /* candidate pages when the last two scans began */
};

#define GUEST_PAGES 330000
#define ARRIVAL_S 10
#define KSMD_MAX_PER_S 130000.0

static void machine_second(struct machine *m)
{
	double rate = (double)m->pages * 1000.0 / (double)m->sleep_ms;

	if (rate > KSMD_MAX_PER_S)
		rate = KSMD_MAX_PER_S;
	m->t += 1;
	m->cand = m->t >= ARRIVAL_S ? GUEST_PAGES : (long long)(GUEST_PAGES * m->t / ARRIVAL_S);
	m->scanned += (long long)rate;
	m->pos += rate;
	while (m->cand && m->pos >= (double)m->cand) {
		m->pos -= (double)m->cand;
		m->scans++;
		m->tracked = m->cand;
		m->sharing = m->came_before[0] / 2;
		m->came_before[0] = m->came_before[1];
		m->came_before[1] = m->cand;
	}
}

static void machine_sample(const struct machine *m, struct sys_sample *s)
{
	memset(s, 0, sizeof *s);
	s->t = m->t;
	s->v[2] = m->sharing;
	s->v[0] = m->sharing * sysconf(_SC_PAGESIZE) - m->tracked * 64;
	s->v[6] = m->scans;
	s->v[7] = m->scanned;
	s->ksmd_cpu = -1;
}

static void machine_knobs(struct machine *m, const struct knob_set *k)
{
	const char *v;

	if ((v = knob_lookup(k, "pages_to_scan")))
		m->pages = atoll(v);
	if ((v = knob_lookup(k, "sleep_millisecs")))
		m->sleep_ms = atoll(v);
}

/*
 * Paced while the memory comes (twice its 33,000 pages a second: 660
 * pages every 10 ms), the full rate 3 s after it came; everything merged by
 * 30 s, for about a third of the pages that a fixed 5000 / 10 ms scans
 * (at ksmd's limit all the minute).
 */
static void test_arrival_guests(void)
{
	struct machine m = { 0 };
	struct knob_set want = { 0 }, out;
	struct sys_sample s0, s;
	struct tuner t;
	struct tune_input in = { .first = &s0, .now = &s, .pressure = -1, .ksmd_cpu_pct = -1 };
	long long at30 = -1, paced = 0, arrived = 0;

	tune_start(&t, NULL, "20", false, 0.0, &want);
	machine_knobs(&m, &want);
	machine_sample(&m, &s0);
	while (m.t < 60) {
		machine_second(&m);
		machine_sample(&m, &s);
		in.candidate_pages = m.cand;
		tune_tick(&t, &in, &out);
		machine_knobs(&m, &out);
		if (m.t >= 2 && m.t < ARRIVAL_S) {
			CHECK(m.pages == 660);
			paced++;
		}
		if (m.t == ARRIVAL_S + 3)
			CHECK(m.pages == 5000);
		if (m.t == 30)
			at30 = m.sharing;
		if (m.t == ARRIVAL_S)
			arrived = m.scanned;
	}
	CHECK(paced == ARRIVAL_S - 2);
	CHECK(t.phase == TUNE_STEADY);
	CHECK(at30 == GUEST_PAGES / 2);
	/* The first second at the full rate, then twice what came: a
	 * full rate throughout would scan 1,300,000 pages by then. */
	CHECK(arrived <= (long long)KSMD_MAX_PER_S + 2 * GUEST_PAGES);
	/* The minute: 2,710,000 pages here, 3,230,000 without the pacing, of
	 * the fixed rate's 7,800,000 (its merging ends at 17 s as well). */
	CHECK(m.scanned < 2800000);
	/* Its least rate in the 3 s after the memory came, the rate since it began. */
	CHECK(strstr(t.handover, "boost 5000/10ms, down to 540 pages while memory arrived for 24 s") != NULL);
}

UNIT_MAIN(UNIT_TEST(test_arrival_pace), UNIT_TEST(test_arrival_guests))
