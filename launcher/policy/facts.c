/*
 * facts.c: the facts of a process that the policy matches, read from
 * /proc/PID with the doubts of facts.h.
 *
 * The cgroup: /proc/PID/cgroup has a line per hierarchy,
 * "ID:CONTROLLERS:PATH", and the kernel writes PATH as it is.  A newline
 * in a cgroup's name would forge a line ("0::/system.slice/php.service"
 * below a cgroup named "x\n0::"), which is why the kernel refuses such
 * names (mkdir fails with EINVAL: tried on 6.18).  The parse still takes
 * nothing it is unsure of: a line not of that form, or a hierarchy seen
 * twice, leaves the cgroup unknown.  The memory controller's hierarchy is
 * the one read on cgroup v1 (hybrid hosts too); v2's "0::" otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/procfs.h"
#include "policy/facts.h"

/* The ioctl of linux/nsfs.h (4.9), whose header musl's build lacks. */
#ifndef NS_GET_USERNS
#define NS_GET_USERNS _IO(0xb7, 0x1)
#endif

#define MAX_HIERARCHIES 64

/* Does the comma-separated CONTROLLERS (LEN bytes) hold "memory"? */
static bool has_memory(const char *controllers, size_t len)
{
	for (const char *c = controllers; c < controllers + len;) {
		size_t n = strcspn(c, ",:");

		if (n == 6 && !strncmp(c, "memory", 6))
			return true;
		c += n + 1;
	}
	return false;
}

int proc_cgroup_parse(const char *text, char *path, size_t len)
{
	long seen[MAX_HIERARCHIES];
	int nseen = 0;
	const char *v2 = NULL, *v1 = NULL;

	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n'), *c1 = strchr(line, ':'), *c2;
		char *num_end;
		long id;

		if (!end)
			end = line + strlen(line);
		if (!c1 || c1 > end || !(c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1))) || c2[1] != '/')
			return -1;              /* not the kernel's format: in doubt */
		id = strtol(line, &num_end, 10);
		if (num_end != c1 || id < 0)
			return -1;
		for (int i = 0; i < nseen; i++)
			if (seen[i] == id)
				return -1;      /* a hierarchy twice: a name forged a line */
		if (nseen == MAX_HIERARCHIES)
			return -1;
		seen[nseen++] = id;
		if (id == 0 && c2 == c1 + 1)
			v2 = c2 + 1;
		else if (has_memory(c1 + 1, (size_t)(c2 - c1 - 1)))
			v1 = c2 + 1;
		line = *end ? end + 1 : end;
	}
	if (!v1)
		v1 = v2;
	if (!v1)
		return -1;
	size_t n = strcspn(v1, "\n");
	if (n >= len)
		return -1;
	memcpy(path, v1, n);
	path[n] = '\0';
	return 0;
}

static void read_cgroup(pid_t pid, struct proc_facts *f)
{
	char path[64], text[8192];

	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
	if (read_text(path, text, sizeof text) == 0 && strlen(text) < sizeof text - 1 &&
	    proc_cgroup_parse(text, f->cgroup, sizeof f->cgroup) == 0) {
		f->cgroup_known = true;
		f->cgroup_root_made = cg_root_made(f->cgroup);
		proc_facts_names(f);
	}
}

/* Are the two stats of one file? */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Is the process in the agent's own mount namespace (where the text of its exe is the agent's)? */
static bool in_our_mounts(pid_t pid, pid_t tid)
{
	struct stat ours, its;
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/task/%d/ns/mnt", (int)pid, (int)tid);
	return stat("/proc/self/ns/mnt", &ours) == 0 && stat(path, &its) == 0 && same_file(&ours, &its);
}

/*
 * Is the process's mount namespace owned by the agent's user namespace?
 * Then root made it (a service's sandbox, a container of root's, the host
 * itself seen from the agent's container): a user can make a mount
 * namespace only inside a user namespace of its own, and cannot leave
 * that for ours.
 */
