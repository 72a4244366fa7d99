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
 * huge page only /proc/kpageflags says (KPF_THP, set on every subpage of
 * a large anonymous folio, PMD-mapped or not), and frames only root sees.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/thpsplit.h"
#include "eval/hugezero.h"

#define KPF_THP 22              /* Documentation/admin-guide/mm/pagemap.rst */

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
	if (!r->pfn_visible || (kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return;
	s->huge_zero = xcalloc(s->nrec + 1, 1);
	r->huge_zero_pages = 0;
	for (i = 0; i < s->nrec; i++) {
		uint64_t flags;
		if (s->recs[i].hash != s->zero_hash ||
		    pread(kpf, &flags, 8, (off_t)(s->recs[i].pfn * 8)) != 8 || !(flags >> KPF_THP & 1))
			continue;
		s->huge_zero[i] = 1;
		r->huge_zero_pages++;
	}
	close(kpf);
}
