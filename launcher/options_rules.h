/*
 * options_rules.h - the rules between the values of each mode
 * (options_rules.c), after every option was taken.
 */
#ifndef KSMRUN_OPTIONS_RULES_H
#define KSMRUN_OPTIONS_RULES_H

#include "opts.h"

/* O's values by the rules of its mode, CMD the command (or none): exits 125 on a breach. */
void options_check_rules(struct opts *o, char **cmd);

#endif
