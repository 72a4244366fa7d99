/*
 * estimate_result.h - what --estimate found: per process, per region class
 * and in the kernel's terms.  Filled by the scan (estimate.c) and the
 * prediction (estimate_predict.c), printed by estimate_report.c.
 */
#ifndef KSMRUN_ESTIMATE_RESULT_H
#define KSMRUN_ESTIMATE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "eval/scancost.h"

struct est_class {
	char *name;                /* "heap", "stack", "anon", "anon:NAME", a path */
	uint64_t candidate;        /* present anonymous pages */
	double saved;              /* pages saved, fair shares */
	unsigned processes;
	unsigned last_proc;        /* to count processes once */
};

struct est_proc {
	pid_t pid;
	char comm[32];
	const char *skipped;       /* why it was not scanned, or NULL */
	uint64_t candidate, volatile_pages;
	double saved;
	long long merging_now, profit_now, rmap_now;   /* from ksm_stat; -1 unknown */
	size_t first_rec, nrec;    /* its records, after the scan */
	unsigned long long start;  /* stat's starttime at the first pass; 0 unknown */
	long long anon_kb;         /* RssAnon at the first pass; -1 unknown */
};

/*
 * The recheck (estimate_recheck.c): without --settle, a sample of the
 * candidate pages read again a moment after the pass, to tell how far the
 * figures hold for memory that keeps changing.
 */
struct est_recheck {
	bool done;                      /* false: --settle, or nothing to sample */
	double wait_s;                  /* from the end of the pass to the recheck */
	uint64_t sampled, changed;      /* pages read again; of them, changed or gone */
	uint64_t behind;                /* candidate pages of the processes sampled */
	uint64_t sampled_merging, changed_merging;  /* the same, of pages the figures merge */
	uint64_t pages_sharing_low;     /* if the pages that changed keep changing */
	long long profit_bytes_low;
	long long anon_kb_first, anon_kb_now;       /* RssAnon of those processes, summed */
};

/* What ksmd would spend to reach the savings (scancost.h). */
struct est_cost {
	bool known;                           /* false: no candidate pages */
	struct scan_host host;                /* per-page CPU, a batch's extra wait */
	bool calibrated;                      /* from the host's measure (scancal.h), else the default */
	char kernel[65];                      /* where it was measured */
	struct scan_cost tuned;               /* under ksm-run's default tuning */
	bool have_rate;                       /* --scan-rate */
	struct scan_rate rate;
	struct scan_cost at_rate;
	double cow_per_minute;                /* --settle: merged pages written again a minute */
};

struct est_result {
	struct est_proc *procs;
	size_t nprocs;
	struct est_class *classes;
	size_t nclasses;
	/* The prediction, in the kernel's terms. */
	uint64_t pages_sharing, pages_shared, pages_unshared, zero_pages;
	uint64_t rmap_items, candidate, volatile_pages, distinct;
	uint64_t within_pages, across_pages;  /* savings within one process / across */
	long long profit_bytes, merging_now, profit_now, rmap_now;
	long long saved_now;                  /* pages physically shared now; -1 unknown */
	uint64_t single_frame_pages;          /* mappings of one unmerged frame: never merged */
	int max_page_sharing, use_zero_pages;
	long long page_size;                  /* bytes, of the machine that was read */
	double seconds, settle;
	uint64_t bytes_read;
	uint64_t pagemap_entries;             /* read from pagemap: the walk's work */
	size_t table_bytes, record_bytes;
	bool pfn_visible;
	bool pagemap_scan;                    /* present ranges from PAGEMAP_SCAN; else smaps */
	/* Without PAGEMAP_SCAN: regions over WALK_WITHOUT_SCAN_MAX not walked, and
	 * their anonymous memory (smaps), which the figures leave out. */
	uint64_t left_out_regions, left_out_bytes;
	/* Zero-filled pages inside transparent huge pages (-1: cannot be told
	 * without root), whether a split frees them (enum thp_split_zero, and
	 * why not known), and the pages counted apart for it: freed when ksmd
	 * splits their huge page, never merged nor counted by KSM. */
	long long huge_zero_pages;
	int split_frees_zero;
	const char *split_unknown_why;
	uint64_t freed_by_split;
	struct est_cost cost;
	struct est_recheck recheck;
};

#endif
