/*
 * hugezero.c - the zero-filled pages of transparent huge pages, for
 * --estimate (hugezero.h).
 *
 * A huge page is one frame to ksmd until it merges part of it: then it is
 * split, and where the kernel maps the zero-filled subpages to the shared
 * zero page at the split (Linux 6.12+), those are freed there and then,
 * without an rmap item, a merge, or a count in pages_sharing or
 * ksm_zero_pages.  Measured on 6.18: 64 MiB of zero-filled huge pages,
 * predicted 16,320 pages_sharing, merged 0.  Which frames belong to a
 * huge page /proc/kpageflags says (KPF_THP, set on every subpage of a
 * large anonymous folio, PMD-mapped or not), and frames only root sees.
 * Without root, PAGEMAP_SCAN (6.7, so on every kernel that remaps) tells
 * which runs a PMD maps whole; parts of a huge page mapped by PTEs are
 * missed there, and counted as before.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/present.h"
#include "common/thpsplit.h"
#include "eval/hugezero.h"

#define KPF_THP 22              /* Documentation/admin-guide/mm/pagemap.rst */

static long long mark_by_frame(struct scan *s, int kpf)
{
	long long marked = 0;
	size_t i;

	for (i = 0; i < s->nrec; i++) {
		uint64_t flags;
		if (s->recs[i].hash != s->zero_hash ||
		    pread(kpf, &flags, 8, (off_t)(s->recs[i].pfn * 8)) != 8 || !(flags >> KPF_THP & 1))
			continue;
		s->huge_zero[i] = 1;
		marked++;
	}
	return marked;
}

/* The zero records of one process (in address order) inside the runs that
 * a PMD maps whole.  Returns how many, or -1 when the kernel did not say. */
static long long mark_by_scan(struct scan *s, const struct est_proc *p)
{
	size_t j = p->first_rec, end = p->first_rec + p->nrec;
	uint64_t runs[64][2], from, to, walk;
	long long marked = 0;
	char path[64];
	int fd, n, k;

	snprintf(path, sizeof path, "/proc/%d/pagemap", (int)p->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	from = s->recs[j].addr;
	to = s->recs[end - 1].addr + s->page;
	while (from < to && j < end) {
		if ((n = present_huge_runs(fd, from, to, runs, 64, &walk)) < 0) {
			marked = -1;
			break;
		}
		for (k = 0; k < n; k++) {
			for (; j < end && s->recs[j].addr < runs[k][0]; j++)
				;
			for (; j < end && s->recs[j].addr < runs[k][1]; j++)
				if (s->recs[j].hash == s->zero_hash) {
					s->huge_zero[j] = 1;
					marked++;
				}
		}
		if (walk <= from)
			break;
		from = walk;
	}
	close(fd);
	return marked;
}

void huge_zero_find(struct scan *s)
{
	struct est_result *r = s->res;
	const char *why;
	size_t i;
	int kpf;

	r->split_frees_zero = thp_split_zero_probe(&why);
	r->split_unknown_why = why;
	r->huge_zero_pages = -1;
	free(s->huge_zero);
	s->huge_zero = NULL;
	if (r->pfn_visible && (kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) >= 0) {
		s->huge_zero = xcalloc(s->nrec + 1, 1);
		r->huge_zero_pages = mark_by_frame(s, kpf);
		close(kpf);
		return;
	}
	if (!s->pagemap_scan)
		return;
	s->huge_zero = xcalloc(s->nrec + 1, 1);
	r->huge_zero_pages = 0;
	for (i = 0; i < r->nprocs && r->huge_zero_pages >= 0; i++) {
		long long marked;
		if (r->procs[i].skipped || !r->procs[i].nrec)
			continue;
		marked = mark_by_scan(s, &r->procs[i]);
		r->huge_zero_pages = marked < 0 ? -1 : r->huge_zero_pages + marked;
	}
	if (r->huge_zero_pages < 0) {
		free(s->huge_zero);
		s->huge_zero = NULL;
	}
}
