/*
 * agentview.c: the daemon's published rules and processes (agentstate.c)
 * read back into a view, then written as --status's text or JSON.  Its
 * texts were escaped when published (text.h): no tab or newline in them.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/human.h"
#include "common/jsonw.h"
#include "common/known.h"
#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "host/statefile.h"
#include "policy/agentstate.h"
#include "policy/agentview.h"
#include "policy/census.h"

/* A process a rule decided, that still runs. */
struct view_proc {
	long pid;
	const char *result, *domain, *why;      /* in the view's text */
};

struct view_rule {
	const char *name, *matches, *action;
	int enabled, disabled, refused, alone, waiting;
	long long merged;                       /* pages, of those enabled */
	long long profit;                       /* bytes, of those enabled; LLONG_MIN unknown (known.h) */
	struct view_proc *procs;
	size_t nprocs, cap;
};

struct view {
	char *text;                             /* the file, cut into fields */
	bool events;                            /* new processes from the kernel's events, else a scan */
	const char *scan_why;
	const char *own_cgroup;                 /* NULL: the root, or unknown */
	bool own_guards;                        /* it keeps its other processes out */
	struct view_rule *rules;
	size_t nrules, cap;
	/* The domains of the machine's mergeable memory, with their processes (census.h). */
	struct view_domain { const char *name; long procs; } domains[CENSUS_DOMAINS + 1];
	int ndomains;
	/* Programs in secure execution whose memory is mergeable, that still run. */
	struct view_secure { long pid; const char *comm; } *secure;
	size_t nsecure, secure_cap;
};

/*
 * Does PID still run with START?  Then its merged pages in *MERGED (0
 * unknown) and its profit in *PROFIT (LLONG_MIN unknown: before 6.4).
 */
static bool still_runs(long pid, unsigned long long start, long long *merged, long long *profit)
{
	struct ksmenable_stat ks;
	struct proc_stat st;

	*merged = 0;
	*profit = LLONG_MIN;
	if (proc_stat_read((pid_t)pid, &st) || st.starttime != start)
		return false;
	if (ksm_proc_stat((pid_t)pid, &ks) == 0) {
		*merged = ks.merging_pages > 0 ? ks.merging_pages : 0;
		*profit = known_of_stat(ks.process_profit);
	}
	return true;
}

static struct view_rule *rule_named(struct view *v, const char *name)
{
	for (size_t i = 0; i < v->nrules; i++)
		if (!strcmp(v->rules[i].name, name))
			return &v->rules[i];
	return NULL;
}

/* A proc line's fields: counted in its rule if the process still runs. */
static void add_proc(struct view *v, char **g)
{
	struct view_rule *r = rule_named(v, g[3]);
	long long merged, profit;

	if (!r || !still_runs(atol(g[1]), strtoull(g[2], NULL, 10), &merged, &profit))
		return;
	if (!strcmp(g[4], "enabled")) {
		r->enabled++;
		r->merged += merged;
		known_add(&r->profit, profit);
	} else if (!strcmp(g[4], "disabled")) {
		r->disabled++;
	} else if (!strcmp(g[4], "refused")) {
		r->refused++;
	} else if (!strcmp(g[4], "waiting")) {
		r->waiting++;
	} else {
		r->alone++;
	}
	r->procs = xgrow(r->procs, &r->cap, r->nprocs + 1, sizeof *r->procs);
	r->procs[r->nprocs++] = (struct view_proc){ atol(g[1]), g[4], g[5], g[6] };
}

