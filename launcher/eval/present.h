/*
 * present.h - where a process's present anonymous pages are, asked of the
 * kernel (the PAGEMAP_SCAN ioctl of /proc/PID/pagemap, Linux 6.7) instead
 * of reading the pagemap entry of every page: a region of terabytes of
 * reserved address space with a few megabytes present (an AddressSanitizer
 * shadow) is answered in one call.
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

/* Returns 0 to go on, nonzero to stop the walk (that value is returned). */
typedef int (*present_fn)(uint64_t start, uint64_t end, void *arg);

/*
 * Calls FN for each run [START, END) of pages of [FROM, TO) (page-aligned)
 * that are present, not file-backed (nor shared anonymous memory) and not
 * the shared zero page: the pages KSM would scan.  In address order.
 * PAGEMAP_FD is the target's /proc/PID/pagemap.  Returns 0, FN's nonzero
 * value, or -1 with errno from the ioctl.
 */
int present_ranges(int pagemap_fd, uint64_t from, uint64_t to, present_fn fn, void *arg);

#endif
