/*
 * attach.h - ksm-run --attach and --detach (attach.c): KSM switched on or
 * off in processes that already run, then, for --attach, the targets
 * followed as a command is (tuning, samples, the report) until they have
 * all ended or ksm-run is stopped.
 */
#ifndef KSMRUN_ATTACH_H
#define KSMRUN_ATTACH_H

#include <stdbool.h>

#include "config.h"
#include "follow/jointune.h"

/* What --attach and --detach take of the command line (main.c fills it). */
/* --detach=agent: the processes the host agent enabled, once it has stopped (agentstate.h). */
#define DETACH_AGENT "agent"

struct attach_opts {
	bool detach;                    /* --detach, else --attach */
	const char *target;             /* their TARGET */
	bool no_wait;                   /* --attach --no-wait: enable, print, exit */
	bool json, quiet, report_all;
	const char *report_file, *metrics_file;
	double interval;                /* between samples while the targets are followed */
	double stop_budget;             /* --stop-budget, seconds; 0 the default */
	const struct config *lib;       /* --mode, --allow, --deny, --min-size as options.c parsed them */
	struct tuning_request tuning;   /* the knobs, --keep-knobs, --strict... */
};

/*
 * 0 when every target was handled (or ended), 1 when some were refused or
 * a PID given named no process (125 before: options.c).
 */
int attach_main(const struct attach_opts *o);

#endif
