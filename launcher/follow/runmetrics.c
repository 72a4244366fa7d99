/* runmetrics.c - the metrics file of a command's run. */
#include <stdio.h>
#include <string.h>

#include "common/files.h"
#include "common/known.h"
#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "follow/runmetrics.h"
#include "policy/agentstate.h"

/* The sampler keeps peaks and last values of processes that may be gone: the gauges are read now. */
static int add_now(pid_t pid, pid_t ppid, void *arg)
{
	struct metrics_command *c = arg;
	struct ksmenable_stat st;

	(void)ppid;
	if (ksm_proc_stat(pid, &st))
		return 0;
	c->processes++;
	if (st.merging_pages > 0)
		c->merged_pages += st.merging_pages;
	known_add(&c->profit_bytes, known_of_stat(st.process_profit));
	return 0;
}

/* The command's tree now (walked afresh) and its peaks (from the sampler S). */
static void run_metrics_command(const struct sampler *s, struct metrics_command *out)
{
	memset(out, 0, sizeof *out);
	out->profit_bytes = LLONG_MIN;  /* a kernel without ksm_process_profit: unknown */
	proc_walk_tree(s->root, add_now, out);
	for (int i = 0; i < s->nprocs; i++)
		out->peak_merged_pages += s->procs[i].peak_merging;
	out->saved_bytes = s->saved_last;
	out->peak_saved_bytes = s->saved_peak;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The command label: the command's base name, or the first target's comm. */
static void command_label(const struct sampler *s, const struct run_metrics *m, char *out, size_t len)
{
	char path[64];

	snprintf(out, len, "%s", m->what == FOLLOWED_COMMAND ? base_name(m->argv0) : "");
	if (m->what == FOLLOWED_COMMAND || !s->ntargets)
		return;
	snprintf(path, sizeof path, "/proc/%d/comm", (int)s->targets[0]);
	if (read_text(path, out, len))
		snprintf(out, len, "pid %d", (int)s->targets[0]);
}

void run_metrics_tick(struct run_metrics *m, const struct host_tuner *h, const struct sampler *s, bool sampled)
{
	struct metrics_command c;
	struct agent_life life;
	bool changed, has_life;
	int r;

	if (!m->path)
		return;
	changed = metrics_role_update(&m->role, h, false, now_s());
	if (!sampled && !changed)
		return;
	if (!m->command[0])
		command_label(s, m, m->command, sizeof m->command);
	run_metrics_command(s, &c);
	c.command = m->command;
	c.file = base_name(m->path);
	/* A host agent's file left by one that was killed: said in the machine's series (metrics.h). */
	has_life = agent_life_read(&life) == 0;
	r = metrics_write_host(m->path, h, &s->last, &c, NULL,
			       has_life ? &(struct metrics_agent_life){ life.running, life.last_seen } : NULL,
			       m->role.machine);
	if (r && r != m->last_err)
		msg("cannot write the metrics file %s: %s (trying again at every sample)", m->path, file_strerror(-r));
	m->last_err = r;
}
