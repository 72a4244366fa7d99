/*
 * parse.c: the text of one policy file into rules (policy.h).
 *
 * The format is the one an operator writes without a manual open: '#' or
 * ';' begins a comment line, "[rule NAME]" a rule, "key = value" one of
 * its settings.  There are no comments after a value: a glob may hold a
 * '#'.  Everything is checked, and every error found is said with its
 * file and line, as sshd -t and visudo -c do; a file with any error adds
 * no rule, so that half of a policy is never applied.
 */
#include <ctype.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg.h"
#include "common/parse.h"
#include "common/text.h"
#include "glob.h"
#include "nearest.h"
#include "policy/policy.h"

enum key {
	K_CGROUP, K_UNIT, K_EXE, K_USER, K_POD, K_CONTAINER, K_QOS,   /* the matches */
	K_NAMESPACE, K_POD_NAME, K_CONTAINER_NAME, K_OWNER,
	K_ACTION, K_ALLOW, K_DENY, K_MIN_SIZE, K_CROSS_DOMAIN, K_DOMAIN, K_COUNT,
};
#define K_MATCHES K_ACTION      /* the keys before it are matches */

static const char *const key_names[K_COUNT] = {
	"cgroup", "unit", "exe", "user", "pod", "container", "qos",
	"namespace", "pod-name", "container-name", "owner",
	"action", "allow", "deny", "min-size", "cross-domain", "domain",
};

struct parser {
	struct policy *p;
	const char *file;
	policy_error_fn err;
	void *ctx;
	int errors;
	struct policy_rule *rule;       /* the rule being read, or NULL */
	bool skipping;                  /* in a section that was refused: its settings are not looked at */
	bool bad_match;                 /* a match of the rule had a wrong value (said already) */
	int key_line[K_COUNT];          /* where each of its keys was given; 0 not given */
	int first;                      /* this file's first rule in p->rules */
};

static void fail(struct parser *ps, int line, const char *fmt, ...) FMT(3, 4);

