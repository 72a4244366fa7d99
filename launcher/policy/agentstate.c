/*
 * agentstate.c: what the agent holds, for ksm-run --status.  The daemon
 * publishes its rules and the processes they decided in /run/ksm-run/agent
 * (statefile.h: root's, 0600, replaced whole), one tab-separated line
 * each, every text escaped (text.h: no tab or newline survives):
 *
 *   agent PID START SINCE          (the daemon: its start in clock ticks, and in seconds of the epoch)
 *   watch events|scan WHY          (how new processes are found)
 *   own CGROUP guards|everyones    (the agent's cgroup, and whether it keeps its other processes out)
 *   rule NAME MATCHES ACTION
 *   proc PID START RULE RESULT DOMAIN WHY
 *   domain NAME PROCS              (the machine's mergeable memory: census.h)
 *   secure PID START COMM          (a program in secure execution, mergeable)
 *
 * --status reads it back (agentview.c).  While the agent runs, the file's
 * time of change is touched at every tick, so that an agent that was
 * killed, and could not remove it, is told apart, and since when.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "common/targets.h"
#include "common/text.h"
#include "host/metrics.h"
#include "host/statefile.h"
#include "policy/agent.h"
#include "policy/agentstate.h"

static const char *const result_words[] = {
	[AGENT_NONE] = "none", [AGENT_ENABLED] = "enabled", [AGENT_REFUSED] = "refused",
	[AGENT_DISABLED] = "disabled", [AGENT_LEFT_ALONE] = "left-alone", [AGENT_WAITING] = "waiting",
};

/* Appends a line to the growing text *T (*LEN used, *CAP allocated). */
static void add_line(char **t, size_t *len, size_t *cap, const char *line)
{
	size_t n = strlen(line);

	*t = xgrow(*t, cap, *len + n + 2, 1);
	memcpy(*t + *len, line, n);
	*len += n;
	(*t)[(*len)++] = '\n';
	(*t)[*len] = '\0';
}

void agent_publish(struct agent *a)
{
	char *text = NULL, line[2048], matches[1024], action[512];
	size_t len = 0, cap = 0;

	if (!a->changed) {
		if (a->active)  /* alive: the heartbeat agent_life_read looks for */
			utimensat(AT_FDCWD, STATE_DIR "/" AGENT_FILE, NULL, AT_SYMLINK_NOFOLLOW);
		return;
	}
	a->changed = false;
	if (a->active) {
		struct proc_stat self;

		if (proc_stat_read(getpid(), &self))
			self.starttime = 0;     /* then nobody is taken for it */
		snprintf(line, sizeof line, "agent\t%d\t%llu\t%lld", (int)getpid(), self.starttime,
			 (long long)a->started);
		add_line(&text, &len, &cap, line);
		snprintf(line, sizeof line, "watch\t%s\t%s", a->events >= 0 ? "events" : "scan",
			 a->events >= 0 ? "-" : printable(a->events_why));
		add_line(&text, &len, &cap, line);
		if (a->own_cgroup[0]) {
			snprintf(line, sizeof line, "own\t%s\t%s", printable(a->own_cgroup),
				 a->own_cgroup_known ? "guards" : "everyones");
			add_line(&text, &len, &cap, line);
		}
	}
	for (int i = 0; a->active && i < a->policy.n; i++) {
		policy_rule_matches_text(&a->policy.rules[i], matches, sizeof matches);
		policy_rule_action_text(&a->policy.rules[i], action, sizeof action);
		snprintf(line, sizeof line, "rule\t%s\t%s\t%s", a->policy.rules[i].name, printable(matches),
			 printable(action));
		add_line(&text, &len, &cap, line);
	}
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct agent_proc *p = &a->procs[i];

		if (p->secure_mergeable) {
			snprintf(line, sizeof line, "secure\t%d\t%llu\t%s", (int)p->pid, p->start, printable(p->comm));
			add_line(&text, &len, &cap, line);
		}
		if (!p->rule[0] || p->result == AGENT_NONE)
			continue;
		snprintf(line, sizeof line, "proc\t%d\t%llu\t%s\t%s\t%s\t%s", (int)p->pid, p->start, p->rule,
			 result_words[p->result], printable(p->domain[0] ? p->domain : "-"),
			 printable(p->why[0] ? p->why : "-"));
		add_line(&text, &len, &cap, line);
	}
	for (int i = 0; a->active && i < a->census.n; i++) {
		snprintf(line, sizeof line, "domain\t%s\t%d", printable(a->census.d[i].name), a->census.d[i].procs);
		add_line(&text, &len, &cap, line);
	}
	if (a->active && a->census.more) {
		snprintf(line, sizeof line, "domain\t(more domains)\t%d", a->census.more);
		add_line(&text, &len, &cap, line);
	}
	if (len && len < AGENT_TEXT_MAX)
		statefile_write(STATE_DIR, AGENT_FILE, text, len);
	else if (!len)
		unlink(STATE_DIR "/" AGENT_FILE);
	free(text);
}

