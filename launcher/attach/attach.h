/*
 * attach.h - ksm-run --attach and --detach (attach.c): KSM switched on or
 * off in processes that already run, then, for --attach, the targets
 * followed as a command is (tuning, samples, the report) until they have
 * all ended or ksm-run is stopped.
 */
#ifndef KSMRUN_ATTACH_H
#define KSMRUN_ATTACH_H

#include "options.h"

/* 0 when every target was handled, 1 when some were refused (125 before: options.c). */
int attach_main(const struct opts *o);

#endif
