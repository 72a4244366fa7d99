/*
 * jointune.h - the knobs a run asks for and its part in the machine's
 * tuning (jointune.c), for whatever is followed: a command's run, --attach.
 */
#ifndef KSMRUN_JOINTUNE_H
#define KSMRUN_JOINTUNE_H

#include <stdbool.h>

#include "host/hosttune.h"
#include "host/knobs.h"

/* What the command line asks of the tuning (options.h fills it). */
struct tuning_request {
	const struct knob_set *knobs;   /* --set and the aliases */
	bool user_rate;                 /* a rate knob among them: no default tuning */
	bool no_tune, keep, take_over, strict;
};

/*
 * Writes what Q asks for (the user's knobs, the default tuning, run=1)
 * and joins the machine's tuning as NAME, or with --keep-knobs tunes
 * alone.  Without the right to write, one warning per knob and no tuning;
 * with --strict that is fatal (125): call it before anything has started.
 */
void run_join_tuning(struct host_tuner *h, const struct tuning_request *q, const char *name);

/*
 * The end of the following: the knobs in force into IN_FORCE (NULL: not
 * wanted), for the report, then this run's part in the tuning left (the
 * knobs restored when it was the last); says so when they could not all be.
 */
void run_leave_tuning(struct host_tuner *h, struct knob_set *in_force);

#endif
