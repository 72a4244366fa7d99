/*
 * Unit tests of --estimate's cost model (launcher/eval/scancost.c) and of
 * the parser of the host's calibration (launcher/host/scancal.c), on
 * made-up figures worked out by hand.  No root, no file read.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "eval/scancost.h"
#include "host/scancal.h"
#include "unit.h"

#define NEAR(a, b) near((double)(a), (double)(b))

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 + 1e-6 * fabs(b);
}

/* 100,000 pages at 5000 pages / 10 ms, 1 us a page: a pass is 20 batches
 * of 10 ms (0.2 s) and 0.1 s of CPU; the savings take two passes. */
static void test_rate_sleep_bound(void)
{
	struct scan_cost k;

	CHECK(scan_cost_at_rate(100000, (struct scan_host){ 1000, 0 }, (struct scan_rate){ 5000, 10 }, &k));
	CHECK(NEAR(k.passes, 2));
	CHECK(NEAR(k.seconds, 0.6));
	CHECK(NEAR(k.seconds_95, 0.585));
	CHECK(NEAR(k.cpu_seconds, 0.2));
	CHECK(NEAR(k.cpu_seconds_95, 0.195));
	CHECK(!k.cpu_bound);
}

/* 3 us a page at 5000 pages / 10 ms: 15 ms of work per 10 ms of sleep,
 * more than one core can give; the time is mostly CPU.  A batch's extra
 * 2 ms is added to each of the 20 sleeps. */
static void test_rate_cpu_bound(void)
{
	struct scan_cost k;

	CHECK(scan_cost_at_rate(100000, (struct scan_host){ 3000, 2 }, (struct scan_rate){ 5000, 10 }, &k));
	CHECK(k.cpu_bound);
	CHECK(NEAR(k.cpu_seconds, 0.6));
	/* per pass: 20 x 12 ms + 0.3 s = 0.54 s */
	CHECK(NEAR(k.seconds, 1.08));
	CHECK(k.seconds > k.cpu_seconds);
}

/* The kernel's default 100 pages / 20 ms: the sleep dominates. */
static void test_rate_kernel_default(void)
{
	struct scan_cost k;

	CHECK(scan_cost_at_rate(1000000, (struct scan_host){ 2000, 0 }, (struct scan_rate){ 100, 20 }, &k));
	/* per pass: 10,000 batches x 20 ms + 2 s = 202 s */
	CHECK(NEAR(k.seconds, 404));
	CHECK(NEAR(k.cpu_seconds, 4));
	CHECK(!k.cpu_bound);
}

static void test_rate_nothing(void)
{
	struct scan_cost k;

	CHECK(!scan_cost_at_rate(0, (struct scan_host){ 1000, 0 }, (struct scan_rate){ 5000, 10 }, &k));
	CHECK(k.seconds == 0 && k.cpu_seconds == 0);
	CHECK(!scan_cost_at_rate(100, (struct scan_host){ 1000, 0 }, (struct scan_rate){ 0, 10 }, &k));
	CHECK(!scan_cost_at_rate(100, (struct scan_host){ 0, 0 }, (struct scan_rate){ 5000, 10 }, &k));
	/* A sleep of 0 with a negative extra never makes time negative. */
	CHECK(scan_cost_at_rate(100000, (struct scan_host){ 1000, -5 }, (struct scan_rate){ 5000, 0 }, &k));
	CHECK(NEAR(k.seconds, 0.2));
}

/* The default tuning: the boost's figures, then still memory's steady
 * rate: one full scan of the pages every 120 s (--steady's default) at
 * 20 ms: 400,000 pages -> 66 pages a batch, fewer than 100, so 100 pages
 * every 30 ms (0.1 ms of CPU per 30.1 ms). */