/* The published file into *V: 0, or -1 when there is none (no agent, or no policy). */
static int view_read(struct view *v)
{
	char *save = NULL, *g[7];
	long n;

	memset(v, 0, sizeof *v);
	v->text = xmalloc(AGENT_TEXT_MAX);
	if ((n = statefile_read(STATE_DIR, AGENT_FILE, v->text, AGENT_TEXT_MAX)) < 0) {
		free(v->text);
		return -1;
	}
	/* The rules first (they come first), then their processes. */
	for (char *line = strtok_r(v->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int nf = agent_fields(line, g, 7);

		if (nf == 3 && !strcmp(g[0], "watch")) {
			v->events = !strcmp(g[1], "events");
			v->scan_why = g[2];
		} else if (nf == 3 && !strcmp(g[0], "own")) {
			v->own_cgroup = g[1];
			v->own_guards = !strcmp(g[2], "guards");
		} else if (nf == 4 && !strcmp(g[0], "rule")) {
			v->rules = xgrow(v->rules, &v->cap, v->nrules + 1, sizeof *v->rules);
			v->rules[v->nrules++] = (struct view_rule){ .name = g[1], .matches = g[2], .action = g[3],
								    .profit = LLONG_MIN };
		} else if (nf == 7 && !strcmp(g[0], "proc")) {
			add_proc(v, g);
		} else if (nf == 4 && !strcmp(g[0], "secure") && proc_running_since((pid_t)atol(g[1]),
											  strtoull(g[2], NULL, 10))) {
			v->secure = xgrow(v->secure, &v->secure_cap, v->nsecure + 1, sizeof *v->secure);
			v->secure[v->nsecure++] = (struct view_secure){ atol(g[1]), g[3] };
		} else if (nf == 3 && !strcmp(g[0], "domain") && v->ndomains <= CENSUS_DOMAINS) {
			v->domains[v->ndomains++] = (struct view_domain){ g[1], atol(g[2]) };
		}
	}
	return 0;
}

static void view_free(struct view *v)
{
	for (size_t i = 0; i < v->nrules; i++)
		free(v->rules[i].procs);
	free(v->rules);
	free(v->secure);
	free(v->text);
}

/* T (seconds of the epoch) as local time in BUF. */
static const char *when(long long t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld", t);
	return buf;
}

/*
 * The file of an agent that is gone (killed: one that stops removes it):
 * what it held is history, and says so instead.  True when it was said.
 */
static bool said_gone(FILE *out)
{
	struct agent_life l;
	char seen[32], started[32];

	if (agent_life_read(&l) || l.running)
		return false;
	fprintf(out, "Policy: NO AGENT RUNS since %s: the agent of ksm-run --daemon (pid %ld, started %s) "
		"stopped without a word (killed?); no process is judged, and those it enabled stay mergeable\n",
		when(l.last_seen, seen, sizeof seen), l.pid, when(l.started, started, sizeof started));
	return true;
}

void agent_status_print(FILE *out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct view v;

	if (said_gone(out) || view_read(&v))
		return;         /* no agent, or no policy: nothing to say */
	fprintf(out, "Policy (the agent of ksm-run --daemon; what each rule holds now):\n");
	if (v.events)
		fprintf(out, "  new processes: told at once by the kernel's process events\n");
	else if (v.scan_why)
		fprintf(out, "  new processes: found by a scan of /proc every second (no process events: %s)\n",
			v.scan_why);
	if (v.own_cgroup && v.own_guards)
		fprintf(out, "  its own cgroup: %s: the other processes there are left alone unless a rule names it\n",
			v.own_cgroup);
	else if (v.own_cgroup)
		fprintf(out, "  its own cgroup: %s is PID 1's, every process's (no service manager gave the agent one): "
			"it keeps no process out\n", v.own_cgroup);
	for (size_t i = 0; i < v.nrules; i++) {
		const struct view_rule *r = &v.rules[i];

		fprintf(out, "  rule %s: %s -> %s: %d enabled (merged %s, profit %s), %d disabled, %d refused, "
			"%d left alone", r->name, r->matches, r->action, r->enabled, human_bytes(r->merged * page, false),
			human_bytes(r->profit, false), r->disabled, r->refused, r->alone);
		if (r->waiting)
			fprintf(out, ", %d waiting (found stuck, tried again later)", r->waiting);
		fputc('\n', out);
		/* The refusals and those left alone, with why. */
		for (size_t k = 0; k < r->nprocs; k++)
			if (strcmp(r->procs[k].result, "enabled") && strcmp(r->procs[k].result, "disabled"))
				fprintf(out, "    %ld: %s: %s\n", r->procs[k].pid, r->procs[k].result, r->procs[k].why);
	}
	for (size_t i = 0; i < v.nsecure; i++)
		fprintf(out, "  warning: %ld (%s) runs a program in secure execution (setuid, setgid or file "
			"capabilities) and its memory is mergeable\n", v.secure[i].pid, v.secure[i].comm);
	/* Whoever made it mergeable: the agent, the process itself, an exec since (census.h). */
	if (v.ndomains > 1)
		fprintf(out, "  warning: the machine's mergeable memory spans %d security domains (", v.ndomains);
	else if (v.ndomains == 1)
		fprintf(out, "  security domain of the machine's mergeable memory: ");
	for (int d = 0; d < v.ndomains; d++)
		fprintf(out, "%s%s (%ld process%s)", d ? ", " : "", v.domains[d].name, v.domains[d].procs,
			v.domains[d].procs == 1 ? "" : "es");
	if (v.ndomains > 1)
		fprintf(out, "): a merged page is a timing side channel between its holders\n");
	else if (v.ndomains == 1)
		fprintf(out, "\n");
	view_free(&v);
}

/* The agent's "agent" object: does it run, and who was it. */
static void life_json(struct jsonw *w, const struct agent_life *l)
{
	jw_object(w, "agent");
	jw_bool(w, "running", l->running);
	jw_ll(w, "pid", l->pid);
	jw_ll(w, "started", l->started);
	jw_ll(w, "last_seen", l->last_seen);
	jw_end(w);
}

void agent_status_json(struct jsonw *w)
{
	long page = sysconf(_SC_PAGESIZE);
	struct agent_life life;
	struct view v;

	if (agent_life_read(&life) == 0 && !life.running) {
		/* Gone without a word: who it was, and none of its history as if it held now. */
		jw_object(w, "policy");
		life_json(w, &life);
		jw_end(w);
		return;
	}
	if (view_read(&v)) {
		jw_null(w, "policy");
		return;
	}
	jw_object(w, "policy");
	if (life.pid)
		life_json(w, &life);
	jw_string(w, "new_processes", v.events ? "events" : "scan");
	jw_string(w, "no_events_because", v.events ? NULL : v.scan_why);
	jw_object(w, "own_cgroup");
	jw_string(w, "path", v.own_cgroup);
	jw_bool(w, "guards", v.own_cgroup && v.own_guards);
	jw_end(w);
	jw_array(w, "rules");
	for (size_t i = 0; i < v.nrules; i++) {
		const struct view_rule *r = &v.rules[i];

		jw_object(w, NULL);
		jw_string(w, "name", r->name);
		jw_string(w, "matches", r->matches);
		jw_string(w, "action", r->action);
		jw_ll(w, "enabled", r->enabled);
		jw_ll(w, "disabled", r->disabled);
		jw_ll(w, "refused", r->refused);
		jw_ll(w, "left_alone", r->alone);
		jw_ll(w, "waiting", r->waiting);
		jw_ll(w, "merged_bytes", r->merged * page);
		jw_ll(w, "profit_bytes", r->profit);
		jw_array(w, "processes");
		for (size_t k = 0; k < r->nprocs; k++) {
			const struct view_proc *p = &r->procs[k];

			jw_object(w, NULL);
			jw_ll(w, "pid", p->pid);
			jw_string(w, "result", p->result);
			/* "-" is none in the published file. */
			jw_string(w, "domain", strcmp(p->domain, "-") ? p->domain : NULL);
			jw_string(w, "why", strcmp(p->why, "-") ? p->why : NULL);
			jw_end(w);
		}
		jw_end(w);
		jw_end(w);
	}
	jw_end(w);
	jw_array(w, "security_domains");
	for (int d = 0; d < v.ndomains; d++)
		jw_string(w, NULL, v.domains[d].name);
	jw_end(w);
	jw_array(w, "secure_mergeable");
	for (size_t i = 0; i < v.nsecure; i++) {
		jw_object(w, NULL);
		jw_ll(w, "pid", v.secure[i].pid);
		jw_string(w, "comm", v.secure[i].comm);
		jw_end(w);
	}
	jw_end(w);
	jw_array(w, "mergeable_processes_by_domain");
	for (int d = 0; d < v.ndomains; d++) {
		jw_object(w, NULL);
		jw_string(w, "domain", v.domains[d].name);
		jw_ll(w, "processes", v.domains[d].procs);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
	view_free(&v);
}
