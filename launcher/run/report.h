/*
 * report.h - the report when the command ends (report.c): text for
 * people, or one JSON object with the keys ksm-run(1) documents.
 */
#ifndef KSMRUN_REPORT_H
#define KSMRUN_REPORT_H

#include <stdbool.h>

#include "host/knobs.h"
#include "run/child.h"
#include "run/tree.h"

struct profile;

struct report_opts {
	bool json;
	const char *file;               /* append there; NULL: stderr */
	char **argv;
	bool prctl_pre_exec;
	const struct knob_set *knobs;   /* in force during the run */
	const char *tuning;
	const struct profile *profile;  /* --profile: its table and advice */
	bool left_over;                 /* the counters were left over when ksm-run started */
	bool all_processes;             /* --report-all: also the rows that never merged */
	/* --attach: the processes attached to ("1234 (python3), ...") and how the
	 * supervision ended; then there is no command, and C's status means nothing. */
	const char *attached, *attach_end;
};

/* 0, or -1 when the report could not be written. */
int report_write(const struct report_opts *o, const struct sampler *s, const struct child *c);

#endif
