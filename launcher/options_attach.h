/*
 * options_attach.h - the rules of --attach and --detach (options_attach.c),
 * called by options.c once every option is read; dies with 125 on a
 * breach.  It sees only what those rules ask of the command line, not all
 * of options.h, so that options.c and this file do not depend on each other.
 */
#ifndef KSMRUN_OPTIONS_ATTACH_H
#define KSMRUN_OPTIONS_ATTACH_H

#include <stdbool.h>

struct attach_request {
	bool detach;                    /* --detach, else --attach */
	const char *target;             /* its TARGET */
	bool no_wait;                   /* --no-wait */
	const char *mode;               /* --mode, or NULL */
	bool selection;                 /* --allow, --deny or --min-size */
	bool library_options;           /* --preload, --no-preload, --no-inherit, --rescan-ms, --log, --end-survivors */
	bool knob_options;              /* knobs, tuning, --report-file, --report-all, --metrics-file */
	bool strict;                    /* --strict: with --no-wait, a stopped ksmd is an error */
	bool quiet;                     /* -q */
};

/*
 * No command (CMD must be empty), no library options, a TARGET without
 * "all", no knob or report options for --detach and --attach --no-wait,
 * no --strict for --detach.
 * Returns the mode to use: Q's, or "prctl" (the process-wide form) when
 * neither a mode nor a selection is given.
 */
const char *attach_check(const struct attach_request *q, char **cmd);

#endif
