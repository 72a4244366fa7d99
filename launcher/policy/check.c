/*
 * check.c: ksm-run --check-config[=FILE], the policy checked as the agent
 * checks it at start and at reload, as sshd -t, nginx -t and visudo -c
 * check theirs: every error with its file and line on stderr, exit 1;
 * else what each rule matches and does, on stdout, exit 0.
 */
#include <stdio.h>
#include <string.h>

#include "common/msg.h"
#include "common/text.h"
#include "policy/check.h"
#include "policy/policy.h"

void policy_rule_matches_text(const struct policy_rule *r, char *buf, size_t len)
{
	const char *sep = "";

	if (len == 0)
		return;
	buf[0] = '\0';
#define MATCH(cond, key, value) \
	do { if (cond) { text_appendf(buf, len, "%s" key " %s", sep, printable(value)); sep = ", "; } } while (0)
	MATCH(r->cgroup, "cgroup", r->cgroup);
	MATCH(r->unit, "unit", r->unit);
	MATCH(r->exe, "exe", r->exe);
	MATCH(r->user_given, "user", r->user);
	MATCH(r->pod_uid[0], "pod", r->pod_uid);
	MATCH(r->container[0], "container", r->container);
	MATCH(r->qos != CG_QOS_NONE, "qos", cg_qos_text(r->qos));
	MATCH(r->k8s_namespace, "namespace", r->k8s_namespace);
	MATCH(r->pod_name, "pod-name", r->pod_name);
	MATCH(r->container_name, "container-name", r->container_name);
	MATCH(r->owner, "owner", r->owner);
#undef MATCH
}

void policy_rule_action_text(const struct policy_rule *r, char *buf, size_t len)
{
	const char *sep = " (";

	if (len == 0)
		return;
	snprintf(buf, len, "%s", r->action ? r->action : "?");
#define SETTING(value, key) \
	do { if (value) { text_appendf(buf, len, "%s" key "=%s", sep, printable(value)); sep = ", "; } } while (0)
	SETTING(r->allow, "allow");
	SETTING(r->deny, "deny");
	SETTING(r->min_size, "min-size");
#undef SETTING
	if (strcmp(sep, " ("))
		text_appendf(buf, len, ")");
	if (r->domain_namespace)
		text_appendf(buf, len, "; a namespace is one domain");
	if (r->cross_domain)
		text_appendf(buf, len, "; across security domains");
}

static void print_error(void *ctx, const char *file, int line, const char *message)
{
	(void)ctx;
	if (line)
		msg("%s:%d: %s", printable(file), line, message);
	else
		msg("%s: %s", printable(file), message);
}

int check_config_main(const char *file)
{
	struct policy p;
	char matches[2048], action[1024];
	int errors = policy_load(&p, file, print_error, NULL);

	if (!file)
		file = POLICY_DEFAULT_FILE;
	if (errors < 0) {
		msg("%s: no such file: there is no policy, and the agent enables KSM in no process", printable(file));
		return 1;
	}
	if (errors) {
		msg("the policy is not valid: %d error%s; the agent would keep the policy it has (or start with none)",
		    errors, errors == 1 ? "" : "s");
		policy_free(&p);
		return 1;
	}
	for (int i = 0; i < p.n; i++) {
		policy_rule_matches_text(&p.rules[i], matches, sizeof matches);
		policy_rule_action_text(&p.rules[i], action, sizeof action);
		printf("rule %s (%s:%d): %s -> %s\n", p.rules[i].name, printable(p.rules[i].file), p.rules[i].line,
		       matches, action);
	}
	printf("%s: the policy is valid: %d rule%s in %d file%s\n", printable(file), p.n, p.n == 1 ? "" : "s",
	       p.nfiles, p.nfiles == 1 ? "" : "s");
	policy_free(&p);
	return 0;
}
