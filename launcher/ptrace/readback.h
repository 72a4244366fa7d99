/*
 * readback.h - the result of a target's stops read back from it
 * (readback.c): the stops (stops.h) report what the calls returned, this
 * what the target reads as afterwards.
 */
#ifndef KSMRUN_READBACK_H
#define KSMRUN_READBACK_H

#include "ptrace/outcome.h"
#include "ptrace/stops.h"

/*
 * After the stops: reads ksm_stat and the VmFlags of the regions acted on,
 * and reports from what was read: regions and bytes as they are now, and
 * a refusal when the target does not read as the calls should have left
 * it (another thread switched the flag back, say).
 */
void stops_read_back(const struct pin *pin, const struct target_plan *plan, struct plan_state *ps,
		     struct target_result *r);

#endif
