/*
 * cgmoves.c: a process moved to another cgroup after it was judged (a
 * write to cgroup.procs, systemd-run --scope, a supervisor's move) is
 * judged again, as after an exec.
 *
 * The kernel says nothing of a move (its process events have none), so
 * the agent looks: at each tick, the cgroup of up to AGENT_MOVE_CHECKS of
 * its records, in turn, against the one each was judged in, kept as a
 * hash.  Up to that many processes a move is found within a tick, as a
 * new process is; beyond it, within one tick per AGENT_MOVE_CHECKS.  Only
 * while the cgroup can change a judgement: a rule matches by cgroup, unit,
 * pod, container, QoS class or the kubelet's names (which the pod's cgroup
 * leads to), or the agent's own cgroup guards.
 */
#include <stdio.h>

#include "common/files.h"
#include "policy/agent.h"
#include "policy/facts.h"

bool agent_watches_moves(const struct agent *a)
{
	if (!a->active)
		return false;
	if (a->own_cgroup_known)
		return true;
	for (int i = 0; i < a->policy.n; i++) {
		const struct policy_rule *r = &a->policy.rules[i];

		if (r->cgroup || r->unit || r->pod_uid[0] || r->container[0] || r->qos != CG_QOS_NONE ||
		    policy_rule_by_kube_names(r))
			return true;
	}
	return false;
}

unsigned long long agent_cgroup_hash(pid_t pid)
{
	char path[64], text[8192], cgroup[4096];
	unsigned long long h = 14695981039346656037ULL;         /* FNV-1a, 64 bits */

	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
	if (read_text(path, text, sizeof text) || proc_cgroup_parse(text, cgroup, sizeof cgroup))
		return 0;
	for (const unsigned char *s = (const unsigned char *)cgroup; *s; s++)
		h = (h ^ *s) * 1099511628211ULL;
	return h ? h : 1;       /* 0 is unknown */
}

void agent_mark_moved(struct agent *a)
{
	size_t n = a->nprocs < AGENT_MOVE_CHECKS ? a->nprocs : AGENT_MOVE_CHECKS;

	if (!agent_watches_moves(a))
		return;
	for (size_t k = 0; k < n; k++) {
		struct agent_proc *p;
		unsigned long long h;

		if (a->move_cursor >= a->nprocs)
			a->move_cursor = 0;
		p = &a->procs[a->move_cursor++];
		/* 0: ended, or unknown when judged; a process that ended is forgotten by the scan. */
		if (p->cgroup_hash && (h = agent_cgroup_hash(p->pid)) && h != p->cgroup_hash)
			p->stale = true;
	}
}
