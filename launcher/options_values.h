/*
 * options_values.h - the values of ksm-run's options (options_values.c),
 * each checked as options.c takes it; a bad one exits 125.
 */
#ifndef KSMRUN_OPTIONS_VALUES_H
#define KSMRUN_OPTIONS_VALUES_H

#include "opts.h"

/* --set NAME=VALUE: a knob, by the knobs' own check (a rate knob: no default tuning). */
void set_knob_option(struct opts *o, const char *arg);
/* --pages-to-scan=N and the other aliases: the knob named ALIAS (dashes for underscores). */
void alias_option(struct opts *o, const char *alias, const char *value);
/* --OPT=S: seconds in LO..HI. */
double seconds_option(const char *opt, const char *s, double lo, double hi);
/* --scan-rate=PAGES/MS: pages_to_scan and sleep_millisecs for --estimate's cost. */
void scan_rate_option(struct opts *o, const char *arg);
/* --metrics-file=FILE: a file in a directory that exists. */
void metrics_file_option(struct opts *o, const char *arg);

#endif
