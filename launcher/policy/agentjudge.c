/*
 * agentjudge.c: one process judged by the policy and its rule applied.
 *
 * Its facts are read (facts.h) and the first rule that matches decides
 * (match.h); what the rule guards and a mix of security domains
 * (agentdomains.c) may leave it alone; else the rule's action is applied
 * from outside by the ptrace engine (target_apply), which pins the process
 * and checks at every stop that it is still what the rule matched.  A
 * process that inherited the prctl's flag is only noted.  One that would
 * not stop is tried again later, at a doubling interval.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/files.h"
#include "common/kfeature.h"
#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "common/text.h"
#include "policy/agent.h"
#include "policy/facts.h"
#include "policy/match.h"
#include "ptrace/target.h"
#include "selection.h"

/* The plan for rule R: enable as it says, or (off) take out whatever KSM is in the process. */
static void make_plan(const struct agent *a, const struct policy_rule *r, pid_t pid, struct target_plan *plan,
		      struct selection *sel)
{
	static const struct config all;         /* no selection: every region */
	bool prctl = kfeature_present(KF_PRCTL);

	memset(plan, 0, sizeof *plan);
	plan->stops = a->stops;
	plan->sel = sel;
	if (r->lib.mode == MODE_OFF) {
		struct ksmenable_stat st;

		plan->disable = true;
		/* The prctl's flag, when it is on; else the regions advised one by one. */
		plan->process_wide = prctl && ksm_proc_stat(pid, &st) == 0 && ksm_proc_merge_any(pid, &st) == 1;
		selection_of_config(sel, &all);
		return;
	}
	/* auto where the kernel has no prctl (before 6.4): every region, by madvise. */
	plan->process_wide = config_coverage(&r->lib) == COVER_PROCESS && prctl;
	selection_of_config(sel, &r->lib);
}

/*
 * Has the process the flag the plan would set already?  A child inherits
 * it from its parent at fork (and across exec since Linux 6.7), so at a
 * high rate of starts most processes a rule names have it: a read of
 * ksm_stat instead of an attach.  Nothing is changed, so nothing is pinned.
 */
static bool already_merge_any(const struct target_plan *plan, pid_t pid)
{
	struct ksmenable_stat st;

	return plan->process_wide && !plan->disable && ksm_proc_stat(pid, &st) == 0 &&
	       ksm_proc_merge_any(pid, &st) == 1;
}

/* The rule that decided, and the agent: what a stop looks at again. */
struct judged {
	const struct agent *a;
	const struct policy_rule *rule;
	char why[256];
};

/* At each stop: the process must still be the rule's (its cgroup, user and program as judged). */
static const char *still_the_rules(pid_t pid, void *ctx)
{
	struct judged *j = ctx;
	struct proc_facts f;

	proc_facts_init(pid, &f);
	if (policy_match(&j->a->policy, &f) == j->rule)
		return NULL;
	snprintf(j->why, sizeof j->why, "it is no longer what rule %s matched (its cgroup, user or program "
		 "changed before it was stopped): left alone", j->rule->name);
	return j->why;
}

/*
 * P, just enabled by rule R, is the first of its domain while another
 * domain has some (R accepts that, or it would have been refused): the
 * log says so once per domain, as --status and the metrics do.
 */
static void say_domain_joins(const struct agent *a, const struct policy_rule *r, const struct agent_proc *p,
			     bool first_of_domain)
{
	const struct agent_proc *o;

	if (!first_of_domain || !(o = agent_enabled_elsewhere(a, p->domain)))
		return;
	log_to(a->log, "rule %s: warning: the memory the agent made mergeable spans security domains now: %s "
	      "(process %d) and %s (process %d) at least, as cross-domain = yes accepts; a merged page is a "
	      "timing side channel between their processes", r->name, printable(p->domain), (int)p->pid,
	      printable(o->domain), (int)o->pid);
}

/*
 * The test suite's window between a judgement and the attach
 * (KSM_RUN_TEST_AGENT_PAUSE_MS, ignored when setuid), in which it moves
 * the judged process elsewhere: the stops must see it.
 */
