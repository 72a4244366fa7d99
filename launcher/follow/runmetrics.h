/*
 * runmetrics.h - a command's run writes the metrics file (runmetrics.c):
 * its command's tree at each sample, labelled, and the machine's figures
 * (host/metrics.h) when this instance is the one that writes them; the
 * file goes when the command has ended.
 */
#ifndef KSMRUN_RUNMETRICS_H
#define KSMRUN_RUNMETRICS_H

#include <stdbool.h>

#include "host/hosttune.h"
#include "host/metrics.h"
#include "follow/tree.h"

struct run_metrics {
	const char *path;               /* --metrics-file; NULL: none */
	enum followed what;
	const char *argv0;              /* FOLLOWED_COMMAND: the command (ATTACHED: the first target's name) */
	char command[256];              /* the command label, made at the first write */
	struct metrics_role role;
	int last_err;                   /* the last failure, said once */
};

/*
 * After a tick of the tuning: writes M->path when SAMPLED, or when this
 * instance starts or stops writing the machine's series.  A failure is
 * said once, and the run goes on.
 */
void run_metrics_tick(struct run_metrics *m, const struct host_tuner *h, const struct sampler *s, bool sampled);

#endif
