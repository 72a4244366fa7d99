/*
 * frames.h - what a process tree saves through KSM, by page frame
 * (frames.c): the honest count behind the report's "saved" line.
 */
#ifndef KSMRUN_FRAMES_H
#define KSMRUN_FRAMES_H

#include <sys/types.h>

struct frame_count {
	long long mapped;       /* pages the processes map from KSM pages */
	long long distinct;     /* distinct KSM pages among them */
	int processes;          /* processes read */
	int left_out;           /* regions over 64 GiB not walked (no PAGEMAP_SCAN) */
};

/*
 * Counts the KSM pages that the N PIDS map, by frame: the tree saves
 * MAPPED - DISTINCT pages.  0, or -errno (EACCES/EPERM without root, ENOENT
 * on a kernel without /proc/kpageflags, ENOMEM).
 */
int frames_count(const pid_t *pids, int n, struct frame_count *out);

#endif
