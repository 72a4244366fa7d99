/*
 * cgtrust.c - cgroup names believed as far as root made the cgroups: see
 * cgtrust.h.
 *
 * The hierarchy is found in /proc/self/mounts: a cgroup (v1) mount with
 * the memory controller, else the cgroup2 mount, as facts.c and groups.c
 * pick the path of a process (the memory controller's line of
 * /proc/PID/cgroup, else v2's).  Each cgroup is an lstat of its directory:
 * root's, and a directory (a user cannot put a symbolic link or a file in
 * cgroupfs).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cgtrust.h"
#include "common/jsonw.h"

/* Does the comma-separated mount options OPTS name the controller "memory"? */
static bool has_memory(const char *opts)
{
	for (const char *o = opts; *o;) {
		size_t n = strcspn(o, ",");

		if (n == 6 && !strncmp(o, "memory", 6))
			return true;
		o += n + (o[n] == ',');
	}
	return false;
}

const char *cg_hierarchy(void)
{
	static char dir[PATH_MAX];
	static int looked;
	char line[4096], mnt[PATH_MAX], type[32], opts[1024], v2[PATH_MAX] = "";
	FILE *f;

	if (looked)
		return dir[0] ? dir : NULL;
	looked = 1;
	if (!(f = fopen("/proc/self/mounts", "re")))
		return NULL;
	while (!dir[0] && fgets(line, sizeof line, f)) {
		if (sscanf(line, "%*s %4095s %31s %1023s", mnt, type, opts) != 3)
			continue;
		if (!strcmp(type, "cgroup") && has_memory(opts))
			snprintf(dir, sizeof dir, "%s", mnt);
		else if (!strcmp(type, "cgroup2") && !v2[0])
			snprintf(v2, sizeof v2, "%s", mnt);
	}
	fclose(f);
	if (!dir[0])
		snprintf(dir, sizeof dir, "%s", v2);
	return dir[0] ? dir : NULL;
}

static bool root_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0;
}

size_t cg_root_made(const char *path)
{
	const char *top = cg_hierarchy();
	char dir[2 * PATH_MAX];
	size_t base, len = strlen(path), made = 0;

	if (!top || path[0] != '/')
		return 0;
	base = (size_t)snprintf(dir, sizeof dir, "%s", top);
	if (base + len >= sizeof dir || !root_dir(dir))
		return 0;
	/* Each prefix that ends a component: /a, /a/b, ..., as long as root made it. */
	for (size_t i = 1; i <= len; i++)
		if (i == len || path[i] == '/') {
			memcpy(dir + base, path, i);
			dir[base + i] = '\0';
			if (!root_dir(dir))
				break;
			made = i;
		}
	return made;
}

int cg_name_of(const char *path, struct cg_name *n)
{
	if (cg_name_parse(path, n))
		return -1;
	if (n->named_end <= cg_root_made(path))
		return 0;
	memset(n, 0, sizeof *n);
	return -1;
}

const char *cg_name_summary(const char *path, char *buf, size_t len)
{
	struct cg_name n;

	cg_name_of(path, &n);           /* empty when it names nothing */
	return cg_name_text(&n, buf, len);
}

void cg_name_json(struct jsonw *w, const char *path)
{
	struct cg_name n;

	cg_name_of(path, &n);
	cg_name_members(w, &n);
}
