/*
 * jointune.h - the knobs a run asks for and its part in the machine's
 * tuning (jointune.c), for a command's run and for --attach alike.
 */
#ifndef KSMRUN_JOINTUNE_H
#define KSMRUN_JOINTUNE_H

#include "host/hosttune.h"
#include "options.h"

/*
 * Writes what O asks for (the user's knobs, the default tuning, run=1)
 * and joins the machine's tuning as NAME, or with --keep-knobs tunes
 * alone.  Without the right to write, one warning per knob and no tuning;
 * with --strict that is fatal (125): call it before anything has started.
 */
void run_join_tuning(struct host_tuner *h, const struct opts *o, const char *name);

#endif
