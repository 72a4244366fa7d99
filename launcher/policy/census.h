/*
 * census.h - every process of the machine whose memory KSM may merge, by
 * its security domain (census.c).
 *
 * The agent's refusals, --status and the metrics once counted only what
 * the agent enabled; but the kernel merges whatever is mergeable: a
 * process that enabled KSM itself (prctl, systemd's MemoryKSM=, a command
 * under ksm-run, QEMU's madvise of its guests' memory), and one the agent
 * enabled that then exec'd a program no rule names (the kernel keeps the
 * process-wide flag across exec since 6.7).  The census reads the kernel:
 * ksm_stat's ksm_merge_any or ksm_mergeable where it has them (6.14+),
 * else a process that ksmd scanned (rmap items or merged pages: a
 * mergeable process that ksmd has not reached yet is not seen until it
 * does; before 5.19 smaps' VmFlags, through ksmproc.h).
 */
#ifndef KSMRUN_POLICY_CENSUS_H
#define KSMRUN_POLICY_CENSUS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/domain.h"

#define CENSUS_DOMAINS 64

struct census_domain {
	char name[DOMAIN_TEXT_MAX];     /* domain.h's text: "user www-data", "pod UID", ... */
	int procs;                      /* its mergeable processes */
	pid_t example;                  /* one of them */
};

struct census {
	struct census_domain d[CENSUS_DOMAINS];
	int n;                          /* domains in D */
	int more;                       /* mergeable processes of domains beyond D's room */
	int procs;                      /* mergeable processes in all */
	int unknown;                    /* mergeable processes whose domain could not be told (ended?) */
	double when;                    /* now_s() of the census; 0 never taken */
};

/*
 * The processes known mergeable beside what the kernel shows: those the
 * agent enabled, which before 6.14 the kernel shows only once ksmd has
 * scanned them (a census that left them out took a domain away again).
 * Sorted by PID.
 */
struct census_proc {
	pid_t pid;
	unsigned long long start;       /* proc_stat's starttime: a PID reused is another */
};

struct census_known {
	const struct census_proc *p;
	size_t n;
};

/*
 * Every process of /proc but SKIP (the agent itself) and kernel threads,
 * counted where the kernel or KNOWN (NULL: none) says it is mergeable, in
 * the domains of policy P (domain.h; NULL: the defaults); 0, or -1 when
 * /proc cannot be listed (*C then says nothing).
 */
int census_take(struct census *c, pid_t skip, const struct census_known *known, const struct policy *p);

/*
 * The agent just made PID of DOMAIN mergeable: the domain is in the census
 * from now on (with the one process when new; the next census counts them).
 */
void census_note(struct census *c, const char *domain, pid_t pid);

/* A domain other than DOMAIN with a mergeable process, or NULL. */
const struct census_domain *census_other(const struct census *c, const char *domain);

/* How many domains, counting those beyond the room (at least one more then). */
int census_domains(const struct census *c);

#endif
