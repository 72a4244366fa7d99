/*
 * fuzz_cgname.c - what a cgroup path names (launcher/common/cgname.c):
 * cg_name_parse on any path, cg_name_text of what it gives into buffers of
 * every size from 0 to 80 bytes (its longest text is 75), and cg_unit_find
 * of the path with a unit from the input or made of the path's own
 * components.  The path is text that others choose in part (a delegated
 * user or service, a container with a writable cgroupfs), so the oracles
 * are the places that cgname.h and cgname.c's comment allow, written out
 * below; a name found anywhere else is a crash, as is any other broken
 * promise:
 *  - refused: -1, and *N all empty;
 *  - accepted: a path as the kernel writes one ('/', no empty, "." or ".."
 *    component); the pod UID 8-4-4-4-12 or 32 lower-case hex digits, the
 *    container's ID 64; named_end at the end of the component that named
 *    the last thing, and nothing named at or below a user manager
 *    (user@UID.service);
 *  - Docker, Podman, CRI-O alone: the named component is one of the
 *    runtimes' forms (docker-ID.scope, /docker/ID, libpod-ID[.scope],
 *    libpod-payload-ID, crio-ID[.scope]; conmon's: no ID), with the ID the
 *    one given back; every component above it a slice or a cgroupfs
 *    driver's parent (docker, libpod_parent), except that the payload of
 *    podman --cgroups=split may sit in a service of a slice;
 *  - Kubernetes: kubelet's top (kubepods, kubepods.slice, P-kubepods.slice
 *    in P.slice) at the top or one level below it, or, nested, one or two
 *    levels below a container's cgroup that the rule above accepts; then
 *    the QoS class's cgroup unless guaranteed, the pod's, a container's,
 *    each named after its parent under systemd, the UID with '_' there;
 *  - cg_name_text: "RUNTIME pod UID, container ID12" (or one of them, or
 *    ""), cut to the buffer, terminated, nothing written past it;
 *  - cg_unit_find: -1 or the offset of a '/' in the path, exactly what a
 *    reference written from cgname.h's words gives (the unit a whole
 *    component below slices only; "MANAGER/NAME": NAME below that
 *    manager, slices between).
 *
 * Input: a byte of options (bit 0: a unit made of the path's components
 * too, bit 1: of two, "I/J"), two bytes that choose those components, then
 * the path and the unit as records separated by a NUL.
 */
#include <ctype.h>
#include <stdbool.h>

#include "common/cgname.h"
#include "fuzz.h"

#define TEXT_SIZES 80

struct comp {
	const char *s;
	size_t len;
};

/*
 * The components of PATH as cgname.c walks them, the text between the '/'s
 * after the first byte, into *C (allocated, for the caller to free).
 */
static size_t split(const char *path, struct comp **c)
{
	const char *s = path + 1, *end = path + strlen(path);
	size_t n = 0;

	*c = fuzz_alloc((strlen(path) + 1) * sizeof **c);
	if (!*path)
		return 0;
	for (;;) {
		const char *slash = memchr(s, '/', (size_t)(end - s));

		(*c)[n].s = s;
		(*c)[n++].len = (size_t)((slash ? slash : end) - s);
		if (!slash)
			return n;
		s = slash + 1;
	}
}

static bool is(struct comp c, const char *s)
{
	return c.len == strlen(s) && !memcmp(c.s, s, c.len);
}

static bool comp_eq(struct comp a, struct comp b)
{
	return a.len == b.len && !memcmp(a.s, b.s, a.len);
}

/* Does C end with SUFFIX after at least one byte? */
static bool ends(struct comp c, const char *suffix)
{
	size_t k = strlen(suffix);

	return c.len > k && !memcmp(c.s + c.len - k, suffix, k);
}

static bool slice(struct comp c)
{
	return ends(c, ".slice");
}