static void test_default_tuning(void)
{
	struct scan_cost k, boost;

	CHECK(scan_cost_default(400000, (struct scan_host){ 1000, 0 }, &k));
	CHECK(scan_cost_at_rate(400000, (struct scan_host){ 1000, 0 }, (struct scan_rate){ BOOST_RATE_PAGES, BOOST_RATE_MS }, &boost));
	CHECK(NEAR(k.seconds, boost.seconds) && NEAR(k.cpu_seconds, boost.cpu_seconds));
	CHECK(k.steady_pages == 100 && k.steady_sleep_ms == 30);
	CHECK(NEAR(k.steady_cpu_per_hour, 3600.0 * 0.0001 / 0.0301));
	/* 1.2 million pages: 200 pages every 20 ms. */
	CHECK(scan_cost_default(1200000, (struct scan_host){ 1000, 0 }, &k));
	CHECK(k.steady_pages == 200 && k.steady_sleep_ms == 20);
	/* Small workloads: 100 pages, the sleep at most a second. */
	CHECK(scan_cost_default(1000, (struct scan_host){ 1000, 0 }, &k));
	CHECK(k.steady_pages == 100 && k.steady_sleep_ms == 1000);
	/* Large ones: its ceiling, the boost's pages. */
	CHECK(scan_cost_default(100000000, (struct scan_host){ 1000, 0 }, &k));
	CHECK(k.steady_pages == BOOST_RATE_PAGES);
}

static void test_cow(void)
{
	CHECK(NEAR(cow_faults_per_minute(500, 5), 6000));
	CHECK(cow_faults_per_minute(500, 0) == 0);
}

/* The calibration file: what a measure makes, and what is refused. */
static void test_calibration_parse(void)
{
	struct scancal c;
	char why[200];

	CHECK(scancal_parse("# comment\nns_per_page 2500\nbatch_extra_ms 4.5\npages 400000\ncpu_seconds 1\n"
			    "kernel 6.18.0\n", &c, why, sizeof why) == 0);
	CHECK(NEAR(c.ns_per_page, 2500) && NEAR(c.batch_extra_ms, 4.5) && c.pages == 400000);
	CHECK(!strcmp(c.kernel, "6.18.0"));
	/* The figure must agree with its measure. */
	CHECK(scancal_parse("ns_per_page 25\nbatch_extra_ms 0\npages 400000\ncpu_seconds 1\n", &c, why, sizeof why) < 0);
	CHECK(strstr(why, "does not match") != NULL);
	CHECK(scancal_parse("ns_per_page 2500\nbatch_extra_ms 0\npages 400000\n", &c, why, sizeof why) < 0);
	CHECK(scancal_parse("ns_per_page 2500x\nbatch_extra_ms 0\npages 400000\ncpu_seconds 1\n", &c, why, sizeof why) < 0);
	CHECK(strstr(why, "line 1") != NULL);
	CHECK(scancal_parse("ns_per_page 2500\nbatch_extra_ms 0\npages 400000\ncpu_seconds 1\nsleep 3\n", &c, why, sizeof why) < 0);
	CHECK(scancal_parse("ns_per_page 2500\nbatch_extra_ms 5000\npages 400000\ncpu_seconds 1\n", &c, why, sizeof why) < 0);
	CHECK(scancal_parse("ns_per_page 5\nbatch_extra_ms 0\npages 400000000\ncpu_seconds 2\n", &c, why, sizeof why) < 0);
	CHECK(scancal_parse("ns_per_page 50000\nbatch_extra_ms 0\npages 10\ncpu_seconds 0.0005\n", &c, why, sizeof why) < 0);
	CHECK(scancal_parse("", &c, why, sizeof why) < 0);
}

/* A measure: 500,000 pages at 5000 / 10 ms, 1.25 s of CPU in 2.5 s: 100
 * batches, 1.25 s of waiting, 12.5 ms each, 2.5 ms beyond the sleep. */
static void test_calibration_measure(void)
{
	struct scancal c;

	CHECK(scancal_of_measure(1.25, 2.5, 500000, 5000, 10, &c));
	CHECK(NEAR(c.ns_per_page, 2500) && NEAR(c.batch_extra_ms, 2.5));
	CHECK(!scancal_of_measure(0.1, 2.5, 500000, 5000, 10, &c));      /* too little CPU to tell */
	CHECK(!scancal_of_measure(1.25, 2.5, 1000, 5000, 10, &c));       /* too few pages */
	CHECK(!scancal_of_measure(1.25, 1.0, 500000, 5000, 10, &c));     /* more CPU than time */
}

