/*
 * ksmenable.h - public API of libksmenable.
 *
 * Programs normally get KSM without any code change, through
 * LD_PRELOAD=libksmenable.so (see libksmenable(7)).  A program that links
 * the library instead (-lksmenable) can also choose the moment: a pre-fork
 * server, for example, applies its allow list after it has loaded
 * everything and just before it forks its workers.
 *
 * Every function keeps the host program running: on failure it returns -1
 * and sets errno; it never exits, aborts or prints to stdout.
 */
#ifndef KSMENABLE_H
#define KSMENABLE_H

#ifdef __cplusplus
extern "C" {
#endif

#define KSMENABLE_VERSION "0.1.0"

/*
 * Mark the regions of the calling process that ALLOW selects and DENY does
 * not as mergeable, with madvise(MADV_MERGEABLE).  ALLOW and DENY use the
 * selector syntax of KSM_ENABLE_ALLOW and KSM_ENABLE_DENY ("heap,anon",
 * "file:*\/libpython*", ...); ALLOW NULL or "" means "all", DENY NULL or ""
 * means nothing is denied.  This is a one-shot pass: regions created later
 * are covered only by the library's own rescan (KSM_ENABLE_RESCAN_MS).
 *
 * Returns the number of regions advised, or -1 with errno set: EINVAL for a
 * malformed selector list or a kernel without KSM, and madvise's own errors
 * (EAGAIN at vm.max_map_count, EPERM under a seccomp policy).
 */
int ksmenable_apply(const char *allow, const char *deny);

/*
 * Switch the process-wide KSM flag, prctl(PR_SET_MEMORY_MERGE): every
 * compatible mapping of the process, present and future, and of the
 * children it forks.  ON is 1 or 0 (0 also unmerges).  Returns 0, or -1
 * with errno (EINVAL: kernel before 6.4 or without KSM).
 */
int ksmenable_set_process_merge(int on);

/* This process's KSM counters, from /proc/self/ksm_stat and ksm_merging_pages. */
struct ksmenable_stat {
	long long rmap_items;     /* ksm_rmap_items, or -1 if the kernel lacks it */
	long long merging_pages;  /* ksm_merging_pages */
	long long zero_pages;     /* ksm_zero_pages */
	long long process_profit; /* ksm_process_profit, bytes; can be negative */
	int merge_any;            /* ksm_merge_any: 1 yes, 0 no, -1 unknown */
	int mergeable;            /* ksm_mergeable: 1 yes, 0 no, -1 unknown */
};

/*
 * Fill *ST with the calling process's KSM counters.  Fields the running
 * kernel does not provide are -1.  Returns 0, or -1 with errno (ENOENT when
 * the kernel has neither ksm_stat nor ksm_merging_pages).
 */
int ksmenable_read_stat(struct ksmenable_stat *st);

/* The library's version string, KSMENABLE_VERSION of the build. */
const char *ksmenable_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KSMENABLE_H */
