/* targets.c - resolving --estimate=TARGET and --attach=TARGET to a list of processes. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/targets.h"

static int pid_list_add(struct pid_list *l, pid_t pid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		pid_t *p = realloc(l->pids, cap * sizeof *p);
		if (!p)
			return -1;
		l->pids = p;
		l->cap = cap;
	}
	l->pids[l->n++] = pid;
	return 0;
}

void pid_list_free(struct pid_list *l)
{
	free(l->pids);
	memset(l, 0, sizeof *l);
}

/* A PID: decimal digits only, 1 to the kernel's maximum. */
/* The kernel's PID_MAX_LIMIT on 64-bit: no pid_max can be higher. */
#define PID_LIMIT 4194304

static int parse_pid(const char *s, pid_t *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > PID_LIMIT)
		return -1;
	*out = (pid_t)v;
	return 0;
}

static int add_all(struct pid_list *l)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pid, self = getpid();

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (parse_pid(e->d_name, &pid) == 0 && pid != self && pid_list_add(l, pid) < 0) {
			closedir(d);
			return -1;
		}
	closedir(d);
	return 0;
}

static int add_procs_file(struct pid_list *l, const char *dir)
{
	char path[PATH_MAX + 32], line[32];
	FILE *f;
	pid_t pid;

	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (parse_pid(line, &pid) == 0 && pid != getpid())
			pid_list_add(l, pid);
	}
	fclose(f);
	return 0;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Does the hierarchy mounted with type TYPE and options OPTS hold
 * CONTROLLER?  NULL: any hierarchy.  "": cgroup v2 (as /proc/PID/cgroup
 * writes it, "0::/PATH").  Else a v1 controller or name=NAME, one of the
 * mount's comma-separated options.
 */
static int hierarchy_has(const char *type, const char *opts, const char *controller)
{
	size_t n;
	const char *o;

	if (!controller)
		return 1;
	if (!*controller)
		return !strcmp(type, "cgroup2");
	if (strcmp(type, "cgroup"))
		return 0;
	n = strlen(controller);
	for (o = opts; o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL)
		if (!strncmp(o, controller, n) && (o[n] == ',' || o[n] == '\0'))
			return 1;
	return 0;
}

/* Finds REL (no leading '/') in the hierarchies that hold CONTROLLER. */
static int add_in_hierarchies(struct pid_list *l, const char *rel, const char *controller, char *why,
			      size_t whylen, int *found)
{
	char dir[2 * PATH_MAX], line[4096], mnt[PATH_MAX], type[64], opts[1024];
	FILE *f;

	*found = 0;
	if (!(f = fopen("/proc/self/mounts", "re"))) {
		snprintf(why, whylen, "cannot read /proc/self/mounts: %s", strerror(errno));
		return -1;
	}
	while (!*found && fgets(line, sizeof line, f)) {
		if (sscanf(line, "%*s %4095s %63s %1023s", mnt, type, opts) != 3)
			continue;
		if (strcmp(type, "cgroup") && strcmp(type, "cgroup2"))
			continue;
		if (!hierarchy_has(type, opts, controller))
			continue;
		snprintf(dir, sizeof dir, "%s/%s", mnt, rel);
		*found = is_dir(dir) && add_procs_file(l, dir) == 0;
	}
	fclose(f);
	return 0;
}

/*
 * The forms of cgroup:SPEC, so that what users copy from /proc works:
 *   /sys/fs/cgroup/...      a cgroup directory itself
 *   PATH, /PATH             relative to a hierarchy: found in every mounted one
 *                           (cgroup v1 has one per controller, v2 one in all;
 *                           the processes are the same in each)
 *   CONTROLLER/PATH         in the v1 hierarchy of that controller
 *                           (pids/web, or name=systemd/...) when PATH is not
 *                           found in every hierarchy
 *   N:CONTROLLER:/PATH, CONTROLLER:/PATH, 0::/PATH
 *                           a line of /proc/PID/cgroup, or its end
 * A v1 line naming several controllers (2:cpu,cpuacct:/x) cannot be given,
 * since ',' separates targets: its PATH alone serves.
 */
