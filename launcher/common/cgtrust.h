/*
 * cgtrust.h - what a cgroup path names, believed only as far as root made
 * its cgroups (cgtrust.c).
 *
 * cgname.h reads the names from the text of a path, at the places where
 * runtimes and kubelet put their cgroups.  But a user to whom a cgroup was
 * given (systemd's Delegate=, or a directory chowned by hand) can make any
 * path below it; systemd chowns what it delegates to the user.  So a name
 * counts only when every cgroup from the top of the hierarchy down to the
 * one that named it is root's: a user cannot make a directory that root
 * owns.  Where the hierarchy cannot be found or a cgroup not read, the
 * path names nothing: a plain cgroup, whose process's domain is its user.
 */
#ifndef KSMRUN_CGTRUST_H
#define KSMRUN_CGTRUST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/cgname.h"

/*
 * The mounted hierarchy the paths are of (the memory controller's on
 * cgroup v1, as /proc/PID/cgroup is read, else cgroup v2's), or NULL;
 * looked up once.
 */
const char *cg_hierarchy(void);

/*
 * How far down PATH root made every cgroup: the length of its longest
 * prefix (whole components) whose cgroups, from the top down, are all
 * root's; 0 when the hierarchy cannot be found (only its top then counts).
 */
size_t cg_root_made(const char *path);

/* cg_name_parse(PATH, N), believed only when root made every cgroup it read: else -1, *N empty. */
int cg_name_of(const char *path, struct cg_name *n);

/* What PATH names, believed as cg_name_of believes it, for a reader (cgname.h: cg_name_text). */
const char *cg_name_summary(const char *path, char *buf, size_t len);

/* The same as the members "pod_uid" and "container_id" of the object W writes. */
struct jsonw;
void cg_name_json(struct jsonw *w, const char *path);

#endif
