/*
 * estimate_report.c - printing the --estimate prediction: a table for
 * people (largest savings first), or JSON with the stable keys that
 * ksm-run(1) documents.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/human.h"
#include "common/jsonw.h"
#include "common/msg.h"
#include "common/present.h"
#include "common/reportfile.h"
#include "common/text.h"
#include "common/thpsplit.h"
#include "eval/estimate_cost.h"
#include "eval/estimate_report.h"
#include "kernel_abi.h"

#define MIB(pages) ((double)(pages) * (double)r->page_size / 1048576.0)

static int by_proc_saved(const void *a, const void *b)
{
	const struct est_proc *x = *(const struct est_proc *const *)a, *y = *(const struct est_proc *const *)b;

	return (y->saved > x->saved) - (y->saved < x->saved);
}

static int by_class_saved(const void *a, const void *b)
{
	const struct est_class *x = *(const struct est_class *const *)a, *y = *(const struct est_class *const *)b;

	if (y->saved != x->saved)
		return (y->saved > x->saved) - (y->saved < x->saved);
	return (y->candidate > x->candidate) - (y->candidate < x->candidate);
}

/*
 * The profit the targets already have, in general_profit's terms: pages
 * shared now (by frame, so root only) less the rmap_items ksmd keeps now.
 * Returns false when it cannot be known.
 */
static bool new_profit(const struct est_result *r, long long *out)
{
	if (r->saved_now < 0)
		return false;
	*out = r->profit_bytes - (r->saved_now * r->page_size -
				  (r->rmap_now > 0 ? r->rmap_now : 0) * KSM_RMAP_ITEM_BYTES);
	return true;
}

/* Sorted views, so that the result itself keeps its order. */
static void sorted(const struct est_result *r, const struct est_proc ***procs,
		   const struct est_class ***classes)
{
	size_t i;

	*procs = xmalloc((r->nprocs + 1) * sizeof **procs);
	*classes = xmalloc((r->nclasses + 1) * sizeof **classes);
	for (i = 0; i < r->nprocs; i++)
		(*procs)[i] = &r->procs[i];
	for (i = 0; i < r->nclasses; i++)
		(*classes)[i] = &r->classes[i];
	if (r->nprocs > 1)
		qsort(*procs, r->nprocs, sizeof **procs, by_proc_saved);
	if (r->nclasses > 1)
		qsort(*classes, r->nclasses, sizeof **classes, by_class_saved);
}

/* A count the kernel or the reading may not give (negative): null then. */
static long long count_or_unknown(long long v)
{
	return v < 0 ? LLONG_MIN : v;
}

/* The recheck, or null where --settle read everything twice instead. */
static void recheck_json(struct jsonw *w, const struct est_recheck *c)
{
	if (!c->done) {
		jw_null(w, "recheck");
		return;
	}
	jw_object(w, "recheck");
	jw_g(w, "seconds_after", c->wait_s);
	jw_ll(w, "sampled_pages", (long long)c->sampled);
	jw_ll(w, "changed_pages", (long long)c->changed);
	jw_ll(w, "sampled_merging_pages", (long long)c->sampled_merging);
	jw_ll(w, "changed_merging_pages", (long long)c->changed_merging);
	jw_ll(w, "pages_sharing_low", (long long)c->pages_sharing_low);
	jw_ll(w, "profit_bytes_low", c->profit_bytes_low);
	jw_ll(w, "anon_kb_at_pass", c->anon_kb_first);
	jw_ll(w, "anon_kb_at_recheck", c->anon_kb_now);
	jw_end(w);
}

