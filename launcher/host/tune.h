/*
 * tune.h - the default tuning policy (tune.c), used when the user gives no
 * rate.  The policy is pure: fed samples of the KSM counters, it says which
 * knobs to write; the caller writes them.  So it can be tested on recorded
 * samples without root.
 */
#ifndef KSMRUN_TUNE_H
#define KSMRUN_TUNE_H

#include <stdbool.h>

#include "host/counters.h"
#include "host/knobs.h"

enum tune_phase { TUNE_OFF, TUNE_BOOST, TUNE_STEADY };

struct tuner {
	enum tune_phase phase;
	double boost_start, boost_total;
	long long start_scans, rmap_at_handover, steady_pages;
	int nhist, boosts;
	struct { double t; long long scans, sharing; } hist[64];
	char sleep_before[KNOB_VALUE_MAX];
	char handover[512];            /* what was done, for the report; "" before the hand-over */
};

/*
 * Start boosting at time NOW: the boost's knobs go into WANT.  SLEEP_BEFORE
 * is sleep_millisecs before (NULL: the kernel default), the steady phase's
 * sleep; HAVE_ADVISOR: this kernel has advisor_mode (switched to none).
 */
void tune_start(struct tuner *t, const char *sleep_before, bool have_advisor, double now,
		struct knob_set *want);

/*
 * One step on the sample LAST (FIRST: the sample from the start of the
 * run).  The knobs to write now go into OUT, emptied first.
 */
void tune_tick(struct tuner *t, const struct sys_sample *first, const struct sys_sample *last,
	       struct knob_set *out);

#endif
