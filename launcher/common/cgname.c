/*
 * cgname.c - the runtime, pod and container a cgroup path names.
 *
 * Only root on the host makes the cgroups the runtimes name, but a process
 * that may write its own cgroup (a user's delegated subtree, a container
 * with a writable cgroupfs, a pod with delegation) can make more below it,
 * named as it likes: .../user@1000.service/kubepods/burstable/podUID/ID.
 * So a name counts only where the kubelet or a runtime puts its cgroups:
 *   - never inside a user manager's subtree (user@UID.service), which
 *     systemd delegates to the user: rootless Podman's containers there
 *     are the user's plain cgroups;
 *   - a container's cgroup only below slices (system.slice, machine.slice
 *     and their kin, which systemd alone makes) or the cgroupfs drivers'
 *     parents (/docker/ID, /libpod_parent/...), or, for podman's payload
 *     (--cgroups=split, as Quadlet runs it), in a service of a slice; the
 *     first (outermost) one decides: the innermost is what any container
 *     can forge;
 *   - kubelet's top cgroup (kubepods, kubepods.slice) only at the top of
 *     the hierarchy or one level below it (kubelet's --cgroup-root), or at
 *     those places below a container's cgroup: kind and k3d run kubelet in
 *     a Docker container (/system.slice/docker-NODE.scope/kubelet.slice/
 *     kubelet-kubepods.slice/...), and the pod, not the node, is what a
 *     process there belongs to.  That result is marked nested: its names
 *     were made in the container.  When what follows kubepods is not
 *     kubelet's (QoS class, pod), the path is read as without it.
 * A component that begins and ends as a runtime's but holds no valid ID
 * ends the search (-1): what lies below it was made by no runtime we know.
 * That a cgroup which passes these rules was made by root, not by a user
 * with write access to a directory above it, is for the caller to check
 * (named_end says how far: cgtrust.c).
 *
 * conmon (libpod-conmon-ID.scope, crio-conmon-ID) is the runtime's monitor,
 * a process on the host and not in the container: it names the runtime
 * (in Kubernetes, the pod, which CRI-O charges for it) but no container.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/cgname.h"
#include "common/jsonw.h"

#define ID_LEN 64               /* Docker, containerd, CRI-O, Podman: 32 random bytes in hex */
#define COUNT(a) (sizeof (a) / sizeof (a)[0])

/* One component of the path, not NUL-terminated. */
struct comp {
	const char *s;
	size_t len;
};

/* A container's cgroup name: PREFIX, the ID, SUFFIX; looked for WHERE. */
enum { ALONE = 1, IN_POD = 2 };
static const struct form {
	const char *prefix, *suffix;
	enum cg_runtime runtime;        /* when ALONE; CG_NONE: a runtime's, of no layout named here */
	bool monitor;                   /* conmon: the runtime's process, no container */
	int where;
} forms[] = {
	/* systemd's scopes, and the cgroupfs drivers' names.  In a pod, which is root's,
	 * every runtime's form is taken, whatever kubelet's driver. */
	{ "docker-", ".scope", CG_DOCKER, false, ALONE | IN_POD },
	{ "libpod-conmon-", ".scope", CG_PODMAN, true, ALONE },
	{ "libpod-payload-", "", CG_PODMAN, false, ALONE },     /* podman run --cgroups=split */
	{ "libpod-", ".scope", CG_PODMAN, false, ALONE },
	{ "libpod-", "", CG_PODMAN, false, ALONE },             /* /libpod_parent/libpod-ID */
	{ "crio-conmon-", ".scope", CG_CRIO, true, ALONE | IN_POD },
	{ "crio-conmon-", "", CG_CRIO, true, ALONE | IN_POD },
	{ "crio-", ".scope", CG_CRIO, false, ALONE | IN_POD },
	{ "crio-", "", CG_CRIO, false, ALONE | IN_POD },
	{ "cri-containerd-", ".scope", CG_NONE, false, ALONE | IN_POD },
	{ "", "", CG_NONE, false, IN_POD },                     /* kubelet's cgroupfs driver */
};

