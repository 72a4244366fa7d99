/*
 * estimate_predict.c - from the pages read to what KSM would reach.
 *
 * Identical contents are counted in a table (contents.c); the kernel's own
 * accounting turns the counts into pages_shared, pages_sharing and
 * general_profit; as root, page frames tell what is shared already and
 * what KSM would never merge; fair shares spread the savings over the
 * processes and region classes that hold them.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/thpsplit.h"
#include "eval/accounting.h"
#include "eval/contents.h"
#include "eval/estimate_predict.h"
#include "kernel_abi.h"

struct ksm_rule est_rule(const struct est_result *r)
{
	return (struct ksm_rule){ (uint64_t)r->max_page_sharing, r->use_zero_pages != 0,
				  (uint64_t)r->page_size };
}

bool frames_never_merge(int kpf, uint64_t n, uint64_t first_pfn, uint64_t last_pfn)
{
	return n >= 2 && first_pfn == last_pfn && !kpage_is_ksm(kpf, first_pfn);
}

struct frame_rec {
	uint64_t hash, pfn;
	size_t rec;                     /* index into the records */
};

static int by_hash_pfn(const void *a, const void *b)
{
	const struct frame_rec *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->pfn > y->pfn) - (x->pfn < y->pfn);
}

/*
 * Pages are compared by frame where pagemap shows frames (root).  Pages of
 * one content that map the same frame are shared already (merged by KSM,
 * or not yet copied since a fork): that is the profit the targets have now.
 * And a content whose every page maps one frame that is not a KSM page is
 * never merged: KSM does not merge a page with itself, so it must not be
 * promised.  Such records get the NO_MERGE frame, and the prediction drops
 * them.  Sorts a copy of the records by content and frame.
 */
#define NO_MERGE UINT64_MAX

bool freed_by_split(const struct scan *s, size_t rec)
{
	return s->huge_zero && s->huge_zero[rec] && s->res->split_frees_zero == THP_SPLIT_ZERO_FREED;
}

static void compare_frames(struct scan *s, struct est_result *r)
{
	const struct ksm_rule rule = est_rule(r);
	struct frame_rec *v;
	size_t i, j, n = 0;
	long long frames = 0;
	int kpf;

	r->saved_now = -1;
	if (!r->pfn_visible || !(v = malloc((s->nrec + 1) * sizeof *v)))
		return;
	for (i = 0; i < r->nprocs; i++) {
		const struct est_proc *p = &r->procs[i];
		if (p->skipped)
			continue;
		for (j = p->first_rec; j < p->first_rec + p->nrec; j++) {
			const struct record *rec = &s->recs[j];
			if (rec->hash == VOLATILE_HASH || (rec->hash == s->zero_hash && r->use_zero_pages) ||
			    freed_by_split(s, j))
				continue;
			v[n++] = (struct frame_rec){ rec->hash, rec->pfn, j };
		}
	}
	if (n > 1)
		qsort(v, n, sizeof *v, by_hash_pfn);
	kpf = kpageflags_open();
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].hash == v[i].hash; j++)
			frames += v[j].pfn != v[j - 1].pfn;
		frames++;
		uint64_t m = j - i;
		struct ksm_tally merged = { 0 };
		if (!frames_never_merge(kpf, m, v[i].pfn, v[j - 1].pfn))
			continue;
		/* One frame, m mappings, not a KSM page: nothing to merge. */
		ksm_tally_content(&rule, &merged, m, false);
		r->pages_sharing -= merged.pages_sharing;
		r->pages_shared -= merged.pages_shared;
		r->pages_unshared++;
		r->across_pages -= r->across_pages >= m - 1 ? m - 1 : r->across_pages;
		r->single_frame_pages += m;
		for (size_t k = i; k < j; k++)
			s->recs[v[k].rec].pfn = NO_MERGE;
	}
	if (kpf >= 0)
		close(kpf);
	free(v);
	r->saved_now = (long long)n - frames;
}

/*
 * The recheck's sample (estimate_recheck.c) against the prediction: which
 * sampled pages the figures merge, and what KSM reaches if those that
 * changed keep changing.  A page that changed would not merge, and each
 * sampled one stands for behind / sampled pages.  Taking each from
 * pages_sharing slightly overstates the loss where every page of a content
 * changes (its one stable page was never a saving) and where both of a
 * pair do: a bound, said as "about".
 */
