/*
 * accounting.h - the kernel's accounting of merged pages (accounting.c):
 * what KSM reaches for a content held by N pages, under max_page_sharing
 * and use_zero_pages, and general_profit.  The one rule that --estimate
 * (estimate_predict.c) and --combine (combine.c) both apply, so that a
 * union of fingerprints is counted exactly as an estimate of the union.
 */
#ifndef KSMRUN_ACCOUNTING_H
#define KSMRUN_ACCOUNTING_H

#include <stdbool.h>
#include <stdint.h>

struct ksm_rule {
	uint64_t max_page_sharing;      /* >= 2 */
	bool use_zero_pages;
	uint64_t page_size;             /* bytes */
};

/* The kernel's counters for a set of contents. */
struct ksm_tally {
	uint64_t pages_sharing, pages_shared, pages_unshared;
	uint64_t zero_pages;            /* merged with the zero page (use_zero_pages=1) */
};

/* Stable pages KSM keeps for a content held by N >= 1 pages: one per
 * max_page_sharing mappings (the chains of stable_node_dups).  Inline:
 * --matrix asks it for every pair of every shared content. */
static inline uint64_t ksm_stable_pages(const struct ksm_rule *r, uint64_t n)
{
	return n <= r->max_page_sharing ? 1 : (n + r->max_page_sharing - 1) / r->max_page_sharing;
}

/* Pages sharing for a content held by N pages (see ksm_tally_content). */
static inline uint64_t ksm_sharing(const struct ksm_rule *r, uint64_t n, bool one_frame)
{
	return n < 2 || one_frame ? 0 : n - ksm_stable_pages(r, n);
}

/*
 * Adds a content held by N pages.  ONE_FRAME: all N map one page frame
 * that is not a KSM page (not yet copied since a fork), which KSM never
 * merges with itself: one unshared page, nothing saved.
 */
void ksm_tally_content(const struct ksm_rule *r, struct ksm_tally *t, uint64_t n, bool one_frame);

/* Adds N all-zero pages: merged with the kernel's zero page under
 * use_zero_pages=1, else one content like any other. */
void ksm_tally_zero(const struct ksm_rule *r, struct ksm_tally *t, uint64_t n);

/*
 * general_profit in bytes: (pages_sharing + ksm_zero_pages) * page size
 * less one ksm_rmap_item for each of RMAP_ITEMS pages ksmd tracks.
 */
long long ksm_profit_bytes(const struct ksm_rule *r, const struct ksm_tally *t, uint64_t rmap_items);

#endif
