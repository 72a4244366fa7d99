/* kfeature.c - the KSM interfaces by kernel, and one probe for each. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/kfeature.h"
#include "kernel_abi.h"

/* In the order of enum kfeature; the kernels are mainline's (KERNEL-NOTES, the admin guides). */
static const struct kfeature_info table[KF_COUNT] = {
	[KF_MERGING_PAGES_FILE] = { "ksm_merging_pages_file", "/proc/PID/ksm_merging_pages", "5.19",
		"a process's merged pages are counted by page frame (as root; unknown otherwise)" },
	[KF_KSM_STAT] = { "ksm_stat", "/proc/PID/ksm_stat", "6.1",
		"a process's KSM metadata (rmap items) is unknown, and so is its profit" },
	[KF_GENERAL_PROFIT] = { "general_profit", "general_profit, ksm_stat's ksm_merging_pages and ksm_process_profit",
		"6.4", "general_profit is computed from the page counters by the kernel's formula, and said to be; "
		"merged pages from /proc/PID/ksm_merging_pages; a process's profit is unknown" },
	[KF_PRCTL] = { "prctl", "prctl(PR_SET_MEMORY_MERGE)", "6.4",
		"the library advises the regions with madvise instead; a static binary is not covered, "
		"and --attach takes a region selection (--allow, --deny, --min-size or --mode=madvise)" },
	[KF_PAGES_SCANNED] = { "pages_scanned", "pages_scanned", "6.6", "the scan's progress in pages is not shown" },
	[KF_SMAPS_KSM] = { "smaps_ksm", "the KSM: line of /proc/PID/smaps", "6.6",
		"a region's merged memory is counted by walking its page frames (as root)" },
	[KF_SMART_SCAN] = { "smart_scan", "smart_scan, pages_skipped", "6.7",
		"every candidate page is scanned on every pass: the steady phase costs more CPU" },
	[KF_ADVISOR] = { "advisor", "the scan-time advisor (advisor_mode)", "6.8",
		"ksm-run's own tuning only; --advisor=none is already so" },
	[KF_ZERO_PAGES] = { "ksm_zero_pages", "ksm_zero_pages", "6.10",
		"zero pages merged under use_zero_pages are not counted apart" },
	[KF_MERGE_ANY_STAT] = { "ksm_merge_any", "ksm_stat's ksm_merge_any and ksm_mergeable", "6.14",
		"a command's process-wide flag is told by its regions (a mergeable private region, anonymous or a file's: on); "
		"the agent's census counts a process once ksmd has scanned it or the agent enabled it" },
	[KF_KPAGEFLAGS_KSM] = { "kpageflags_ksm", "/proc/kpageflags' KSM flag, on KSM pages alone", NULL,
		"this kernel flags every anonymous page KSM (seen on Debian 13's 6.12): what a command saved "
		"is not counted by page frame, and --estimate takes a frame mapped twice for fork's sharing" },
};

/* Which sysfs files came with which feature; the others are as old as KSM. */
static const struct {
	const char *name;
	enum kfeature f;
} counters[] = {
	{ "general_profit", KF_GENERAL_PROFIT }, { "pages_scanned", KF_PAGES_SCANNED },
	{ "pages_skipped", KF_SMART_SCAN }, { "smart_scan", KF_SMART_SCAN },
	{ "ksm_zero_pages", KF_ZERO_PAGES }, { "advisor_mode", KF_ADVISOR },
};

const struct kfeature_info *kfeature_info(enum kfeature f)
{
	return f >= 0 && f < KF_COUNT ? &table[f] : NULL;
}

static bool sysfs_has(const char *name)
{
	char path[128];

	snprintf(path, sizeof path, "%s/%s", KSM_SYSFS_DIR, name);
	return access(path, F_OK) == 0;
}

/* Does a line of PATH begin with PREFIX? */
static bool has_line(const char *path, const char *prefix)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f))
		found = !strncmp(line, prefix, strlen(prefix));
	fclose(f);
	return found;
}

