/*
 * target.h - the ptrace engine's one entry: enabling or disabling KSM in
 * one running process from outside (target.c), as a plan says, and what
 * came of it (outcome.h).  --attach and the host agent are its callers;
 * the rest of ptrace/ is its own (a test keeps it so).
 */
#ifndef KSMRUN_TARGET_H
#define KSMRUN_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include "ptrace/outcome.h"

/*
 * Does as PLAN says in process PID; never fails without filling *R.  The
 * process is pinned (pin.h) before it is judged, and every stop checks
 * that it is still the process, the program and the credentials judged.
 * It runs in a thread of its own, which ends with it: a target seized that
 * never stopped is then let go by the kernel.  Every signal is blocked
 * meanwhile, in the calling thread too, and the mask put back after: the
 * stop signals of PLAN that came stay pending.  The engine keeps no state
 * between calls: what a call needs is in PLAN.
 */
void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r);

/* Can this build act on another process at all (its processor's injection)? */
bool target_supported(void);

#endif
