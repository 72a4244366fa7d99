/*
 * Unit tests of kube_names_read over the kubelet's log directories of a
 * containerd node and a CRI-O node (tests/unit/data/kubelet-*.layout: how
 * each was built is said there), made in a temporary directory: each
 * process's cgroup, as its runtime names it, gives the pod's UID and the
 * container's ID (cgname.h), and those give the names.  Then what a
 * forger could plant, and names that are not Kubernetes's.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cgname.h"
#include "common/kubenames.h"
#include "unit.h"

#define MAX_CGROUPS 8

struct layout {
	char root[64];
	struct { char name[1024], path[1024]; } cg[MAX_CGROUPS];
	int ncg;
};

static void made(const char *root, const char *rel, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", root, rel);
}

/* The layout FILE under a new temporary directory (with its var/log/): every line made, the cgroups kept. */
static bool layout_make(const char *file, struct layout *l)
{
	char line[2048], kind[16], a[1024], b[1024], path[PATH_MAX];
	FILE *in = fopen(file, "r");
	bool ok = true;

	memset(l, 0, sizeof *l);
	snprintf(l->root, sizeof l->root, "/tmp/kubenames.XXXXXX");
	if (!in || !mkdtemp(l->root)) {
		if (in)
			fclose(in);
		return false;
	}
	chmod(l->root, 0755);
	made(l->root, "var", path, sizeof path);
	ok &= mkdir(path, 0755) == 0;
	made(l->root, "var/log", path, sizeof path);
	ok &= mkdir(path, 0755) == 0;
	while (fgets(line, sizeof line, in)) {
		int n = sscanf(line, "%15s %1023s %1023s", kind, a, b);

		if (n < 2 || kind[0] == '#')
			continue;
		if (!strcmp(kind, "cgroup") && n == 3 && l->ncg < MAX_CGROUPS) {
			snprintf(l->cg[l->ncg].name, sizeof l->cg[0].name, "%s", a);
			snprintf(l->cg[l->ncg++].path, sizeof l->cg[0].path, "%s", b);
			continue;
		}
		made(l->root, a, path, sizeof path);
		if (!strcmp(kind, "dir"))
			ok &= mkdir(path, 0755) == 0;
		else if (!strcmp(kind, "file"))
			ok &= close(open(path, O_CREAT | O_WRONLY, 0640)) == 0;
		else if (!strcmp(kind, "link") && n == 3)
			ok &= symlink(b, path) == 0;
		else
			ok = false;
	}
	fclose(in);
	return ok;
}

static void layout_remove(const struct layout *l)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", l->root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", l->root);
}

/* Does the cgroup NAME of L name the pod NS/POD and the container CTR ("": none asked)? */
static bool names_of(const struct layout *l, const char *name, const char *ns, const char *pod, const char *ctr)
{
	struct kube_names k;
	struct cg_name n;
	char why[512];

	for (int i = 0; i < l->ncg; i++) {
		if (strcmp(l->cg[i].name, name))
			continue;
		if (cg_name_parse(l->cg[i].path, &n) || n.runtime != CG_KUBERNETES) {
			fprintf(stderr, "  %s: not a pod's cgroup\n", l->cg[i].path);
			return false;
		}
		if (kube_names_read(l->root, n.pod_uid, n.container_id, &k, why, sizeof why)) {
			fprintf(stderr, "  %s: %s\n", name, why);
			return false;
		}
		if (!strcmp(k.namespace_, ns) && !strcmp(k.pod, pod) && !strcmp(k.container, ctr))
			return true;
		fprintf(stderr, "  %s -> %s/%s/%s\n", name, k.namespace_, k.pod, k.container);
		return false;
	}
	fprintf(stderr, "  no cgroup %s\n", name);
	return false;
}

static bool load(const char *file, struct layout *l)
{
	return layout_make(file, l);
}

static void test_containerd(void)
{
	struct layout l;

	CHECK(load("tests/unit/data/kubelet-containerd.layout", &l));
	CHECK(names_of(&l, "app", "shop", "web-7d9c8b6f5-x2x9q", "app"));
	CHECK(names_of(&l, "log-shipper", "shop", "web-7d9c8b6f5-x2x9q", "log-shipper"));
	/* The pod's own cgroup: the pod's names, no container's. */
	CHECK(names_of(&l, "pod", "shop", "web-7d9c8b6f5-x2x9q", ""));
	layout_remove(&l);
}

static void test_crio(void)
{
	struct layout l;

	CHECK(load("tests/unit/data/kubelet-crio.layout", &l));
	CHECK(names_of(&l, "postgres", "data", "db-0", "postgres"));
	layout_remove(&l);
}

/* A static pod's UID is 32 hex digits; its pod name holds dots (the node's name). */
static void test_static_pod(void)
{
	struct layout l;
	struct kube_names k;
	char why[256];

	CHECK(load("tests/unit/data/kubelet-containerd.layout", &l));
	CHECK(kube_names_read(l.root, "33d556edd3ae8ef21980288cef77ae8b", NULL, &k, why, sizeof why) == 0);
	CHECK(!strcmp(k.namespace_, "kube-system") && !strcmp(k.pod, "etcd-cp1.example.com") && !k.container[0]);
	/* A container of it with no link: unknown, not guessed from its one directory. */
	CHECK(kube_names_read(l.root, "33d556edd3ae8ef21980288cef77ae8b",
			      "1111111111111111111111111111111111111111111111111111111111111111", &k, why, sizeof why) ==
	      -1);
	CHECK(strstr(why, "no entry of") != NULL);
	layout_remove(&l);
}

