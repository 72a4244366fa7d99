/*
 * ksmframes PID [ADDR]: the KiB of PID's pages that are KSM pages, by page
 * frame: /proc/PID/pagemap for the frames, /proc/kpageflags for their KSM
 * flag (both root only).  With ADDR (hex), of the mapping that holds it:
 * what smaps' "KSM:" line says on kernels that have it (6.6).  Without, of
 * every mapping: what ksm_merging_pages counts (5.19), in KiB.  For the
 * tests on kernels without those.  Exit 1 with a message when it cannot
 * tell.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define KPF_KSM 21

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* The KSM pages of [START, END): added to *KSM; nonzero when a read failed. */
static int count_range(int pagemap, int kflags, uint64_t start, uint64_t end, uint64_t *ksm)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), entry, flags;

	for (uint64_t a = start; a < end; a += page) {
		ssize_t n = pread(pagemap, &entry, sizeof entry, (off_t)(a / page * sizeof entry));

		if (n == 0)
			return 0;       /* past the pagemap's end: [vsyscall] */
		if (n != sizeof entry)
			return fail("pagemap");
		if (!(entry & PM_PRESENT) || !(entry & PM_PFN_MASK))
			continue;
		if (pread(kflags, &flags, sizeof flags, (off_t)((entry & PM_PFN_MASK) * sizeof flags)) != sizeof flags)
			return fail("kpageflags");
		*ksm += (flags >> KPF_KSM) & 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t addr = 0, start, end, ksm = 0;
	int whole = argc == 2, found = 0, pagemap, kflags, err = 0;
	char path[64], line[512];
	FILE *maps;

	if ((argc != 2 && argc != 3) || (!whole && sscanf(argv[2], "%" SCNx64, &addr) != 1)) {
		fprintf(stderr, "usage: ksmframes PID [ADDR]\n");
		return 2;
	}
	snprintf(path, sizeof path, "/proc/%s/pagemap", argv[1]);
	if ((pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return fail(path);
	if ((kflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return fail("/proc/kpageflags");
	snprintf(path, sizeof path, "/proc/%s/maps", argv[1]);
	if (!(maps = fopen(path, "re")))
		return fail(path);
	while (!err && fgets(line, sizeof line, maps)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2 ||
		    (!whole && !(start <= addr && addr < end)))
			continue;
		found = 1;
		err = count_range(pagemap, kflags, start, end, &ksm);
		if (!whole)
			break;
	}
	fclose(maps);
	if (err)
		return 1;
	if (!found) {
		fprintf(stderr, "ksmframes: no mapping of %s holds %" PRIx64 "\n", argv[1], addr);
		return 1;
	}
	printf("%" PRIu64 "\n", ksm * (uint64_t)sysconf(_SC_PAGESIZE) / 1024);
	return 0;
}
