/*
 * domain.c: the security domain of a process and of a rule, and the
 * policy's refusal to mix domains unless its rules accept it.
 */
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "glob.h"
#include "policy/domain.h"

/*
 * "user NAME", or "user UID" for a user the password database does not
 * know.  The agent asks this of every process a rule names, hundreds a
 * second under load, and getpwuid_r reads /etc/passwd each time: the last
 * users asked for are kept for a minute.
 */
static void user_text(uid_t uid, char *buf, size_t len)
{
	static struct { uid_t uid; time_t when; char text[DOMAIN_TEXT_MAX]; } seen[8];
	static unsigned next;
	struct passwd pw, *found = NULL;
	char store[1024];
	time_t now = time(NULL);

	for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
		if (seen[i].when && seen[i].uid == uid && now - seen[i].when < 60) {
			snprintf(buf, len, "%s", seen[i].text);
			return;
		}
	if (getpwuid_r(uid, &pw, store, sizeof store, &found) == 0 && found)
		snprintf(buf, len, "user %s", found->pw_name);
	else
		snprintf(buf, len, "user %lu", (unsigned long)uid);
	next = (next + 1) % (sizeof seen / sizeof seen[0]);
	seen[next].uid = uid;
	seen[next].when = now;
	snprintf(seen[next].text, sizeof seen[next].text, "%s", buf);
}

/*
 * Is the pod of F in a namespace that a rule of P makes one domain
 * (domain = namespace)?  Read only when P has such a rule.
 */
static bool namespace_is_domain(const struct policy *p, struct proc_facts *f)
{
	for (int i = 0; p && i < p->n; i++) {
		const struct policy_rule *r = &p->rules[i];

		if (r->domain_namespace && proc_facts_kube(f) &&
		    glob_match(r->k8s_namespace, f->kube.namespace_, strlen(f->kube.namespace_)))
			return true;
	}
	return false;
}

bool domain_of_process(struct proc_facts *f, const struct policy *p, char *buf, size_t len)
{
	if (!proc_facts_cgroup(f) || !proc_facts_uid(f))
		return false;
	if (f->cg.pod_uid[0]) {
		if (namespace_is_domain(p, f))
			snprintf(buf, len, "namespace %s", f->kube.namespace_);
		else
			snprintf(buf, len, "pod %s", f->cg.pod_uid);
		return true;
	}
	if (f->cg.container_id[0]) {
		snprintf(buf, len, "container %.12s", f->cg.container_id);
		return true;
	}
	user_text(f->uid, buf, len);
	return true;
}

bool domain_of_rule(const struct policy_rule *r, char *buf, size_t len)
{
	/* One namespace written out: one domain; a glob of several, as many. */
	if (r->domain_namespace && !strpbrk(r->k8s_namespace, "*?[")) {
		snprintf(buf, len, "namespace %s", r->k8s_namespace);
		return true;
	}
	if (r->pod_uid[0]) {
		snprintf(buf, len, "pod %s", r->pod_uid);
		return true;
	}
	if (r->container[0]) {
		snprintf(buf, len, "container %.12s", r->container);
		return true;
	}
	if (r->user_given) {
		user_text(r->uid, buf, len);
		return true;
	}
	return false;
}

static void refuse(const struct policy_rule *r, policy_error_fn err, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void refuse(const struct policy_rule *r, policy_error_fn err, void *ctx, const char *fmt, ...)
{
	char message[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	err(ctx, r->file, r->line, message);
}

static bool enables(const struct policy_rule *r)
{
	return r->lib.mode != MODE_OFF;
}

/* A rule enabling KSM in another domain than R's (or in any), or NULL. */
static const struct policy_rule *other_domain(const struct policy *p, const struct policy_rule *r, char *buf,
					      size_t len)
{
	char mine[DOMAIN_TEXT_MAX];
	bool bound = domain_of_rule(r, mine, sizeof mine);

	for (int i = 0; i < p->n; i++) {
		const struct policy_rule *o = &p->rules[i];

		if (o == r || !enables(o))
			continue;
		if (!domain_of_rule(o, buf, len))
			snprintf(buf, len, "processes of any user");
		else if (bound && !strcmp(buf, mine))
			continue;
		return o;
	}
	return NULL;
}

/*
 * The policy mixes domains when a rule that enables KSM binds none, or two
 * bind different ones; then every rule that enables KSM must accept it.
 */
int policy_check_domains(const struct policy *p, policy_error_fn err, void *ctx)
{
	char domain[DOMAIN_TEXT_MAX], other[DOMAIN_TEXT_MAX];
	int errors = 0;

	for (int i = 0; i < p->n; i++) {
		const struct policy_rule *r = &p->rules[i], *o;

		if (!enables(r) || r->cross_domain)
			continue;
		if (!domain_of_rule(r, domain, sizeof domain) && policy_rule_by_kube_names(r)) {
			refuse(r, err, ctx, "rule %s enables KSM in the pods that namespace, pod-name, "
			       "container-name or owner name, each pod a security domain of its own: their memory would be "
			       "merged across them, and a merged page is a timing side channel between its "
			       "holders; make one namespace one domain (domain = namespace), name one user or pod "
			       "too, or accept that with cross-domain = yes", r->name);
			errors++;
		} else if (!domain_of_rule(r, domain, sizeof domain)) {
			refuse(r, err, ctx, "rule %s enables KSM in processes of any user: their memory would be "
			       "merged across security domains, and a merged page is a timing side channel "
			       "between its holders; name one user, pod or container, or accept that with "
			       "cross-domain = yes", r->name);
			errors++;
		} else if ((o = other_domain(p, r, other, sizeof other))) {
			refuse(r, err, ctx, "rule %s enables KSM in %s, and rule %s in %s: their memory would be "
			       "merged across security domains; accept that with cross-domain = yes in every "
			       "rule that enables KSM", r->name, domain, o->name, other);
			errors++;
		}
	}
	return errors;
}
