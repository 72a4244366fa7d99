/*
 * candidate.h - the memory the tuner tunes for (candidate.c): the present
 * anonymous memory (RssAnon) of the processes KSM may merge.  Cheap enough
 * for every tick: one small /proc file per process.
 */
#ifndef KSMRUN_CANDIDATE_H
#define KSMRUN_CANDIDATE_H

#include <sys/types.h>

#include "ksmstat.h"

/* Of every descendant of the ROOTS (ksm-run instances, subreapers of their commands): pages. */
long long candidate_trees(const pid_t *roots, int n);

/* Of the processes PIDS themselves and their descendants (--attach's targets): pages. */
long long candidate_targets(const pid_t *pids, int n);

/*
 * The one rule of what counts: a process whose ksm_stat ST says the
 * process-wide flag, mergeable regions or pages ksmd tracks; its present
 * anonymous memory in kB (0 when it does not count or is gone).
 */
long long candidate_process_kb(pid_t pid, const struct ksmenable_stat *st);

/*
 * Host-wide: of every process whose ksm_stat says the process-wide flag or
 * mergeable regions (QEMU's guests advise their RAM themselves): pages,
 * and *NPROCS such processes.
 */
long long candidate_host(int *nprocs);

#endif
