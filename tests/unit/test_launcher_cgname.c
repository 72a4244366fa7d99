/*
 * Unit tests of cg_name_parse over recorded cgroup paths: each layout of
 * the common runtimes as seen on real hosts (where each was recorded is
 * said beside it; where none was at hand, the path is built by the rule of
 * the program that makes it, and that is said instead), then the paths a
 * container or a pod could make below its own to pass for another, and
 * text that is no cgroup path at all.  Nothing is read: the parser is pure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/cgname.h"
#include "unit.h"

/* Does PATH name exactly this?  Says what it named instead when not. */
static bool names(const char *path, enum cg_runtime rt, enum cg_qos qos, bool nested, const char *pod,
		  const char *ctr)
{
	struct cg_name n;
	int r = cg_name_parse(path, &n);

	if (!r && n.runtime == rt && n.qos == qos && n.nested == nested && !strcmp(n.pod_uid, pod)
	    && !strcmp(n.container_id, ctr))
		return true;
	fprintf(stderr, "  %.160s\n  -> %d %s qos=%s nested=%d pod=\"%s\" container=\"%s\"\n", path, r,
		cg_runtime_text(n.runtime), cg_qos_text(n.qos), n.nested, n.pod_uid, n.container_id);
	return false;
}

/* Is PATH refused, with *N emptied whatever it held? */
static bool refused(const char *path)
{
	struct cg_name n, empty;

	memset(&n, 0x5a, sizeof n);
	memset(&empty, 0, sizeof empty);
	return cg_name_parse(path, &n) == -1 && !memcmp(&n, &empty, sizeof n);
}

#define K CG_KUBERNETES
#define ID_BEATS1 "e01a26336924e2fb8089bcf4cf943954fd9ea616cc5678f38f65928307979459"
#define ID_BEATS2 "80d85a3a585f1575028ebe468d83093c301eda20d37d1671ff2a0be50fc0e460"
#define ID_OCP "d6d725b909f37c3e232aadfbafa950a58bfe7baa579ba8c47a12be88bb921607"
#define ID_GKE "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376"
#define ID_KIND "1207db63eaeb133a85d2b614d12d95d4dff3f29af60d7a7b3c7d39abdf4bd119"
#define ID_PODMAN "ee059a097566fdc5ac9141bfcdfbed0c972163da891de076e0849d7b53597aac"
#define POD_BEATS "/kubepods.slice/kubepods-burstable.slice/" \
	"kubepods-burstable-pod2d5133c0_65f3_40b2_b375_c04866d418e1.slice"
#define POD_OCP "/kubepods.slice/kubepods-besteffort.slice/" \
	"kubepods-besteffort-pod8ca306fa_3c03_47fa_97dd_19979c345572.slice"
#define UID_OCP "8ca306fa-3c03-47fa-97dd-19979c345572"