/* The component after *P (at a '/'), with *P moved to the '/' after it or to END; false at END. */
static bool next_comp(const char **p, const char *end, struct comp *c)
{
	const char *q;

	if (*p >= end)
		return false;
	for (q = c->s = *p + 1; q < end && *q != '/'; q++)
		;
	c->len = (size_t)(q - c->s);
	*p = q;
	return true;
}

static bool is(struct comp c, const char *s)
{
	return c.len == strlen(s) && !memcmp(c.s, s, c.len);
}

/* Does C begin with the LEN bytes at S?  Then they are taken off it. */
static bool eat(struct comp *c, const char *s, size_t len)
{
	if (c->len < len || memcmp(c->s, s, len))
		return false;
	c->s += len;
	c->len -= len;
	return true;
}

/* Does C end with S?  Then it is taken off. */
static bool chop(struct comp *c, const char *s)
{
	size_t len = strlen(s);

	if (c->len < len || memcmp(c->s + c->len - len, s, len))
		return false;
	c->len -= len;
	return true;
}

/*
 * Is C WANT hex digits, either case, with SEP where a UUID has its dashes
 * if SEP is not '\0'?  Then OUT (WANT + 1 bytes) gets it in lowercase with
 * dashes for SEP; else OUT is left alone.
 */
