/* run.h - running a command under ksm-run (run.c), for --profile too. */
#ifndef KSMRUN_RUN_H
#define KSMRUN_RUN_H

#include "options.h"

/* Runs CMD as O says; returns only when the command could not start (125). */
int run_command(const struct opts *o, char **cmd);

#endif