static void fail(struct parser *ps, int line, const char *fmt, ...)
{
	char message[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	ps->errors++;
	ps->err(ps->ctx, ps->file, line, message);
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* Names of rules and users: letters, digits, '_', '-', '.'; 1 to 63 of them. */
static bool plain_name(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");

	return n > 0 && n < POLICY_NAME_MAX && !s[n];
}

/*
 * A unit's name as systemd allows it (its unit_name_is_valid): the
 * letters, digits and ":-_.\@", one '@' at most, and the suffix of a
 * kind of unit that holds processes or holds units that do.
 */
static const char *unit_problem(const char *s)
{
	static const char *const kinds[] = { ".service", ".scope", ".slice" };
	size_t n = strlen(s);
	const char *at = strchr(s, '@');

	if (n == 0 || n > 255)
		return "a unit's name is 1 to 255 characters";
	if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@")])
		return "a unit's name holds only letters, digits and :-_.\\@";
	if (at && strchr(at + 1, '@'))
		return "a unit's name holds one '@' at most";
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		size_t k = strlen(kinds[i]);

		if (n > k && !strcmp(s + n - k, kinds[i]))
			return NULL;
	}
	return "give the whole name, with .service, .scope or .slice";
}

/*
 * A rule's unit: a unit of the system manager, or "user@UID.service/NAME",
 * the unit NAME of a user's manager (cgname.h: cg_unit_find).
 */
static const char *rule_unit_problem(const char *s)
{
	const char *slash = strchr(s, '/'), *problem;
	char manager[64];
	size_t n;

	if (!slash)
		return unit_problem(s);
	n = (size_t)(slash - s);
	if (n >= sizeof manager)
		return "a user manager's unit is written user@UID.service/NAME";
	memcpy(manager, s, n);
	manager[n] = '\0';
	/* The length first: ".service" is looked for at its end. */
	if (n < 14 || strncmp(manager, "user@", 5) || strcmp(manager + n - 8, ".service") ||
	    strspn(manager + 5, "0123456789") != n - 13)
		return "a user manager's unit is written user@UID.service/NAME (UID a number)";
	if ((problem = unit_problem(slash + 1)))
		return problem;
	return strchr(slash + 1, '/') ? "a user manager's unit is written user@UID.service/NAME" : NULL;
}

/*
 * A pod's UID into the form cgname.c gives: 8-4-4-4-12 hex digits, or the
 * 32 of a static pod (kubelet names its cgroup by a hash of the file), in
 * lower case.
 */
static bool pod_uid(const char *s, char out[40])
{
	size_t n = strlen(s);

	if (n != 36 && n != 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dash = n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[n] = '\0';
	return true;
}

static bool container_prefix(const char *s, char out[72])
{
	size_t n = strlen(s);

	if (n < 4 || n > 64 || s[strspn(s, "0123456789abcdefABCDEF")])
		return false;
	for (size_t i = 0; i <= n; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	return true;
}

static bool user_id(const char *s, uid_t *uid)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	long long n;

	if (!parse_ll(s, 0, (long long)UINT_MAX - 1, &n)) {
		*uid = (uid_t)n;
		return true;
	}
	if (getpwnam_r(s, &pw, buf, sizeof buf, &found) || !found)
		return false;
	*uid = found->pw_uid;
	return true;
}

static const char *glob_path_problem(const char *s)
{
	if (s[0] != '/')
		return "it is a path: it begins with '/'";
	if (strlen(s) > 4096)
		return "longer than 4096 bytes";
	return glob_problem(s);
}

/* The library's settings of R as config_load reads them: its keys, named as the file says. */
struct rule_source {
	const struct parser *ps;
	const struct policy_rule *r;
	int line;                       /* the line of the first key a message named */
};

static const char *rule_get(void *ctx, const char *var)
{
	const struct policy_rule *r = ((struct rule_source *)ctx)->r;

	if (!strcmp(var, "KSM_ENABLE_MODE"))
		return r->action;
	if (!strcmp(var, "KSM_ENABLE_ALLOW"))
		return r->allow;
	if (!strcmp(var, "KSM_ENABLE_DENY"))
		return r->deny;
	if (!strcmp(var, "KSM_ENABLE_MIN_SIZE"))
		return r->min_size;
	return NULL;            /* the rest (log, report, rescan...) are the library's alone */
}

static const char *rule_name(void *ctx, const char *var)
{
	static const struct { const char *var; enum key key; } names[] = {
		{ "KSM_ENABLE_MODE", K_ACTION }, { "KSM_ENABLE_ALLOW", K_ALLOW },
		{ "KSM_ENABLE_DENY", K_DENY }, { "KSM_ENABLE_MIN_SIZE", K_MIN_SIZE },
	};
	struct rule_source *src = ctx;

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(var, names[i].var)) {
			if (!src->line)
				src->line = src->ps->key_line[names[i].key];
			return key_names[names[i].key];
		}
	return var;
}

/* The end of a rule: it names something to match and something to do, which the library accepts. */
static void close_rule(struct parser *ps)
{
	struct policy_rule *r = ps->rule;
	struct rule_source src = { ps, r, 0 };
	char why[1024];
	int k;

	if (!r)
		return;
	ps->rule = NULL;
	for (k = 0; k < K_MATCHES && !ps->key_line[k]; k++)
		;
	if (k == K_MATCHES && !ps->bad_match)
		fail(ps, r->line, "rule %s matches nothing: give at least one of cgroup, unit, exe, user, "
		     "pod, container, qos, namespace, pod-name, container-name or owner (a rule never applies to "
		     "every process by default)", r->name);
	if (!r->action) {
		fail(ps, r->line, "rule %s has no action (accepted: action = auto, prctl, madvise or off)", r->name);
		return;
	}
	if (r->domain_namespace && !r->k8s_namespace)
		fail(ps, ps->key_line[K_DOMAIN], "rule %s: domain = namespace needs the namespaces it makes one "
		     "domain each: give namespace = too", r->name);
	/* The library's message quotes the value as it is, for its own stderr: escaped here, as every value. */
	if (config_load(&r->lib, &(struct config_source){ rule_get, rule_name, &src }, why, sizeof why))
		fail(ps, src.line ? src.line : r->line, "rule %s: %s", r->name, printable(why));
	else if (r->lib.mode == MODE_OFF && (r->allow || r->deny || r->min_size))
		fail(ps, ps->key_line[r->allow ? K_ALLOW : r->deny ? K_DENY : K_MIN_SIZE],
		     "rule %s: action = off keeps KSM out of the whole process: it takes no selection", r->name);
}

static void open_rule(struct parser *ps, int line, char *header)
{
	size_t n = strlen(header);
	char *name;

	close_rule(ps);
	ps->skipping = true;
	if (n < 2 || header[n - 1] != ']') {
		fail(ps, line, "a section header ends with ']' (accepted: [rule NAME])");
		return;
	}
	header[n - 1] = '\0';
	name = trim(header + 1);
	if (strncmp(name, "rule", 4) || (name[4] != ' ' && name[4] != '\t')) {
		fail(ps, line, "unknown section [%s] (accepted: [rule NAME])", printable(name));
		return;
	}
	name = trim(name + 5);
	if (!plain_name(name)) {
		fail(ps, line, "rule name '%s': accepted are 1 to 63 letters, digits, '_', '-' and '.'",
		     printable(name));
		return;
	}
	for (int i = 0; i < ps->p->n; i++)
		if (!strcmp(ps->p->rules[i].name, name)) {
			fail(ps, line, "rule %s is already defined at %s:%d", name, ps->p->rules[i].file,
			     ps->p->rules[i].line);
			return;
		}
	if (ps->p->n >= POLICY_MAX_RULES) {
		fail(ps, line, "more than %d rules", POLICY_MAX_RULES);
		return;
	}
	ps->p->rules = xrealloc(ps->p->rules, (size_t)(ps->p->n + 1) * sizeof *ps->p->rules);
	ps->rule = memset(&ps->p->rules[ps->p->n++], 0, sizeof *ps->rule);
	snprintf(ps->rule->name, sizeof ps->rule->name, "%s", name);
	ps->rule->file = ps->file;
	ps->rule->line = line;
	ps->skipping = ps->bad_match = false;
	memset(ps->key_line, 0, sizeof ps->key_line);
}

static int key_of(const char *key)
{
	for (int k = 0; k < K_COUNT; k++)
		if (!strcmp(key, key_names[k]))
			return k;
	return -1;
}

static const char *nearest_key(const char *key)
{
	for (int k = 0; k < K_COUNT; k++)
		if (name_is_near(name_distance(key, strlen(key), key_names[k], strlen(key_names[k])), strlen(key)))
			return key_names[k];
	return NULL;
}

/*
 * A name of Kubernetes's, or a glob of one: what a namespace, a pod's
 * name (DOTS: with '.') or a container's name may hold, with * ? [...].
 */
static bool kube_glob(const char *v, bool dots)
{
	size_t n = strlen(v);

	if (n < 1 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || strchr("-*?[]!", v[i]) ||
		      (dots && v[i] == '.')))
			return false;
	return true;
}