static bool hex_copy(struct comp c, size_t want, char sep, char *out)
{
	char buf[ID_LEN + 1];

	if (c.len != want || want > ID_LEN)
		return false;
	for (size_t i = 0; i < want; i++) {
		bool dash = sep && (i == 8 || i == 13 || i == 18 || i == 23);
		char ch = c.s[i] >= 'A' && c.s[i] <= 'F' ? (char)(c.s[i] - 'A' + 'a') : c.s[i];

		if (dash ? ch != sep : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
		buf[i] = dash ? '-' : ch;
	}
	buf[want] = '\0';
	memcpy(out, buf, want + 1);
	return true;
}

/*
 * Which form looked for WHERE is C?  1 with *F and ID set (ID "" for a
 * monitor), 0 when none, -1 when C begins and ends as one does but holds
 * no valid ID.
 */
static int form_of(struct comp c, int where, const struct form **f, char id[ID_LEN + 1])
{
	int found = 0;

	for (size_t i = 0; i < COUNT(forms); i++) {
		struct comp t = c;

		if (!(forms[i].where & where) || !eat(&t, forms[i].prefix, strlen(forms[i].prefix))
		    || !chop(&t, forms[i].suffix))
			continue;
		found = -1;
		if (hex_copy(t, ID_LEN, '\0', id)) {
			if (forms[i].monitor)
				id[0] = '\0';
			*f = &forms[i];
			return 1;
		}
	}
	return found;
}

/* Does C end with S, after something?  C is left as it is. */
static bool ends(struct comp c, const char *s)
{
	return chop(&c, s) && c.len > 0;
}

/* Is C a slice, which only systemd makes (never delegated), or a cgroupfs driver's parent? */
static bool runtime_parent(struct comp c)
{
	return ends(c, ".slice") || is(c, "docker") || is(c, "libpod_parent");
}

/*
 * The first container's cgroup of the components in (P, END), where a
 * runtime puts one: below slices and the cgroupfs parents only.  1 with
 * *N filled and *AT at the '/' (or END) after it; 0 when there is none
 * there; -1 when one fails its form.
 */
static int alone_scan(const char *p, const char *end, struct cg_name *n, const char **at)
{
	struct comp c, prev = { "", 0 };
	const struct form *f;
	char id[ID_LEN + 1];
	int r;

	for (; next_comp(&p, end, &c); prev = c) {
		*at = p;
		if (is(prev, "docker")) {               /* Docker's cgroupfs driver: /docker/ID */
			n->runtime = CG_DOCKER;
			return hex_copy(c, ID_LEN, '\0', n->container_id) ? 1 : -1;
		}
		if (is(prev, "libpod_parent") && is(c, "conmon")) {     /* Podman's cgroupfs conmon */
			n->runtime = CG_PODMAN;
			return 1;
		}
		if ((r = form_of(c, ALONE, &f, id)) == 0) {
			/* Below a service, its holder makes what it likes: the payload alone is a runtime's. */
			if (!ends(prev, ".service") &&
			    (runtime_parent(c) || (ends(prev, ".slice") && ends(c, ".service"))))
				continue;
			return 0;       /* below a scope or a plain cgroup: no runtime's place */
		}
		if (r < 0)
			return -1;      /* a form without a valid ID (form_of sets no *F then) */
		/* In a service, only the payload of podman --cgroups=split (Quadlet) is a runtime's. */
		if (ends(prev, ".service") && strcmp(f->prefix, "libpod-payload-"))
			return 0;
		if (f->runtime == CG_NONE)
			return -1;
		n->runtime = f->runtime;
		memcpy(n->container_id, id, sizeof id);
		return 1;
	}
	return 0;
}

/*
 * Is C kubelet's top cgroup, below PREV?  cgroupfs: "kubepods"; systemd:
 * "kubepods.slice", or "P-kubepods.slice" below a slice "P.slice" (a
 * kubelet cgroup root, "/kubelet" in kind): systemd nests slices by name.
 */
static bool kube_top(struct comp c, struct comp prev, bool *sd)
{
	if (!(*sd = !is(c, "kubepods")))
		return true;
	if (!chop(&c, "kubepods.slice"))
		return false;
	if (!chop(&prev, ".slice"))
		return c.len == 0;
	return eat(&c, prev.s, prev.len) && is(c, "-");
}

/*
 * Kubernetes below its top cgroup TOP: the QoS class's cgroup unless
 * guaranteed, the pod's, a container's.  Under systemd (SD) a slice is
 * named after its parent (a-b.slice in a.slice) and the pod UID has '_'
 * for '-'.  0 with n->named_end past the last component read, or -1 when
 * a component above the container's fails that.
 */
static int kube_parse(const char *path, struct comp top, const char *end, bool sd, struct cg_name *n)
{
	static const char *const classes[] = { [CG_QOS_BURSTABLE] = "burstable", [CG_QOS_BESTEFFORT] = "besteffort" };
	const char *p = top.s + top.len;
	struct comp c, t, parent = top;
	const struct form *f;
	char id[ID_LEN + 1];

	n->runtime = CG_KUBERNETES;
	n->named_end = (size_t)(p - path);
	chop(&parent, ".slice");
	if (!next_comp(&p, end, &c))
		return 0;
	for (int q = CG_QOS_BURSTABLE; q <= CG_QOS_BESTEFFORT && !n->qos; q++) {
		t = c;
		if (sd ? eat(&t, parent.s, parent.len) && eat(&t, "-", 1) && eat(&t, classes[q], strlen(classes[q]))
			 && is(t, ".slice") : is(t, classes[q]))
			n->qos = (enum cg_qos)q;
	}
	if (n->qos) {
		n->named_end = (size_t)(p - path);
		parent = c;
		chop(&parent, ".slice");
		if (!next_comp(&p, end, &c))
			return 0;
	}
	t = c;
	if (sd ? !(eat(&t, parent.s, parent.len) && eat(&t, "-pod", 4) && chop(&t, ".slice")) : !eat(&t, "pod", 3))
		return -1;
	/* A static pod's UID is kubelet's MD5 of it: 32 hex digits, no dashes. */
	if (!hex_copy(t, 36, sd ? '_' : '-', n->pod_uid) && !hex_copy(t, 32, '\0', n->pod_uid))
		return -1;
	n->named_end = (size_t)(p - path);
	if (!n->qos)
		n->qos = CG_QOS_GUARANTEED;
	if (next_comp(&p, end, &c) && form_of(c, IN_POD, &f, id) > 0) {
		memcpy(n->container_id, id, sizeof id);
		n->named_end = (size_t)(p - path);
	}
	return 0;
}

/* Is C a user manager's cgroup (user@UID.service), the top of what systemd delegates to a user? */
static bool user_manager(struct comp c)
{
	return eat(&c, "user@", 5) && chop(&c, ".service") && c.len > 0 &&
	       strspn(c.s, "0123456789") >= c.len;
}

/* How many components lie between the '/' at A and the '/' at B? */
static int comps_between(const char *a, const char *b)
{
	int n = 1;

	if (a == b)
		return 0;
	for (const char *q = a + 1; q < b; q++)
		n += *q == '/';
	return n;
}

int cg_name_parse(const char *path, struct cg_name *n)
{
	const char *p, *end, *at = NULL;
	struct comp c, top = { NULL, 0 }, prev = { "", 0 };
	struct cg_name outer = { .runtime = CG_NONE };
	bool sd = false;
	int r;

	memset(n, 0, sizeof *n);
	/* A path as the kernel writes one: no empty, "." or ".." component; "/" names nothing. */
	if (!path || path[0] != '/' || !path[1])
		return -1;
	end = path + strlen(path);
	for (p = path; next_comp(&p, end, &c); prev = c)
		if (!c.len || is(c, ".") || is(c, ".."))
			return -1;
	/* A user manager's subtree is the user's: nothing in it names a runtime. */
	for (p = path; next_comp(&p, end, &c);)
		if (user_manager(c)) {
			end = c.s - 1;
			break;
		}
	prev = (struct comp){ "", 0 };
	for (p = path; !top.s && next_comp(&p, end, &c); prev = c)
		if (kube_top(c, prev, &sd))
			top = c;
	if (top.s) {
		/* Where kubelet puts it: the top, or below its cgroup root; on the host or in a node's container. */
		const char *base = path;

		if ((r = alone_scan(path, top.s - 1, &outer, &at)) == 1)
			base = at;
		n->nested = r != 0;
		if (r >= 0 && comps_between(base, top.s - 1) <= 1 && (r == 1 || base == path) &&
		    !kube_parse(path, top, end, sd, n))
			return 0;
		memset(n, 0, sizeof *n);
	}
	if ((r = alone_scan(path, end, n, &at)) <= 0) {
		memset(n, 0, sizeof *n);
		return -1;
	}
	n->named_end = (size_t)(at - path);
	return 0;
}

const char *cg_qos_text(enum cg_qos q)
{
	static const char *const text[] = { "", "guaranteed", "burstable", "besteffort" };

	return (unsigned)q < COUNT(text) ? text[q] : "";
}

const char *cg_runtime_text(enum cg_runtime r)
{
	static const char *const text[] = { "", "kubernetes", "docker", "podman", "cri-o" };

	return (unsigned)r < COUNT(text) ? text[r] : "";
}

const char *cg_name_text(const struct cg_name *n, char *buf, size_t len)
{
	if (!n->pod_uid[0] && !n->container_id[0])
		snprintf(buf, len, "%s", "");
	else if (n->pod_uid[0] && n->container_id[0])
		snprintf(buf, len, "%s pod %s, container %.12s", cg_runtime_text(n->runtime), n->pod_uid,
			 n->container_id);
	else if (n->pod_uid[0])
		snprintf(buf, len, "%s pod %s", cg_runtime_text(n->runtime), n->pod_uid);
	else
		snprintf(buf, len, "%s container %.12s", cg_runtime_text(n->runtime), n->container_id);
	return buf;
}

void cg_name_members(struct jsonw *w, const struct cg_name *n)
{
	jw_string(w, "pod_uid", n->pod_uid[0] ? n->pod_uid : NULL);
	jw_string(w, "container_id", n->container_id[0] ? n->container_id : NULL);
}

/*
 * The component equal to NAME (or, with "user@UID.service/" before it, in
 * that user manager's subtree) where systemd puts units: every component
 * above it a slice, but a user manager's own.  Returns the length of the
 * path that root must have made (the unit's parent; the user manager's
 * parent for a user's unit), or -1.
 */
long cg_unit_find(const char *path, const char *unit)
{
	const char *slash = strchr(unit, '/'), *p = path, *end = path + strlen(path);
	struct comp c, manager = { unit, slash ? (size_t)(slash - unit) : 0 }, want = { unit, strlen(unit) };
	long root_made = -1;

	if (slash)
		want = (struct comp){ slash + 1, strlen(slash + 1) };
	if (path[0] != '/')
		return -1;
	for (const char *at = p; next_comp(&p, end, &c); at = p) {
		if (want.len == c.len && !memcmp(want.s, c.s, c.len) && (!slash || root_made >= 0))
			return slash ? root_made : (long)(at - path);
		if (slash && root_made < 0 && manager.len == c.len && !memcmp(manager.s, c.s, c.len)) {
			root_made = (long)(at - path);
			continue;
		}
		if (!ends(c, ".slice"))
			return -1;      /* below a service or scope: what is there, its holder made */
	}
	return -1;
}
