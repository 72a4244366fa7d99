/*
 * handover.h - what an attach leaves to the machine (handover.c): ksmd
 * must run for the targets to merge, and the machine's tuner must know of
 * their memory, as of a new command's.  --no-wait neither stays to run
 * ksmd nor restores a knob, so it writes none: it says when nothing will
 * merge (--strict refuses), and registers the targets with the tuner of
 * the ksm-run instances that run, whose knobs outlive it.
 */
#ifndef KSMRUN_HANDOVER_H
#define KSMRUN_HANDOVER_H

#include <stdbool.h>

#include "ptrace/outcome.h"

#define RUN_VALUE_MAX 64

/*
 * --attach --no-wait, before any target is touched: is ksmd stopped (run
 * is not 1)?  Its value into RUN.  With STRICT, that refuses the attach
 * (exit 125).
 */
bool handover_ksmd_stopped(bool strict, char run[RUN_VALUE_MAX]);

/*
 * The targets enabled (R, N results; those DONE or ALREADY count) join the
 * machine's tuning (election_add_targets).  NO_WAIT: say what becomes of
 * them once this ksm-run has ended; STOPPED_RUN (or NULL): the value of a
 * run knob that stops ksmd, so that nothing merges, which it says.
 * Returns true when the state holds them all (the tuner counts them).
 */
bool handover_targets(const struct target_result *r, int n, bool no_wait, const char *stopped_run);

/*
 * --detach: the targets disabled (or already so) with KSM off in all of
 * them, as read back, leave the machine's tuning.
 */
void handover_drop_targets(const struct target_result *r, int n);

#endif
