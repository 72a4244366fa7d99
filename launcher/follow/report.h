/*
 * report.h - the report when the command ends (report.c): text for
 * people, or one JSON object with the keys ksm-run(1) documents.
 */
#ifndef KSMRUN_REPORT_H
#define KSMRUN_REPORT_H

#include <stdbool.h>

#include <sys/types.h>

#include "host/knobs.h"
#include "follow/tree.h"

struct profile;

struct report_opts {
	bool json;
	const char *file;               /* append there; NULL: stderr */
	bool prctl_pre_exec;
	const struct knob_set *knobs;   /* in force during the run */
	const char *tuning;
	const struct profile *profile;  /* --profile: its table and advice */
	bool left_over;                 /* the counters were left over when ksm-run started */
	bool all_processes;             /* --report-all: also the rows that never merged */
};

/*
 * What was followed and how the following ended: the report's head, told
 * the same way whoever started it (a command's run, --attach).
 */
struct report_subject {
	char **argv;                    /* the command, or the ksm-run line that attached */
	pid_t root;                     /* the command's first process; 0: none */
	double start, end;              /* now_s() */
	int wait_status;                /* ROOT's, as waitpid gave it */
	int exit_status;                /* what ksm-run exits with for it */
	/*
	 * Processes that ksm-run did not start and enabled KSM in from outside
	 * ("1234 (python3), ...") and how their following ended; NULL for a
	 * command, whose end is ROOT's.
	 */
	const char *followed, *ended;
};

/* 0, or -1 when the report could not be written. */
int report_write(const struct report_opts *o, const struct sampler *s, const struct report_subject *j);

#endif
