/*
 * stops.h - the calls of one target, spread over short stops (stops.c):
 * each stop stays within the plan's budget, an unmerge goes region by
 * region in chunks sized by the time measured per MiB, and the target
 * runs between the stops.  Then the result is read back from the target
 * (readback.h), never assumed from the calls' return.
 */
#ifndef KSMRUN_STOPS_H
#define KSMRUN_STOPS_H

#include <stdbool.h>
#include <sys/types.h>

#include "ptrace/outcome.h"
#include "maps.h"

#define STOP_BUDGET_DEFAULT_S 0.010
/* The buffer for one reading of a target's maps or smaps (maps.h). */
#define MAPS_BUF (1 << 20)

/* A region to act on, as judged from smaps before any stop. */
struct range {
	unsigned long start, end;
	unsigned long long ident;       /* a hash of the maps line's class and name */
	long ksm_kb;                    /* its merged memory then (smaps KSM:), -1 unknown */
	bool called;                    /* a call acted on it (or on part of it) */
};

struct plan_state {
	const struct target_plan *plan;
	struct range *r;
	int n, cap;
	int matched;                    /* madvise form: regions the selection chose, so or not */
	bool failed;                    /* too many, or out of memory */
};

/* What names a region across a stop: its class and name (not its bounds). */
unsigned long long region_ident(const struct region *g);

/*
 * Makes the calls PLAN asks for in PID over as many stops as the budget
 * needs; R says how (stops, longest stop, calls) and, when it failed, why
 * (outcome TARGET_REFUSED).  Else R->outcome is TARGET_DONE, to be
 * confirmed by stops_read_back() (readback.h).
 */
struct pin;
void stops_run(const struct pin *pin, const struct target_plan *plan, struct plan_state *ps,
	       struct target_result *r, bool *maybe_ended);

/*
 * Is a stop signal (plan->stops) pending for ksm-run?  Then R says so: not
 * done, before its first stop; refused, with the rest left as it was, after.
 */
bool stops_interrupted(const struct target_plan *plan, struct target_result *r);

#endif
