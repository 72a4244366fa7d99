/*
 * present.c - the present anonymous ranges of a process, from the kernel's
 * PAGEMAP_SCAN ioctl (see present.h).
 *
 * The kernel walks the page tables itself and skips whatever has none, so
 * the cost follows what is present, not the size of the address space.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "eval/present.h"

/* Headers from after Linux 6.7 have the ABI; the C library's may not. */
#if defined __has_include
#if __has_include(<linux/fs.h>)
#include <linux/fs.h>
#endif
#endif

#ifndef PAGEMAP_SCAN
/*
 * The PAGEMAP_SCAN ABI as Documentation/admin-guide/mm/pagemap.rst ("Pagemap
 * Scan IOCTL") and include/uapi/linux/fs.h of Linux 6.7 define it, for C
 * libraries whose kernel headers are older (Debian 12's are 6.1; musl's
 * wrapper has none).
 */
#define PAGE_IS_FILE (1 << 2)           /* file-backed, or shared anonymous */
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)        /* maps the shared zero page */

struct page_region {
	uint64_t start, end;            /* [start, end): a run of like pages */
	uint64_t categories;            /* PAGE_IS_*, of the return mask */
};

struct pm_scan_arg {
	uint64_t size;                  /* sizeof(struct pm_scan_arg) */
	uint64_t flags;                 /* 0: report only, write-protect nothing */
	uint64_t start, end;            /* the range to walk */
	uint64_t walk_end;              /* set by the kernel: where it stopped */
	uint64_t vec, vec_len;          /* the struct page_region array */
	uint64_t max_pages;             /* 0: no limit */
	uint64_t category_inverted;     /* categories that must be 0 to match */
	uint64_t category_mask;         /* categories that must all match */
	uint64_t category_anyof_mask;   /* of which at least one must match */
	uint64_t return_mask;           /* categories reported in page_region */
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

/* Runs per call: a full array just means one more call. */
#define RUNS 256

/* What KSM scans: present, anonymous (not PAGE_IS_FILE), not the zero page. */
static void ask(struct pm_scan_arg *a, struct page_region *v, uint64_t from, uint64_t to)
{
	*a = (struct pm_scan_arg){
		.size = sizeof *a,
		.start = from,
		.end = to,
		.vec = (uintptr_t)v,
		.vec_len = RUNS,
		.category_mask = PAGE_IS_PRESENT | PAGE_IS_FILE | PAGE_IS_PFNZERO,
		.category_inverted = PAGE_IS_FILE | PAGE_IS_PFNZERO,
		/* Runs are cut where a returned category changes: only presence,
		 * so that each run is as long as the pages that match. */
		.return_mask = PAGE_IS_PRESENT,
	};
}

bool present_scan_probe(void)
{
	struct page_region v[RUNS];
	struct pm_scan_arg a;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t here = (uintptr_t)&a / (uint64_t)page * (uint64_t)page;
	int fd, ret;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ask(&a, v, here, here + (uint64_t)page);
	ret = ioctl(fd, PAGEMAP_SCAN, &a);
	close(fd);
	return ret >= 0;
}

int present_ranges(int pagemap_fd, uint64_t from, uint64_t to, present_fn fn, void *arg)
{
	struct page_region v[RUNS];
	struct pm_scan_arg a;

	while (from < to) {
		int n, i, stop;

		ask(&a, v, from, to);
		do
			n = ioctl(pagemap_fd, PAGEMAP_SCAN, &a);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++)
			if ((stop = fn(v[i].start, v[i].end, arg)))
				return stop;
		/* The kernel stops early when the array is full, and says where. */
		if (a.walk_end <= from) {
			errno = EIO;            /* no progress: never loop forever */
			return -1;
		}
		from = a.walk_end;
	}
	return 0;
}
