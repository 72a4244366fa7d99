/*
 * accounting.c - the kernel's accounting of merged pages (mm/ksm.c):
 * a content held by N pages is merged into one stable page per
 * max_page_sharing mappings; N - stable pages are sharing; a content held
 * once stays unshared; with use_zero_pages=1 zero pages map the zero page
 * and count in ksm_zero_pages, not in pages_sharing.
 */
#include "eval/accounting.h"
#include "kernel_abi.h"

uint64_t ksm_stable_pages(const struct ksm_rule *r, uint64_t n)
{
	return (n + r->max_page_sharing - 1) / r->max_page_sharing;
}

void ksm_tally_content(const struct ksm_rule *r, struct ksm_tally *t, uint64_t n, bool one_frame)
{
	uint64_t stable;

	if (!n)
		return;
	if (n == 1 || one_frame) {
		t->pages_unshared++;
		return;
	}
	stable = ksm_stable_pages(r, n);
	t->pages_shared += stable;
	t->pages_sharing += n - stable;
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
