/*
 * policy.h - the host agent's policy: which processes get KSM and how,
 * from /etc/ksmenable/ksmenable.conf and its drop-ins, the files named
 * *.conf in /etc/ksmenable/conf.d (read in the order of their names, as
 * systemd reads its drop-ins).  parse.c reads the text of one file into
 * rules; load.c finds the files and refuses one that another user could
 * have written, as sudo refuses a writable sudoers.
 *
 * A file is INI-style:
 *
 *   # php-fpm's workers: all of their memory
 *   [rule php]
 *   unit = php8.2-fpm.service
 *   action = prctl
 *
 * A rule's matches (cgroup, unit, exe, user, pod, container, qos) must all
 * hold; its action and selection (action, allow, deny, min-size) are the
 * library's KSM_ENABLE_MODE, _ALLOW, _DENY and _MIN_SIZE, judged by the
 * library's own code.  A process no rule matches is never touched.
 */
#ifndef KSMRUN_POLICY_H
#define KSMRUN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/cgname.h"
#include "config.h"

#define POLICY_DEFAULT_FILE "/etc/ksmenable/ksmenable.conf"
#define POLICY_DROPIN_DIR "conf.d"      /* beside the main file */
#define POLICY_MAX_RULES 1024
#define POLICY_NAME_MAX 64

struct policy_rule {
	char name[POLICY_NAME_MAX];
	const char *file;               /* where its [rule NAME] line is (the policy's copy) */
	int line;
	/* The matches; NULL, "" or false: not given. */
	char *cgroup;                   /* a glob of the cgroup path (v2, or v1's memory controller) */
	char *unit;                     /* a systemd unit: a component of the cgroup path */
	char *exe;                      /* a glob of /proc/PID/exe */
	bool user_given;
	uid_t uid;
	char user[POLICY_NAME_MAX];     /* as written */
	char pod_uid[40];               /* canonical: lower-case, with dashes */
	char container[72];             /* a lower-case hex prefix of the container's ID */
	enum cg_qos qos;                /* CG_QOS_NONE: not given */
	/* Globs of the kubelet's names (kubenames.h): they outlive a rollout, as UIDs do not. */
	char *k8s_namespace, *pod_name, *container_name;
	char *owner;                    /* a glob of the controller that named the pod (kube_pod_has_owner) */
	/*
	 * "domain = namespace": the pods of a namespace that K8S_NAMESPACE
	 * matches are one security domain, not one each (domain.h).
	 */
	bool domain_namespace;
	/* What to do: the library's settings (config.h); mode MODE_OFF keeps KSM out. */
	struct config lib;
	char *action, *allow, *deny, *min_size;         /* as written; NULL: not given */
	bool cross_domain;              /* "cross-domain = yes": may merge with other domains */
};

/* Does R match by the kubelet's names (kubenames.h), which the pod's cgroup leads to? */
static inline bool policy_rule_by_kube_names(const struct policy_rule *r)
{
	return r->k8s_namespace || r->pod_name || r->container_name || r->owner;
}

struct policy {
	struct policy_rule *rules;
	int n;
	char **files;                   /* the files read, in order; the rules point into these */
	int nfiles;
};

/* An error in FILE at LINE (0: the file as a whole). */
typedef void (*policy_error_fn)(void *ctx, const char *file, int line, const char *message);

/*
 * Adds the rules of TEXT, the contents of FILE, to P.  Every error is
 * given to ERR; returns how many there were (the rules of a file with
 * errors are not added).
 */
int policy_parse(struct policy *p, const char *file, const char *text, policy_error_fn err, void *ctx);

/*
 * Reads the policy at FILE (NULL: POLICY_DEFAULT_FILE) and its drop-ins:
 * each must be a regular file of root's that neither group nor others may
 * write, in directories of the same kind.  Returns the number of errors,
 * each given to ERR; -1 when FILE does not exist (ERR not called).
 */
int policy_load(struct policy *p, const char *file, policy_error_fn err, void *ctx);

/* "unit php8.2-fpm.service, user www-data": R's matches, in BUF. */
void policy_rule_matches_text(const struct policy_rule *r, char *buf, size_t len);
/* "prctl", "madvise (allow=anon, min-size=1M)", "off": R's action, in BUF. */
void policy_rule_action_text(const struct policy_rule *r, char *buf, size_t len);

void policy_free(struct policy *p);

#endif
