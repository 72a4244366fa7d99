/*
 * kpages.c - the KSM pages a process maps, counted by page frame.
 *
 * A sanitizer's 20 TiB shadow has KSM pages too, and a walk of every
 * pagemap entry of it would take hours: only the regions that can hold KSM
 * pages are walked, and within them only where pages are present
 * (PAGEMAP_SCAN).  The cost is one pagemap entry and one kpageflags read per
 * present page of those regions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/kpages.h"
#include "common/present.h"
#include "common/procfs.h"
#include "kernel_abi.h"
#include "maps.h"

struct walk {
	struct kpages *k;
	int pagemap;
	size_t page;
	kpage_fn fn;
	void *arg;
	struct kpages_process *out;
	int stop;
};

int kpages_open(struct kpages *k)
{
	memset(k, 0, sizeof *k);
	if ((k->kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	k->scan = present_scan_probe();
	return 0;
}

void kpages_close(struct kpages *k)
{
	if (k->kpageflags >= 0)
		close(k->kpageflags);
	k->kpageflags = -1;
}

/* The entries of [ADDR, ADDR + WANT pages): their KSM frames.  Returns the pages read, 0 at an unmapped stretch. */
static size_t walk_entries(struct walk *w, unsigned long addr, size_t want)
{
	uint64_t entries[512];
	ssize_t n;
	size_t got;

	if (want > sizeof entries / sizeof entries[0])
		want = sizeof entries / sizeof entries[0];
	n = pread(w->pagemap, entries, want * 8, (off_t)(addr / w->page * 8));
	if (n <= 0)
		return 0;       /* unmapped since smaps was read */
	got = (size_t)n / 8;
	for (size_t i = 0; i < got && !w->stop; i++) {
		uint64_t pfn = entries[i] & PM_PFN_MASK;

		if (!(entries[i] & PM_PRESENT) || !pfn || !kpage_is_ksm(w->k->kpageflags, pfn))
			continue;
		w->out->ksm_pages++;
		if (w->fn)
			w->stop = w->fn(pfn, w->arg);
	}
	return got;
}

static int walk_region(const struct region *r, void *arg)
{
	struct walk *w = arg;
	unsigned long addr = r->start;

	if (r->mergeable == 1)
		w->out->mergeable = true;
	/* Where smaps has no "KSM:" line (before 6.6), every mergeable region is walked. */
	if (r->ksm_kb == 0 || (r->ksm_kb < 0 && r->mergeable != 1))
		return 0;
	if (!w->k->scan && r->end - r->start > WALK_WITHOUT_SCAN_MAX) {
		w->k->left_out++;
		return 0;
	}
	while (addr < r->end && !w->stop) {
		size_t got;

		/* Holes are skipped in one call; a refusal falls back to the walk. */
		if (w->k->scan) {
			uint64_t at;
			int found = present_next(w->pagemap, addr, r->end, true, &at);

			if (found == 0)
				return 0;
			if (found < 0)
				w->k->scan = false;
			else if (at > addr)
				addr = (unsigned long)at;
		}
		if (!(got = walk_entries(w, addr, (r->end - addr) / w->page)))
			return 0;
		addr += got * w->page;
	}
	return w->stop;
}

int kpages_of_process(struct kpages *k, pid_t pid, kpage_fn fn, void *arg, struct kpages_process *out)
{
	char path[64], buf[16384];
	struct walk w = { k, -1, (size_t)sysconf(_SC_PAGESIZE), fn, arg, out, 0 };
	int rc;

	memset(out, 0, sizeof *out);
	snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
	if ((w.pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -ESRCH;  /* gone, or not ours to read */
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	rc = maps_for_each(path, buf, sizeof buf, walk_region, &w);
	close(w.pagemap);
	if (w.stop)
		return w.stop;
	return rc < 0 ? -ESRCH : 0;
}
