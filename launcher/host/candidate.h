/*
 * candidate.h - the memory the tuner tunes for (candidate.c): the present
 * anonymous memory (RssAnon) of the processes KSM may merge.  Cheap enough
 * for every tick: one small /proc file per process.
 */
#ifndef KSMRUN_CANDIDATE_H
#define KSMRUN_CANDIDATE_H

#include <sys/types.h>

/* Of every descendant of the ROOTS (ksm-run instances, subreapers of their commands): pages. */
long long candidate_trees(const pid_t *roots, int n);

/*
 * Host-wide: of every process whose ksm_stat says the process-wide flag or
 * mergeable regions (QEMU's guests advise their RAM themselves): pages,
 * and *NPROCS such processes.
 */
long long candidate_host(int *nprocs);

#endif
