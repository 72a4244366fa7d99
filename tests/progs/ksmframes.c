/*
 * ksmframes PID [ADDR]: the KiB of PID's pages that are KSM pages, by page
 * frame: /proc/PID/pagemap for the frames, /proc/kpageflags for their KSM
 * flag (both root only).  With ADDR (hex), of the mapping that holds it:
 * what smaps' "KSM:" line says on kernels that have it (6.6).  Without, of
 * every mergeable mapping (VmFlags mg) that holds anonymous pages: what
 * ksm_merging_pages counts (5.19), in KiB.  Only those are walked because
 * a KSM page can be nowhere else (it is an anonymous page, and
 * MADV_UNMERGEABLE breaks a region's KSM pages before it clears the flag),
 * and because a sanitized process maps terabytes, mergeable too under
 * PR_SET_MEMORY_MERGE, that a walk page by page would never finish.  For
 * the tests on kernels without those.  Exit 1 with a message when it
 * cannot tell.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/present.h"

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define KPF_KSM 21

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* The KSM pages of [START, END) read entry by entry: added to *KSM; -1
 * when a read failed, 1 at the pagemap's end ([vsyscall]), else 0. */
static int count_entries(int pagemap, int kflags, uint64_t start, uint64_t end, uint64_t *ksm)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), entry, flags;

	for (uint64_t a = start; a < end; a += page) {
		ssize_t n = pread(pagemap, &entry, sizeof entry, (off_t)(a / page * sizeof entry));

		if (n == 0)
			return 1;
		if (n != sizeof entry)
			return fail("pagemap"), -1;
		if (!(entry & PM_PRESENT) || !(entry & PM_PFN_MASK))
			continue;
		if (pread(kflags, &flags, sizeof flags, (off_t)((entry & PM_PFN_MASK) * sizeof flags)) != sizeof flags)
			return fail("kpageflags"), -1;
		*ksm += (flags >> KPF_KSM) & 1;
	}
	return 0;
}

/*
 * The KSM pages of [START, END): added to *KSM; nonzero when a read
 * failed.  Where the kernel answers PAGEMAP_SCAN (6.7) it finds each
 * stretch of present anonymous pages, so that terabytes of holes cost a
 * call; before, every entry is read.
 */
static int count_range(int pagemap, int kflags, bool scan, uint64_t start, uint64_t end, uint64_t *ksm)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), stretch = 512 * page, at;
	int r = 0;

	if (!scan)
		return count_entries(pagemap, kflags, start, end, ksm) < 0;
	while (start < end && (r = present_next(pagemap, start, end, false, &at)) == 1) {
		start = at + stretch < end ? at + stretch : end;
		if ((r = count_entries(pagemap, kflags, at, start, ksm)) != 0)
			return r < 0;
	}
	return r < 0 ? fail("PAGEMAP_SCAN") : 0;
}

/* Whether smaps' "VmFlags:" line LINE holds the flag "mg". */
static int vmflags_mergeable(const char *line)
{
	for (const char *f = line + strlen("VmFlags:"); (f = strstr(f, " mg")); f += 3)
		if (f[3] == ' ' || f[3] == '\n' || f[3] == '\0')
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t addr = 0, start = 0, end = 0, s, e, ksm = 0, anon_kb = 0;
	int whole = argc == 2, found = 0, pagemap, kflags, err = 0;
	bool scan = present_scan_probe();
	char path[64], line[512];
	FILE *smaps;

	if ((argc != 2 && argc != 3) || (!whole && sscanf(argv[2], "%" SCNx64, &addr) != 1)) {
		fprintf(stderr, "usage: ksmframes PID [ADDR]\n");
		return 2;
	}
	snprintf(path, sizeof path, "/proc/%s/pagemap", argv[1]);
	if ((pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return fail(path);
	if ((kflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return fail("/proc/kpageflags");
	snprintf(path, sizeof path, "/proc/%s/smaps", argv[1]);
	if (!(smaps = fopen(path, "re")))
		return fail(path);
	/* Each mapping's block begins with its range and ends with VmFlags. */
	while (!err && fgets(line, sizeof line, smaps)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &s, &e) == 2) {
			start = s;
			end = e;
			anon_kb = 0;
			continue;
		}
		if (sscanf(line, "Anonymous: %" SCNu64, &anon_kb) == 1 || strncmp(line, "VmFlags:", 8) != 0)
			continue;
		if (whole ? !anon_kb || !vmflags_mergeable(line) : !(start <= addr && addr < end))
			continue;
		found = 1;
		err = count_range(pagemap, kflags, scan, start, end, &ksm);
		if (!whole)
			break;
	}
	fclose(smaps);
	if (err)
		return 1;
	if (!found && !whole) {
		fprintf(stderr, "ksmframes: no mapping of %s holds %" PRIx64 "\n", argv[1], addr);
		return 1;
	}
	printf("%" PRIu64 "\n", ksm * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
	return 0;
}
