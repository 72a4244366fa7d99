/*
 * tune.h - the tuning policy of the machine's one tuner (tune.c), for a
 * command's run and for the daemon.  The policy is pure: fed samples, it
 * says which knobs to write; the caller writes them.  So it can be tested
 * on recorded samples without root.
 */
#ifndef KSMRUN_TUNE_H
#define KSMRUN_TUNE_H

#include <stdbool.h>

#include "host/counters.h"
#include "host/knobs.h"

enum tune_phase { TUNE_OFF, TUNE_BOOST, TUNE_STEADY };

/* The boost's rate (also --estimate's cost of the default tuning). */
#define TUNE_BOOST_PAGES 5000
#define TUNE_BOOST_SLEEP_MS 10

/* What the daemon can set; a command's run takes the defaults (tune_defaults). */
struct tune_config {
	double steady_scan_s;          /* the longest time between full scans in the steady phase */
	double max_cpu_pct;            /* ksmd's CPU ceiling, percent of one core; 0 none */
	double profit_floor;           /* bytes of general_profit per percent of ksmd CPU below
					* which the rate drops to the minimum; 0 never */
	bool adapt_to_pressure;        /* scan faster under memory pressure, slower without */
};

/* One step's inputs besides the counters. */
struct tune_input {
	const struct sys_sample *first, *now;
	long long candidate_pages;     /* present anonymous pages of the processes KSM may merge; -1 unknown */
	bool new_work;                 /* a command or attached processes registered since the last step */
	double pressure;               /* 0..1 (see pressure.h); negative when unknown */
	double ksmd_cpu_pct;           /* over the last minute or so; negative when unknown */
};

/* The counters when ksmd last finished a full scan (full_scans went up). */
struct scan_mark {
	double t;
	long long scans, sharing, rmap, scanned;   /* scanned: pages_scanned, LLONG_MIN without it */
	double ksmd_cpu;                           /* negative when unknown */
};

struct tuner {
	enum tune_phase phase;
	struct tune_config cfg;
	double boost_start, boost_total;
	long long start_scans, rmap_at_handover, steady_pages, steady_sleep_ms;
	long long cand_at_handover, cand_base, scans_at_growth;
	double last_growth;            /* when the candidate memory last grew */
	int nmarks, boosts;
	struct scan_mark marks[16];    /* the boost's last full scans, oldest first */
	struct scan_mark boost_mark;   /* at the start of the boost: ksmd's cost per page */
	struct scan_mark steady_mark;  /* the steady phase's last full scan */
	bool steady_mark_ended_scan;   /* taken at the end of one, not at the hand-over */
	bool hurried;                  /* the period was shortened within this scan */
	double period_s;               /* the steady phase's time for a full scan, from the churn */
	double scan_pages;             /* pages ksmd scans in a full scan (smart scan skips some) */
	double cpu_per_page;           /* ksmd's CPU seconds per page scanned; 0 unknown */
	long long peak_sharing;        /* since the hand-over */
	long long rmap_at_peak;        /* the tracked pages then */
	long long sharing_at_loss;     /* pages_sharing when a boost for lost merges began; -1 none */
	bool loss_futile;              /* such a boost won nothing back: not again until new memory */
	char sleep_before[KNOB_VALUE_MAX];
	char handover[512];            /* what was done, for the report; "" before the hand-over */
	char last_decision[256];       /* the latest change, for the daemon's log; "" none new */
	bool frugal;                   /* slowed to the minimum: merging does not pay */
	bool no_smart_scan;            /* the kernel has no pages_skipped: every page rescanned */
	double cheap_since;            /* when profit per CPU fell under the floor; 0 not */
};

void tune_defaults(struct tune_config *cfg);

/*
 * Start boosting at time NOW: the boost's knobs go into WANT.  SLEEP_BEFORE
 * is sleep_millisecs before (NULL: the kernel default), the steady phase's
 * sleep; HAVE_ADVISOR: this kernel has advisor_mode (switched to none).
 */
void tune_start(struct tuner *t, const struct tune_config *cfg, const char *sleep_before,
		bool have_advisor, double now, struct knob_set *want);

/* Take over from a tuner that ended in the steady phase: no new boost. */
void tune_resume_steady(struct tuner *t, const struct tune_config *cfg, const char *sleep_before,
			const struct sys_sample *now, struct knob_set *want);

/*
 * The steady phase's rate for SCAN_PAGES pages a full scan every PERIOD_S
 * seconds: PAGES every SLEEP_MS, at SLEEP_BEFORE_MS, or 100 pages with a
 * longer sleep (up to a second) when that is fewer.  The one rule, for the
 * tuner and for --estimate's cost of the default tuning.
 */
void tune_steady_rate(double scan_pages, double period_s, long long sleep_before_ms, long long *pages,
		      long long *sleep_ms);

/* One step; the knobs to write now go into OUT, emptied first. */
void tune_tick(struct tuner *t, const struct tune_input *in, struct knob_set *out);

#endif
