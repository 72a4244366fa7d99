/*
 * kernel_abi.h - the kernel interfaces that the library and ksm-run both
 * use, for C libraries whose headers are older than the kernel.
 */
#ifndef KSMENABLE_KERNEL_ABI_H
#define KSMENABLE_KERNEL_ABI_H

#include <sys/prctl.h>

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67          /* Linux 6.4 */
#define PR_GET_MEMORY_MERGE 68
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#define KSM_SYSFS_DIR "/sys/kernel/mm/ksm"

/* /proc/PID/pagemap entries (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_FILE_OR_SHARED (1ULL << 61)
#define PM_PFN_MASK ((1ULL << 55) - 1)
/* The /proc/kpageflags bit of a KSM page. */
#define KPF_KSM 21

/*
 * sizeof(struct ksm_rmap_item): ksmd keeps one per page it tracks, and
 * general_profit subtracts them (64 bytes on 64-bit kernels).
 */
#define KSM_RMAP_ITEM_BYTES (8 * (long long)sizeof(void *))

#endif
