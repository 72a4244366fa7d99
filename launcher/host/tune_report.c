/*
 * tune_report.c - the tuner's account of what it did, for the run's report
 * and the daemon's status: the boost, the steady rate and what that costs.
 */
#include <stdio.h>

#include "host/tune.h"

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

void tune_describe(struct tuner *t)
{
	char cost[384], paced[64] = "";

	describe_cost(t, cost, sizeof cost);
	/* Taken over in the steady phase (tune_resume_steady): this tuner never boosted. */
	if (!t->boosts) {
		snprintf(t->handover, sizeof t->handover, "taken over in the steady phase: %lld pages every %lld ms%s",
			 t->steady_pages, t->steady_sleep_ms, cost);
		return;
	}
	if (t->boost_paced_min)
		snprintf(paced, sizeof paced, ", down to %lld pages while memory arrived", t->boost_paced_min);
	snprintf(t->handover, sizeof t->handover, "boost %d/%dms%s for %.0f s%s, then %lld pages every %lld ms%s",
		 TUNE_BOOST_PAGES, TUNE_BOOST_SLEEP_MS, paced, t->boost_total,
		 t->boosts > 1 ? " in all (boosted again on new memory)" : "", t->steady_pages, t->steady_sleep_ms, cost);
}
