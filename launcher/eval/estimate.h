/*
 * estimate.h - ksm-run --estimate: what KSM would save, without KSM.
 * The scan and its steps are in estimate.c; the prediction in
 * estimate_predict.c; the printing in estimate_report.c.
 */
#ifndef KSMRUN_ESTIMATE_H
#define KSMRUN_ESTIMATE_H

#include <stdbool.h>

struct config;

struct fp_options;

struct estimate_opts {
	const char *target;        /* --estimate=TARGET: the first one */
	const struct fp_options *fp;  /* every --estimate, their fingerprints */
	const struct config *lib;  /* --allow, --deny as options.c parsed them (selection_of_config) */
	double settle;             /* --settle=SECONDS; 0: a single pass */
	long scan_pages, scan_sleep_ms;  /* --scan-rate; scan_pages 0: not given */
	bool json;                 /* --json */
	const char *output;        /* NULL: stdout */
};

/* Runs the estimate; returns the exit status (0, 1 nothing readable, 125 bad input). */
int estimate_main(const struct estimate_opts *o);

#endif
