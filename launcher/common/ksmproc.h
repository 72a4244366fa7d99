/*
 * ksmproc.h - a process's KSM figures from what this kernel has: ksm_stat
 * (6.1), the ksm_merging_pages file (5.19), or, on older kernels (5.15,
 * 5.14), its merged pages counted by page frame, as root.  ksm-run's
 * readers of other processes go through here; the library reads its own
 * ksm_stat (preload/core/ksmstat.h), for which it needs no root.
 */
#ifndef KSMRUN_KSMPROC_H
#define KSMRUN_KSMPROC_H

#include <sys/types.h>

#include "ksmenable.h"

/*
 * PID's figures into *ST; those the kernel (or this reader) cannot give are
 * -1.  Before 5.19 the merged pages are the pages it maps from KSM frames
 * (the same count as ksm_merging_pages) and ksm_mergeable is whether a
 * region is mergeable; the rmap items and the profit are unknown.  Returns
 * 0, or -1 when nothing could be read: the process is gone or not ours,
 * or, before 5.19, we are not root.
 */
int ksm_proc_stat(pid_t pid, struct ksmenable_stat *st);

#endif