/* One "key = value" of the open rule; false (said) when the value is wrong. */
static bool set_value(struct parser *ps, int line, enum key k, const char *v)
{
	struct policy_rule *r = ps->rule;
	const char *problem;

	switch (k) {
	case K_CGROUP: case K_EXE:
		if ((problem = glob_path_problem(v)))
			break;
		*(k == K_CGROUP ? &r->cgroup : &r->exe) = xstrdup(v);
		return true;
	case K_UNIT:
		if ((problem = rule_unit_problem(v)))
			break;
		r->unit = xstrdup(v);
		return true;
	case K_USER:
		problem = "no such user (a name of the password database, or a number)";
		if (!plain_name(v) || !user_id(v, &r->uid))
			break;
		snprintf(r->user, sizeof r->user, "%s", v);
		r->user_given = true;
		return true;
	case K_POD:
		problem = "not a pod's UID (accepted: 8-4-4-4-12 hex digits, as metadata.uid shows it, "
			  "or the 32 of a static pod)";
		if (!pod_uid(v, r->pod_uid))
			break;
		return true;
	case K_CONTAINER:
		problem = "not a container's ID (accepted: 4 to 64 hex digits, its start)";
		if (!container_prefix(v, r->container))
			break;
		return true;
	case K_QOS:
		problem = "unknown QoS class (accepted: guaranteed, burstable, besteffort)";
		for (int q = CG_QOS_GUARANTEED; q <= CG_QOS_BESTEFFORT; q++)
			if (!strcmp(v, cg_qos_text((enum cg_qos)q)))
				r->qos = (enum cg_qos)q;
		if (r->qos == CG_QOS_NONE)
			break;
		return true;
	case K_NAMESPACE: case K_POD_NAME: case K_CONTAINER_NAME: case K_OWNER:
		problem = "not a Kubernetes name or a glob of one (accepted: a-z, 0-9, '-' and, in a pod's or "
			  "its owner's name, '.'; * ? [...] as in the shell)";
		if (!kube_glob(v, k == K_POD_NAME || k == K_OWNER))
			break;
		*(k == K_NAMESPACE ? &r->k8s_namespace : k == K_POD_NAME ? &r->pod_name :
		  k == K_OWNER ? &r->owner : &r->container_name) = xstrdup(v);
		return true;
	case K_ACTION: case K_ALLOW: case K_DENY: case K_MIN_SIZE:
		/* Judged at the rule's end by the library's own code (close_rule). */
		*(k == K_ACTION ? &r->action : k == K_ALLOW ? &r->allow : k == K_DENY ? &r->deny : &r->min_size) =
			xstrdup(v);
		return true;
	case K_DOMAIN:
		problem = "accepted: pod (each pod a domain of its own, the default) or namespace";
		if (strcmp(v, "pod") && strcmp(v, "namespace"))
			break;
		r->domain_namespace = !strcmp(v, "namespace");
		return true;
	case K_CROSS_DOMAIN:
		problem = "accepted: yes or no";
		if (strcmp(v, "yes") && strcmp(v, "no"))
			break;
		r->cross_domain = !strcmp(v, "yes");
		return true;
	case K_COUNT:
		problem = "";
		break;
	}
	fail(ps, line, "%s = %s: %s", key_names[k], printable(v), problem);
	return false;
}

