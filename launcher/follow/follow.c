/* follow.c - one step of following a command's tree or attached targets. */
#include "common/files.h"
#include "follow/follow.h"
#include "follow/runmetrics.h"

double follow_tick(struct follow *f, bool *sampled)
{
	double now = now_s(), wait;

	*sampled = now >= f->next_sample;
	if (*sampled) {
		sample_tick(f->s);
		f->next_sample = now + f->interval;
	} else {
		counters_sample(&f->s->last, f->s->ksmd);
	}
	host_tuner_tick(f->host, &f->s->first, &f->s->last);
	/* After the tick: who writes the machine's series is this tick's news. */
	f->metrics.path = f->metrics_file;
	f->metrics.argv0 = f->command;
	run_metrics_tick(&f->metrics, f->host, f->s, *sampled);
	wait = f->next_sample - now_s();
	if (wait > 1.0)
		wait = 1.0;
	return wait < 0.01 ? 0.01 : wait;
}