/*
 * Does /proc/kpageflags call a page KSM that cannot be one?  Linux 6.12's
 * stable_page_flags() tests the anon bit and then "mapping &
 * PAGE_MAPPING_KSM", which the anon bit alone passes, so every anonymous
 * page reads as KSM (seen on Debian 13's 6.12; 6.1's and 6.18's are sound).
 * The page asked about is our own: anonymous, kept out of KSM, and written
 * with content that no other page has.  Without root no frame can be read,
 * and nothing is claimed: it is taken as sound.
 */
static bool kpageflags_ksm_sound(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t entry = 0, flags = 0;
	bool sound = true;
	char *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int pagemap, kpageflags;

	if (p == MAP_FAILED)
		return true;
	madvise(p, (size_t)page, MADV_UNMERGEABLE);     /* out of a process-wide flag */
	snprintf(p, (size_t)page, "ksm-run's probe of kpageflags, pid %d, at %p", (int)getpid(), (void *)p);
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pagemap >= 0 && kpageflags >= 0 &&
	    pread(pagemap, &entry, 8, (off_t)((uintptr_t)p / (uintptr_t)page * 8)) == 8 && (entry & PM_PRESENT) &&
	    (entry & PM_PFN_MASK) && pread(kpageflags, &flags, 8, (off_t)((entry & PM_PFN_MASK) * 8)) == 8)
		sound = !(flags >> KPF_KSM & 1);
	if (pagemap >= 0)
		close(pagemap);
	if (kpageflags >= 0)
		close(kpageflags);
	munmap(p, (size_t)page);
	return sound;
}

static bool probe(enum kfeature f)
{
	switch (f) {
	case KF_MERGING_PAGES_FILE: return access("/proc/self/ksm_merging_pages", F_OK) == 0;
	case KF_KSM_STAT:           return access("/proc/self/ksm_stat", F_OK) == 0;
	case KF_GENERAL_PROFIT:     return sysfs_has("general_profit");
	/* EINVAL for an unknown option; a kernel with it answers 0 or 1. */
	case KF_PRCTL:              return prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) >= 0;
	case KF_PAGES_SCANNED:      return sysfs_has("pages_scanned");
	/* Every mapping has a "KSM:" line where the kernel writes it. */
	case KF_SMAPS_KSM:          return has_line("/proc/self/smaps", "KSM:");
	case KF_SMART_SCAN:         return sysfs_has("smart_scan");
	case KF_ADVISOR:            return sysfs_has("advisor_mode");
	case KF_ZERO_PAGES:         return sysfs_has("ksm_zero_pages");
	case KF_MERGE_ANY_STAT:     return has_line("/proc/self/ksm_stat", "ksm_merge_any");
	case KF_KPAGEFLAGS_KSM:     return kpageflags_ksm_sound();
	case KF_COUNT:              break;
	}
	return false;
}

/*
 * The test suite plays a kernel that lacks interfaces this one has (5.15's
 * per-process figures on 6.18) by naming their keys in
 * KSM_RUN_TEST_KERNEL_LACKS, comma-separated: only the answers of this
 * table change, and only for a caller that is not setuid.
 */
static bool played_absent(enum kfeature f)
{
	const char *list = secure_getenv("KSM_RUN_TEST_KERNEL_LACKS"), *p;
	size_t n = strlen(table[f].key);

	for (p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, table[f].key, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

bool kfeature_present(enum kfeature f)
{
	/* 0: not probed yet; ksm-run probes from one thread. */
	static signed char known[KF_COUNT];

	if (f < 0 || f >= KF_COUNT)
		return false;
	if (!known[f])
		known[f] = !played_absent(f) && probe(f) ? 1 : -1;
	return known[f] > 0;
}

enum kfeature kfeature_of_counter(const char *name)
{
	for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
		if (!strcmp(counters[i].name, name))
			return counters[i].f;
	return KF_COUNT;
}

const char *kfeature_absent_text(const char *name)
{
	static char text[64];
	enum kfeature f = kfeature_of_counter(name);

	if (f == KF_COUNT)
		return "not in this kernel";
	snprintf(text, sizeof text, "not in this kernel (Linux %s+)", table[f].since);
	return text;
}