static bool user_manager(struct comp c)
{
	size_t digits = c.len > 13 ? c.len - 13 : 0;

	return digits && !memcmp(c.s, "user@", 5) && ends(c, ".service") && strspn(c.s + 5, "0123456789") >= digits;
}

/* Are the LEN bytes at S WANT, its hex digits (lower case there) in either case? */
static bool hex_is(const char *s, size_t len, const char *want)
{
	if (strlen(want) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (isxdigit((unsigned char)want[i]) ? !isxdigit((unsigned char)s[i]) ||
		    tolower((unsigned char)s[i]) != want[i] : s[i] != want[i])
			return false;
	return true;
}

/* Is C PREFIX, the 64 hex digits of ID (any 64 when ID is NULL), SUFFIX? */
static bool id_form(struct comp c, const char *prefix, const char *id, const char *suffix)
{
	size_t p = strlen(prefix), s = strlen(suffix);

	if (c.len != p + 64 + s || memcmp(c.s, prefix, p) || memcmp(c.s + p + 64, suffix, s))
		return false;
	for (size_t i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)c.s[p + i]) || (id && tolower((unsigned char)c.s[p + i]) != id[i]))
			return false;
	return true;
}

static bool lower_hex(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

static bool pod_form(const char *s)
{
	if (strlen(s) == 32)
		return lower_hex(s, 32);
	if (strlen(s) != 36)
		return false;
	for (size_t i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/* The component of C[0..N) that ends at END (a '/' or the NUL), or -1. */
static long comp_ending(const char *path, const struct comp *c, size_t n, size_t end)
{
	for (size_t i = 0; i < n; i++)
		if ((size_t)(c[i].s + c[i].len - path) == end)
			return (long)i;
	return -1;
}

/*
 * Is C[K] a container's cgroup of RUNTIME with ID ("": conmon, the
 * runtime's monitor; NULL: any ID) where a runtime alone puts one: below
 * slices and the cgroupfs drivers' parents, the payload of --cgroups=split
 * also in a service of a slice?
 */
static bool alone_place(const struct comp *c, size_t k, enum cg_runtime rt, const char *id)
{
	struct comp prev = k ? c[k - 1] : (struct comp){ "", 0 };
	bool payload = false, form;
	size_t above = k;

	if (id && !*id)
		form = (rt == CG_PODMAN && is(prev, "libpod_parent") && is(c[k], "conmon")) ||
		       (rt == CG_PODMAN && id_form(c[k], "libpod-conmon-", NULL, ".scope")) ||
		       (rt == CG_CRIO && (id_form(c[k], "crio-conmon-", NULL, ".scope") ||
					  id_form(c[k], "crio-conmon-", NULL, "")));
	else if (rt == CG_DOCKER)
		form = (is(prev, "docker") && id_form(c[k], "", id, "")) || id_form(c[k], "docker-", id, ".scope");
	else if (rt == CG_PODMAN)
		form = id_form(c[k], "libpod-", id, ".scope") || id_form(c[k], "libpod-", id, "") ||
		       (payload = id_form(c[k], "libpod-payload-", id, ""));
	else
		form = rt == CG_CRIO && (id_form(c[k], "crio-", id, ".scope") || id_form(c[k], "crio-", id, ""));
	if (!form)
		return false;
	if (payload && k >= 2 && ends(c[k - 1], ".service") && slice(c[k - 2]))
		above = k - 1;
	for (size_t j = 0; j < above; j++)
		if (!slice(c[j]) && !is(c[j], "docker") && !is(c[j], "libpod_parent"))
			return false;
	return true;
}

/* C without its ".slice" under systemd (SD): what kubelet names a child cgroup after. */
static struct comp stem(struct comp c, bool sd)
{
	if (sd)
		c.len -= 6;
	return c;
}

/* Does C begin with the LEN bytes at S?  Then they are taken off it. */
static bool take(struct comp *c, const char *s, size_t len)
{
	if (c->len < len || memcmp(c->s, s, len))
		return false;
	c->s += len;
	c->len -= len;
	return true;
}

/* Is C "PARENT-" (under systemd, SD), PART, WANT (its hex digits in either case), SUFFIX? */
static bool named_after(struct comp c, struct comp parent, bool sd, const char *part, const char *want,
			const char *suffix)
{
	size_t w = strlen(want), x = strlen(suffix);

	if (sd && !(take(&c, parent.s, parent.len) && take(&c, "-", 1)))
		return false;
	return take(&c, part, strlen(part)) && c.len == w + x && hex_is(c.s, w, want) && !memcmp(c.s + w, suffix, x);
}

/* Kubernetes' forms below the top T (the QoS class's cgroup, the pod's, a container's) ending at K. */
static bool kube_below(const struct comp *c, size_t n, size_t t, size_t k, const struct cg_name *nm)
{
	bool sd = !is(c[t], "kubepods"), classed = nm->qos == CG_QOS_BURSTABLE || nm->qos == CG_QOS_BESTEFFORT;
	size_t pod = t + 1 + classed;
	char uid[40];

	if (classed && (t + 1 >= n || !named_after(c[t + 1], stem(c[t], sd), sd, cg_qos_text(nm->qos), "",
						    sd ? ".slice" : "")))
		return false;
	if (!nm->pod_uid[0])
		return !nm->container_id[0] && nm->qos != CG_QOS_GUARANTEED && k == t + classed;
	if (nm->qos == CG_QOS_NONE || pod >= n)
		return false;
	/* The pod's cgroup: pod<UID>, or PARENT-pod<UID, '_' for '-'>.slice. */
	snprintf(uid, sizeof uid, "%s", nm->pod_uid);
	for (char *u = uid; sd && *u; u++)
		*u = *u == '-' ? '_' : *u;
	if (!named_after(c[pod], stem(c[pod - 1], sd), sd, "pod", uid, sd ? ".slice" : ""))
		return false;
	if (!nm->container_id[0])
		return k == pod || (k == pod + 1 && (id_form(c[k], "crio-conmon-", NULL, ".scope") ||
						      id_form(c[k], "crio-conmon-", NULL, "")));
	/* A container: every runtime's form, whatever kubelet's driver. */
	return k == pod + 1 &&
	       (id_form(c[k], "docker-", nm->container_id, ".scope") || id_form(c[k], "crio-", nm->container_id, ".scope") ||
		id_form(c[k], "crio-", nm->container_id, "") ||
		id_form(c[k], "cri-containerd-", nm->container_id, ".scope") || id_form(c[k], "", nm->container_id, ""));
}

/* Is C[T] kubelet's top cgroup: kubepods, kubepods.slice, or P-kubepods.slice in P.slice? */
static bool kube_top(const struct comp *c, size_t t)
{
	struct comp prev = t ? c[t - 1] : (struct comp){ "", 0 };

	if (is(c[t], "kubepods") || is(c[t], "kubepods.slice"))
		return true;
	return prev.len >= 6 && !memcmp(prev.s + prev.len - 6, ".slice", 6) &&
	       named_after(c[t], stem(prev, true), true, "kubepods", "", ".slice");
}

/* Is there a kubelet's top at a place it may be, with the rest below it as kubelet makes it? */
static bool kube_place(const struct comp *c, size_t n, size_t k, const struct cg_name *nm)
{
	static const enum cg_runtime runtimes[] = { CG_DOCKER, CG_PODMAN, CG_CRIO };

	for (size_t t = 0; t <= k; t++) {
		bool placed = !nm->nested && t <= 1;

		if (!kube_top(c, t))
			continue;
		/* Nested: one or two levels below a container's cgroup, as kind and k3d put kubelet's. */
		for (size_t e = t >= 2 ? t - 2 : 0; nm->nested && e < t && !placed; e++)
			for (size_t i = 0; i < 3 && !placed; i++)
				placed = alone_place(c, e, runtimes[i], NULL) || alone_place(c, e, runtimes[i], "");
		if (placed && kube_below(c, n, t, k, nm))
			return true;
	}
	return false;
}

static void check_name(const char *path, int r, const struct cg_name *nm)
{
	struct comp *c;
	size_t len = strlen(path), n;
	long k;

	FUZZ_CHECK(r == 0 || r == -1, "cg_name_parse returned %d", r);
	if (r) {
		struct cg_name empty;

		memset(&empty, 0, sizeof empty);
		FUZZ_CHECK(!memcmp(nm, &empty, sizeof empty), "refused, but *N not emptied");
		return;
	}
	FUZZ_CHECK(path[0] == '/' && path[1], "'%s' named, no path", path);
	n = split(path, &c);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(c[i].len && !is(c[i], ".") && !is(c[i], ".."), "'%s' named, a component %zu empty, . or ..",
			   path, i);
	FUZZ_CHECK(nm->runtime >= CG_KUBERNETES && nm->runtime <= CG_CRIO, "runtime %d", (int)nm->runtime);
	FUZZ_CHECK(fuzz_terminated(nm->pod_uid, sizeof nm->pod_uid) &&
		   fuzz_terminated(nm->container_id, sizeof nm->container_id), "names not terminated");
	FUZZ_CHECK(!nm->pod_uid[0] || pod_form(nm->pod_uid), "pod UID '%s'", nm->pod_uid);
	FUZZ_CHECK(!nm->container_id[0] || lower_hex(nm->container_id, 64), "container ID '%s'", nm->container_id);
	FUZZ_CHECK(nm->named_end > 0 && nm->named_end <= len && (path[nm->named_end] == '/' || !path[nm->named_end]),
		   "named_end %zu of '%s'", nm->named_end, path);
	k = comp_ending(path, c, n, nm->named_end);
	FUZZ_CHECK(k >= 0, "named_end %zu of '%s' ends no component", nm->named_end, path);
	/* A user manager's subtree is the user's: nothing at or below it names anything. */
	for (long i = 0; i <= k; i++)
		FUZZ_CHECK(!user_manager(c[i]), "'%s' named %s in a user manager's subtree", path,
			   cg_runtime_text(nm->runtime));
	if (nm->runtime != CG_KUBERNETES) {
		FUZZ_CHECK(nm->qos == CG_QOS_NONE && !nm->nested && !nm->pod_uid[0], "a pod's names for %s",
			   cg_runtime_text(nm->runtime));
		FUZZ_CHECK(alone_place(c, (size_t)k, nm->runtime, nm->container_id),
			   "'%s' named %s container '%s' at component %ld, no runtime's form or place", path,
			   cg_runtime_text(nm->runtime), nm->container_id, k);
	} else {
		FUZZ_CHECK(kube_place(c, n, (size_t)k, nm),
			   "'%s' named kubernetes (qos %s, nested %d) pod '%s' container '%s' up to component %ld, "
			   "not where kubelet puts them", path, cg_qos_text(nm->qos), nm->nested, nm->pod_uid,
			   nm->container_id, k);
	}
	free(c);
}

/* cg_name_text into every size from 0 to TEXT_SIZES: the start of "RUNTIME pod UID, container ID12". */
static void check_text(const struct cg_name *nm)
{
	char want[160] = "";
	size_t want_len;

	if (nm->pod_uid[0] || nm->container_id[0]) {
		strcat(want, cg_runtime_text(nm->runtime));
		if (nm->pod_uid[0])
			strcat(strcat(want, " pod "), nm->pod_uid);
		if (nm->container_id[0])
			strncat(strcat(want, nm->pod_uid[0] ? ", container " : " container "), nm->container_id, 12);
	}
	want_len = strlen(want);
	FUZZ_CHECK(want_len < TEXT_SIZES, "a text of %zu bytes", want_len);
	for (size_t len = 0; len <= TEXT_SIZES; len++) {
		char *b = fuzz_msgbuf(len + !len), *got;   /* for 0 bytes, one that must stay as it is */
		size_t cut = want_len < len ? want_len : len - 1;

		got = (char *)cg_name_text(nm, b, len);
		FUZZ_CHECK(got == b, "cg_name_text returned another buffer");
		if (!len)
			FUZZ_CHECK(b[0] == '#', "cg_name_text wrote into a buffer of 0 bytes");
		else
			FUZZ_CHECK(fuzz_terminated(b, len) && strlen(b) == cut && !memcmp(b, want, cut),
				   "cg_name_text in %zu bytes: '%s', not the start of '%s'", len, b, want);
		free(b);
	}
}

/*
 * cg_unit_find as cgname.h says it: UNIT a whole component with every
 * component above it a slice (the offset of the '/' before it); or, for
 * "MANAGER/NAME", MANAGER so, then NAME below it with slices between (the
 * offset of the '/' before MANAGER).  -1 otherwise.
 */
static long unit_reference(const char *path, const char *unit)
{
	const char *slash = strchr(unit, '/');
	struct comp want = { slash ? slash + 1 : unit, strlen(slash ? slash + 1 : unit) };
	struct comp manager = { unit, slash ? (size_t)(slash - unit) : 0 };
	long manager_at = -1, found = -1;
	struct comp *c;
	size_t n;

	if (path[0] != '/')
		return -1;
	n = split(path, &c);
	for (size_t i = 0; i < n && found < 0; i++) {
		long at = c[i].s - 1 - path;

		if (slash && manager_at < 0 && comp_eq(c[i], manager)) {
			manager_at = at;
			continue;
		}
		if (comp_eq(c[i], want) && (!slash || manager_at >= 0)) {
			found = slash ? manager_at : at;
			break;
		}
		if (!slice(c[i]))
			break;
	}
	free(c);
	return found;
}

static void check_unit(const char *path, const char *unit)
{
	long r = cg_unit_find(path, unit), want = unit_reference(path, unit);

	FUZZ_CHECK(r == -1 || (r >= 0 && (size_t)r < strlen(path) && path[r] == '/'),
		   "cg_unit_find('%s', '%s') = %ld: no '/' of the path", path, unit, r);
	FUZZ_CHECK(r == want, "cg_unit_find('%s', '%s') = %ld, cgname.h's rule %ld", path, unit, r, want);
}

/* A unit made of the path's components (I, or I/J): one that is there, at times. */
static char *unit_of_path(const char *path, unsigned i, unsigned j, bool pair)
{
	struct comp *c;
	size_t n = split(path, &c);
	char *unit;

	if (!n || path[0] != '/') {
		free(c);
		return fuzz_str(NULL, 0);
	}
	i %= n;
	j %= n;
	unit = fuzz_alloc(c[i].len + c[j].len + 2);
	snprintf(unit, c[i].len + c[j].len + 2, pair ? "%.*s/%.*s" : "%.*s", (int)c[i].len, c[i].s,
		 (int)c[j].len, c[j].s);
	free(c);
	return unit;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned options = fuzz_byte(&data, &size), i = fuzz_byte(&data, &size), j = fuzz_byte(&data, &size);
	char *path = fuzz_record(&data, &size, '\0'), *unit = fuzz_record(&data, &size, '\0'), *made;
	struct cg_name nm;
	int r;

	memset(&nm, 0x5a, sizeof nm);
	r = cg_name_parse(path, &nm);
	check_name(path, r, &nm);
	check_text(&nm);
	check_unit(path, unit);
	if (options & 1) {
		made = unit_of_path(path, i, j, options & 2);
		check_unit(path, made);
		free(made);
	}
	free(path);
	free(unit);
	return 0;
}
