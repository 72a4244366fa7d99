/*
 * scancost.h - what ksmd would spend to reach the savings --estimate
 * predicts: its CPU-seconds and the seconds to the savings, at a fixed
 * rate or under the default tuning (scancost.c; pure, unit-tested).
 */
#ifndef KSMRUN_SCANCOST_H
#define KSMRUN_SCANCOST_H

#include <stdbool.h>
#include <stdint.h>

#include "host/tune.h"

/* The default tuning's boost, as the tuner writes it. */
#define BOOST_RATE_PAGES TUNE_BOOST_PAGES
#define BOOST_RATE_MS TUNE_BOOST_SLEEP_MS

/* Per-page CPU cost when the host was never calibrated (scancal.h). */
#define SCANCOST_DEFAULT_NS 2500.0
#define SCANCOST_DEFAULT_EXTRA_MS 0.0

/* What the host's ksmd takes (scancal.h), or the defaults above. */
struct scan_host {
	double ns_per_page;             /* CPU per page scanned */
	double batch_extra_ms;          /* wall time a batch takes beyond its sleep and CPU */
};

struct scan_rate {
	long pages;                     /* pages_to_scan */
	long sleep_ms;                  /* sleep_millisecs */
};

struct scan_cost {
	double seconds;                 /* to all of the savings */
	double seconds_95;              /* to 95% of them */
	double cpu_seconds, cpu_seconds_95;   /* ksmd's CPU until then */
	double passes;                  /* full scans to all of the savings */
	bool cpu_bound;                 /* pages_to_scan's work outlasts the sleep */
	/* Default tuning only: the steady phase after the savings, per hour. */
	double steady_cpu_per_hour;
	long steady_pages;              /* its pages_to_scan (sleep: steady_sleep_ms) */
	long steady_sleep_ms;
};

/*
 * At RATE: PAGES candidate pages on HOST.  Returns false (and zeroes OUT)
 * where nothing can be said (no pages, a rate of 0 pages, no cost).
 */
bool scan_cost_at_rate(uint64_t pages, struct scan_host host, struct scan_rate rate, struct scan_cost *out);

/*
 * Under ksm-run's default tuning (launcher/host/tune.c): the boost's rate
 * until the savings, then a steady rate (its cost per hour).  The one
 * place that knows the policy's shape: change it here when tune.c changes.
 */
bool scan_cost_default(uint64_t pages, struct scan_host host, struct scan_cost *out);

/*
 * --settle: pages that changed in SETTLE seconds, as merged pages copied
 * on write per minute (an upper bound: only a page merged before it is
 * written takes the fault).  0 without a second pass.
 */
double cow_faults_per_minute(uint64_t changed_pages, double settle_s);

#endif