static void print_json(FILE *f, const struct est_result *r, const struct est_proc **procs,
		       const struct est_class **classes)
{
	struct jsonw w;
	long long np;
	size_t i;

	jw_start(&w, f);
	jw_object(&w, NULL);
	jw_ll(&w, "pages_sharing", (long long)r->pages_sharing);
	jw_ll(&w, "pages_shared", (long long)r->pages_shared);
	jw_ll(&w, "pages_unshared", (long long)r->pages_unshared);
	jw_ll(&w, "zero_pages", (long long)r->zero_pages);
	jw_ll(&w, "volatile_pages", (long long)r->volatile_pages);
	jw_ll(&w, "candidate_pages", (long long)r->candidate);
	jw_ll(&w, "rmap_items", (long long)r->rmap_items);
	jw_ll(&w, "distinct_contents", (long long)r->distinct);
	jw_ll(&w, "profit_bytes", r->profit_bytes);
	jw_ll(&w, "within_process_pages", (long long)r->within_pages);
	jw_ll(&w, "across_process_pages", (long long)r->across_pages);
	jw_ll(&w, "already_merged_pages", count_or_unknown(r->merging_now));
	jw_ll(&w, "saved_now_pages", count_or_unknown(r->saved_now));
	jw_ll(&w, "new_profit_bytes", new_profit(r, &np) ? np : LLONG_MIN);
	jw_ll(&w, "single_frame_pages", (long long)r->single_frame_pages);
	jw_ll(&w, "huge_zero_pages", count_or_unknown(r->huge_zero_pages));
	jw_string(&w, "split_frees_zero_pages", thp_split_zero_name(r->split_frees_zero));
	jw_ll(&w, "freed_by_split_pages", (long long)r->freed_by_split);
	jw_ll(&w, "max_page_sharing", r->max_page_sharing);
	jw_ll(&w, "use_zero_pages", r->use_zero_pages);
	jw_g(&w, "settle_seconds", r->settle);
	estimate_cost_json(&w, r);
	recheck_json(&w, &r->recheck);
	jw_object(&w, "scan");
	jw_fixed(&w, "seconds", r->seconds, 3, false);
	jw_ll(&w, "bytes", (long long)r->bytes_read);
	jw_fixed(&w, "gib_per_second", r->seconds > 0 ? r->bytes_read / r->seconds / 1073741824.0 : 0.0, 2, false);
	jw_ll(&w, "table_bytes", (long long)r->table_bytes);
	jw_ll(&w, "record_bytes", (long long)r->record_bytes);
	jw_bool(&w, "pfn_visible", r->pfn_visible);
	jw_string(&w, "present_ranges", r->pagemap_scan ? "pagemap_scan" : "smaps");
	jw_ll(&w, "pagemap_entries", (long long)r->pagemap_entries);
	jw_ll(&w, "left_out_regions", (long long)r->left_out_regions);
	jw_ll(&w, "left_out_bytes", (long long)r->left_out_bytes);
	jw_end(&w);
	jw_array(&w, "processes");
	for (i = 0; i < r->nprocs; i++) {
		const struct est_proc *p = procs[i];

		if (p->skipped)
			continue;
		jw_object(&w, NULL);
		jw_ll(&w, "pid", p->pid);
		jw_string(&w, "comm", p->comm);
		jw_ll(&w, "candidate_pages", (long long)p->candidate);
		jw_fixed(&w, "saved_pages", p->saved, 1, false);
		jw_ll(&w, "volatile_pages", (long long)p->volatile_pages);
		jw_ll(&w, "merged_now_pages", count_or_unknown(p->merging_now));
		jw_end(&w);
	}
	jw_end(&w);
	jw_array(&w, "skipped");
	for (i = 0; i < r->nprocs; i++) {
		if (!r->procs[i].skipped)
			continue;
		jw_object(&w, NULL);
		jw_ll(&w, "pid", r->procs[i].pid);
		jw_string(&w, "reason", r->procs[i].skipped);
		jw_end(&w);
	}
	jw_end(&w);
	jw_array(&w, "regions");
	for (i = 0; i < r->nclasses; i++) {
		jw_object(&w, NULL);
		jw_string(&w, "class", classes[i]->name);
		jw_ll(&w, "processes", classes[i]->processes);
		jw_ll(&w, "candidate_pages", (long long)classes[i]->candidate);
		jw_fixed(&w, "saved_pages", classes[i]->saved, 1, false);
		jw_end(&w);
	}
	jw_finish(&w);
}

/*
 * How far the figures hold: the share of the sampled pages that changed a
 * moment after the pass, what KSM reaches if they keep changing, and memory
 * still arriving (a booting guest: the figures are of a moment).
 */
static void print_recheck(FILE *f, const struct est_result *r)
{
	const struct est_recheck *c = &r->recheck;

	if (!c->done || !c->sampled)
		return;
	if (!c->changed)
		fprintf(f, "  rechecked: none of %llu sampled pages changed in %g s: the figures hold for\n"
			"  memory that stays\n", (unsigned long long)c->sampled, c->wait_s);
	else
		fprintf(f, "  rechecked: %.1f%% of %llu sampled pages changed in %g s (%llu of the %llu that\n"
			"  would merge); if such pages keep changing, KSM reaches about pages_sharing %llu\n"
			"  (%.1f MiB) and general_profit %.1f MiB; --settle=SECONDS counts them exactly\n",
			100.0 * (double)c->changed / (double)c->sampled, (unsigned long long)c->sampled, c->wait_s,
			(unsigned long long)c->changed_merging, (unsigned long long)c->sampled_merging,
			(unsigned long long)c->pages_sharing_low, MIB(c->pages_sharing_low),
			c->profit_bytes_low / 1048576.0);
	if (c->anon_kb_first > 0 && c->anon_kb_now > c->anon_kb_first + c->anon_kb_first / 100 + 1024)
		fprintf(f, "  growing: their anonymous memory grew by %.1f MiB (%+.0f%%) in that time: the\n"
			"  figures are of a moment, and memory still arriving is not in them\n",
			(double)(c->anon_kb_now - c->anon_kb_first) / 1024.0,
			100.0 * (double)(c->anon_kb_now - c->anon_kb_first) / (double)c->anon_kb_first);
}

