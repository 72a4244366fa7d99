/*
 * target.h - enabling or disabling KSM in one running process from
 * outside (target.c): the checks that leave it alone, the calls it is
 * made to run (inject.h), and what came of it.
 */
#ifndef KSMRUN_TARGET_H
#define KSMRUN_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include "attach/outcome.h"

/*
 * Does as PLAN says in process PID; never fails without filling *R.  The
 * process is pinned (pin.h) before it is judged, and every stop checks
 * that it is still the process, the program and the credentials judged.
 */
void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r);

/*
 * target_apply in a thread of its own, which ends with it: a target it
 * seized that never stopped is then let go by the kernel (inject.h).  The
 * caller blocks every signal first (SIGCHLD is how a stop is awaited).
 */
void target_apply_alone(pid_t pid, const struct target_plan *plan, struct target_result *r);

#endif
