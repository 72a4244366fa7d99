/*
 * opts.h - ksm-run's command line as parsed (options.h parses it): the
 * mode and every value, for the modes and for the files of options.c's
 * checks.
 */
#ifndef KSMRUN_OPTS_H
#define KSMRUN_OPTS_H

#include <stdbool.h>

#include "config.h"
#include "eval/fingerprint_take.h"
#include "follow/jointune.h"
#include "host/knobs.h"

enum action {
	ACT_RUN, ACT_PROFILE, ACT_ESTIMATE, ACT_COMBINE, ACT_STATUS, ACT_RESTORE, ACT_DAEMON, ACT_ATTACH,
	ACT_DETACH, ACT_CHECK_CONFIG,
};

struct opts {
	enum action action;
	/* Library settings, passed on as KSM_ENABLE_*; NULL when not given. */
	const char *mode, *allow, *deny, *min_size, *rescan, *log;
	bool no_inherit;
	const char *preload, *report_file;
	const char *estimate;           /* the first --estimate's TARGET; all are in fp */
	struct fp_options fp;           /* every --estimate, and their fingerprints */
	bool fp_format_given, matrix;   /* --fingerprint-format, --combine --matrix */
	const char *attach;             /* --attach or --detach: the TARGET */
	const char *policy;             /* --check-config=FILE, --daemon --policy=FILE; NULL: the default */
	bool no_wait;                   /* --attach --no-wait: enable, print, exit */
	double stop_budget;             /* --stop-budget, in seconds; 0: the default */
	bool no_preload, no_tune, keep, strict, json, quiet, report_all, end_survivors;
	double interval, settle, threshold;
	long scan_pages, scan_sleep_ms;  /* --scan-rate; scan_pages 0: not given */
	double duration;                /* --duration: seconds the command may run; 0 not given */
	bool user_rate;                 /* a rate knob was given: no default tuning */
	bool take_over;                 /* keep tuning when someone else writes the knobs */
	/* --daemon's policy; 0 when not given (the defaults of tune.h). */
	double steady, max_cpu;
	unsigned long min_profit;       /* bytes saved per percent of a core */
	bool max_cpu_given, min_profit_given;
	struct knob_set knobs;          /* --set and the aliases */
	const char *metrics_file;       /* --metrics-file: the daemon's, or a command's run */
	double watch;                   /* --watch: seconds between --status's views or --restore's looks; 0 not given */
	/* The library's settings as the library will read them: the options,
	 * else the environment (ACT_RUN and ACT_PROFILE). */
	struct config lib;
};

/* What O asks of the tuning, for run_join_tuning. */
static inline struct tuning_request opts_tuning(const struct opts *o)
{
	return (struct tuning_request){ &o->knobs, o->user_rate, o->no_tune, o->keep, o->take_over, o->strict };
}

#endif