/* kubelet's systemd driver: kubepods.slice, the QoS slice, the pod slice with '_' for '-', the runtime's scope. */
static void test_kubernetes_systemd(void)
{
	/* containerd and CRI-O, burstable: recorded in elastic/beats' add_process_metadata tests. */
	CHECK(names(POD_BEATS "/cri-containerd-" ID_BEATS1 ".scope", K, CG_QOS_BURSTABLE, false,
		    "2d5133c0-65f3-40b2-b375-c04866d418e1", ID_BEATS1));
	CHECK(names("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod69349abe_d645_11ea_9c4c_08002709c05c"
		    ".slice/crio-" ID_BEATS2 ".scope", K, CG_QOS_BURSTABLE, false, "69349abe-d645-11ea-9c4c-08002709c05c",
		    ID_BEATS2));
	/* CRI-O, besteffort: a v1 "devices" line of an OpenShift 4.6 node, in a public test. */
	CHECK(names(POD_OCP "/crio-" ID_OCP ".scope", K, CG_QOS_BESTEFFORT, false, UID_OCP, ID_OCP));
	/* Docker (dockershim), besteffort: an Ubuntu 20.04 node, quoted in a public GPU exporter. */
	CHECK(names("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poddc380811_8168_4a9e_9b4a_56ded1b6fe9c"
		    ".slice/docker-fa7f0ec4fbcbb70c69565a5b2d269926e04ec5601dff59235199d6e60198e95c.scope",
		    K, CG_QOS_BESTEFFORT, false, "dc380811-8168-4a9e-9b4a-56ded1b6fe9c",
		    "fa7f0ec4fbcbb70c69565a5b2d269926e04ec5601dff59235199d6e60198e95c"));
	/* Guaranteed: no QoS slice.  A v1 cpuset path, from a public cpuset tool's test. */
	CHECK(names("/kubepods.slice/kubepods-podea2e69b4_0bd4_48f0_b75f_cc7c79111027.slice/cri-containerd-"
		    "7ee34913fbefa6a0dbbdf1bbc302cc29a1bde3b83b8b9f2252a4d4360c373848.scope", K, CG_QOS_GUARANTEED, false,
		    "ea2e69b4-0bd4-48f0-b75f-cc7c79111027", "7ee34913fbefa6a0dbbdf1bbc302cc29a1bde3b83b8b9f2252a4d4360c373848"));
	/* Guaranteed, a bare ID below the pod slice (v1 "devices"), from Datadog's container-ID tests. */
	CHECK(names("/kubepods.slice/kubepods-pod97f1ae73_7ad9_11ec_b4a7_9a35488b4fab.slice/"
		    "3291bfddf3f3f8d87cb0cd1245fe9c45b2e1e5a9b6fe3de1bddf041aedaecbab", K, CG_QOS_GUARANTEED, false,
		    "97f1ae73-7ad9-11ec-b4a7-9a35488b4fab", "3291bfddf3f3f8d87cb0cd1245fe9c45b2e1e5a9b6fe3de1bddf041aedaecbab"));
	/* A static pod (OpenShift's kube-apiserver): its UID is kubelet's MD5, 32 hex digits; a cAdvisor "id" label. */
	CHECK(names("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pode4e6004e827fdf45941cf777618f60ce.slice/"
		    "crio-192f5a90b165665d969bb0137b8573f2214c8f75b728ecc58dbbc7fccd64af28.scope", K, CG_QOS_BURSTABLE, false,
		    "e4e6004e827fdf45941cf777618f60ce", "192f5a90b165665d969bb0137b8573f2214c8f75b728ecc58dbbc7fccd64af28"));
	/* The pod slice alone (cAdvisor's pod-level series), and CRI-O's conmon beside the container (CRI-O's rule). */
	CHECK(names("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod05b3ee07_a2bd_47e7_9599_7961201f20dd"
		    ".slice", K, CG_QOS_BESTEFFORT, false, "05b3ee07-a2bd-47e7-9599-7961201f20dd", ""));
	CHECK(names(POD_OCP "/crio-conmon-" ID_OCP ".scope", K, CG_QOS_BESTEFFORT, false, UID_OCP, ""));
	/* Above any pod: kubelet's own slices. */
	CHECK(names("/kubepods.slice", K, CG_QOS_NONE, false, "", ""));
	CHECK(names("/kubepods.slice/kubepods-besteffort.slice", K, CG_QOS_BESTEFFORT, false, "", ""));
	/* Below the container, what the container made is not read: crun's "container" leaf, anything. */
	CHECK(names(POD_OCP "/crio-" ID_OCP ".scope/container", K, CG_QOS_BESTEFFORT, false, UID_OCP, ID_OCP));
}

