/*
 * ksmframes PID ADDR: the KiB of the mapping of PID that holds ADDR (hex)
 * that are KSM pages, by page frame: /proc/PID/pagemap for the frames,
 * /proc/kpageflags for their KSM flag (both root only).  It prints what
 * smaps' "KSM:" line says on kernels that have it (6.6), for the tests on
 * kernels that do not.  Exit 1 with a message when it cannot tell.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define KPF_KSM 21

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* The bounds of the mapping of PID that holds ADDR, from its maps. */
static int mapping_of(const char *pid, uint64_t addr, uint64_t *start, uint64_t *end)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%s/maps", pid);
	if (!(f = fopen(path, "re")))
		return fail(path);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2 && *start <= addr && addr < *end) {
			fclose(f);
			return 0;
		}
	fclose(f);
	fprintf(stderr, "ksmframes: no mapping of %s holds %" PRIx64 "\n", pid, addr);
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t addr, start, end, entry, flags, ksm = 0;
	long page = sysconf(_SC_PAGESIZE);
	char path[64];
	int pagemap, kflags;

	if (argc != 3 || sscanf(argv[2], "%" SCNx64, &addr) != 1) {
		fprintf(stderr, "usage: ksmframes PID ADDR\n");
		return 2;
	}
	if (mapping_of(argv[1], addr, &start, &end))
		return 1;
	snprintf(path, sizeof path, "/proc/%s/pagemap", argv[1]);
	if ((pagemap = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return fail(path);
	if ((kflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)) < 0)
		return fail("/proc/kpageflags");
	for (uint64_t a = start; a < end; a += (uint64_t)page) {
		if (pread(pagemap, &entry, sizeof entry, (off_t)(a / (uint64_t)page * sizeof entry)) != sizeof entry)
			return fail("pagemap");
		if (!(entry & PM_PRESENT) || !(entry & PM_PFN_MASK))
			continue;
		if (pread(kflags, &flags, sizeof flags, (off_t)((entry & PM_PFN_MASK) * sizeof flags)) != sizeof flags)
			return fail("kpageflags");
		ksm += (flags >> KPF_KSM) & 1;
	}
	printf("%" PRIu64 "\n", ksm * (uint64_t)page / 1024);
	return 0;
}
