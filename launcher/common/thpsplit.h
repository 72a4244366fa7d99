/*
 * thpsplit.h - does this kernel free the zero-filled pages of a
 * transparent huge page when it splits it?  Since Linux 6.12 ("remap
 * unused subpages to shared zeropage when splitting isolated thp",
 * mm/huge_memory.c, mm/migrate.c) a split maps every subpage that holds
 * only zeros to the shared zero page and frees it.  KSM splits a huge
 * page before it merges any part of it, so there such memory is freed
 * without ever being merged: it never shows in pages_sharing,
 * ksm_zero_pages or general_profit.  Asked of the kernel by a probe, not
 * by its version: distributions backport.
 */
#ifndef KSMRUN_THPSPLIT_H
#define KSMRUN_THPSPLIT_H

enum thp_split_zero {
	THP_SPLIT_ZERO_UNKNOWN = -1,    /* could not be probed: *WHY says why */
	THP_SPLIT_ZERO_KEPT = 0,        /* a split keeps zero-filled subpages (before 6.12) */
	THP_SPLIT_ZERO_FREED = 1,       /* a split maps them to the zero page */
};

/*
 * The answer, probed on first use and kept for the rest of the run: a
 * child process faults in one zero-filled huge page (MADV_HUGEPAGE), has
 * the kernel split it (MADV_FREE on its first page, which splits a huge
 * page it covers in part; no privilege, no KSM knob), and sees whether
 * its resident memory fell.  *WHY (may be NULL) gets the reason of an
 * unknown answer, or NULL.
 */
enum thp_split_zero thp_split_zero_probe(const char **why);

/* "yes", "no" or "unknown", for reports. */
const char *thp_split_zero_name(enum thp_split_zero v);

/* What the probe's process read in its smaps_rollup, in kB. */
struct thp_split_sample {
	long long huge_start;           /* AnonHugePages before the fault */
	long long rss_before, huge_before;      /* Rss, AnonHugePages after it */
	long long rss_after, huge_after;        /* the same after the split */
};

/* The verdict from a sample, for a huge page of HUGE_KB; *WHY as above. */
enum thp_split_zero thp_split_zero_judge(const struct thp_split_sample *s, long long huge_kb, const char **why);

#endif
