/* targets.h - which processes --estimate reads: PIDs, all, cgroup:PATH. */
#ifndef KSMRUN_TARGETS_H
#define KSMRUN_TARGETS_H

#include <stddef.h>
#include <sys/types.h>

struct pid_list {
	pid_t *pids;
	size_t n, cap;
};

/*
 * Resolve TEXT, a comma-separated list of items: a PID, "all" (every
 * process but this one), or "cgroup:PATH" (the processes of a cgroup, v1 or
 * v2; PATH a cgroup directory, relative to a hierarchy with or without a
 * leading '/', CONTROLLER/PATH, or a line of /proc/PID/cgroup: targets.c).  The
 * PIDs come out sorted, without repeats.  On error returns -1 with a
 * message in WHY: a malformed item, a cgroup that does not exist, or a
 * TARGET that matches no process.
 */
int targets_resolve(const char *text, struct pid_list *out, char *why, size_t whylen);
void pid_list_free(struct pid_list *l);

#endif
