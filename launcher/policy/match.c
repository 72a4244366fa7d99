/*
 * match.c: the rules of the policy against the facts of a process.
 */
#include <string.h>

#include "glob.h"
#include "policy/match.h"

/*
 * Is the process of F in UNIT (its own cgroup, or one above), where the
 * system manager (or, written user@UID.service/NAME, that user's manager)
 * makes its units, with every cgroup above made by root (cgname.h)?
 */
static bool in_unit(const struct proc_facts *f, const char *unit)
{
	long root_made = cg_unit_find(f->cgroup, unit);

	return root_made >= 0 && (size_t)root_made <= f->cgroup_root_made;
}

/* A glob of a kubelet's name against NAME; an unknown one ("") matches nothing. */
static bool name_matches(const char *pattern, const char *name)
{
	return *name && glob_match(pattern, name, strlen(name));
}

bool policy_rule_matches(const struct policy_rule *r, struct proc_facts *f)
{
	/* The program first: the fact that tells most processes apart. */
	if (r->exe && !(proc_facts_exe(f) && f->exe_trusted && glob_match(r->exe, f->exe, strlen(f->exe))))
		return false;
	if (r->user_given && !(proc_facts_uid(f) && f->uid == r->uid))
		return false;
	if ((r->cgroup || r->unit || r->pod_uid[0] || r->container[0] || r->qos != CG_QOS_NONE) &&
	    !proc_facts_cgroup(f))
		return false;
	if (r->cgroup && !glob_match(r->cgroup, f->cgroup, strlen(f->cgroup)))
		return false;
	if (r->unit && !in_unit(f, r->unit))
		return false;
	if (r->pod_uid[0] && strcmp(r->pod_uid, f->cg.pod_uid))
		return false;
	if (r->container[0] && (!f->cg.container_id[0] ||
				strncmp(r->container, f->cg.container_id, strlen(r->container))))
		return false;
	if (r->qos != CG_QOS_NONE && r->qos != f->cg.qos)
		return false;
	if (policy_rule_by_kube_names(r) && !proc_facts_kube(f))
		return false;
	if (r->k8s_namespace && !name_matches(r->k8s_namespace, f->kube.namespace_))
		return false;
	if (r->pod_name && !name_matches(r->pod_name, f->kube.pod))
		return false;
	if (r->container_name && !name_matches(r->container_name, f->kube.container))
		return false;
	if (r->owner && !kube_pod_has_owner(f->kube.pod, r->owner))
		return false;
	return true;
}

const struct policy_rule *policy_match(const struct policy *p, struct proc_facts *f)
{
	for (int i = 0; i < p->n; i++)
		if (policy_rule_matches(&p->rules[i], f))
			return &p->rules[i];
	return NULL;
}

static bool literal(const char *pattern)
{
	return !strpbrk(pattern, "*?[\\");
}

bool policy_rule_names_cgroup(const struct policy_rule *r, struct proc_facts *f)
{
	return proc_facts_cgroup(f) && ((r->cgroup && literal(r->cgroup) && !strcmp(r->cgroup, f->cgroup)) ||
				   (r->unit && in_unit(f, r->unit)));
}

bool policy_rule_names_exe(const struct policy_rule *r, struct proc_facts *f)
{
	return r->exe && literal(r->exe) && proc_facts_exe(f) && f->exe_trusted && !strcmp(r->exe, f->exe);
}

const char *policy_rule_guard(const struct policy_rule *r, struct proc_facts *f, const char *own_cgroup)
{
	if (f->pid == 1 && !policy_rule_names_cgroup(r, f) && !policy_rule_names_exe(r, f))
		return "PID 1, which a rule names only by its cgroup, unit or program written out";
	if (own_cgroup && proc_facts_cgroup(f) && !strcmp(f->cgroup, own_cgroup) && !policy_rule_names_cgroup(r, f))
		return "in the agent's own cgroup, which a rule names only by that cgroup or unit written out";
	return NULL;
}
