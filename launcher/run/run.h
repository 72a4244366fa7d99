/* run.h - running a command under ksm-run (run.c), for --profile too. */
#ifndef KSMRUN_RUN_H
#define KSMRUN_RUN_H

#include <stdbool.h>

#include "config.h"
#include "follow/jointune.h"

/* A library setting the options give, as the variable the library reads. */
struct lib_setting {
	const char *var, *value;        /* "KSM_ENABLE_MODE", "madvise" */
};

/* What a command's run (and --profile) takes of the command line (main.c fills it). */
struct run_opts {
	bool profile;                   /* --profile: all memory mergeable, then advice */
	double threshold;               /* --profile's share of the merged memory to keep */
	double duration;                /* --duration, seconds; 0: none */
	double interval;                /* between samples */
	bool json, quiet, report_all, end_survivors, no_preload;
	const char *preload, *report_file, *metrics_file;
	const struct config *lib;       /* the library's settings, as it will read them */
	const struct lib_setting *settings;     /* those the options give, for the environment */
	int nsettings;
	struct tuning_request tuning;   /* the knobs, --keep-knobs, --strict... */
};

/* Runs CMD as O says; returns only when the command could not start (125). */
int run_command(const struct run_opts *o, char **cmd);

#endif
