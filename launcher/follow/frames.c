/*
 * frames.c - what a process tree saves through KSM, counted by page frame.
 *
 * Each process's ksm_process_profit counts every KSM page it maps, also
 * the one copy the kernel keeps, so the tree's sum overstates what it saved
 * (10 to 23% on pre-fork workloads, measured).  Here the tree's saving is
 * the pages its processes map from KSM pages, less the distinct KSM pages
 * among them: N mappings of one KSM page save N - 1 pages.  A KSM page the
 * tree shares with a process outside it saves nothing for the tree alone.
 *
 * Needs root: pagemap shows frame numbers only to CAP_SYS_ADMIN, and
 * /proc/kpageflags says which frames are KSM pages.  Only regions whose
 * smaps line "KSM:" is not zero (or, on kernels without that line, such
 * as 6.1, the mergeable ones: VmFlags mg) are walked, and within them only where
 * pages are present (PAGEMAP_SCAN, eval/present.h): a sanitizer's 20 TiB
 * shadow has KSM pages too, and a walk of every pagemap entry would take
 * hours.  Without PAGEMAP_SCAN (before 6.7) a region over 64 GiB is left
 * out and counted as such.  The cost is then one pagemap entry and one
 * kpageflags read per present page of those regions.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/procfs.h"
#include "eval/present.h"
#include "kernel_abi.h"
#include "maps.h"
#include "follow/frames.h"

/* The distinct KSM frames seen: open addressing, at most half full. */
struct frame_set {
	uint64_t *slot;                 /* pfn + 1; 0 is empty */
	size_t cap, n;
};

static int set_add(struct frame_set *fs, uint64_t pfn)
{
	size_t i;

	if (2 * (fs->n + 1) > fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 4096;
		uint64_t *slot = calloc(cap, sizeof *slot), *old = fs->slot;

		if (!slot)
			return -1;
		for (size_t k = 0; k < fs->cap; k++) {
			if (!old[k])
				continue;
			for (i = (size_t)(old[k] * 0x9e3779b97f4a7c15ULL) & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
				;
			slot[i] = old[k];
		}
		free(old);
		fs->slot = slot;
		fs->cap = cap;
	}
	for (i = (size_t)((pfn + 1) * 0x9e3779b97f4a7c15ULL) & (fs->cap - 1); fs->slot[i]; i = (i + 1) & (fs->cap - 1))
		if (fs->slot[i] == pfn + 1)
			return 0;
	fs->slot[i] = pfn + 1;
	fs->n++;
	return 0;
}

struct walk {
	int pagemap, kpageflags;
	bool scan;                      /* PAGEMAP_SCAN answers */
	int left_out;                   /* regions too large to walk without it */
	size_t page;
	struct frame_set set;
	long long mapped;
	int err;
};

/* The KSM pages of one region. */
static int walk_region(const struct region *r, void *arg)
{
	struct walk *w = arg;
	uint64_t entries[512];
	unsigned long addr = r->start;

	/* Where smaps has no "KSM:" line (Linux 6.1), every mergeable region is walked. */
	if (r->ksm_kb == 0 || (r->ksm_kb < 0 && r->mergeable != 1))
		return 0;
	if (!w->scan && r->end - r->start > WALK_WITHOUT_SCAN_MAX) {
		w->left_out++;
		return 0;
	}
	while (addr < r->end) {
		size_t want = (r->end - addr) / w->page, got;
		uint64_t at;
		ssize_t n;

		/* Holes are skipped in one call; a refusal falls back to the walk. */
		if (w->scan) {
			int found = present_next(w->pagemap, addr, r->end, true, &at);
			if (found == 0)
				return 0;
			if (found < 0)
				w->scan = false;
			else if (at > addr) {
				addr = (unsigned long)at;
				want = (r->end - addr) / w->page;
			}
		}
		if (want > sizeof entries / sizeof entries[0])
			want = sizeof entries / sizeof entries[0];
		n = pread(w->pagemap, entries, want * 8, (off_t)(addr / w->page * 8));
		if (n <= 0)
			return 0;       /* unmapped since smaps was read */
		got = (size_t)n / 8;
		for (size_t i = 0; i < got; i++) {
			uint64_t pfn = entries[i] & PM_PFN_MASK;

			if (!(entries[i] & PM_PRESENT) || !pfn)
				continue;
			if (!kpage_is_ksm(w->kpageflags, pfn))
				continue;
			w->mapped++;
			if (set_add(&w->set, pfn)) {
				w->err = -ENOMEM;
				return 1;
			}
		}
		addr += got * w->page;
	}
	return 0;
}

int frames_count(const pid_t *pids, int n, struct frame_count *out)
{
	static char buf[16384];
	struct walk w = { .page = (size_t)sysconf(_SC_PAGESIZE), .scan = present_scan_probe() };
	char path[64];

	memset(out, 0, sizeof *out);
	if ((w.kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	for (int i = 0; i < n && !w.err; i++) {
		snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pids[i]);
		if ((w.pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;       /* gone, or not ours to read */
		snprintf(path, sizeof path, "/proc/%d/smaps", (int)pids[i]);
		maps_for_each(path, buf, sizeof buf, walk_region, &w);
		close(w.pagemap);
		out->processes++;
	}
	close(w.kpageflags);
	free(w.set.slot);
	if (w.err)
		return w.err;
	out->mapped = w.mapped;
	out->distinct = (long long)w.set.n;
	out->left_out = w.left_out;
	return 0;
}
