/*
 * domain.h - security domains (domain.c).  KSM merges identical pages
 * across everything mergeable on the host, and a merged page is a timing
 * side channel between its holders (a write to it takes a copy-on-write
 * fault, which the other holder can time): the kernel's documentation
 * asks that KSM be kept to one security domain.  A domain is, by
 * default, a user, and for a process in a container its pod (Kubernetes)
 * or its container; a rule can make a namespace's pods one domain
 * (domain = namespace): only those allowed to create pods there share it.
 */
#ifndef KSMRUN_POLICY_DOMAIN_H
#define KSMRUN_POLICY_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/facts.h"
#include "policy/policy.h"

#define DOMAIN_TEXT_MAX 96

/*
 * The domain of the process of F, as text ("user www-data", "pod
 * 3f2a...", "container 0123456789ab", or "namespace shop" for a pod of a
 * namespace that a rule of P, if not NULL, makes one domain), in BUF;
 * false when it cannot be told (its cgroup or user unknown).
 */
bool domain_of_process(struct proc_facts *f, const struct policy *p, char *buf, size_t len);

/*
 * The one domain that every process rule R enables is in, as text, or
 * false when R does not bind one (it names no user, pod or container:
 * it may enable processes of any domain).
 */
bool domain_of_rule(const struct policy_rule *r, char *buf, size_t len);

/*
 * The policy's refusals: a rule that enables KSM in processes of any
 * domain, and rules that enable it in different domains, unless each
 * says cross-domain = yes.  Every one is given to ERR; returns how many.
 */
int policy_check_domains(const struct policy *p, policy_error_fn err, void *ctx);

#endif
