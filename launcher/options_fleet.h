/*
 * options_fleet.h - the fingerprint and --combine options (options_fleet.c),
 * called by options.c as it parses; each dies with 125 on a bad value.
 */
#ifndef KSMRUN_OPTIONS_FLEET_H
#define KSMRUN_OPTIONS_FLEET_H

#include "options.h"

void fleet_estimate_option(struct opts *o, const char *arg);     /* --estimate=TARGET */
void fleet_fingerprint_option(struct opts *o, const char *arg);  /* --fingerprint=FILE */
void fleet_label_option(struct opts *o, const char *arg);        /* --label=NAME */
void fleet_sample_option(struct opts *o, const char *arg);       /* --sample=N */
void fleet_per_cgroup_option(struct opts *o, const char *arg);   /* --fingerprint-per-cgroup=DIR */
/* The rules between them, once every option is read; CMD: the words after. */
void fleet_check(struct opts *o, char **cmd);

#endif