void agent_figures(const struct agent *a, struct metrics_rule *rules, struct metrics_agent *out)
{
	memset(out, 0, sizeof *out);
	out->rules = rules;
	for (int i = 0; a->active && i < a->policy.n; i++)
		rules[out->n++] = (struct metrics_rule){ .name = a->policy.rules[i].name };
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct agent_proc *p = &a->procs[i];
		struct metrics_rule *r = NULL;
		struct ksmenable_stat ks;

		for (int k = 0; k < out->n && !r; k++)
			if (!strcmp(rules[k].name, p->rule))
				r = &rules[k];
		if (!r)
			continue;
		switch (p->result) {
		case AGENT_ENABLED:
			r->enabled++;
			if (ksm_proc_stat(p->pid, &ks) == 0 && ks.merging_pages > 0)
				r->merged_pages += ks.merging_pages;
			break;
		case AGENT_DISABLED: r->disabled++; break;
		case AGENT_REFUSED: r->refused++; break;
		case AGENT_LEFT_ALONE: r->left_alone++; break;
		case AGENT_WAITING: r->waiting++; break;
		case AGENT_NONE: break;
		}
	}
	out->domains = census_domains(&a->census);
	/* Domains beyond the census's room are not named: none of them is taken for accepted. */
	out->unaccepted_domains = out->domains;
	for (int i = 0; i < a->census.n; i++)
		if (agent_domain_accepted(a, a->census.d[i].name))
			out->unaccepted_domains--;
}

int agent_fields(char *line, char **f, int n)
{
	int k = 0;

	for (char *s = line; k < n && s; k++) {
		f[k] = s;
		if ((s = strchr(s, '\t')))
			*s++ = '\0';
	}
	return k;
}

int agent_life_read(struct agent_life *l)
{
	char text[256], *f[4];
	unsigned long long start;
	struct stat st;
	FILE *in;

	memset(l, 0, sizeof *l);
	/* The agent line comes first: a short read of the file is enough (statefile.h's checks, by hand). */
	if (lstat(STATE_DIR "/" AGENT_FILE, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return -1;
	if (!(in = fopen(STATE_DIR "/" AGENT_FILE, "re")))
		return -1;
	if (!fgets(text, sizeof text, in))
		text[0] = '\0';
	fclose(in);
	text[strcspn(text, "\n")] = '\0';
	if (agent_fields(text, f, 4) != 4 || strcmp(f[0], "agent"))
		return -1;
	l->pid = atol(f[1]);
	start = strtoull(f[2], NULL, 10);
	l->started = atoll(f[3]);
	l->last_seen = st.st_mtime;
	l->running = l->pid > 0 && start > 0 && proc_running_since((pid_t)l->pid, start);
	return 0;
}

void agent_forget_gone(void)
{
	struct agent_life l;

	if (agent_life_read(&l) || l.running)
		return;
	agent_unpublish();
	msg("moved %s/%s, left by the host agent (pid %ld) that stopped without a word, to %s (what it enabled, "
	    "for --detach=agent)", STATE_DIR, AGENT_FILE, l.pid, AGENT_LAST_FILE);
}

/*
 * The file goes to AGENT_LAST_FILE, not away: KSM stays on in the
 * processes the agent enabled, and ksm-run --detach=agent reads there
 * which they are.  The directory is root's: no tenant plants it.
 */
void agent_unpublish(void)
{
	if (rename(STATE_DIR "/" AGENT_FILE, STATE_DIR "/" AGENT_LAST_FILE))
		unlink(STATE_DIR "/" AGENT_FILE);
}

int agent_enabled_left(struct pid_list *out, char *why, size_t len)
{
	struct agent_life life;
	const char *name = AGENT_FILE;
	char *text, *save = NULL, *g[7];
	long n;

	memset(out, 0, sizeof *out);
	if (agent_life_read(&life) == 0 && life.running) {
		snprintf(why, len, "the host agent runs (pid %ld): it would enable them again at its next reload; "
			 "stop it first (systemctl stop ksmenable)", life.pid);
		return -1;
	}
	text = xmalloc(AGENT_TEXT_MAX);
	/* An agent killed without a word left its own file; one that stopped, its last. */
	if ((n = statefile_read(STATE_DIR, name, text, AGENT_TEXT_MAX)) == -ENOENT)
		n = statefile_read(STATE_DIR, name = AGENT_LAST_FILE, text, AGENT_TEXT_MAX);
	if (n < 0) {
		if (n == -ENOENT)
			snprintf(why, len, "no host agent has run since the machine started (no %s/%s)", STATE_DIR,
				 AGENT_LAST_FILE);
		else
			snprintf(why, len, "%s/%s: %s", STATE_DIR, name, strerror((int)-n));
		free(text);
		return -1;
	}
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		pid_t pid;

		if (agent_fields(line, g, 7) != 7 || strcmp(g[0], "proc") || strcmp(g[4], "enabled"))
			continue;
		pid = (pid_t)atol(g[1]);
		/* The same process, not one that took its PID since. */
		if (pid > 0 && proc_running_since(pid, strtoull(g[2], NULL, 10))) {
			out->pids = xgrow(out->pids, &out->cap, out->n + 1, sizeof *out->pids);
			out->pids[out->n++] = pid;
		}
	}
	free(text);
	if (!out->n) {
		snprintf(why, len, "no process that the host agent enabled runs now (%s/%s)", STATE_DIR, name);
		return -1;
	}
	return 0;
}
