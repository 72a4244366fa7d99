/* runmetrics.c - the metrics file of a command's run. */
#include <stdio.h>
#include <string.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "ksmstat.h"
#include "run/runmetrics.h"

/* The sampler keeps peaks and last values of processes that may be gone: the gauges are read now. */
static int add_now(pid_t pid, pid_t ppid, void *arg)
{
	struct metrics_command *c = arg;
	struct ksmenable_stat st;
	char path[64];

	(void)ppid;
	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
	if (ksm_stat_parse(path, &st))
		return 0;
	c->processes++;
	if (st.merging_pages > 0)
		c->merged_pages += st.merging_pages;
	if (st.process_profit != -1)
		c->profit_bytes += st.process_profit;
	return 0;
}

void run_metrics_command(const struct sampler *s, struct metrics_command *out)
{
	memset(out, 0, sizeof *out);
	proc_walk_tree(s->root, add_now, out);
	for (int i = 0; i < s->nprocs; i++)
		out->peak_merged_pages += s->procs[i].peak_merging;
}

void run_metrics_write(const char *path, const struct host_tuner *h, const struct sampler *s)
{
	static int last_err;
	struct metrics_command c;
	int r;

	run_metrics_command(s, &c);
	r = metrics_write_host(path, h, &s->last, &c);
	if (r && r != last_err)
		msg("cannot write the metrics file %s: %s (trying again at every sample)", path, file_strerror(-r));
	last_err = r;
}
