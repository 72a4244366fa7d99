/*
 * present.h - where a process's next present anonymous page is, asked of
 * the kernel (the PAGEMAP_SCAN ioctl of /proc/PID/pagemap, Linux 6.7)
 * instead of reading the pagemap entry of every page of a hole: terabytes
 * of reserved address space with a few megabytes present (an
 * AddressSanitizer shadow) cost a call per stretch of pages.
 */
#ifndef KSMRUN_PRESENT_H
#define KSMRUN_PRESENT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Does this kernel answer PAGEMAP_SCAN?  Asked once, of our own pagemap:
 * older kernels fail with ENOTTY (no ioctl on pagemap) or EINVAL (an
 * argument they do not know).  False also when a policy refuses the call.
 */
bool present_scan_probe(void);

/*
 * The first page at or after FROM, below TO (page-aligned), that is present
 * and not file-backed (nor shared anonymous memory), and with NOT_ZERO not
 * the shared zero page either: the next page KSM could scan, in *AT.
 * PAGEMAP_FD is the target's /proc/PID/pagemap.  Returns 1, 0 when there is
 * none, or -1 with errno from the ioctl.
 */
int present_next(int pagemap_fd, uint64_t from, uint64_t to, bool not_zero, uint64_t *at);

/*
 * The runs of pages in [FROM, TO) that a huge page maps whole (PMD-mapped
 * transparent huge pages: PAGE_IS_HUGE), at most N of them into V as
 * [start, end) pairs, and in *WALK_END where the kernel stopped: call
 * again from there while it is below TO.  Returns how many, or -1 with
 * errno from the ioctl.
 */
int present_huge_runs(int pagemap_fd, uint64_t from, uint64_t to, uint64_t (*v)[2], int n, uint64_t *walk_end);

/*
 * Without PAGEMAP_SCAN (before 6.7), the largest region whose pagemap is
 * read entry by entry: 64 GiB is 16 million entries, a second or two.  A
 * larger one (a reservation of terabytes) would take minutes or hours; it
 * is left out, and said to be.
 */
#define WALK_WITHOUT_SCAN_MAX (64ULL << 30)

#endif
