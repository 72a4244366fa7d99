/*
 * options_fleet.h - the fingerprint and --combine options (options_fleet.c),
 * called by options.c as it parses; each dies with 125 on a bad value.
 * They see only the fingerprint options, not all of options.h, so that
 * options.c and this file do not depend on each other.
 */
#ifndef KSMRUN_OPTIONS_FLEET_H
#define KSMRUN_OPTIONS_FLEET_H

#include <stdbool.h>

#include "eval/fingerprint_take.h"

void fleet_estimate_option(struct fp_options *fp, const char *arg);     /* --estimate=TARGET */
void fleet_fingerprint_option(struct fp_options *fp, const char *arg);  /* --fingerprint=FILE */
void fleet_label_option(struct fp_options *fp, const char *arg);        /* --label=NAME */
void fleet_sample_option(struct fp_options *fp, const char *arg);       /* --sample=N */
void fleet_per_cgroup_option(struct fp_options *fp, const char *arg);   /* --fingerprint-per-cgroup=DIR */
void fleet_key_option(struct fp_options *fp, const char *arg);          /* --fingerprint-key=FILE */

/*
 * What the rest of the command line says, for the rules between them
 * (which mode takes which option is the option table's, options.c).
 */
struct fleet_mode {
	bool combine;                   /* the action is --combine */
	bool matrix, format_given;      /* --matrix, --fingerprint-format */
};
/* The rules between them, once every option is read; CMD: the words after. */
void fleet_check(const struct fp_options *fp, const struct fleet_mode *m, char **cmd);

#endif