/* kubelet's cgroupfs driver: /kubepods[/QOS]/pod<UID with dashes>/<runtime's name>. */
static void test_kubernetes_cgroupfs(void)
{
	/* A v1 line of a GKE node, besteffort, from Qard/container-info's fixtures. */
	CHECK(names("/kubepods/besteffort/pod74c13223-5a00-11e9-b385-42010a80018d/" ID_GKE, K, CG_QOS_BESTEFFORT, false,
		    "74c13223-5a00-11e9-b385-42010a80018d", ID_GKE));
	/* Burstable, a v1 "hugetlb" line in Datadog's container-ID tests. */
	CHECK(names("/kubepods/burstable/podfd52ef25-a87d-11e9-9423-0800271a638e/"
		    "8c046cb0b72cd4c99f51b5591cd5b095967f58ee003710a45280c28ee1a9c7fa", K, CG_QOS_BURSTABLE, false,
		    "fd52ef25-a87d-11e9-9423-0800271a638e", "8c046cb0b72cd4c99f51b5591cd5b095967f58ee003710a45280c28ee1a9c7fa"));
	/* Built: guaranteed (kubelet's ToCgroupfs of {kubepods, pod<UID>}); CRI-O's cgroupfs crio-ID, crio-conmon-ID. */
	CHECK(names("/kubepods/pod74c13223-5a00-11e9-b385-42010a80018d/" ID_GKE, K, CG_QOS_GUARANTEED, false,
		    "74c13223-5a00-11e9-b385-42010a80018d", ID_GKE));
	CHECK(names("/kubepods/burstable/pod" UID_OCP "/crio-" ID_OCP, K, CG_QOS_BURSTABLE, false, UID_OCP, ID_OCP));
	CHECK(names("/kubepods/burstable/pod" UID_OCP "/crio-conmon-" ID_OCP, K, CG_QOS_BURSTABLE, false, UID_OCP, ""));
	CHECK(names("/kubepods/besteffort", K, CG_QOS_BESTEFFORT, false, "", ""));
}

/* A kubelet whose cgroups are not at the root: its own cgroup root, or a node that is a container. */
#define KIND_POD "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/" \
	"kubelet-kubepods-besteffort-pod26a1a59b_8013_459b_9a20_a611facb1888.slice/cri-containerd-" ID_KIND ".scope"
#define KIND_UID "26a1a59b-8013-459b-9a20-a611facb1888"

static void test_kubernetes_nested(void)
{
	/* kind (cgroupRoot /kubelet): a node's runtime cgroupsPath in a public test, expanded as systemd does;
	 * first as the node's own cgroup namespace shows it, then from the host, below the node's Docker scope. */
	CHECK(names(KIND_POD, K, CG_QOS_BESTEFFORT, false, KIND_UID, ID_KIND));
	CHECK(names("/system.slice/docker-" ID_BEATS2 ".scope" KIND_POD, K, CG_QOS_BESTEFFORT, true, KIND_UID, ID_KIND));
	/* Built: k3d on cgroup v1, the node a /docker/ID, its kubelet on cgroupfs (k3s's default). */
	CHECK(names("/docker/" ID_BEATS2 "/kubepods/besteffort/pod" UID_OCP "/" ID_GKE, K, CG_QOS_BESTEFFORT, true,
		    UID_OCP, ID_GKE));
	/* Built: kubelet --cgroup-root=/kubelet with cgroupfs, a root that is no container. */
	CHECK(names("/kubelet/kubepods/pod" UID_OCP "/" ID_GKE, K, CG_QOS_GUARANTEED, false, UID_OCP, ID_GKE));
}

static void test_docker(void)
{
	/* The systemd driver: a CentOS host's v1 "memory" line, from neuvector's cgroup tests. */
	CHECK(names("/system.slice/docker-9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d.scope", CG_DOCKER,
		    CG_QOS_NONE, false, "", "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"));
	/* The cgroupfs driver, from elastic/beats' tests; docker-in-docker names the outer container. */
	CHECK(names("/docker/485776c9f6f2c22e2b44a2239b65471d6a02701b54d1cb5e1c55a09108a1b5b9", CG_DOCKER, CG_QOS_NONE,
		    false, "", "485776c9f6f2c22e2b44a2239b65471d6a02701b54d1cb5e1c55a09108a1b5b9"));
	CHECK(names("/docker/" ID_GKE "/docker/" ID_BEATS1, CG_DOCKER, CG_QOS_NONE, false, "", ID_GKE));
	/* Docker's own service and its cgroupfs parent are no container. */
	CHECK(refused("/system.slice/docker.service"));
	CHECK(refused("/docker"));
}

