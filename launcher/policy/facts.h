/*
 * facts.h - what the policy's rules match a process by (facts.c): its
 * cgroup and what the runtimes' names in it say, its program, its user.
 * All of it is read from /proc/PID, which the process and others shape:
 * a fact that cannot be read without doubt is unknown, and an unknown
 * fact matches no rule that asks for it.  Each is read when a rule first
 * asks for it: at hundreds of starts a second, most processes are told
 * apart by their program alone.
 */
#ifndef KSMRUN_POLICY_FACTS_H
#define KSMRUN_POLICY_FACTS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/cgtrust.h"
#include "common/kubenames.h"

enum { FACT_CGROUP = 1, FACT_EXE = 2, FACT_UID = 4, FACT_KUBE = 8, FACT_ALL = 15 };

struct proc_facts {
	pid_t pid;
	unsigned read;                  /* the FACT_* read (or set) already */
	bool cgroup_known;
	char cgroup[4096];              /* v2's path, or v1's memory controller's */
	size_t cgroup_root_made;        /* how far down it root made every cgroup (cgtrust.h) */
	struct cg_name cg;              /* the pod, container and runtime it names, as far as root made it */
	bool exe_known;
	char exe[PATH_MAX];             /* /proc/PID/exe; " (deleted)" when its file is gone */
	/*
	 * Is EXE the host's name of its program?  The text comes from the
	 * process's own mount namespace: in another one than the agent's, a
	 * user's mount can put any program at any path, so there it counts
	 * only when the file at EXE is the program (the same device and
	 * inode), as the agent sees the path or, in a container that root
	 * made (cgtrust.h), as the container does.  A mount namespace of the
	 * agent's user namespace is root's: there the text counts (the host's
	 * processes, seen by an agent in a container).
	 */
	bool exe_trusted;
	int secure;                     /* secure execution (AT_SECURE): 1, 0, -1 unknown */
	bool uid_known;
	uid_t uid;                      /* the effective user, as ps(1) shows it */
	bool kube_known;
	struct kube_names kube;         /* its pod's namespace and name, its container's name (kubenames.h) */
};

/* *F for process PID, nothing read yet. */
void proc_facts_init(pid_t pid, struct proc_facts *f);

/* f->cg from f->cgroup, believed as far as f->cgroup_root_made goes (the unit tests make both up). */
void proc_facts_names(struct proc_facts *f);

/* Each fact, read on the first call: is it known? */
bool proc_facts_cgroup(struct proc_facts *f);
bool proc_facts_exe(struct proc_facts *f);
bool proc_facts_uid(struct proc_facts *f);
/*
 * The kubelet's names of its pod and container: known for a process in a
 * pod's cgroup that root made, on the host's kubelet (not one nested in a
 * container), whose pod the kubelet's log directories name (kubenames.h).
 */
bool proc_facts_kube(struct proc_facts *f);

/*
 * The cgroup path of TEXT, the contents of a /proc/PID/cgroup, into PATH
 * (LEN bytes): 0, or -1 when there is none or it is in doubt (exposed for
 * the unit tests).
 */
int proc_cgroup_parse(const char *text, char *path, size_t len);

#endif
