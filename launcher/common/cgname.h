/*
 * cgname.h - what a cgroup path belongs to (cgname.c): a Kubernetes pod
 * and its container, or a Docker, Podman or CRI-O container, read from the
 * names the runtimes give their cgroups.  Pure: it never reads a file.
 *
 * The path is text others choose in part (a user or a container may create
 * cgroups below its own), so names count only where the kubelet or a
 * runtime puts its cgroups, and no further than the outermost cgroup that
 * named them; see cgname.c for which components are read and why.  Who
 * made the cgroups is not in the text: cgtrust.h checks it.
 */
#ifndef KSMRUN_CGNAME_H
#define KSMRUN_CGNAME_H

#include <stdbool.h>
#include <stddef.h>

enum cg_runtime { CG_NONE, CG_KUBERNETES, CG_DOCKER, CG_PODMAN, CG_CRIO /* outside Kubernetes */ };
enum cg_qos { CG_QOS_NONE, CG_QOS_GUARANTEED, CG_QOS_BURSTABLE, CG_QOS_BESTEFFORT };

struct cg_name {
	enum cg_runtime runtime;
	enum cg_qos qos;                /* Kubernetes only, and only once the pod or QoS cgroup is seen */
	/*
	 * Kubernetes only: the pods sit below a container's cgroup (a kubelet
	 * in a kind or k3d node); their names were made inside that container.
	 */
	bool nested;
	/*
	 * The pod's UID: 8-4-4-4-12 lowercase hex with dashes, or for a static
	 * pod the 32 hex digits kubelet hashed it to; "" if none.
	 */
	char pod_uid[40];
	/* The container's full ID, 64 lowercase hex digits; "" if none (a pod's own cgroup, conmon). */
	char container_id[72];
	/*
	 * The length of the path up to the end of the innermost component
	 * that named something (0: none): whether root made every cgroup down
	 * to there is the caller's to check (cgtrust.h).
	 */
	size_t named_end;
};

/*
 * Fills *N from PATH, a cgroup v2 path (the "0::" line of /proc/PID/cgroup)
 * or the memory controller's path of cgroup v1, starting with '/'.
 * Returns 0 when it recognised a layout, else -1 with *N empty (CG_NONE).
 */
int cg_name_parse(const char *path, struct cg_name *n);

/*
 * What *N names, for a reader: "kubernetes pod UID, container ID" (the
 * ID's first 12 digits, as docker and crictl show it), "docker container
 * ID", ... into BUF; "" when it names no pod or container.
 */
const char *cg_name_text(const struct cg_name *n, char *buf, size_t len);

/* The same as two members of the object W writes: "pod_uid" and "container_id", null where none. */
struct jsonw;
void cg_name_members(struct jsonw *w, const struct cg_name *n);

/*
 * A systemd unit in PATH: UNIT is a unit's name, found only where systemd
 * makes units (every component above it a slice), so never in a user
 * manager's subtree nor below a service or scope; or "user@UID.service/NAME",
 * the unit NAME of that user's manager, found below it.  Returns the
 * length of the path that root must have made, which the caller checks
 * (the unit's parent; for a user's unit, the user manager's parent; 0:
 * the top), or -1: not there.
 */
long cg_unit_find(const char *path, const char *unit);

const char *cg_qos_text(enum cg_qos q);             /* "guaranteed", "burstable", "besteffort", "" */
const char *cg_runtime_text(enum cg_runtime r);     /* "kubernetes", "docker", "podman", "cri-o", "" */

#endif
