/* targets.h - which processes --estimate reads and --attach changes: PIDs, all, cgroup:PATH. */
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
 *
 * With ABSENT not NULL, a PID given as such that no process has at this
 * moment goes to ABSENT (sorted, without repeats) instead of OUT, so that
 * the caller can tell a PID that named nothing from a process that ended
 * after it was found (those found by all or cgroup:PATH were there); a
 * TARGET is then an error only if both lists are empty.  With NULL every
 * PID given is in OUT, whether a process has it or not.
 */
int targets_resolve(const char *text, struct pid_list *out, struct pid_list *absent, char *why, size_t whylen);
void pid_list_free(struct pid_list *l);

#endif
