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

/*
 * The ksm_stat file at PATH (a pinned process's, say) into *ST, with
 * ksm_merge_any and ksm_mergeable -1 where the kernel has no such lines or
 * the suite plays one without them (kfeature.c).  0, or -1 unread.
 */
int ksm_stat_at(const char *path, struct ksmenable_stat *st);

/*
 * PID's process-wide merge flag, told by its regions where ksm_stat has no
 * ksm_merge_any line (before 6.14): the flag makes each private region
 * mergeable (smaps VmFlags "mg"), a file's as well as anonymous memory,
 * the program's own image included after an exec that kept the flag (not
 * the stack that exec made before the image was mapped).  1 when a
 * private region (anonymous, heap or a file's) is mergeable (a program
 * that advised one itself reads the same), 0 when none is, -1 when there
 * is none or smaps cannot be read.
 */
int ksm_proc_merge_any_by_regions(pid_t pid);

/*
 * PID's process-wide flag as well as this kernel tells: ST's ksm_merge_any
 * (ST read by ksm_proc_stat) where ksm_stat has it, else by its regions
 * (above); 0 before 6.4, which has no such flag.  A program that advised
 * a region itself reads as flagged on 6.4 to 6.13: the regions cannot
 * tell the two apart.  1, 0, or -1.
 */
int ksm_proc_merge_any(pid_t pid, const struct ksmenable_stat *st);

/* The same from the smaps file at PATH (a pinned process's, say). */
int ksm_smaps_merge_any(const char *path);

#endif