static int add_cgroup(struct pid_list *l, const char *spec, char *why, size_t whylen)
{
	char controller[256];
	const char *path = spec, *colon = strchr(spec, ':'), *slash;
	const char *want = NULL;
	int found;

	if (colon && (!strchr(spec, '/') || colon < strchr(spec, '/'))) {
		const char *p = spec;

		/* N:CONTROLLER:/PATH: the hierarchy number is not needed. */
		while (isdigit((unsigned char)*p))
			p++;
		if (p > spec && *p == ':')
			spec = p + 1;
		colon = strchr(spec, ':');
		if (!colon || colon[1] != '/' || (size_t)(colon - spec) >= sizeof controller) {
			snprintf(why, whylen, "cgroup '%s': not a cgroup path (accepted: PATH, /PATH, "
				 "CONTROLLER/PATH, a line of /proc/PID/cgroup)", path);
			return -1;
		}
		memcpy(controller, spec, (size_t)(colon - spec));
		controller[colon - spec] = '\0';
		want = controller;
		spec = colon + 1;
	} else if (spec[0] == '/' && is_dir(spec)) {
		if (add_procs_file(l, spec) < 0) {
			snprintf(why, whylen, "cgroup '%s': cannot read its cgroup.procs: %s", spec,
				 strerror(errno));
			return -1;
		}
		return 0;
	}
	if (strstr(spec, "..")) {
		snprintf(why, whylen, "cgroup '%s': '..' is not accepted", path);
		return -1;
	}
	while (*spec == '/')
		spec++;
	if (add_in_hierarchies(l, spec, want, why, whylen, &found) < 0)
		return -1;
	/* pids/web: the first component may name the hierarchy. */
	if (!found && !want && (slash = strchr(spec, '/')) && (size_t)(slash - spec) < sizeof controller) {
		memcpy(controller, spec, (size_t)(slash - spec));
		controller[slash - spec] = '\0';
		if (add_in_hierarchies(l, slash + 1, controller, why, whylen, &found) < 0)
			return -1;
	}
	if (!found) {
		if (path[0] == '/' && !want)
			snprintf(why, whylen, "cgroup '%s': no such cgroup directory, and not found in any "
				 "mounted cgroup hierarchy", path);
		else
			snprintf(why, whylen, "cgroup '%s': not found in any mounted cgroup hierarchy%s%s", path,
				 want ? " holding " : "", want ? (*want ? want : "(cgroup v2)") : "");
		return -1;
	}
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Sorted, each PID once. */
static void sort_unique(struct pid_list *l)
{
	size_t i, kept = 0;

	if (l->n > 1)
		qsort(l->pids, l->n, sizeof *l->pids, cmp_pid);
	for (i = 0; i < l->n; i++)
		if (!kept || l->pids[kept - 1] != l->pids[i])
			l->pids[kept++] = l->pids[i];
	l->n = kept;
}

/*
 * A PID given as such: into ABSENT when no process has it now.  kill's
 * signal 0 checks that alone: ESRCH is "none", EPERM (another user's) is
 * one, and a zombie or a thread's ID is one too (the attach says what
 * they are).
 */
static void add_given_pid(struct pid_list *out, struct pid_list *absent, pid_t pid)
{
	if (absent && kill(pid, 0) < 0 && errno == ESRCH)
		pid_list_add(absent, pid);
	else
		pid_list_add(out, pid);
}

int targets_resolve(const char *text, struct pid_list *out, struct pid_list *absent, char *why, size_t whylen)
{
	char *copy = strdup(text), *item, *next;
	pid_t pid;
	int ret = -1;

	memset(out, 0, sizeof *out);
	if (absent)
		memset(absent, 0, sizeof *absent);
	if (!copy) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (item = copy; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (!*item) {
			snprintf(why, whylen, "'%s': empty item (accepted: PID[,PID]..., all, cgroup:PATH)", text);
			goto out;
		}
		if (!strcmp(item, "all")) {
			if (add_all(out) < 0) {
				snprintf(why, whylen, "cannot list /proc: %s", strerror(errno));
				goto out;
			}
		} else if (!strncmp(item, "cgroup:", 7)) {
			if (!item[7]) {
				snprintf(why, whylen, "'%s': cgroup: needs a PATH", item);
				goto out;
			}
			if (add_cgroup(out, item + 7, why, whylen) < 0)
				goto out;
		} else if (parse_pid(item, &pid) == 0) {
			add_given_pid(out, absent, pid);
		} else if (item[strspn(item, "0123456789")] == '\0' && strspn(item, "0") < strlen(item)) {
			/* A number, only too large to be anybody's PID. */
			snprintf(why, whylen, "'%s': no such process (PIDs go up to %d at most)", item, PID_LIMIT);
			goto out;
		} else {
			snprintf(why, whylen, "'%s': not a PID (accepted: PID[,PID]..., all, cgroup:PATH)", item);
			goto out;
		}
	}
	sort_unique(out);
	if (absent)
		sort_unique(absent);
	/* PIDs that no process has are the caller's to report: only a TARGET of nothing at all fails here. */
	if (!out->n && !(absent && absent->n)) {
		snprintf(why, whylen, "'%s' matches no process", text);
		goto out;
	}
	ret = 0;
out:
	free(copy);
	if (ret) {
		pid_list_free(out);
		if (absent)
			pid_list_free(absent);
	}
	return ret;
}
