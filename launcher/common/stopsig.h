/*
 * stopsig.h - the signals that stop a mode which runs until told to
 * (--status --watch, --daemon, --attach's following), taken by
 * sigtimedwait between its steps (stopsig.c), so that no handler can end
 * ksm-run in the middle of one (with knobs to restore, or a target held).
 */
#ifndef KSMRUN_STOPSIG_H
#define KSMRUN_STOPSIG_H

#include <signal.h>

/*
 * Blocks the signals of SIGS (0-terminated) and gathers them in *SET;
 * ignores SIGPIPE, so that a reader that went away is a write's error, not
 * the end.  Dies (125) when they cannot be blocked.
 */
void stop_signals_block(sigset_t *set, const int *sigs);

/* The lowest signal of SET pending (left pending), or 0. */
int stop_signal_pending(const sigset_t *set);

/* Waits up to SECONDS for one of SET: the signal taken, or 0 when none came. */
int stop_signals_wait(const sigset_t *set, double seconds);

#endif
