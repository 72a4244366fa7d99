/*
 * present.c - the next present anonymous page of a process, from the
 * kernel's PAGEMAP_SCAN ioctl (see present.h).
 *
 * The kernel walks the page tables itself and skips the empty ones whole,
 * so a hole costs one call, and little time, whatever its size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/present.h"

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
#ifndef PAGE_IS_HUGE
#define PAGE_IS_HUGE (1 << 6)           /* mapped by a PMD: a whole huge page */
#endif

/* Pages KSM could scan: present, anonymous (not PAGE_IS_FILE), and with
 * NOT_ZERO not the zero page.  One page is enough: the caller reads pagemap
 * from there, and the kernel stops its walk at the next match. */
static void ask(struct pm_scan_arg *a, struct page_region *v, uint64_t from, uint64_t to, bool not_zero)
{
	uint64_t excluded = PAGE_IS_FILE | (not_zero ? PAGE_IS_PFNZERO : 0);

	*a = (struct pm_scan_arg){
		.size = sizeof *a,
		.start = from,
		.end = to,
		.vec = (uintptr_t)v,
		.vec_len = 1,
		.max_pages = 1,
		.category_mask = PAGE_IS_PRESENT | excluded,
		.category_inverted = excluded,
		.return_mask = PAGE_IS_PRESENT,
	};
}

bool present_scan_probe(void)
{
	struct page_region v;
	struct pm_scan_arg a;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t here = (uintptr_t)&a / (uint64_t)page * (uint64_t)page;
	int fd, ret;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ask(&a, &v, here, here + (uint64_t)page, true);
	ret = ioctl(fd, PAGEMAP_SCAN, &a);
	close(fd);
	return ret >= 0;
}

int present_next(int pagemap_fd, uint64_t from, uint64_t to, bool not_zero, uint64_t *at)
{
	struct page_region v;
	struct pm_scan_arg a;
	int n;

	ask(&a, &v, from, to, not_zero);
	do
		n = ioctl(pagemap_fd, PAGEMAP_SCAN, &a);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	*at = v.start;
	return 1;
}

int present_huge_runs(int pagemap_fd, uint64_t from, uint64_t to, uint64_t (*v)[2], int n, uint64_t *walk_end)
{
	struct page_region regions[64];
	struct pm_scan_arg a = {
		.size = sizeof a,
		.start = from,
		.end = to,
		.vec = (uintptr_t)regions,
		.vec_len = (uint64_t)(n < 64 ? n : 64),
		.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_HUGE,
	};
	int got, i;

	do
		got = ioctl(pagemap_fd, PAGEMAP_SCAN, &a);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -1;
	for (i = 0; i < got; i++) {
		v[i][0] = regions[i].start;
		v[i][1] = regions[i].end;
	}
	*walk_end = a.walk_end;
	return got;
}
