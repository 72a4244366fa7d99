/*
 * kubenames.h - the names Kubernetes gives a pod and its containers,
 * read on the node without the API server (kubenames.c): the kubelet
 * writes each container's log under
 *
 *   /var/log/pods/NAMESPACE_POD_UID/CONTAINER/N.log
 *
 * whatever the runtime (containerd, CRI-O), and links it from
 *
 *   /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log
 *
 * A rollout gives a Deployment's pods new UIDs and names; the namespace
 * and the names' prefix stay, which is what operators select by.
 *
 * Trust: the UID and the container's ID come from the process's cgroup,
 * which root made (cgtrust.h); the names come from directories and links
 * of root's that no one else can write, and count only where they name
 * that UID and ID.  A namespace is Kubernetes's own boundary: only those
 * allowed to create pods in it can give a pod its name.  Kubernetes names
 * hold no '_' (DNS labels and subdomains), so the separators are sure.
 */
#ifndef KSMRUN_KUBENAMES_H
#define KSMRUN_KUBENAMES_H

#include <stddef.h>

struct kube_names {
	char namespace_[64];            /* a DNS label: at most 63 */
	char pod[254];                  /* a DNS subdomain: at most 253 */
	char container[64];             /* "" when not asked for or not found */
};

/*
 * The names of the pod POD_UID and, with CONTAINER_ID (64 hex digits) not
 * NULL or "", of that container, from the kubelet's log directories under
 * ROOT ("/" on a node; the unit tests give a recorded layout).  0, or -1
 * with WHY: no such pod's directory, a directory or link that someone
 * other than root could have made, or a name that is not Kubernetes's.
 */
int kube_names_read(const char *root, const char *pod_uid, const char *container_id, struct kube_names *out,
		    char *why, size_t len);

/*
 * Could the pod named POD have been made by a controller whose name GLOB
 * matches?  Kubernetes names a controller's pods after it: a
 * Deployment's NAME-HASH-XXXXX (the ReplicaSet's NAME-HASH, then five
 * characters), a ReplicaSet's, DaemonSet's or Job's NAME-XXXXX, a
 * StatefulSet's NAME-ORDINAL; HASH and XXXXX in the alphabet of its
 * generated names (no vowels, no 0, 1 or 3).  Read from the name alone:
 * whoever may create pods in the namespace may also name one so.
 */
int kube_pod_has_owner(const char *pod, const char *glob);

/* Is S a DNS label (a namespace's or a container's name, at most 63)? */
int kube_name_is_label(const char *s, size_t n);
/* Is S a DNS subdomain (a pod's name, at most 253)? */
int kube_name_is_subdomain(const char *s, size_t n);

#endif
