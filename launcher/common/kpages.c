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

#include "common/kfeature.h"
#include "common/kpages.h"
#include "common/present.h"
#include "common/procfs.h"
#include "kernel_abi.h"
#include "maps.h"

int kpages_open(struct kpages *k)
{
	memset(k, 0, sizeof *k);
	k->kpageflags = -1;
	if (!kfeature_present(KF_KPAGEFLAGS_KSM))
		return KPAGES_UNSOUND;
	if ((k->kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	k->scan = present_scan_probe();
	return 0;
}

const char *kpages_error_text(int err)
{
	return err == KPAGES_UNSOUND ? "this kernel's /proc/kpageflags flags every anonymous page KSM" : strerror(-err);
}

void kpages_close(struct kpages *k)
{
	if (k->kpageflags >= 0)
		close(k->kpageflags);
	k->kpageflags = -1;
}

/* One stretch of a walk: where the entries are read, and what is found. */
struct range {
	struct kpages *k;
	int pagemap;
	kpage_fn fn;
	void *arg;
	long long found;
	int stop;
};

/* The entries of WANT pages from ADDR: their KSM frames.  Returns the pages read, 0 at an unmapped stretch. */
static size_t walk_entries(struct range *w, unsigned long addr, size_t want, size_t page)
{
	uint64_t entries[512];
	ssize_t n;
	size_t got;

	if (want > sizeof entries / sizeof entries[0])
		want = sizeof entries / sizeof entries[0];
	n = pread(w->pagemap, entries, want * 8, (off_t)(addr / page * 8));
	if (n <= 0)
		return 0;       /* unmapped since smaps was read */
	got = (size_t)n / 8;
	for (size_t i = 0; i < got && !w->stop; i++) {
		uint64_t pfn = entries[i] & PM_PFN_MASK;

		if (!(entries[i] & PM_PRESENT) || !pfn || !kpage_is_ksm(w->k->kpageflags, pfn))
			continue;
		w->found++;
		if (w->fn)
			w->stop = w->fn(pfn, w->arg);
	}
	return got;
}

static void walk_range(struct range *w, unsigned long start, unsigned long end)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long addr = start;

	if (!w->k->scan && end - start > WALK_WITHOUT_SCAN_MAX) {
		w->k->left_out++;
		return;
	}
	while (addr < end && !w->stop) {
		size_t got;

		/* Holes are skipped in one call; a refusal falls back to the walk. */
		if (w->k->scan) {
			uint64_t at;
			int found = present_next(w->pagemap, addr, end, true, &at);

			if (found == 0)
				return;
			if (found < 0)
				w->k->scan = false;
			else if (at > addr)
				addr = (unsigned long)at;
		}
		if (!(got = walk_entries(w, addr, (end - addr) / page, page)))
			return;
		addr += got * page;
	}
}

long long kpages_in_range(struct kpages *k, int pagemap_fd, unsigned long start, unsigned long end)
{
	struct range w = { k, pagemap_fd, NULL, NULL, 0, 0 };

	walk_range(&w, start, end);
	return w.found;
}

struct walk {
	struct range range;
	struct kpages_process *out;
};

static int walk_region(const struct region *r, void *arg)
{
	struct walk *w = arg;

	if (r->mergeable == 1)
		w->out->mergeable = true;
	/* Where smaps has no "KSM:" line (before 6.6), every mergeable region is walked. */
	if (r->ksm_kb == 0 || (r->ksm_kb < 0 && r->mergeable != 1))
		return 0;
	walk_range(&w->range, r->start, r->end);
	return w->range.stop;
}

int kpages_of_process(struct kpages *k, pid_t pid, kpage_fn fn, void *arg, struct kpages_process *out)
{
	char path[64], buf[16384];
	struct walk w = { { k, -1, fn, arg, 0, 0 }, out };
	int rc;

	memset(out, 0, sizeof *out);
	snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
	if ((w.range.pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -ESRCH;  /* gone, or not ours to read */
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	rc = maps_for_each(path, buf, sizeof buf, walk_region, &w);
	close(w.range.pagemap);
	out->ksm_pages = w.range.found;
	if (w.range.stop)
		return w.range.stop;
	return rc < 0 ? -ESRCH : 0;
}
