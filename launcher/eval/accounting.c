/*
 * accounting.c - the kernel's accounting of merged pages (mm/ksm.c):
 * a content held by N pages is merged into one stable page per
 * max_page_sharing mappings; N - stable pages are sharing; a content held
 * once stays unshared; with use_zero_pages=1 zero pages map the zero page
 * and count in ksm_zero_pages, not in pages_sharing.
 */
#include "eval/accounting.h"
#include "kernel_abi.h"

void ksm_tally_content(const struct ksm_rule *r, struct ksm_tally *t, uint64_t n, bool one_frame)
{
	uint64_t sharing = ksm_sharing(r, n, one_frame);

	if (!n)
		return;
	if (!sharing) {
		t->pages_unshared++;
		return;
	}
	t->pages_shared += n - sharing;
	t->pages_sharing += sharing;
}

void ksm_tally_zero(const struct ksm_rule *r, struct ksm_tally *t, uint64_t n)
{
	if (r->use_zero_pages)
		t->zero_pages += n;
	else
		ksm_tally_content(r, t, n, false);
}

long long ksm_profit_bytes(const struct ksm_rule *r, const struct ksm_tally *t, uint64_t rmap_items)
{
	return (long long)(t->pages_sharing + t->zero_pages) * (long long)r->page_size -
	       (long long)rmap_items * KSM_RMAP_ITEM_BYTES;
}