static void test_podman(void)
{
	/* Root, systemd: a v2 line with crun's "container" leaf, from Datadog's container-ID tests. */
	CHECK(names("/machine.slice/libpod-93afc7bc3ce42ad052d2926ffacfba941803bfae080941d1e1375d9d46b6a281.scope/container",
		    CG_PODMAN, CG_QOS_NONE, false, "", "93afc7bc3ce42ad052d2926ffacfba941803bfae080941d1e1375d9d46b6a281"));
	/*
	 * Rootless, below the user's manager (user@UID.service), which systemd
	 * delegates to the user: the user's own cgroups, whatever their names
	 * (conmon's scope and its container, from elastic/beats' tests).
	 */
	CHECK(refused("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-conmon-" ID_PODMAN ".scope"));
	CHECK(refused("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_PODMAN ".scope"));
	/* cgroupfs: the CgroupPath of a `podman inspect`, and conmon's cgroup (libpod's tests). */
	CHECK(names("/libpod_parent/libpod-cf594798841275880f780c2aa55954b2d218b92a7c82df039aef02e2f4fe83f1", CG_PODMAN,
		    CG_QOS_NONE, false, "", "cf594798841275880f780c2aa55954b2d218b92a7c82df039aef02e2f4fe83f1"));
	CHECK(names("/libpod_parent/conmon", CG_PODMAN, CG_QOS_NONE, false, "", ""));
	/* --cgroups=split (Quadlet): the payload in the service, from a `systemctl status` (made rootful here);
	 * conmon sits in "runtime", unnamed; the same below a user's manager is the user's. */
	CHECK(names("/system.slice/redis.service/libpod-payload-"
		    "e8c29da1a2f6c4bb032304f7dfbc5a767e026092c4a2fcbc830e58565f972f54", CG_PODMAN, CG_QOS_NONE, false, "",
		    "e8c29da1a2f6c4bb032304f7dfbc5a767e026092c4a2fcbc830e58565f972f54"));
	CHECK(refused("/system.slice/redis.service/runtime"));
	CHECK(refused("/user.slice/user-1000.slice/user@1000.service/app.slice/redis.service/libpod-payload-"
		      "e8c29da1a2f6c4bb032304f7dfbc5a767e026092c4a2fcbc830e58565f972f54"));
	/* Only the payload's form is a runtime's in a service: anything else there is the service's own, */
	CHECK(refused("/system.slice/redis.service/libpod-" ID_PODMAN ".scope"));
	CHECK(refused("/system.slice/redis.service/docker-" ID_PODMAN ".scope"));
	/* and so is what lies below it, slices and the cgroupfs drivers' parents too (fuzz_cgname found these). */
	CHECK(refused("/system.slice/redis.service/docker/" ID_GKE));
	CHECK(refused("/system.slice/redis.service/x.slice/docker-" ID_GKE ".scope"));
	CHECK(refused("/system.slice/redis.service/libpod_parent/libpod-" ID_PODMAN));
	CHECK(refused("/system.slice/redis.service/libpod_parent/conmon"));
	CHECK(refused("/system.slice/redis.service/x.slice/docker-" ID_GKE ".scope" KIND_POD));
	/* A runtime's form with no valid ID in a service: refused (it was read through an unset pointer). */
	CHECK(refused("/system.slice/redis.service/libpod-payload-e8c29da1a2f6c4678f3"));
	CHECK(refused("/system.slice/redis.service/docker-1.scope"));
	/* Built: a container of a Podman pod, in the pod's slice (libpod names it machine-libpod_pod_<POD>.slice). */
	CHECK(names("/machine.slice/machine-libpod_pod_" ID_GKE ".slice/libpod-" ID_PODMAN ".scope", CG_PODMAN,
		    CG_QOS_NONE, false, "", ID_PODMAN));
}

static void test_crio_alone(void)
{
	/* Built by CRI-O's rule outside kubepods: crio-ID.scope, crio-ID (cgroupfs); conmon's scope as coroot filters it. */
	CHECK(names("/system.slice/crio-" ID_OCP ".scope", CG_CRIO, CG_QOS_NONE, false, "", ID_OCP));
	CHECK(names("/system.slice/crio-conmon-" ID_OCP ".scope", CG_CRIO, CG_QOS_NONE, false, "", ""));
	CHECK(names("/crio-" ID_OCP, CG_CRIO, CG_QOS_NONE, false, "", ID_OCP));
	/* containerd's CRI scope with no kubepods above it: a runtime's, but of no layout named. */
	CHECK(refused("/system.slice/cri-containerd-" ID_OCP ".scope"));
}

/* IDs: exactly 64 hex digits, either case, written in lowercase. */
static void test_ids(void)
{
	CHECK(names("/system.slice/docker-9EC39B91F3D70E1BEFF50A308F77067065EA6BE0D91A3378375056CD4422cf3d.scope",
		    CG_DOCKER, CG_QOS_NONE, false, "", "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"));
	CHECK(names("/kubepods/besteffort/pod74C13223-5A00-11E9-B385-42010A80018D/" ID_GKE, K, CG_QOS_BESTEFFORT, false,
		    "74c13223-5a00-11e9-b385-42010a80018d", ID_GKE));
	/* Too long, truncated (63, and Docker's 12-digit short form), not hex, empty. */
	CHECK(refused("/system.slice/docker-" ID_GKE "0.scope"));
	CHECK(refused("/system.slice/docker-34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea0337.scope"));
	CHECK(refused("/system.slice/docker-34dc0b5e626f.scope"));
	CHECK(refused("/docker/34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea0337g"));
	CHECK(refused("/machine.slice/libpod-.scope"));
	CHECK(refused("/machine.slice/libpod-conmon-" ID_GKE "00.scope"));
	/* In a pod, a container that fails its form leaves the pod named, and no container. */
	CHECK(names(POD_OCP "/crio-" ID_OCP "0.scope", K, CG_QOS_BESTEFFORT, false, UID_OCP, ""));
	CHECK(names("/kubepods/besteffort/pod" UID_OCP "/not-hex-" ID_OCP, K, CG_QOS_BESTEFFORT, false, UID_OCP, ""));
	/* Pod UIDs: dashes under cgroupfs, '_' under systemd, never mixed; 36 or 32 digits. */
	CHECK(refused("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod8ca306fa-3c03-47fa-97dd-"
		      "19979c345572.slice"));
	CHECK(refused("/kubepods/besteffort/pod8ca306fa_3c03_47fa_97dd_19979c345572/" ID_OCP));
	CHECK(refused("/kubepods/besteffort/pod8ca306fa-3c03-47fa-97dd-19979c34557/" ID_OCP));
	CHECK(refused("/kubepods/besteffort/pod8ca306fa-3c03-47fa-97dd-19979c34557z/" ID_OCP));
	CHECK(refused("/kubepods/besteffort/pod/" ID_OCP));
}

/* What a container or pod can make below its own cgroup does not change what the path names. */
static void test_forged_below(void)
{
	/* A fake runtime scope, a fake /docker/ID, a fake kubepods, below a real container. */
	CHECK(names(POD_BEATS "/cri-containerd-" ID_BEATS1 ".scope/foo/docker-" ID_GKE ".scope", K, CG_QOS_BURSTABLE,
		    false, "2d5133c0-65f3-40b2-b375-c04866d418e1", ID_BEATS1));
	CHECK(names("/system.slice/docker-" ID_GKE ".scope/docker/" ID_BEATS1, CG_DOCKER, CG_QOS_NONE, false, "",
		    ID_GKE));
	CHECK(names("/kubepods/burstable/pod" UID_OCP "/" ID_OCP "/kubepods/pod" KIND_UID "/" ID_KIND, K,
		    CG_QOS_BURSTABLE, false, UID_OCP, ID_OCP));
	CHECK(names("/machine.slice/libpod-" ID_PODMAN ".scope/kubepods.slice/kubepods-pod26a1a59b_8013_459b_9a20_"
		    "a611facb1888.slice/crio-" ID_KIND ".scope", CG_KUBERNETES, CG_QOS_GUARANTEED, true, KIND_UID, ID_KIND));
	/* That last one is what kind looks like too: it is said nested.  A kubepods not followed as
	 * kubelet's is read past, so that a container cannot hide its own name behind one. */
	CHECK(names("/system.slice/docker-" ID_GKE ".scope/kubepods/garbage/docker-" ID_BEATS1 ".scope", CG_DOCKER,
		    CG_QOS_NONE, false, "", ID_GKE));
	CHECK(refused("/kubepods.slice/kubepods-burstable.slice/foo.slice"));
	/* A malformed outer scope is not skipped to believe one made below it. */
	CHECK(refused("/system.slice/docker-34dc0b5e626f.scope/docker-" ID_GKE ".scope"));
	/* A 4 KiB path: a real container, then hostile depth; and one 4 KiB component. */
	char deep[8192], wide[4200];
	size_t len = (size_t)snprintf(deep, sizeof deep, "/system.slice/docker-%s.scope", ID_GKE);

	while (len < 4096)
		len += (size_t)snprintf(deep + len, sizeof deep - len, "/kubepods/docker-%s.scope", ID_BEATS1);
	CHECK(names(deep, CG_DOCKER, CG_QOS_NONE, false, "", ID_GKE));
	memset(wide, 'a', sizeof wide);
	memcpy(wide, "/docker-", 8);
	memcpy(wide + sizeof wide - 7, ".scope", 7);
	CHECK(refused(wide));
}

/*
 * Names where no runtime or kubelet puts its cgroups: a user's delegated
 * subtree (issue 27: a user made kubepods/burstable/pod<UID>/<CID> below
 * its own), below a service or scope, too deep below the top.
 */
static void test_not_where_runtimes_put_them(void)
{
	CHECK(refused("/user.slice/user-65534.slice/user@65534.service/kubepods/burstable/pod" UID_OCP "/" ID_OCP));
	CHECK(refused("/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" ID_GKE ".scope"));
	CHECK(refused("/user.slice/user-1000.slice/user@1000.service/kubepods.slice/kubepods-pod"
		      "26a1a59b_8013_459b_9a20_a611facb1888.slice"));
	CHECK(refused("/system.slice/foo.service/kubepods/besteffort/pod" UID_OCP "/" ID_OCP));
	CHECK(refused("/system.slice/foo.service/docker-" ID_GKE ".scope"));
	CHECK(refused("/system.slice/session-3.scope/docker/" ID_GKE));
	CHECK(refused("/a/b/kubepods/besteffort/pod" UID_OCP "/" ID_OCP));
	CHECK(refused("/plain/docker-" ID_GKE ".scope"));
	/* One level below the top is kubelet's --cgroup-root: the text allows it, its owner decides (cgtrust.c). */
	CHECK(names("/delegated/kubepods/besteffort/pod" UID_OCP "/" ID_OCP, K, CG_QOS_BESTEFFORT, false, UID_OCP,
		    ID_OCP));
	/* In a node's container, at the same places; deeper, the container alone counts. */
	CHECK(names("/system.slice/docker-" ID_GKE ".scope/a/b/kubepods/pod" UID_OCP "/" ID_OCP, CG_DOCKER, CG_QOS_NONE,
		    false, "", ID_GKE));
}

/* How far the names go: the caller checks that root made every cgroup down to there. */
static void test_named_end(void)
{
	struct cg_name n;
	const char *pod = "/kubepods/besteffort/pod" UID_OCP;

	CHECK(cg_name_parse("/kubepods/besteffort/pod" UID_OCP "/" ID_OCP "/leaf", &n) == 0);
	CHECK(n.named_end == strlen(pod) + 1 + 64);
	CHECK(cg_name_parse(pod, &n) == 0 && n.named_end == strlen(pod));
	CHECK(cg_name_parse("/kubepods/besteffort", &n) == 0 && n.named_end == strlen("/kubepods/besteffort"));
	CHECK(cg_name_parse("/system.slice/docker-" ID_GKE ".scope/x/y", &n) == 0);
	CHECK(n.named_end == strlen("/system.slice/docker-" ID_GKE ".scope"));
	CHECK(cg_name_parse("/system.slice/php.service", &n) == -1 && n.named_end == 0);
}

/* "kubepods" inside another name is not kubelet's. */
static void test_kubepods_substring(void)
{
	CHECK(refused("/mykubepods/burstable/pod" UID_OCP "/" ID_OCP));
	CHECK(refused("/kubepodsx/besteffort/pod" UID_OCP "/" ID_OCP));
	CHECK(names("/system.slice/kubepods-fake.slice/docker-" ID_GKE ".scope", CG_DOCKER, CG_QOS_NONE, false, "",
		    ID_GKE));
	CHECK(refused("/my-kubepods.slice/my-kubepods-pod26a1a59b_8013_459b_9a20_a611facb1888.slice"));
	/* systemd nests kubelet's slice by name: below user.slice it would be user-kubepods.slice. */
	CHECK(refused("/user.slice/kubepods.slice/kubepods-pod26a1a59b_8013_459b_9a20_a611facb1888.slice"));
	CHECK(refused("/system.slice/my-kubepods.slice/my-kubepods-pod26a1a59b_8013_459b_9a20_a611facb1888.slice"));
}

static void test_not_paths(void)
{
	struct cg_name n;

	CHECK(refused(""));
	CHECK(refused("/"));
	CHECK(refused("docker/" ID_GKE));
	CHECK(refused("system.slice/docker-" ID_GKE ".scope"));
	CHECK(refused("//docker/" ID_GKE));
	CHECK(refused("/docker/" ID_GKE "/"));
	CHECK(refused("/system.slice/../docker/" ID_GKE));
	CHECK(refused("/init.scope"));
	CHECK(refused("/user.slice/user-1000.slice/session-3.scope"));
	memset(&n, 0x5a, sizeof n);
	CHECK(cg_name_parse(NULL, &n) == -1 && n.runtime == CG_NONE && !n.container_id[0]);
}

static void test_texts(void)
{
	CHECK(!strcmp(cg_runtime_text(CG_KUBERNETES), "kubernetes") && !strcmp(cg_runtime_text(CG_DOCKER), "docker"));
	CHECK(!strcmp(cg_runtime_text(CG_PODMAN), "podman") && !strcmp(cg_runtime_text(CG_CRIO), "cri-o"));
	CHECK(!strcmp(cg_runtime_text(CG_NONE), "") && !strcmp(cg_runtime_text((enum cg_runtime)99), ""));
	CHECK(!strcmp(cg_qos_text(CG_QOS_GUARANTEED), "guaranteed") && !strcmp(cg_qos_text(CG_QOS_BURSTABLE), "burstable"));
	CHECK(!strcmp(cg_qos_text(CG_QOS_BESTEFFORT), "besteffort") && !strcmp(cg_qos_text(CG_QOS_NONE), ""));
	CHECK(!strcmp(cg_qos_text((enum cg_qos)-1), ""));
}

/* The text of what PATH names, as the pure parse reads it. */
static const char *summary(const char *path, char *b, size_t len)
{
	struct cg_name n;

	cg_name_parse(path, &n);
	return cg_name_text(&n, b, len);
}

/* What --status and the report print below a cgroup's row. */
static void test_summary(void)
{
	char b[160];

	CHECK(!strcmp(summary("/kubepods/besteffort/pod11111111-2222-4333-8444-555555555555/" ID_GKE, b, sizeof b),
		      "kubernetes pod 11111111-2222-4333-8444-555555555555, container 34dc0b5e626f"));
	/* A pod's own cgroup: its UID in full. */
	CHECK(!strcmp(summary("/kubepods/besteffort/pod11111111-2222-4333-8444-555555555555", b, sizeof b),
		      "kubernetes pod 11111111-2222-4333-8444-555555555555"));
	CHECK(!strcmp(summary("/docker/" ID_GKE, b, sizeof b), "docker container 34dc0b5e626f"));
	CHECK(!strcmp(summary("/system.slice/php8.2-fpm.service", b, sizeof b), ""));
	CHECK(!strcmp(summary("not a path", b, sizeof b), ""));
}

/* Units where systemd makes them: the length of what root must have made, or -1. */
static void test_units(void)
{
	CHECK(cg_unit_find("/system.slice/php8.2-fpm.service", "php8.2-fpm.service") == 13);
	CHECK(cg_unit_find("/system.slice/php8.2-fpm.service/pool", "php8.2-fpm.service") == 13);
	CHECK(cg_unit_find("/machine.slice", "machine.slice") == 0);
	CHECK(cg_unit_find("/machine.slice/machine-qemu.scope", "machine.slice") == 0);
	CHECK(cg_unit_find("/system.slice/php8.2-fpm.service", "php.service") == -1);
	/* A user's manager's subtree is the user's (issue 27: nobody's own php-fpm.service matched). */
	CHECK(cg_unit_find("/user.slice/user-65534.slice/user@65534.service/app.slice/php-fpm.service",
			   "php-fpm.service") == -1);
	/* ... unless the rule says whose manager: then root must have made what is above that manager. */
	CHECK(cg_unit_find("/user.slice/user-65534.slice/user@65534.service/app.slice/php-fpm.service",
			   "user@65534.service/php-fpm.service") == (long)strlen("/user.slice/user-65534.slice"));
	CHECK(cg_unit_find("/user.slice/user-1000.slice/user@1000.service/app.slice/php-fpm.service",
			   "user@65534.service/php-fpm.service") == -1);
	CHECK(cg_unit_find("/system.slice/php-fpm.service", "user@65534.service/php-fpm.service") == -1);
	/* The user manager itself, by its name, is a system unit. */
	CHECK(cg_unit_find("/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", "user@1000.service") ==
	      (long)strlen("/user.slice/user-1000.slice"));
	/* Below a service or a scope, what is there its holder made: a delegated service's own "units". */
	CHECK(cg_unit_find("/system.slice/foo.service/php-fpm.service", "php-fpm.service") == -1);
	CHECK(cg_unit_find("/system.slice/foo.scope/x.slice/php-fpm.service", "php-fpm.service") == -1);
	CHECK(cg_unit_find("relative/php-fpm.service", "php-fpm.service") == -1);
}

UNIT_MAIN(UNIT_TEST(test_kubernetes_systemd), UNIT_TEST(test_kubernetes_cgroupfs), UNIT_TEST(test_kubernetes_nested),
	  UNIT_TEST(test_docker), UNIT_TEST(test_podman), UNIT_TEST(test_crio_alone), UNIT_TEST(test_ids),
	  UNIT_TEST(test_forged_below), UNIT_TEST(test_not_where_runtimes_put_them), UNIT_TEST(test_named_end),
	  UNIT_TEST(test_kubepods_substring), UNIT_TEST(test_not_paths),
	  UNIT_TEST(test_texts), UNIT_TEST(test_summary), UNIT_TEST(test_units))
