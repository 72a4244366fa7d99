/*
 * watch.h - ksm-run --status --watch (watch.c): the status again every
 * interval, as it changes.  On a terminal a compact view redrawn like
 * top(1); otherwise (or with --json) one JSON line per interval, for
 * scripts.  Read-only, like --status.
 */
#ifndef KSMRUN_WATCH_H
#define KSMRUN_WATCH_H

#include <stdbool.h>

/* Until INT or TERM (exit status 0); a closed output ends it quietly. */
int status_watch(double interval, bool json);

#endif
