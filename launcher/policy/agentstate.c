/*
 * agentstate.c: what the agent holds, for ksm-run --status.  The daemon
 * publishes its rules and the processes they decided in /run/ksm-run/agent
 * (statefile.h: root's, 0600, replaced whole), one tab-separated line
 * each, every text escaped (text.h: no tab or newline survives):
 *
 *   watch events|scan WHY          (how new processes are found)
 *   rule NAME MATCHES ACTION
 *   proc PID START RULE RESULT DOMAIN WHY
 *   domain NAME PROCS              (the machine's mergeable memory: census.h)
 *   secure PID START COMM          (a program in secure execution, mergeable)
 *
 * --status reads it back (agentview.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ksmproc.h"
#include "common/msg.h"
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

	if (!a->changed)
		return;
	a->changed = false;
	if (a->active) {
		snprintf(line, sizeof line, "watch\t%s\t%s", a->events >= 0 ? "events" : "scan",
			 a->events >= 0 ? "-" : printable(a->events_why));
		add_line(&text, &len, &cap, line);
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
}

void agent_unpublish(void)
{
	unlink(STATE_DIR "/" AGENT_FILE);
}