static void test_pause(const struct agent *a, pid_t pid)
{
	const char *v = secure_getenv("KSM_RUN_TEST_AGENT_PAUSE_MS");
	long long ms;

	if (!v || parse_ll(v, 1, 60000, &ms))
		return;
	log_to(a->log, "test: %d judged; attached in %lld ms", (int)pid, ms);
	nanosleep(&(struct timespec){ (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L }, NULL);
}

/* The wait before try TRIES + 1 of a target found stuck: doubling, bounded. */
static double retry_delay(int tries)
{
	double d = AGENT_RETRY_FIRST_S;

	while (--tries > 0 && d < AGENT_RETRY_MAX_S)
		d *= 2;
	return d < AGENT_RETRY_MAX_S ? d : AGENT_RETRY_MAX_S;
}

bool agent_judge(struct agent *a, pid_t pid, const char *comm, struct agent_proc *p)
{
	const struct policy_rule *r;
	struct target_result res;
	struct target_plan plan;
	struct selection sel;
	struct proc_facts f;
	const char *why;
	char line[1024];
	bool first_of_domain;

	proc_facts_init(pid, &f);
	if (!(r = policy_match(&a->policy, &f)))
		return true;
	a->changed = true;
	snprintf(p->rule, sizeof p->rule, "%s", r->name);
	if ((why = policy_rule_guard(r, &f, a->own_cgroup_known ? a->own_cgroup : NULL))) {
		p->result = AGENT_LEFT_ALONE;
		snprintf(p->why, sizeof p->why, "%s", why);
		log_to(a->log, "rule %s: %d: left alone: %s", r->name, (int)pid, why);
		return true;
	}
	if (r->lib.mode != MODE_OFF && agent_mixes_domains(a, r, &f, p, p->why, sizeof p->why)) {
		if (!proc_running_since(p->pid, p->start))
			return true;    /* its cgroup or user went with it: ended, not refused */
		a->refused++;
		p->result = AGENT_REFUSED;
		log_to(a->log, "rule %s: %d (%s): refused: %s", r->name, (int)pid, printable(comm), p->why);
		return true;
	}
	make_plan(a, r, pid, &plan, &sel);
	/* Only a rule that accepts other domains can add one (else mixes_domains refused it): no scan for the rest. */
	first_of_domain = r->cross_domain && !agent_enabled_in(a, p->domain);
	if (already_merge_any(&plan, pid)) {
		p->enabled = true;      /* inherited from its parent (fork, and exec since 6.7): nothing to do */
		census_note(&a->census, p->domain, p->pid);
		p->result = AGENT_ENABLED;
		say_domain_joins(a, r, p, first_of_domain);
		return true;
	}
	test_pause(a, pid);
	plan.later_if_stuck = true;
	plan.stop_wait_s = AGENT_STOP_WAIT_S;
	plan.still_judged = still_the_rules;
	plan.judged_ctx = &(struct judged){ a, r, "" };
	memset(&res, 0, sizeof res);
	target_apply(pid, &plan, &res);
	/* The unit allows the raise; a sandbox of another making (a container, a drop-in) may not. */
	if (res.raise_refused && !a->said_not_raised) {
		a->said_not_raised = true;
		log_to(a->log, "stops are not raised (SCHED_FIFO: %s): on a busy host a target may stay stopped longer "
		      "than its 10 ms budget; the raise needs CAP_SYS_NICE, sched_setscheduler allowed and "
		      "RestrictRealtime=no (ksm-run(1), ATTACH)", strerror(res.raise_refused));
	}
	/* Enabled now or before: its memory is mergeable, in its domain. */
	p->enabled = !plan.disable && (res.outcome == TARGET_DONE || res.outcome == TARGET_ALREADY);
	p->result = p->enabled ? AGENT_ENABLED : plan.disable ? AGENT_DISABLED : AGENT_NONE;
	switch (res.outcome) {
	case TARGET_DONE:
		if (plan.disable)
			a->detached++;
		else
			a->enabled++;
		break;
	case TARGET_REFUSED:
		a->refused++;
		p->result = AGENT_REFUSED;
		snprintf(p->why, sizeof p->why, "%s", res.why);
		break;
	case TARGET_NOT_DONE:
		return false;   /* the agent is stopping */
	case TARGET_LATER:
		p->result = AGENT_WAITING;
		snprintf(p->why, sizeof p->why, "%s", res.why);
		p->retry_at = now_s() + retry_delay(++p->tries);
		if (p->tries > 1)
			return true;    /* said once, at its first try */
		break;
	case TARGET_ALREADY: case TARGET_NONE_MATCHED: case TARGET_ENDED:
	case TARGET_ABSENT:     /* never here: the agent's processes are found, not given */
		return true;    /* nothing to say: as it should be, or gone */
	}
	target_result_line(&res, &plan, line, sizeof line);
	log_to(a->log, "rule %s: %s", r->name, line);
	if (p->enabled) {
		census_note(&a->census, p->domain, p->pid);
		say_domain_joins(a, r, p, first_of_domain);
	}
	return true;
}
