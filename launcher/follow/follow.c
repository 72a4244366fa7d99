/* follow.c - following a command's tree, attached targets or the machine: the tick, the loop, the end. */
#include "common/files.h"
#include "follow/follow.h"
#include "follow/jointune.h"
#include "follow/report.h"
#include "follow/runmetrics.h"

double follow_tick(struct follow *f, bool *sampled)
{
	double now = now_s(), wait;

	*sampled = now >= f->next_sample;
	if (*sampled)
		f->next_sample = now + f->interval;
	if (*sampled && f->what != FOLLOWED_MACHINE)
		sample_tick(f->s);
	else
		counters_sample(&f->s->last, f->s->ksmd);
	host_tuner_tick(f->host, &f->s->first, &f->s->last);
	/* After the tick: who writes the machine's series is this tick's news. */
	if (f->write_metrics) {
		f->write_metrics(f->metrics_ctx, *sampled);
	} else {
		f->metrics.path = f->metrics_file;
		f->metrics.what = f->what;
		f->metrics.argv0 = f->command;
		run_metrics_tick(&f->metrics, f->host, f->s, *sampled);
	}
	wait = f->next_sample - now_s();
	if (wait > 1.0)
		wait = 1.0;
	return wait < 0.01 ? 0.01 : wait;
}

int follow_loop(struct follow *f, const struct follow_hooks *h, double first_wait_s)
{
	double wait = first_wait_s;
	int end;

	while (!(end = h->wait(h->ctx, wait))) {
		bool sampled;

		wait = follow_tick(f, &sampled);
		if (h->ticked)
			h->ticked(h->ctx, sampled);
	}
	if (f->what != FOLLOWED_MACHINE)
		sample_tick(f->s);
	if (f->metrics_file)
		file_remove_own(f->metrics_file);
	return end;
}

void follow_end(struct follow *f, struct report_opts *ro, const struct report_subject *j, bool quiet)
{
	struct knob_set in_force;
	char tuning[1024];

	run_leave_tuning(f->host, &in_force);
	if (quiet)
		return;
	ro->knobs = &in_force;
	ro->tuning = host_tuner_summary(f->host, tuning, sizeof tuning);
	ro->left_over = f->host->left_over_at_start;
	report_write(ro, f->s, j);
}