static void setting(struct parser *ps, int line, char *text)
{
	char *eq = strchr(text, '='), *key, *value;
	const char *near;
	int k;

	if (ps->skipping)
		return;         /* its section was refused, and said so */
	if (!eq) {
		fail(ps, line, "'%s' is neither a setting (key = value) nor a section ([rule NAME])", printable(text));
		return;
	}
	*eq = '\0';
	key = trim(text);
	value = trim(eq + 1);
	if ((k = key_of(key)) < 0) {
		near = nearest_key(key);
		fail(ps, line, "unknown setting '%s'%s%s%s", printable(key), near ? " (did you mean " : "",
		     near ? near : "", near ? "?)" : " (accepted: cgroup, unit, exe, user, pod, container, qos, "
		     "namespace, pod-name, container-name, owner, action, allow, deny, min-size, cross-domain, "
		     "domain)");
		return;
	}
	if (!ps->rule) {
		fail(ps, line, "%s = ...: a setting belongs to a rule: begin one with [rule NAME]", key);
		return;
	}
	if (!*value) {
		fail(ps, line, "%s has no value (rule %s)", key, ps->rule->name);
		return;
	}
	if (ps->key_line[k]) {
		fail(ps, line, "%s is given twice in rule %s (also at line %d)", key, ps->rule->name, ps->key_line[k]);
		return;
	}
	if (set_value(ps, line, (enum key)k, value))
		ps->key_line[k] = line;
	else if (k < K_MATCHES)
		ps->bad_match = true;
}

static void free_rule(struct policy_rule *r)
{
	free(r->cgroup);
	free(r->k8s_namespace);
	free(r->pod_name);
	free(r->container_name);
	free(r->owner);
	free(r->unit);
	free(r->exe);
	free(r->action);
	free(r->allow);
	free(r->deny);
	free(r->min_size);
	config_free(&r->lib);
}

int policy_parse(struct policy *p, const char *file, const char *text, policy_error_fn err, void *ctx)
{
	struct parser ps = { .p = p, .err = err, .ctx = ctx, .first = p->n };
	char *copy = xstrdup(text), *save = copy, *next;
	int line = 0;

	p->files = xrealloc(p->files, (size_t)(p->nfiles + 1) * sizeof *p->files);
	ps.file = p->files[p->nfiles++] = xstrdup(file);
	for (char *l = copy; l; l = next) {
		char *s;

		if ((next = strchr(l, '\n')))
			*next++ = '\0';
		line++;
		s = trim(l);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[')
			open_rule(&ps, line, s);
		else
			setting(&ps, line, s);
	}
	close_rule(&ps);
	free(save);
	if (ps.errors) {
		/* Half of a file is never applied. */
		while (p->n > ps.first)
			free_rule(&p->rules[--p->n]);
	}
	return ps.errors;
}

void policy_free(struct policy *p)
{
	for (int i = 0; i < p->n; i++)
		free_rule(&p->rules[i]);
	for (int i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->rules);
	free(p->files);
	memset(p, 0, sizeof *p);
}
