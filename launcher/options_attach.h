/*
 * options_attach.h - the rules of --attach and --detach (options_attach.c),
 * called by options.c once every option is read; dies with 125 on a breach.
 */
#ifndef KSMRUN_OPTIONS_ATTACH_H
#define KSMRUN_OPTIONS_ATTACH_H

#include "options.h"

/*
 * No command (CMD must be empty), no library options, a TARGET without
 * "all", no knob or report options for --detach and --attach --no-wait;
 * the process-wide form (--mode=prctl) unless a selection is given.
 */
void attach_check(struct opts *o, char **cmd);

#endif