/* Zero-filled pages of transparent huge pages: freed by the split where the
 * kernel remaps them (not KSM's saving), or why that is not known. */
static void print_huge_zero(FILE *f, const struct est_result *r)
{
	if (r->freed_by_split)
		fprintf(f, "  freed when huge pages are split %llu pages (%.1f MiB): zero-filled pages of transparent\n"
			"  huge pages; ksmd splits a huge page to merge it, and this kernel then maps them to\n"
			"  the zero page: memory saved, but not by a merge, so KSM counts them nowhere (not in\n"
			"  pages_sharing, ksm_zero_pages or general_profit, nor in the figures above)\n",
			(unsigned long long)r->freed_by_split, MIB(r->freed_by_split));
	else if (r->huge_zero_pages > 0 && r->split_frees_zero == THP_SPLIT_ZERO_UNKNOWN)
		fprintf(f, "  uncertain: %.1f MiB of the zero pages are in transparent huge pages, and whether a\n"
			"  split frees them (Linux 6.12+: then KSM never merges them) is unknown: %s\n",
			MIB((uint64_t)r->huge_zero_pages), r->split_unknown_why);
	else if (r->huge_zero_pages < 0 && r->zero_pages && r->split_frees_zero != THP_SPLIT_ZERO_KEPT)
		fprintf(f, "  uncertain: zero pages in transparent huge pages are told apart by frame (root\n"
			"  only); %s, so those would be freed, not merged, and the figures above\n"
			"  may count them\n", r->split_frees_zero == THP_SPLIT_ZERO_FREED
			? "this kernel frees them when ksmd splits a huge page"
			: "this kernel may free them when ksmd splits a huge page");
}

