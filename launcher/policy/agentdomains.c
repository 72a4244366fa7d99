/*
 * agentdomains.c: the security domains of what the agent makes mergeable.
 *
 * A merged page is a timing side channel between the processes that map
 * it, so the agent refuses to enable a process of one domain (a pod, a
 * container, a user) while memory of another is mergeable, unless the
 * rule accepts it (cross-domain = yes).  What counts is what the kernel
 * finds mergeable, whoever made it so: the agent's own records and the
 * machine's census (census.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/text.h"
#include "policy/agent.h"
#include "policy/domain.h"
#include "policy/facts.h"

/* A process the agent enabled in another domain than DOMAIN, or NULL. */
const struct agent_proc *agent_enabled_elsewhere(const struct agent *a, const char *domain)
{
	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].enabled && strcmp(a->procs[i].domain, domain))
			return &a->procs[i];
	return NULL;
}

/* Has the agent enabled a process in DOMAIN? */
bool agent_enabled_in(const struct agent *a, const char *domain)
{
	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].enabled && !strcmp(a->procs[i].domain, domain))
			return true;
	return false;
}

/*
 * Has a rule that accepts other domains (cross-domain = yes) enabled a
 * process in DOMAIN?  Then the policy accepted that DOMAIN's memory merges
 * with the others': what an alert must not fire for.
 */
bool agent_domain_accepted(const struct agent *a, const char *domain)
{
	for (size_t i = 0; i < a->nprocs; i++) {
		const struct agent_proc *p = &a->procs[i];

		if (!p->enabled || p->result != AGENT_ENABLED || strcmp(p->domain, domain))
			continue;
		for (int k = 0; k < a->policy.n; k++)
			if (a->policy.rules[k].cross_domain && !strcmp(a->policy.rules[k].name, p->rule))
				return true;
	}
	return false;
}

static int by_pid(const void *x, const void *y)
{
	pid_t a = ((const struct census_proc *)x)->pid, b = ((const struct census_proc *)y)->pid;

	return (a > b) - (a < b);
}

/*
 * The census of the machine's mergeable processes, taken again when older
 * than SECONDS.  What the agent enabled counts whatever ksmd has reached.
 */
void agent_census_fresh(struct agent *a, double seconds)
{
	struct census old = a->census;
	struct census_proc *mine;
	size_t n = 0;
	int r;

	if (now_s() - a->census.when < seconds)
		return;
	mine = xcalloc(a->nprocs + 1, sizeof *mine);
	for (size_t i = 0; i < a->nprocs; i++)
		if (a->procs[i].enabled)
			mine[n++] = (struct census_proc){ a->procs[i].pid, a->procs[i].start };
	qsort(mine, n, sizeof *mine, by_pid);       /* a scan under way appends records unsorted */
	r = census_take(&a->census, getpid(), &(struct census_known){ mine, n }, &a->policy);
	free(mine);
	if (r < 0) {
		a->census = old;
		return;
	}
	/* --status and the metrics say the domains: published again when they changed. */
	if (old.n != a->census.n || old.more != a->census.more)
		a->changed = true;
	for (int i = 0; i < old.n && !a->changed; i++)
		a->changed = strcmp(old.d[i].name, a->census.d[i].name) || old.d[i].procs != a->census.d[i].procs;
}

/*
 * Would enabling the process of F by rule R merge across security domains
 * without R accepting it?  Then why, in WHY.  *P gets F's domain.  What
 * merges is what the kernel finds mergeable, whoever made it so: a process
 * the agent enabled, one that enabled KSM itself, one that exec'd since
 * (census.h), seen as the kernel shows it at most a second ago, and what
 * the agent enabled since.
 */
bool agent_mixes_domains(struct agent *a, const struct policy_rule *r, struct proc_facts *f,
				struct agent_proc *p, char *why, size_t len)
{
	const struct agent_proc *o;
	const struct census_domain *c;

	if (!domain_of_process(f, &a->policy, p->domain, sizeof p->domain)) {
		snprintf(p->domain, sizeof p->domain, "unknown");
		if (r->cross_domain)
			return false;
		snprintf(why, len, "its security domain cannot be told (its cgroup or user cannot be read)");
		return true;
	}
	if (r->cross_domain)
		return false;
	if ((o = agent_enabled_elsewhere(a, p->domain))) {
		snprintf(why, len, "it would share merged pages with another security domain: it is in %s, "
			 "process %d (enabled by the agent) in %s; cross-domain = yes in rule %s would accept that",
			 printable(p->domain), (int)o->pid, printable(o->domain), r->name);
		return true;
	}
	agent_census_fresh(a, 1);
	if ((c = census_other(&a->census, p->domain))) {
		snprintf(why, len, "it would share merged pages with another security domain: it is in %s, "
			 "process %d (mergeable, %d process%s in all) in %s; cross-domain = yes in rule %s would "
			 "accept that", printable(p->domain), (int)c->example, c->procs, c->procs == 1 ? "" : "es",
			 printable(c->name), r->name);
		return true;
	}
	return false;
}
