/* jointune.c - a run's knobs and its part in the machine's tuning. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "host/election.h"
#include "host/knobs.h"
#include "host/tune.h"
#include "follow/jointune.h"

/*
 * The knobs: the user's, the default tuning's and run=1, written only where
 * they differ from now.  Without the right to write, one warning per knob,
 * and no tuning.  Otherwise this run joins the machine's tuning (the saved
 * values, the one tuner: election.h), or with --keep-knobs tunes alone.
 */
void run_join_tuning(struct host_tuner *h, const struct tuning_request *o, const char *name)
{
	struct knob_set all, todo = { 0 };
	char val[KNOB_VALUE_MAX];
	int bad = 0, err = 0;

	tune_defaults(&h->cfg);
	h->user_rate = o->user_rate;
	h->no_tune = o->no_tune;
	h->take_over = o->take_over;
	snprintf(h->m.name, sizeof h->m.name, "%.31s", name);
	host_tuner_plan(h, o->knobs, now_s(), &all);
	for (int i = 0; i < all.n; i++)
		if (knob_read(all.k[i].name, val, sizeof val) || strcmp(val, all.k[i].value))
			knob_put(&todo, all.k[i].name, all.k[i].value);
	for (int i = 0; i < todo.n; i++)
		if (!knob_probe_writable(todo.k[i].name, &err)) {
			msg("cannot set %s=%s: %s%s", todo.k[i].name, todo.k[i].value,
			    strerror(err), knob_write_hint(todo.k[i].name, err));
			bad++;
		}
	if (bad && o->strict)
		die("--strict: %d knob%s cannot be written; nothing was run", bad, bad > 1 ? "s" : "");
	if (bad || (!todo.n && !election_state_exists() && geteuid() != 0)) {
		h->policy.phase = TUNE_OFF;
		return;
	}
	if (o->keep) {
		host_tuner_alone(h, &all);
		return;
	}
	if (host_tuner_join(h, &all) && o->strict)
		die("--strict: the knobs could not all be set; nothing was run");
}

void run_leave_tuning(struct host_tuner *h, struct knob_set *in_force)
{
	if (in_force)
		knobs_read_all(in_force);
	if (host_tuner_leave(h))
		msg("the knobs could not all be restored: see `ksm-run --status`");
}
