/*
 * daemon.h - ksm-run --daemon, the machine's KSM tuning service
 * (daemon.c): no command; it takes the tuning (election.h) for the whole
 * machine (candidate_host), logs one line per decision, and restores the
 * knobs when stopped by TERM or INT.  HUP logs where it stands.
 */
#ifndef KSMRUN_DAEMON_H
#define KSMRUN_DAEMON_H

#include <stdbool.h>

#include "host/knobs.h"

/* What the daemon takes of the command line (options.h fills it). */
struct daemon_opts {
	double steady;                  /* --steady: seconds per full scan; 0 the default */
	double max_cpu;                 /* --max-cpu, when MAX_CPU_GIVEN */
	unsigned long min_profit;       /* --min-profit, when MIN_PROFIT_GIVEN */
	bool max_cpu_given, min_profit_given;
	bool take_over;                 /* --take-over */
	const struct knob_set *knobs;   /* --set and the aliases (no rate knob) */
	const char *metrics_file;       /* --metrics-file, or NULL */
	const char *policy;             /* --policy: the agent's policy; NULL the default, if it exists */
};

/* The exit status: 0 stopped and restored, 1 stopped but a knob not restored; 125 refused. */
int daemon_main(const struct daemon_opts *o);

#endif
