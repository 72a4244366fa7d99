/*
 * agentstate.c: what the agent holds, for ksm-run --status.  The daemon
 * publishes its rules and the processes they decided in /run/ksm-run/agent
 * (statefile.h: root's, 0600, replaced whole), one tab-separated line
 * each, every text escaped (text.h: no tab or newline survives):
 *
 *   watch events|scan WHY          (how new processes are found)
 *   rule NAME MATCHES ACTION
 *   proc PID START RULE RESULT DOMAIN WHY
 *
 * --status reads it back, keeps the processes that still run (the same
 * start time), and adds what each has merged now.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/human.h"
#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "common/text.h"
#include "host/metrics.h"
#include "host/statefile.h"
#include "policy/agent.h"
#include "policy/agentstate.h"

#define AGENT_FILE "agent"
#define AGENT_TEXT_MAX (1 << 20)

static const char *const result_words[] = {
	[AGENT_NONE] = "none", [AGENT_ENABLED] = "enabled", [AGENT_REFUSED] = "refused",
	[AGENT_DISABLED] = "disabled", [AGENT_LEFT_ALONE] = "left-alone",
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

		if (!p->rule[0] || p->result == AGENT_NONE)
			continue;
		snprintf(line, sizeof line, "proc\t%d\t%llu\t%s\t%s\t%s\t%s", (int)p->pid, p->start, p->rule,
			 result_words[p->result], printable(p->domain[0] ? p->domain : "-"),
			 printable(p->why[0] ? p->why : "-"));
		add_line(&text, &len, &cap, line);
	}
	if (len && len < AGENT_TEXT_MAX)
		statefile_write(STATE_DIR, AGENT_FILE, text, len);
	else if (!len)
		unlink(STATE_DIR "/" AGENT_FILE);
	free(text);
}

/* Adds DOMAIN to the N distinct ones of DOMAINS (16 at most): --status and the metrics count alike. */
static void domain_add(char domains[][96], int *n, const char *domain)
{
	int d = 0;

	while (d < *n && strcmp(domains[d], domain))
		d++;
	if (d == *n && d < 16)
		snprintf(domains[(*n)++], 96, "%s", domain);
}

void agent_figures(const struct agent *a, struct metrics_rule *rules, struct metrics_agent *out)
{
	char domains[16][96];
	int ndomains = 0;

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
			domain_add(domains, &ndomains, p->domain);
			break;
		case AGENT_DISABLED: r->disabled++; break;
		case AGENT_REFUSED: r->refused++; break;
		case AGENT_LEFT_ALONE: r->left_alone++; break;
		case AGENT_NONE: break;
		}
	}
	out->domains = ndomains;
}

void agent_unpublish(void)
{
	unlink(STATE_DIR "/" AGENT_FILE);
}

/* Does PID still run with START?  Then its merged pages in *MERGED (0 unknown). */
static bool still_runs(long pid, unsigned long long start, long long *merged)
{
	struct ksmenable_stat ks;
	struct proc_stat st;

	*merged = 0;
	if (proc_stat_read((pid_t)pid, &st) || st.starttime != start)
		return false;
	if (ksm_proc_stat((pid_t)pid, &ks) == 0 && ks.merging_pages > 0)
		*merged = ks.merging_pages;
	return true;
}

/* Splits LINE at tabs into at most N fields; how many. */
static int fields(char *line, char **f, int n)
{
	int k = 0;

	for (char *s = line; k < n && s; k++) {
		f[k] = s;
		if ((s = strchr(s, '\t')))
			*s++ = '\0';
	}
	return k;
}

struct rule_counts {
	int enabled, disabled, refused, alone;
	long long merged;               /* pages */
};

/*
 * The proc lines of TEXT (from FROM on) for RULE, of processes that still
 * run: counted in *C, and the refusals and those left alone printed on OUT
 * (none when NULL).  DOMAINS (with NDOMAINS, at most 16) gets the domains enabled.
 */
static void rule_procs(const char *from, const char *rule, struct rule_counts *c, FILE *out,
		       char domains[][96], int *ndomains)
{
	char copy[4096], *g[7];
	long long m;

	for (const char *p = from, *rest; p && *p; p = rest) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		rest = nl ? nl + 1 : NULL;
		if (len >= sizeof copy)
			continue;
		memcpy(copy, p, len);
		copy[len] = '\0';
		if (fields(copy, g, 7) != 7 || strcmp(g[0], "proc") || strcmp(g[3], rule) ||
		    !still_runs(atol(g[1]), strtoull(g[2], NULL, 10), &m))
			continue;
		if (!strcmp(g[4], "enabled")) {
			c->enabled++;
			c->merged += m;
			domain_add(domains, ndomains, g[5]);
		} else if (!strcmp(g[4], "disabled")) {
			c->disabled++;
		} else {
			if (!strcmp(g[4], "refused"))
				c->refused++;
			else
				c->alone++;
			if (out)
				fprintf(out, "    %s: %s: %s\n", g[1], g[4], g[6]);
		}
	}
}

void agent_status_print(FILE *out)
{
	static char text[AGENT_TEXT_MAX];
	char *save = NULL, *f[4], domains[16][96];
	long n = statefile_read(STATE_DIR, AGENT_FILE, text, sizeof text);
	long page = sysconf(_SC_PAGESIZE);
	int ndomains = 0;

	if (n < 0)
		return;         /* no agent, or no policy: nothing to say */
	fprintf(out, "Policy (the agent of ksm-run --daemon; what each rule holds now):\n");
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct rule_counts c = { 0 };
		int nf = fields(line, f, 4);
		char *details = NULL;
		size_t dlen = 0;
		FILE *d;

		if (nf == 3 && !strcmp(f[0], "watch")) {
			if (!strcmp(f[1], "events"))
				fprintf(out, "  new processes: told at once by the kernel's process events\n");
			else
				fprintf(out, "  new processes: found by a scan of /proc every second (no process "
					"events: %s)\n", f[2]);
			continue;
		}
		if (nf != 4 || strcmp(f[0], "rule"))
			continue;
		/* One pass over its processes: the summary first, the refusals below it. */
		d = open_memstream(&details, &dlen);
		rule_procs(save, f[1], &c, d, domains, &ndomains);
		if (d)
			fclose(d);
		fprintf(out, "  rule %s: %s -> %s: %d enabled (merged %s), %d disabled, %d refused, %d left alone\n",
			f[1], f[2], f[3], c.enabled, human_bytes(c.merged * page, false), c.disabled, c.refused,
			c.alone);
		if (details)
			fputs(details, out);
		free(details);
	}
	if (ndomains > 1) {
		fprintf(out, "  warning: the memory the agent made mergeable spans %d security domains (", ndomains);
		for (int d = 0; d < ndomains; d++)
			fprintf(out, "%s%s", d ? ", " : "", domains[d]);
		fprintf(out, "): a merged page is a timing side channel between its holders\n");
	} else if (ndomains == 1) {
		fprintf(out, "  security domain of the memory the agent made mergeable: %s\n", domains[0]);
	}
}
