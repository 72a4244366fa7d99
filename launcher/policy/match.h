/*
 * match.h - a process's facts (facts.h) against the policy's rules
 * (match.c): the first rule whose matches all hold decides.
 */
#ifndef KSMRUN_POLICY_MATCH_H
#define KSMRUN_POLICY_MATCH_H

#include <stdbool.h>

#include "policy/facts.h"
#include "policy/policy.h"

/* Does every match of R hold for F (its facts read as asked for)?  A fact R asks for that is unknown does not. */
bool policy_rule_matches(const struct policy_rule *r, struct proc_facts *f);

/* The first rule of P that matches F, or NULL: the process is not the policy's. */
const struct policy_rule *policy_match(const struct policy *p, struct proc_facts *f);

/*
 * Does R name F's cgroup by itself, not by a pattern (a cgroup without
 * wildcards that is F's, or F's unit), or F's program (an exe without
 * wildcards)?  The agent's own cgroup is touched only by a rule that
 * names that cgroup, PID 1 only by one that names its cgroup or program.
 */
bool policy_rule_names_cgroup(const struct policy_rule *r, struct proc_facts *f);
bool policy_rule_names_exe(const struct policy_rule *r, struct proc_facts *f);

/*
 * Is F's process one the agent leaves alone although R matches it (PID 1,
 * or in OWN_CGROUP, the agent's: NULL for none), as R does not name it by
 * itself?  Why, or NULL.
 */
const char *policy_rule_guard(const struct policy_rule *r, struct proc_facts *f, const char *own_cgroup);

#endif
