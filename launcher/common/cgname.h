/*
 * cgname.h - what a cgroup path belongs to (cgname.c): a Kubernetes pod
 * and its container, or a Docker, Podman or CRI-O container, read from the
 * names the runtimes give their cgroups.  Pure: it never reads a file.
 *
 * The path is text others choose in part (a container may create cgroups
 * below its own), so the result says which layout the path has, and is
 * believed no further than the outermost cgroup that named it; see
 * cgname.c for which components are read and why.
 */
#ifndef KSMRUN_CGNAME_H
#define KSMRUN_CGNAME_H

#include <stdbool.h>

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
};

/*
 * Fills *N from PATH, a cgroup v2 path (the "0::" line of /proc/PID/cgroup)
 * or the memory controller's path of cgroup v1, starting with '/'.
 * Returns 0 when it recognised a layout, else -1 with *N empty (CG_NONE).
 */
int cg_name_parse(const char *path, struct cg_name *n);

/*
 * What PATH names, for a reader: "kubernetes pod UID, container ID" (the
 * ID's first 12 digits, as docker and crictl show it), "docker container
 * ID", ... into BUF; "" when it names no pod or container.
 */
const char *cg_name_summary(const char *path, char *buf, size_t len);

/*
 * The same as two members of the object W writes: "pod_uid" and
 * "container_id", null where PATH names none (as the metrics' labels).
 */
struct jsonw;
void cg_name_json(struct jsonw *w, const char *path);

const char *cg_qos_text(enum cg_qos q);             /* "guaranteed", "burstable", "besteffort", "" */
const char *cg_runtime_text(enum cg_runtime r);     /* "kubernetes", "docker", "podman", "cri-o", "" */

#endif
