/*
 * report.h - the report when the command ends (report.c): text for
 * people, or one JSON object with the keys ksm-run(1) documents.
 */
#ifndef KSMRUN_REPORT_H
#define KSMRUN_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/jsonw.h"
#include "host/knobs.h"
#include "follow/tree.h"

/*
 * A part a mode adds at the end of the report (--profile: its table and
 * advice), in both forms: JSON keys of the report's object, and text.
 */
struct report_section {
	void (*json)(struct jsonw *w, const void *ctx);
	void (*text)(FILE *f, const void *ctx);
	const void *ctx;
};

struct report_opts {
	bool json;
	const char *file;               /* append there; NULL: stderr */
	bool prctl_pre_exec;
	const struct knob_set *knobs;   /* in force during the run */
	const char *tuning;
	const struct report_section *extra;     /* the mode's own part (--profile's), or NULL */
	bool left_over;                 /* the counters were left over when ksm-run started */
	bool all_processes;             /* --report-all: also the rows that never merged */
};

/*
 * What was followed and how the following ended: the report's head, told
 * the same way whoever started it (a command's run, --attach).
 */
struct report_subject {
	enum followed what;
	char **argv;                    /* the command, or the ksm-run line that attached */
	pid_t root;                     /* the command's first process; 0: none */
	double start, end;              /* now_s() */
	int wait_status;                /* ROOT's, as waitpid gave it */
	int exit_status;                /* what ksm-run exits with for it */
	/*
	 * FOLLOWED_ATTACHED: the processes that ksm-run did not start and
	 * enabled KSM in from outside ("1234 (python3), ..."; "" none) and how
	 * their following ended.  A command's end is ROOT's.
	 */
	const char *targets, *ended;
};

/* 0, or -1 when the report could not be written. */
int report_write(const struct report_opts *o, const struct sampler *s, const struct report_subject *j);

#endif