static bool mounts_made_by_root(pid_t pid, pid_t tid)
{
	struct stat ours, owner;
	char path[64];
	int mnt, user;
	bool same;

	snprintf(path, sizeof path, "/proc/%d/task/%d/ns/mnt", (int)pid, (int)tid);
	if ((mnt = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	user = ioctl(mnt, NS_GET_USERNS);
	close(mnt);
	if (user < 0)
		return false;
	same = fstat(user, &owner) == 0 && stat("/proc/self/ns/user", &ours) == 0 && same_file(&ours, &owner);
	close(user);
	return same;
}

/*
 * Through a thread that lives: the main one may have ended while others
 * run on, and its exe is gone then (--attach does the same: pin.h).
 */
static void read_exe(pid_t pid, struct proc_facts *f)
{
	pid_t tid = proc_live_thread(pid);
	char path[64], there[PATH_MAX + 64];
	struct stat prog, named;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/task/%d/exe", (int)pid, (int)tid);
	if (!tid || (n = readlink(path, f->exe, sizeof f->exe - 1)) <= 0 || n >= (ssize_t)sizeof f->exe - 1)
		return;
	f->exe[n] = '\0';
	f->exe_known = true;
	f->secure = proc_secure_exec(pid, tid);
	if (in_our_mounts(pid, tid) || mounts_made_by_root(pid, tid)) {
		f->exe_trusted = true;
		return;
	}
	if (stat(path, &prog))
		return;
	if (stat(f->exe, &named) == 0 && same_file(&prog, &named)) {
		f->exe_trusted = true;  /* a sandboxed service's view of the host's file */
		return;
	}
	/* In a container root made, its programs are its own image's: the path as the container sees it. */
	snprintf(there, sizeof there, "/proc/%d/task/%d/root%s", (int)pid, (int)tid, f->exe);
	f->exe_trusted = proc_facts_cgroup(f) && (f->cg.container_id[0] || f->cg.pod_uid[0]) &&
			 stat(there, &named) == 0 && same_file(&prog, &named);
}

static void read_uid(pid_t pid, struct proc_facts *f)
{
	char path[64], text[4096];
	const char *uid;
	unsigned long real, effective;

	/* Name: comes first and the kernel escapes it: the first "\nUid:" is the kernel's. */
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_text(path, text, sizeof text) == 0 && (uid = strstr(text, "\nUid:")) &&
	    sscanf(uid + 5, "%lu %lu", &real, &effective) == 2) {
		f->uid = (uid_t)effective;
		f->uid_known = true;
	}
}

void proc_facts_names(struct proc_facts *f)
{
	if (cg_name_parse(f->cgroup, &f->cg) == 0 && f->cg.named_end > f->cgroup_root_made)
		memset(&f->cg, 0, sizeof f->cg);        /* a user could have made what named it */
}

void proc_facts_init(pid_t pid, struct proc_facts *f)
{
	memset(f, 0, sizeof *f);
	f->pid = pid;
	f->secure = -1;
}

bool proc_facts_cgroup(struct proc_facts *f)
{
	if (!(f->read & FACT_CGROUP))
		read_cgroup(f->pid, f);
	f->read |= FACT_CGROUP;
	return f->cgroup_known;
}

bool proc_facts_exe(struct proc_facts *f)
{
	if (!(f->read & FACT_EXE))
		read_exe(f->pid, f);
	f->read |= FACT_EXE;
	return f->exe_known;
}

bool proc_facts_kube(struct proc_facts *f)
{
	char why[512];

	if (!(f->read & FACT_KUBE))
		f->kube_known = proc_facts_cgroup(f) && f->cg.runtime == CG_KUBERNETES && !f->cg.nested &&
				f->cg.pod_uid[0] && kube_names_read("/", f->cg.pod_uid, f->cg.container_id, &f->kube,
								    why, sizeof why) == 0;
	f->read |= FACT_KUBE;
	return f->kube_known;
}

bool proc_facts_uid(struct proc_facts *f)
{
	if (!(f->read & FACT_UID))
		read_uid(f->pid, f);
	f->read |= FACT_UID;
	return f->uid_known;
}
