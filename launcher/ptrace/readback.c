/*
 * readback.c: after the stops, what the calls did, read from the target
 * (ksm_stat, the VmFlags of the regions acted on) and never assumed from
 * their return: another thread may have switched the flag or advised a
 * region back meanwhile.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "common/ksmproc.h"
#include "ksmstat.h"
#include "maps.h"
#include "ptrace/pin.h"
#include "ptrace/readback.h"

/* After the stops: what the ranges acted on read now (smaps VmFlags). */
struct readback {
	struct plan_state *ps;
	int want_mg;                    /* the mg the calls should have left: 1 or 0 */
	unsigned long *covered;
	bool *wrong;
	int j;
};

static int read_back_region(const struct region *g, void *arg)
{
	struct readback *rb = arg;
	struct range *r = rb->ps->r;

	while (rb->j < rb->ps->n && r[rb->j].end <= g->start)
		rb->j++;
	for (int k = rb->j; k < rb->ps->n && r[k].start < g->end; k++) {
		unsigned long s = r[k].start > g->start ? r[k].start : g->start;
		unsigned long t = r[k].end < g->end ? r[k].end : g->end;

		if (s >= t || !r[k].called || region_ident(g) != r[k].ident)
			continue;               /* not ours, or something else is there now */
		rb->covered[k] += t - s;
		if (g->mergeable >= 0 && g->mergeable != rb->want_mg)
			rb->wrong[k] = true;
	}
	return 0;
}

void stops_read_back(const struct pin *pin, const struct target_plan *plan, struct plan_state *ps,
		     struct target_result *r)
{
	struct readback rb = { ps, !plan->process_wide && !plan->disable, NULL, NULL, 0 };
	struct ksmenable_stat st;
	char path[80], *buf = NULL;
	int wrong = 0;

	pin_path(path, sizeof path, pin, "ksm_stat");
	if (ksm_stat_at(path, &st) == 0) {
		r->merge_any = st.merge_any;
		r->mergeable = st.mergeable;
	}
	if (plan->process_wide && r->merge_any < 0) {
		/*
		 * ksm_stat has no such lines (before 6.14): the flag set makes
		 * every private region mergeable, and cleared, none.
		 */
		int any;

		pin_path(path, sizeof path, pin, "smaps");
		if ((any = ksm_smaps_merge_any(path)) >= 0) {
			r->merge_any = r->mergeable = any;
			r->flags_by_regions = true;
		}
	}
	if (r->outcome != TARGET_DONE)
		return;
	if (plan->process_wide && r->merge_any >= 0 && r->merge_any != !plan->disable) {
		target_refuse(r, "the call returned success, yet ksm_merge_any reads %s afterwards: something in it "
		     "(another thread?) switched it back", r->merge_any ? "yes" : "no");
		return;
	}
	r->regions = 0;
	r->bytes = 0;
	if (!ps->n)
		return;
	pin_path(path, sizeof path, pin, "smaps");
	if (!(rb.covered = calloc((size_t)ps->n, sizeof *rb.covered)) || !(rb.wrong = calloc((size_t)ps->n, 1)) ||
	    !(buf = malloc(MAPS_BUF)) || maps_for_each(path, buf, MAPS_BUF, read_back_region, &rb) < 0) {
		target_refuse(r, "its regions could not be read back after the calls: %s", !pin_ended(pin, 0) ?
		     "out of memory or smaps unreadable" : "it has ended");
		goto out;
	}
	for (int k = 0; k < ps->n; k++) {
		if (!ps->r[k].called || !rb.covered[k])
			continue;               /* unmapped since: nothing to say of it */
		if (rb.wrong[k]) {
			wrong++;
			continue;
		}
		r->regions++;
		r->bytes += rb.covered[k];
	}
	if (wrong)
		target_refuse(r, "%d of the regions acted on read back %s afterwards (VmFlags): something in it "
		     "(another thread?) advised them back", wrong, rb.want_mg ? "not mergeable" : "still mergeable");
out:
	free(buf);
	free(rb.covered);
	free(rb.wrong);
}
