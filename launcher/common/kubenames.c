/*
 * kubenames.c: a pod's and a container's names from the kubelet's log
 * directories (kubenames.h says which, and why they can be believed).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/kubenames.h"
#include "glob.h"

#define PODS_DIR "/var/log/pods"
#define CONTAINERS_DIR "/var/log/containers"

static int lower_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int kube_name_is_label(const char *s, size_t n)
{
	if (n < 1 || n > 63 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!lower_alnum(s[i]) && s[i] != '-')
			return 0;
	return 1;
}

int kube_name_is_subdomain(const char *s, size_t n)
{
	size_t start = 0;

	if (n < 1 || n > 253)
		return 0;
	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == '.') {
			if (!kube_name_is_label(s + start, i - start))
				return 0;
			start = i + 1;
		}
	return 1;
}

/* The alphabet of the names Kubernetes generates (apimachinery's SafeEncodeString). */
static int generated(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !strchr("bcdfghjklmnpqrstvwxz2456789", s[i]))
			return 0;
	return n > 0;
}

static int digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0 && n <= 10;
}

/* Does GLOB match the first N characters of POD, a controller's name? */
static int owner_is(const char *pod, size_t n, const char *glob)
{
	char name[254];

	if (n < 1 || n >= sizeof name)
		return 0;
	memcpy(name, pod, n);
	name[n] = '\0';
	return glob_match(glob, name, n);
}

int kube_pod_has_owner(const char *pod, const char *glob)
{
	const char *last = strrchr(pod, '-'), *before;
	size_t n = strlen(pod), tail;

	if (!last || last == pod)
		return 0;
	tail = n - (size_t)(last - pod) - 1;
	/* A StatefulSet's NAME-ORDINAL; a ReplicaSet's, DaemonSet's or Job's NAME-XXXXX. */
	if ((digits(last + 1, tail) || (tail == 5 && generated(last + 1, 5))) &&
	    owner_is(pod, (size_t)(last - pod), glob))
		return 1;
	/* A Deployment's NAME-HASH-XXXXX. */
	if (tail != 5 || !generated(last + 1, 5))
		return 0;
	for (before = last - 1; before > pod && *before != '-'; before--)
		;
	return before > pod && (size_t)(last - before - 1) <= 10 && generated(before + 1, (size_t)(last - before - 1)) &&
	       owner_is(pod, (size_t)(before - pod), glob);
}

/* Made by root (or, for a recorded layout, by whoever reads it), and no one else may write in it. */
static bool owned_right(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static bool trusted_dir(const char *path, char *why, size_t len)
{
	struct stat st;

	if (lstat(path, &st)) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode) || !owned_right(&st)) {
		snprintf(why, len, "%s is not a directory of root's that only root can write", path);
		return false;
	}
	return true;
}

/* NAME ends with SUFFIX: the length before it, or -1. */
static long before_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), sn = strlen(suffix);

	return n > sn && !strcmp(name + n - sn, suffix) ? (long)(n - sn) : -1;
}

/*
 * The entry of DIR whose name ends with SUFFIX into FOUND: 0, or -1 with
 * WHY (none, or more than one: the names would be in doubt).
 */
static int find_entry(const char *dir, const char *suffix, char *found, size_t size, char *why, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d) {
		snprintf(why, len, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)))
		if (before_suffix(e->d_name, suffix) > 0 && n++ == 0)
			snprintf(found, size, "%s", e->d_name);
	closedir(d);
	if (n != 1) {
		if (n)
			snprintf(why, len, "%d entries of %s end with %s", n, dir, suffix);
		else
			snprintf(why, len, "no entry of %s ends with %s", dir, suffix);
		return -1;
	}
	return 0;
}

/*
 * The one entry of ROOT's directory SUB (root's, written by root alone)
 * whose name ends with SUFFIX: its name into ENTRY, its path into PATH.
 * 0, or -1 with WHY.
 */
static int trusted_entry(const char *root, const char *sub, const char *suffix, char entry[512],
			 char path[4608], char *why, size_t len)
{
	char dir[4096];

	snprintf(dir, sizeof dir, "%s%s", root, sub);
	if (!trusted_dir(dir, why, len) || find_entry(dir, suffix, entry, 512, why, len))
		return -1;
	snprintf(path, 4608, "%s/%s", dir, entry);
	return 0;
}

/* "NAMESPACE_POD_UID": the first two into OUT, when they are Kubernetes's names. */
static int split_pod_dir(const char *name, size_t before_uid, struct kube_names *out)
{
	const char *sep = memchr(name, '_', before_uid);
	size_t ns, pod;

	if (!sep)
		return -1;
	ns = (size_t)(sep - name);
	pod = before_uid - ns - 1;
	if (!kube_name_is_label(name, ns) || !kube_name_is_subdomain(sep + 1, pod))
		return -1;
	memcpy(out->namespace_, name, ns);
	out->namespace_[ns] = '\0';
	memcpy(out->pod, sep + 1, pod);
	out->pod[pod] = '\0';
	return 0;
}

/*
 * The container's name from the link /var/log/containers/..-ID.log, which
 * points into the pod's directory POD_DIR: /var/log/pods/POD_DIR/NAME/N.log.
 */
static int container_name(const char *root, const char *pod_dir, const char *id, struct kube_names *out,
			  char *why, size_t len)
{
	char suffix[96], link[512], path[4608], target[4096], prefix[4608];
	struct stat st;
	const char *name, *slash;
	ssize_t n;

	snprintf(suffix, sizeof suffix, "-%s.log", id);
	if (trusted_entry(root, CONTAINERS_DIR, suffix, link, path, why, len))
		return -1;
	if (lstat(path, &st) || !S_ISLNK(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (n = readlink(path, target, sizeof target - 1)) < 0) {
		snprintf(why, len, "%s is not a link of root's", path);
		return -1;
	}
	target[n] = '\0';
	/* The link is read, never followed: its text must name this pod's directory. */
	snprintf(prefix, sizeof prefix, "%s/%s/", PODS_DIR, pod_dir);
	if (strncmp(target, prefix, strlen(prefix))) {
		snprintf(why, len, "%s points to %s, not into %s", path, target, prefix);
		return -1;
	}
	name = target + strlen(prefix);
	if (!(slash = strchr(name, '/')) || !kube_name_is_label(name, (size_t)(slash - name))) {
		snprintf(why, len, "%s points to %s: no container's name there", path, target);
		return -1;
	}
	memcpy(out->container, name, (size_t)(slash - name));
	out->container[slash - name] = '\0';
	return 0;
}

int kube_names_read(const char *root, const char *pod_uid, const char *container_id, struct kube_names *out,
		    char *why, size_t len)
{
	char suffix[48], pod_dir[512], path[4608];
	long before;

	memset(out, 0, sizeof *out);
	if (!strcmp(root, "/"))
		root = "";
	snprintf(suffix, sizeof suffix, "_%s", pod_uid);
	if (trusted_entry(root, PODS_DIR, suffix, pod_dir, path, why, len) || !trusted_dir(path, why, len))
		return -1;
	before = before_suffix(pod_dir, suffix);
	if (split_pod_dir(pod_dir, (size_t)before, out)) {
		snprintf(why, len, "%s: not NAMESPACE_POD_UID of Kubernetes's names", path);
		return -1;
	}
	if (container_id && *container_id && container_name(root, pod_dir, container_id, out, why, len))
		return -1;
	return 0;
}
