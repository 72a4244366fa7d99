/*
 * scancost.c - the cost of the savings: ksmd's CPU and the time to reach
 * them, from the candidate pages, the scan rate and the per-page cost.
 *
 * ksmd scans pages_to_scan pages, then sleeps sleep_millisecs, in one
 * kernel thread: a batch takes the sleep plus the batch's CPU work, and
 * can never use more than one core.  So a full pass over P pages at
 * n pages every s ms, c seconds per page, takes
 *     P / n * (s + e)  +  P * c
 * seconds, of which P * c are CPU; when n * c exceeds s the pass is
 * CPU-bound (the knobs ask for more than one core can give).  e is what a
 * batch takes beyond both, measured on the host (the sleep's timer rounds
 * to jiffies; on a busy host ksmd waits for a CPU): 0 uncalibrated.
 *
 * Passes to the savings: mm/ksm.c cmp_and_merge_page() keeps a page's
 * checksum the first time it sees it and puts the page in the unstable
 * tree only when the checksum is the same on the next scan; a page whose
 * twin is already in the unstable tree (put there earlier in that scan)
 * or in the stable tree merges then.  So memory that is ready when ksmd
 * starts on it merges in its second pass: pass 1 records checksums, pass
 * 2 merges, its savings growing as the pass goes (linear here).  The
 * full_scans counter sees a third scan (the tuner's MIN_SCANS): the one
 * in progress when the memory appeared, which the prediction leaves out
 * since it starts from ksmd taking up these processes.
 */
#include <string.h>

#include "eval/scancost.h"
#include "host/tune.h"

#define PASSES_TO_SAVINGS 2.0
#define PASSES_TO_95 1.95               /* pass 1, then 95% of pass 2 */

/* ksm-run's default tuning (launcher/host/tune.c). */
#define BOOST_PAGES BOOST_RATE_PAGES
#define BOOST_SLEEP_MS BOOST_RATE_MS
#define STEADY_SLEEP_MS 20              /* the sleep before the boost: the kernel's default */

static double pass_seconds(uint64_t pages, struct scan_host host, struct scan_rate rate)
{
	double batch_wait = ((double)rate.sleep_ms + host.batch_extra_ms) / 1000.0;

	if (batch_wait < 0)
		batch_wait = 0;
	return (double)pages / (double)rate.pages * batch_wait + (double)pages * host.ns_per_page / 1e9;
}

bool scan_cost_at_rate(uint64_t pages, struct scan_host host, struct scan_rate rate, struct scan_cost *out)
{
	double c = host.ns_per_page / 1e9, pass;

	memset(out, 0, sizeof *out);
	if (!pages || rate.pages <= 0 || rate.sleep_ms < 0 || !(host.ns_per_page > 0))
		return false;
	pass = pass_seconds(pages, host, rate);
	out->passes = PASSES_TO_SAVINGS;
	out->seconds = PASSES_TO_SAVINGS * pass;
	out->seconds_95 = PASSES_TO_95 * pass;
	out->cpu_seconds = PASSES_TO_SAVINGS * (double)pages * c;
	out->cpu_seconds_95 = PASSES_TO_95 * (double)pages * c;
	out->cpu_bound = (double)rate.pages * c > (double)rate.sleep_ms / 1000.0;
	return true;
}

/*
 * The default tuning: boost at 5000 pages every 10 ms until the savings,
 * then the steady rate of memory that stays (tune.c): a full scan every
 * --steady seconds (its default), of every candidate page.  Smart scan
 * (6.7+) skips pages found unique, and churn shortens the period, so the
 * steady figure is for still memory, and an upper bound of it where the
 * kernel has smart scan.
 */
bool scan_cost_default(uint64_t pages, struct scan_host host, struct scan_cost *out)
{
	struct scan_rate boost = { BOOST_PAGES, BOOST_SLEEP_MS };
	struct tune_config cfg;
	long long steady_pages, steady_sleep;
	double c = host.ns_per_page / 1e9, wait;

	if (!scan_cost_at_rate(pages, host, boost, out))
		return false;
	tune_defaults(&cfg);
	tune_steady_rate((double)pages, cfg.steady_scan_s, STEADY_SLEEP_MS, &steady_pages, &steady_sleep);
	out->steady_pages = (long)steady_pages;
	out->steady_sleep_ms = (long)steady_sleep;
	/* Pages per hour at that rate, each batch's work added to its sleep; one core at most. */
	wait = ((double)steady_sleep + host.batch_extra_ms) / 1000.0;
	out->steady_cpu_per_hour = 3600.0 * (double)out->steady_pages * c /
				   ((wait > 0 ? wait : 0) + (double)out->steady_pages * c);
	return true;
}

double cow_faults_per_minute(uint64_t changed_pages, double settle_s)
{
	return settle_s > 0 ? (double)changed_pages * 60.0 / settle_s : 0.0;
}