static void print_table(FILE *f, const struct est_result *r, const struct est_proc **procs,
			const struct est_class **classes)
{
	size_t i, scanned = 0, shown = 0;

	for (i = 0; i < r->nprocs; i++)
		scanned += !r->procs[i].skipped;
	fprintf(f, "Estimate for %zu process%s: %llu present anonymous pages (%.1f MiB) read in %.2f s "
		"(%.2f GiB/s)%s\n", scanned, scanned == 1 ? "" : "es",
		(unsigned long long)r->candidate, MIB(r->candidate), r->seconds,
		r->seconds > 0 ? r->bytes_read / r->seconds / 1073741824.0 : 0.0,
		r->settle > 0 ? ", two passes" : "");
	fprintf(f, "\nWhat KSM would reach (max_page_sharing %d, use_zero_pages %d):\n",
		r->max_page_sharing, r->use_zero_pages);
	fprintf(f, "  pages_sharing   %12llu  (%.1f MiB)\n", (unsigned long long)r->pages_sharing, MIB(r->pages_sharing));
	fprintf(f, "  pages_shared    %12llu\n", (unsigned long long)r->pages_shared);
	fprintf(f, "  pages_unshared  %12llu\n", (unsigned long long)r->pages_unshared);
	fprintf(f, "  zero pages      %12llu  (%s)\n", (unsigned long long)r->zero_pages,
		r->use_zero_pages ? "each replaced by the zero page: counted in ksm_zero_pages"
				  : "merged like any other content; use_zero_pages=1 counts them apart");
	if (r->settle > 0)
		fprintf(f, "  volatile        %12llu  (changed within %g s: never merged)\n",
			(unsigned long long)r->volatile_pages, r->settle);
	/* "in all" and "new profit" below: the whole, and what it adds to what is saved now. */
	fprintf(f, "  general_profit  %12.1f MiB  in all, what is merged now included (rmap_items overhead "
		"%.1f MiB included)\n", r->profit_bytes / 1048576.0, r->rmap_items * KSM_RMAP_ITEM_BYTES / 1048576.0);
	fprintf(f, "  of the savings: %.1f MiB within single processes, %.1f MiB across processes\n",
		MIB(r->within_pages), MIB(r->across_pages));
	print_huge_zero(f, r);
	print_recheck(f, r);
	if (r->left_out_regions)
		fprintf(f, "  LEFT OUT: %llu region%s over %llu GiB, %.1f MiB of anonymous memory: this kernel has\n"
			"  no PAGEMAP_SCAN (Linux 6.7+) to find their pages, and reading every page's entry\n"
			"  would take minutes; the figures above do not count them\n",
			(unsigned long long)r->left_out_regions, r->left_out_regions == 1 ? "" : "s",
			(unsigned long long)(WALK_WITHOUT_SCAN_MAX >> 30), r->left_out_bytes / 1048576.0);
	if (!r->pfn_visible)
		fprintf(f, "  (not root: page frames are hidden, so pages still shared copy-on-write\n"
			"   since a fork are counted as copies; KSM leaves those alone)\n");
	else if (r->single_frame_pages)
		fprintf(f, "  not counted: %.1f MiB of pages shared copy-on-write with identical pages\n"
			"  elsewhere only through one frame (KSM does not merge a page with itself)\n",
			MIB(r->single_frame_pages));
	if (r->merging_now > 0 || r->saved_now > 0) {
		long long np;
		fprintf(f, "  already merged: %lld pages by KSM now", r->merging_now > 0 ? r->merging_now : 0);
		if (new_profit(r, &np)) {
			fprintf(f, "; %s shared now, saving %.1f MiB after ksmd's rmap_items\n",
				human_bytes(r->saved_now * r->page_size, false), (r->profit_bytes - np) / 1048576.0);
			fprintf(f, "  new profit      %12.1f MiB  what KSM would add: the %.1f MiB in all less the "
				"%.1f MiB saved now\n", np / 1048576.0, r->profit_bytes / 1048576.0,
				(r->profit_bytes - np) / 1048576.0);
		} else {
			fprintf(f, "; the new profit (what KSM would add to what it saves now) needs root "
				"(pagemap shows frames to root only)\n");
		}
	}

	estimate_cost_text(f, r);
	fprintf(f, "\n%8s  %-16s %12s %12s %7s\n", "PID", "COMMAND", "CANDIDATE", "SAVED", "RATIO");
	for (i = 0; i < r->nprocs; i++) {
		const struct est_proc *p = procs[i];
		if (p->skipped)
			continue;
		fprintf(f, "%8d  %-16s %12s %12s %6.1f%%\n", (int)p->pid, printable(p->comm),
			human_bytes((long long)p->candidate * r->page_size, false),
			human_bytes((long long)(p->saved * r->page_size), false),
			p->candidate ? 100.0 * p->saved / p->candidate : 0.0);
	}
	fprintf(f, "\n%-40s %5s %12s %12s %7s\n", "REGION CLASS", "PROCS", "CANDIDATE", "SAVED", "RATIO");
	for (i = 0; i < r->nclasses && shown < 40; i++, shown++) {
		const struct est_class *c = classes[i];
		const char *name = c->name;
		size_t len = strlen(name);
		char cut[48];

		if (len > 40) {                 /* the end of a long path says most: "...ib/libuuid.so.1" */
			snprintf(cut, sizeof cut, "...%s", name + len - 37);
			name = cut;
		}
		fprintf(f, "%-40s %5u %12s %12s %6.1f%%\n", printable(name), c->processes,
			human_bytes((long long)c->candidate * r->page_size, false),
			human_bytes((long long)(c->saved * r->page_size), false),
			c->candidate ? 100.0 * c->saved / c->candidate : 0.0);
	}
	if (r->nclasses > shown)
		fprintf(f, "(%zu more classes; --json lists all)\n", r->nclasses - shown);
	for (i = 0; i < r->nprocs; i++)
		if (r->procs[i].skipped)
			fprintf(f, "skipped: pid %d: %s\n", (int)r->procs[i].pid, printable(r->procs[i].skipped));
}

void estimate_print(FILE *f, const struct est_result *r, bool json)
{
	const struct est_proc **procs;
	const struct est_class **classes;

	sorted(r, &procs, &classes);
	if (json)
		print_json(f, r, procs, classes);
	else
		print_table(f, r, procs, classes);
	free(procs);
	free(classes);
}

int estimate_print_file(const char *path, const struct est_result *r, bool json)
{
	struct report_text t;

	report_text_open(&t);
	estimate_print(t.f, r, json);
	return report_text_write(&t, path);
}