/*
 * A run that tunes new memory at 5000 / 10 ms: passes of PAGES pages, pass
 * i at PASS_NS[i] a page, merging MERGED[i] pages (none where NULL), each
 * batch waiting 2 ms beyond its sleep, or EXTRA_MS[i] where given.
 * Sampled twice a pass, at its middle and just after its end.
 */
struct run {
	const double *pass_ns, *extra_ms;
	const long long *merged;
	int passes;
	long long pages;
};

static void feed_passes(struct scancal_watch *w, struct run r)
{
	struct scancal_point at = { 0, 0, 0, 7, 0 };

	scancal_watch_start(w, &at, 5000, 10);
	for (int i = 0; i < r.passes; i++) {
		double cpu = (double)r.pages * r.pass_ns[i] / 1e9,
		       wall = cpu + (double)r.pages / 5000 * (10 + (r.extra_ms ? r.extra_ms[i] : 2)) / 1000;
		long long merged = r.merged ? r.merged[i] : 0;

		at.cpu += cpu / 2, at.t += wall / 2, at.scanned += r.pages / 2, at.sharing += merged / 2;
		scancal_watch_point(w, &at);
		at.cpu += cpu / 2, at.t += wall / 2, at.scanned += r.pages / 2, at.sharing += merged - merged / 2;
		at.scans++;
		scancal_watch_point(w, &at);
	}
}

static void test_calibration_watch(void)
{
	/* Checksums, the merge, then settled memory. */
	const double merging[] = { 1000, 3000, 200, 200, 200, 200, 200, 200, 200, 200 };
	const long long merged[] = { 0, 150000, 0, 0, 0, 0, 0, 0, 0, 0 };
	/* The same, then memory written again and again, merging nothing. */
	const double churn[] = { 1000, 3000, 200, 200, 5000, 5000, 5000, 200 };
	const double small[] = { 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000 };
	const long long small_merged[] = { 0, 0, 0, 0, 0, 40000, 0, 0 };
	/* The merging passes meet the host at its busiest (guests booting). */
	const double busy[] = { 40, 40, 2, 2, 2, 2, 2, 2, 2, 2 };
	struct scancal_watch w;
	struct scancal c;

	/* The first two passes are kept, not the run's average (560 ns). */
	feed_passes(&w, (struct run){ merging, NULL, merged, 10, 300000 });
	CHECK(scancal_watch_result(&w, &c) && NEAR(c.ns_per_page, 2000));
	CHECK(NEAR(c.batch_extra_ms, 2.0) && c.pages == 600000);
	/* Their CPU per page, but the quietest window's extra wait: 2 ms, not 40. */
	feed_passes(&w, (struct run){ merging, busy, merged, 10, 300000 });
	CHECK(scancal_watch_result(&w, &c) && NEAR(c.ns_per_page, 2000) && NEAR(c.batch_extra_ms, 2.0));
	/* Costlier passes that merge nothing are not the ones kept. */
	feed_passes(&w, (struct run){ churn, NULL, merged, 8, 300000 });
	CHECK(scancal_watch_result(&w, &c) && NEAR(c.ns_per_page, 2000));
	/* One pass is not a window, however much it merged. */
	feed_passes(&w, (struct run){ merging, NULL, (const long long[]){ 150000 }, 1, 300000 });
	CHECK(!scancal_watch_result(&w, &c));
	/* Small memory: the window grows until it holds enough pages and CPU
	 * (0.5 CPU-s: 250,000 pages at 2,000 ns; 40,000 pages a pass). */
	feed_passes(&w, (struct run){ small, NULL, small_merged, 8, 40000 });
	CHECK(scancal_watch_result(&w, &c) && NEAR(c.ns_per_page, 2000) && c.pages >= 250000);
}

UNIT_MAIN(UNIT_TEST(test_rate_sleep_bound), UNIT_TEST(test_rate_cpu_bound), UNIT_TEST(test_rate_kernel_default),
	  UNIT_TEST(test_rate_nothing), UNIT_TEST(test_default_tuning), UNIT_TEST(test_cow),
	  UNIT_TEST(test_calibration_parse), UNIT_TEST(test_calibration_measure),
	  UNIT_TEST(test_calibration_watch))
