/*
 * tune_samples.h - synthetic samples for the tuning policy's unit tests
 * (test_launcher_tune*.c): a machine's counters at a time, and a fresh
 * tuner driven to its steady phase.
 */
#ifndef KSMENABLE_TUNE_SAMPLES_H
#define KSMENABLE_TUNE_SAMPLES_H

#include <string.h>
#include <unistd.h>

#include "host/counters.h"
#include "host/knobs.h"
#include "host/tune.h"

/*
 * A synthetic machine: one sample per call, at time T, with SHARING pages
 * merged, TRACKED pages tracked by ksmd, and SCANS full scans so far.
 */
static inline void sample_at(struct sys_sample *s, double t, long long sharing, long long tracked, long long scans)
{
	long long page = sysconf(_SC_PAGESIZE);

	memset(s, 0, sizeof *s);
	for (int i = 0; i < SYS_COUNTERS; i++)
		s->v[i] = 0;
	s->t = t;
	s->v[2] = sharing;                              /* pages_sharing */
	s->v[0] = sharing * page - tracked * 64;        /* general_profit, the kernel's formula */
	s->v[6] = scans;                                /* full_scans */
	s->v[7] = scans * tracked;                      /* pages_scanned: every page, every scan */
	s->ksmd_cpu = -1;
}

/* Drives a fresh tuner to its steady phase on a quiet machine; returns the time. */
static inline double to_steady(struct tuner *t, const struct tune_config *cfg, struct tune_input *in,
			struct sys_sample *s, long long tracked, long long cand)
{
	struct knob_set want = { 0 }, out;
	double now = 0;

	tune_start(t, cfg, "20", false, 0.0, &want);
	sample_at((struct sys_sample *)in->first, 0, 0, 0, 0);
	in->candidate_pages = cand;
	for (now = 0.5; now <= 100 && t->phase == TUNE_BOOST; now += 0.5) {
		sample_at(s, now, 40000, tracked, (long long)now);
		tune_tick(t, in, &out);
	}
	return now;
}

#endif
