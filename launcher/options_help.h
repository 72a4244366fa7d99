/*
 * options_help.h - --help and the option lists (options_help.c).
 */
#ifndef KSMRUN_OPTIONS_HELP_H
#define KSMRUN_OPTIONS_HELP_H

#include <stdio.h>

#include "option_modes.h"

void options_usage(FILE *f);
/* Every option of SPECS (MODE < 0), or those MODE takes: "--name", or "--name=" with a value. */
void options_list(const struct option_spec *specs, int mode);
void options_list_knobs(void);

#endif
