/*
 * estimate_recheck.h - how far the estimate holds for memory that keeps
 * changing: a sample of the candidate pages read again after the pass
 * (estimate_recheck.c); estimate_predict.c weighs it against the figures.
 */
#ifndef KSMRUN_ESTIMATE_RECHECK_H
#define KSMRUN_ESTIMATE_RECHECK_H

#include "eval/estimate_predict.h"

/* Seconds from the end of the pass to the recheck. */
#define RECHECK_WAIT_S 1.0

/*
 * Waits RECHECK_WAIT_S, then reads a sample of the records of every process
 * still there (the same process: its start time) and notes which changed or
 * are gone, into s->sample and s->res->recheck.  Nothing to sample: nothing.
 */
void recheck_sample(struct scan *s);

#endif
