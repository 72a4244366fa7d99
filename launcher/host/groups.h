/*
 * groups.h - the machine's KSM figures per cgroup (groups.c): savings are
 * wanted per service, container or VM, and the cgroup is what names them
 * (for systemd, the unit).  A process's group is its cgroup v2 path, or on
 * a v1 or hybrid host the memory controller's path.  Per group: the
 * processes, their merged pages, their ksm_process_profit and their
 * candidate memory (candidate.h's rule).  For --status, --status --watch
 * and the metrics file.
 */
#ifndef KSMRUN_GROUPS_H
#define KSMRUN_GROUPS_H

#include <stddef.h>
#include <stdio.h>

#include "common/cgtrust.h"

/*
 * The most groups written where each would be a series or an object (the
 * metrics file, --status --json, --status --watch --json): the most merged
 * first; the others are counted as left out.  10,000 containers would
 * otherwise make a metrics file of 9 MB at each of the daemon's ticks
 * (tests/bench/README.md, issue 27).
 */
#define GROUPS_LISTED_MAX 500

struct cgroup_group {
	char *path;
	struct cg_name names;           /* the pod and container it names (cgtrust.h), once listed */
	int procs;
	long long merged_pages;         /* sum of ksm_merging_pages */
	long long profit_bytes;         /* sum of ksm_process_profit */
	long long candidate_pages;      /* sum of the candidate memory */
};

struct cgroup_groups {
	struct cgroup_group *g;         /* most merged first, after groups_collect */
	int n, cap;
	long long merged_pages, profit_bytes;  /* the sums over every group */
	int processes;                  /* whose ksm_stat was read */
	int unreadable;                 /* processes whose cgroup or ksm_stat could not be read */
	int dropped;                    /* groups left out for lack of memory */
	int last;                       /* the group found last: processes of a group come in runs */
	int *slot;                      /* groups by path while collecting: open addressing, group + 1 or 0 */
	int nslots;                     /* a power of two, at least twice n; 0 and NULL once collected */
};

/*
 * The group of a process from the text of its /proc/PID/cgroup (changed):
 * the memory controller's line ("4:memory:/PATH") when there is one, else
 * the v2 line ("0::/PATH").  0 with the path in OUT, or -1 when neither is
 * there (or it does not fit).
 */
int cgroup_of_text(char *text, char *out, size_t len);

/*
 * Every readable process of the machine, summed per group; groups with
 * neither merged pages nor candidate memory are left out.  Never dies
 * (the daemon and a command's run call it): out of memory, a group is
 * counted in DROPPED.  0, or -1 when /proc cannot be read.
 */
int groups_collect(struct cgroup_groups *gs);
void groups_free(struct cgroup_groups *gs);

/*
 * groups_collect's steps, for the unit tests: an empty set; one process
 * of group PATH with figures ST and CANDIDATE_PAGES; after the last, the
 * groups with nothing to count left out, the others sorted, and the
 * names checked (cg_name_of) of those listed.
 */
struct ksmenable_stat;
void groups_init(struct cgroup_groups *gs);
void groups_add(struct cgroup_groups *gs, const char *path, const struct ksmenable_stat *st,
		long long candidate_pages);
void groups_end(struct cgroup_groups *gs);

/* How many of GS's groups are written where they are bounded: at most GROUPS_LISTED_MAX. */
int groups_listed(const struct cgroup_groups *gs);

/*
 * The table for people: at most MAX_ROWS groups (at most
 * GROUPS_LISTED_MAX: only theirs are named), the sums, and beside
 * them GENERAL_PROFIT (bytes; LLONG_MIN unknown) with the note that the
 * sum of the profits can exceed it.
 */
void groups_text(FILE *f, const struct cgroup_groups *gs, long long general_profit, int max_rows);
struct jsonw;
/*
 * The members "groups", an array of {cgroup, pod_uid, container_id,
 * processes, merged_bytes, profit_bytes, candidate_bytes} of the listed
 * groups, and "groups_left_out", how many others there are; both null
 * when GS is NULL (not collected).
 */
void groups_json(struct jsonw *w, const struct cgroup_groups *gs);

#endif