static void weigh_recheck(struct scan *s, const struct contents *t)
{
	struct est_recheck *c = &s->res->recheck;
	struct est_result *r = s->res;
	double lost;
	size_t i;

	if (!c->done)
		return;
	for (i = 0; i < s->nsample; i++) {
		const struct record *rec = &s->recs[s->sample[i]];
		if (rec->hash == VOLATILE_HASH || rec->pfn == NO_MERGE || freed_by_split(s, s->sample[i]))
			continue;
		if (!(rec->hash == s->zero_hash && r->use_zero_pages) && contents_count(t, rec->hash) < 2)
			continue;
		c->sampled_merging++;
		c->changed_merging += s->sample_changed[i];
	}
	lost = c->sampled ? (double)c->changed_merging * (double)c->behind / (double)c->sampled : 0;
	c->pages_sharing_low = lost >= (double)r->pages_sharing ? 0 : r->pages_sharing - (uint64_t)(lost + 0.5);
	c->profit_bytes_low = r->profit_bytes -
			      (long long)(r->pages_sharing - c->pages_sharing_low) * r->page_size;
}

int predict(struct scan *s)
{
	struct est_result *r = s->res;
	const struct ksm_rule rule = est_rule(r);
	struct ksm_tally tally = { 0 };
	struct contents t;
	size_t i, j, k;

	if (contents_init(&t) < 0)
		return -1;
	for (i = 0; i < r->nprocs; i++)
		r->volatile_pages += r->procs[i].volatile_pages;
	for (i = 0; i < r->nprocs; i++) {
		struct est_proc *p = &r->procs[i];
		if (p->skipped)
			continue;
		for (j = p->first_rec; j < p->first_rec + p->nrec; j++) {
			const struct record *rec = &s->recs[j];
			r->candidate++;
			if (rec->hash == VOLATILE_HASH)
				continue;
			if (freed_by_split(s, j)) {
				r->freed_by_split++;
				continue;
			}
			if (rec->hash == s->zero_hash) {
				r->zero_pages++;
				if (r->use_zero_pages)
					continue;
			}
			if (contents_add(&t, rec->hash, (unsigned)i) < 0) {
				contents_free(&t);
				return -1;
			}
		}
		p->candidate = p->nrec;
	}
	/* Zero pages are in the table as a content unless use_zero_pages. */
	for (k = 0; k < t.cap; k++)
		ksm_tally_content(&rule, &tally, t.counts[k], false);
	if (r->use_zero_pages)
		ksm_tally_zero(&rule, &tally, r->zero_pages);
	r->pages_shared = tally.pages_shared;
	r->pages_sharing = tally.pages_sharing;
	r->pages_unshared = tally.pages_unshared;
	/* N pages of D contents held by K (content, process) pairs: merging
	 * within each process alone saves N - K, across processes K - D more. */
	r->distinct = t.used;
	r->within_pages = r->candidate - r->volatile_pages - (r->use_zero_pages ? r->zero_pages : 0)
			  - r->freed_by_split - t.process_pairs;
	r->across_pages = t.process_pairs - t.used;
	compare_frames(s, r);
	/* ksmd keeps no rmap item for a page the split mapped to the zero page. */
	r->rmap_items = r->candidate - r->freed_by_split;
	tally.pages_sharing = r->pages_sharing;
	r->profit_bytes = ksm_profit_bytes(&rule, &tally, r->rmap_items);

	/* Fair shares: each page of a content held n times saves sharing/n. */
	for (i = 0; i < s->nregs; i++) {
		const struct region_rec *rr = &s->regs[i];
		struct est_class *c = &r->classes[rr->cls];
		struct est_proc *p = &r->procs[rr->proc];
		if (p->skipped)
			continue;
		for (j = rr->first; j < rr->first + rr->n; j++) {
			uint64_t h = s->recs[j].hash, n;
			double share;
			if (h == VOLATILE_HASH || s->recs[j].pfn == NO_MERGE || freed_by_split(s, j))
				continue;
			if (h == s->zero_hash && r->use_zero_pages) {
				share = 1;
			} else {
				n = contents_count(&t, h);
				share = n > 1 ? (double)(n - ksm_stable_pages(&rule, n)) / (double)n : 0;
			}
			c->saved += share;
			p->saved += share;
		}
		c->candidate += rr->n;
		if (rr->n && c->last_proc != rr->proc) {
			c->last_proc = rr->proc;
			c->processes++;
		}
	}
	weigh_recheck(s, &t);
	r->table_bytes = contents_bytes(&t);
	contents_free(&t);
	return 0;
}