/* What someone other than root, or a link into another pod, would make: refused. */
static void test_forged(void)
{
	const char *uid = "5b2c7e1a-3d4f-4a6b-9c8d-0e1f2a3b4c5d";
	const char *id = "3f1c9a7b2e5d4c6a8b0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e";
	struct layout l;
	struct kube_names k;
	char why[512], path[PATH_MAX], link[PATH_MAX + 256];

	CHECK(load("tests/unit/data/kubelet-containerd.layout", &l));
	/* A directory others may write: its entries could be anyone's. */
	made(l.root, "var/log/pods", path, sizeof path);
	chmod(path, 0777);
	CHECK(kube_names_read(l.root, uid, NULL, &k, why, sizeof why) == -1 && strstr(why, "only root can write"));
	chmod(path, 0755);
	CHECK(kube_names_read(l.root, uid, id, &k, why, sizeof why) == 0);
	/* A second directory of the same UID: in doubt. */
	made(l.root, "var/log/pods/other_web-1_5b2c7e1a-3d4f-4a6b-9c8d-0e1f2a3b4c5d", path, sizeof path);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(kube_names_read(l.root, uid, NULL, &k, why, sizeof why) == -1 && strstr(why, "2 entries"));
	CHECK(rmdir(path) == 0);
	/* The container's link pointing into another pod's directory. */
	snprintf(link, sizeof link, "%s/var/log/containers/web-7d9c8b6f5-x2x9q_shop_app-%s.log", l.root, id);
	CHECK(unlink(link) == 0);
	CHECK(symlink("/var/log/pods/kube-system_etcd-cp1.example.com_33d556edd3ae8ef21980288cef77ae8b/etcd/0.log",
		      link) == 0);
	CHECK(kube_names_read(l.root, uid, id, &k, why, sizeof why) == -1 && strstr(why, "not into"));
	/* A file where the link should be. */
	CHECK(unlink(link) == 0);
	CHECK(close(open(link, O_CREAT | O_WRONLY, 0644)) == 0);
	CHECK(kube_names_read(l.root, uid, id, &k, why, sizeof why) == -1 && strstr(why, "not a link"));
	layout_remove(&l);
}

/* A pod's controller, from the name Kubernetes generated for it. */
static void test_owner(void)
{
	/* A Deployment's pod: NAME-HASH-XXXXX; its ReplicaSet NAME-HASH owns it too. */
	CHECK(kube_pod_has_owner("web-7d9c8b6f5-x2x9q", "web"));
	CHECK(kube_pod_has_owner("web-7d9c8b6f5-x2x9q", "web-7d9c8b6f5"));
	CHECK(kube_pod_has_owner("web-7d9c8b6f5-x2x9q", "w*"));
	/* Not another Deployment whose name begins the same, nor a prefix of the name. */
	CHECK(!kube_pod_has_owner("web-api-7d9c8b6f5-x2x9q", "web"));
	CHECK(kube_pod_has_owner("web-api-7d9c8b6f5-x2x9q", "web-api"));
	CHECK(!kube_pod_has_owner("web-7d9c8b6f5-x2x9q", "we"));
	/* A StatefulSet's NAME-ORDINAL; a DaemonSet's or Job's NAME-XXXXX. */
	CHECK(kube_pod_has_owner("db-0", "db") && kube_pod_has_owner("db-12", "db"));
	CHECK(kube_pod_has_owner("node-exporter-k4m2p", "node-exporter"));
	/* What Kubernetes does not generate: vowels, 0, 1, 3 in a random part; too long a hash; no suffix. */
	CHECK(!kube_pod_has_owner("web-7d9c8b6f5-xaxeq", "web"));
	CHECK(!kube_pod_has_owner("web-7d9c8b6f5-x1x9q", "web") && !kube_pod_has_owner("web-7d9c8b6f5-x2x9q", "web-7"));
	CHECK(!kube_pod_has_owner("web-7d9c8b6f5bb2-x2x9q", "web"));
	CHECK(!kube_pod_has_owner("web", "web") && !kube_pod_has_owner("-x2x9q", ""));
	CHECK(!kube_pod_has_owner("db-12345678901", "db"));
}

static void test_names(void)
{
	CHECK(kube_name_is_label("shop", 4));
	CHECK(kube_name_is_label("kube-system", 11));
	CHECK(!kube_name_is_label("-shop", 5) && !kube_name_is_label("shop-", 5));
	CHECK(!kube_name_is_label("Shop", 4) && !kube_name_is_label("sh_op", 5) && !kube_name_is_label("", 0));
	CHECK(!kube_name_is_label("a.b", 3));
	CHECK(kube_name_is_subdomain("etcd-cp1.example.com", 20));
	CHECK(!kube_name_is_subdomain("etcd..com", 9) && !kube_name_is_subdomain(".a", 2));
	char long_label[70];

	memset(long_label, 'a', 64);
	CHECK(kube_name_is_label(long_label, 63) && !kube_name_is_label(long_label, 64));
}

UNIT_MAIN(UNIT_TEST(test_containerd), UNIT_TEST(test_crio), UNIT_TEST(test_static_pod), UNIT_TEST(test_forged),
	  UNIT_TEST(test_owner), UNIT_TEST(test_names))
