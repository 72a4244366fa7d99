/*
 * follow.h - one step of following what ksm-run watches over, a command's
 * tree or --attach's targets (follow.c): the same cadence for both.
 */
#ifndef KSMRUN_FOLLOW_H
#define KSMRUN_FOLLOW_H

#include <stdbool.h>

#include "host/hosttune.h"
#include "follow/runmetrics.h"
#include "follow/tree.h"

struct follow {
	struct sampler *s;
	struct host_tuner *host;
	const char *metrics_file;       /* --metrics-file, or NULL */
	double interval;                /* --interval */
	double next_sample;             /* now_s() of the next sample; 0: at once */
	const char *command;            /* the command's argv[0], for the metrics; NULL: --attach */
	struct run_metrics metrics;     /* the metrics file's state (follow.c's) */
};

/*
 * A sample every interval (and the metrics file then, or when this
 * instance starts or stops writing the machine's series), the counters
 * otherwise, and the machine's tuning at every call.  *SAMPLED says
 * whether this call sampled.  Returns how long to wait before the next
 * call, in seconds: until the next sample, but at most 1 s (a tuner that
 * ends is replaced within two) and at least 10 ms.
 */
double follow_tick(struct follow *f, bool *sampled);

#endif
