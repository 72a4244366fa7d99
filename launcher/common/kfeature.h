/*
 * kfeature.h - which KSM interfaces this kernel has.  One table of the
 * interfaces that came after KSM itself: the kernel that brought each and
 * what ksm-run does without it; one probe per interface, run once.  A
 * version number is never compared: distributions backport.
 */
#ifndef KSMRUN_KFEATURE_H
#define KSMRUN_KFEATURE_H

#include <stdbool.h>

enum kfeature {
	KF_MERGING_PAGES_FILE,  /* /proc/PID/ksm_merging_pages */
	KF_KSM_STAT,            /* /proc/PID/ksm_stat */
	KF_GENERAL_PROFIT,      /* general_profit; ksm_stat's merged pages and profit */
	KF_PRCTL,               /* PR_SET_MEMORY_MERGE, PR_GET_MEMORY_MERGE */
	KF_PAGES_SCANNED,       /* pages_scanned */
	KF_SMAPS_KSM,           /* the "KSM:" line of smaps */
	KF_SMART_SCAN,          /* smart_scan, pages_skipped */
	KF_ADVISOR,             /* advisor_mode and the other advisor_* knobs */
	KF_ZERO_PAGES,          /* ksm_zero_pages */
	KF_MERGE_ANY_STAT,      /* ksm_stat's ksm_merge_any and ksm_mergeable */
	KF_KPAGEFLAGS_KSM,      /* /proc/kpageflags' KSM flag set on KSM pages alone (a bug, not an arrival) */
	KF_COUNT
};

struct kfeature_info {
	const char *key;        /* a name for JSON: "smart_scan" */
	const char *what;       /* the interface, as a user looks it up */
	const char *since;      /* the mainline kernel that brought it: "6.7"; NULL: a kernel bug takes it away */
	const char *without;    /* what ksm-run does on a kernel without it */
};

const struct kfeature_info *kfeature_info(enum kfeature f);

/* Does this kernel have F?  Probed on first use (the KSM sysfs files, /proc/self, the prctl). */
bool kfeature_present(enum kfeature f);

/* The feature that brought the sysfs counter NAME; KF_COUNT for one as old as KSM. */
enum kfeature kfeature_of_counter(const char *name);

/* "not in this kernel (Linux 6.10+)" for the sysfs counter NAME. */
const char *kfeature_absent_text(const char *name);

#endif
