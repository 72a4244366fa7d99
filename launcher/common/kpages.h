/*
 * kpages.h - the KSM pages a process maps, by page frame: its pagemap for
 * the frames, /proc/kpageflags for their KSM flag.  Both need root (the
 * frame numbers are shown only to CAP_SYS_ADMIN).  The saved figure of a
 * command's tree counts with it (follow/frames.h), and so does a process's
 * merged pages on a kernel without ksm_stat or ksm_merging_pages (before
 * 5.19, common/ksmproc.h).
 */
#ifndef KSMRUN_KPAGES_H
#define KSMRUN_KPAGES_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct kpages {
	int kpageflags;         /* /proc/kpageflags */
	bool scan;              /* PAGEMAP_SCAN answers (common/present.h) */
	int left_out;           /* regions too large to walk without it */
};

/*
 * Open /proc/kpageflags: 0, or -errno (EACCES/EPERM without root, ENOENT;
 * KPAGES_UNSOUND where the kernel flags every anonymous page KSM).
 */
#define KPAGES_UNSOUND (-ENOTSUP)
int kpages_open(struct kpages *k);
void kpages_close(struct kpages *k);

/* Why kpages_open failed, for a person: ERR is its -errno. */
const char *kpages_error_text(int err);

/* Called for each KSM frame a process maps; nonzero stops the walk. */
typedef int (*kpage_fn)(uint64_t pfn, void *arg);

struct kpages_process {
	long long ksm_pages;    /* pages it maps from KSM frames (one per mapping) */
	bool mergeable;         /* a region of it is mergeable (VmFlags mg) */
};

/*
 * Walk the regions of PID that can hold KSM pages: those whose smaps line
 * "KSM:" is not zero or, on kernels without it (before 6.6), the mergeable
 * ones.  Only present pages are read where PAGEMAP_SCAN answers; without
 * it a region over 64 GiB is left out and counted in K->left_out.  FN may
 * be NULL.  Returns 0, -ESRCH when PID cannot be read (gone, or not ours),
 * or FN's nonzero value.
 */
int kpages_of_process(struct kpages *k, pid_t pid, kpage_fn fn, void *arg, struct kpages_process *out);

/*
 * The KSM pages in [START, END) of the process whose /proc/PID/pagemap is
 * PAGEMAP_FD: what a region's smaps "KSM:" line says (in pages), on
 * kernels without that line (before 6.6).  0 for a region over 64 GiB
 * without PAGEMAP_SCAN, which is counted in K->left_out.
 */
long long kpages_in_range(struct kpages *k, int pagemap_fd, unsigned long start, unsigned long end);

#endif
