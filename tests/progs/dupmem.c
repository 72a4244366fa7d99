/*
 * dupmem - a workload with a known duplicate structure, for the test suite.
 *
 *   dupmem ACTION...
 *
 * Actions run in order.  Each region action fills every page of its region
 * with the same 8-byte value (distinct per action, never zero), so all pages
 * of one region are duplicates of each other, and prints
 *   region NAME ADDR PID
 * where ADDR (hex, no 0x) is an address inside the newest part of the region.
 *
 *   mmap=MIB        anonymous private mmap
 *   mmapk=KIB       the same, sized in KiB
 *   heap=MIB        malloc in 512-byte chunks (grows the brk heap on glibc);
 *                   with DUPMEM_HEAP=brk in the environment, the break is
 *                   moved directly and filled instead: a sanitizer's malloc
 *                   (make check-asan) never uses the break, so there the
 *                   heap is grown this way to stay the [heap]
 *   sbrk=MIB        move the program break directly
 *   file=PATH:MIB   private mapping of PATH, written (copy-on-write pages)
 *   shared=MIB      anonymous shared mmap (never KSM-compatible)
 *   stack=KIB       fill that much of the main stack (kept for later actions)
 *   remap=MIB       mmap MIB, then mremap it to twice the size elsewhere
 *   reserve=GIB:MIB reserve GIB of address space (MAP_NORESERVE, as an
 *                   AddressSanitizer build does for its shadow) and fill
 *                   MIB of it, in up to 16 pieces spread over the whole
 *                   reservation, all pages with the same value; a
 *                   PROT_NONE guard page below it
 *   unique=MIB      anonymous mmap whose pages all differ (also from other
 *                   processes' pages)
 *   distinct=MIB    anonymous mmap whose pages all differ, but equal those
 *                   of another process that used the same seeds
 *   pairs=MIB       anonymous mmap whose pages come in equal pairs
 *   zeros=MIB       anonymous mmap of written, all-zero pages
 *   churn=MIB       anonymous mmap that a thread keeps rewriting (volatile)
 *   sweep=MIB       the same, all pages alike at any moment (equal when
 *                   read at once, never stable long enough to merge)
 *   hugezeros=MIB   written, all-zero pages in transparent huge pages: a
 *                   mapping aligned to 2 MiB with MADV_HUGEPAGE (as QEMU
 *                   asks for guest memory)
 *   hugefill=MIB    the same, every page holding one value (like mmap=)
 *   seed=N          the fill value of the next region (processes that use
 *                   the same seeds hold the same contents)
 *   verify          check that every filled region still holds what was
 *                   written: prints "verify ok", or exits 3
 *   name=NAME       name the last mmap region [anon:NAME] (PR_SET_VMA)
 *   sleep=MS        sleep
 *   merged=PAGES    wait until ksmd has merged PAGES of this process
 *                   (/proc/self/ksm_merging_pages), 120 s at most; where
 *                   the kernel lacks the file (before 5.19), sleep 5 s: a
 *                   test then waits for merging, not for the clock
 *   merge=0|1       prctl(PR_SET_MEMORY_MERGE)
 *   merge=auto      the prctl where the kernel has it (6.4), else every
 *                   private region made afterwards is advised mergeable
 *                   (madvise) before it is filled: on every kernel, the
 *                   process's test regions merge
 *   getmerge        print "merge_any PID N" from PR_GET_MEMORY_MERGE
 *   mergeable       print "mergeable PID N": how many of its mappings are
 *                   mergeable ("mg" in smaps' VmFlags), on every kernel
 *   fork            the rest runs in a child; the parent waits and exits
 *                   with the child's status
 *   exec            re-executes this program with the rest of the actions
 *   wait            print "READY PID", then wait for a line or EOF on stdin
 *   exit=N          exit now with status N
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#define PR_SET_MEMORY_MERGE 67
#define PR_GET_MEMORY_MERGE 68

static const long page = 4096;
static uint64_t next_seed = 0x5a5a0001;
static void *last_map;
static size_t last_map_len;
static int advise_regions;      /* merge=auto on a kernel without the prctl */

enum pattern { SAME, UNIQUE, DISTINCT, PAIRS, ZEROS };

/* What was written where, for verify. */
static struct filled {
	uint64_t *p;
	size_t len;
	enum pattern pattern;
	uint64_t seed, pid;     /* the filling process: unique across processes */
} filled[64];
static int nfilled;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	return x | 1;        /* never zero */
}

/* The value every word of page I of a region holds. */
static uint64_t page_value(const struct filled *f, size_t i)
{
	size_t pages = f->len / page;

	switch (f->pattern) {
	case SAME: return f->seed;
	case UNIQUE: return mix(f->seed ^ (f->pid << 40) ^ (i << 1));
	case DISTINCT: return mix(f->seed ^ (i << 1));
	case PAIRS: return mix(f->seed ^ (f->pid << 40) ^ ((i % (pages / 2 ? pages / 2 : 1)) << 1));
	case ZEROS: return 0;
	}
	return 0;
}

static void fill_pattern(void *addr, size_t len, enum pattern pattern)
{
	struct filled f = { addr, len, pattern, next_seed++, (uint64_t)getpid() };
	size_t i, w;

	for (i = 0; i < len / page; i++) {
		uint64_t v = page_value(&f, i);
		for (w = 0; w < page / 8; w++)
			f.p[i * (page / 8) + w] = v;
	}
	if (nfilled < 64)
		filled[nfilled++] = f;
}

static void fill(void *addr, size_t len)
{
	fill_pattern(addr, len, SAME);
}

static int verify(void)
{
	int k;
	size_t i, w;

	for (k = 0; k < nfilled; k++)
		for (i = 0; i < filled[k].len / page; i++)
			for (w = 0; w < page / 8; w++)
				if (filled[k].p[i * (page / 8) + w] != page_value(&filled[k], i)) {
					printf("verify FAILED at %p\n", (void *)&filled[k].p[i * (page / 8) + w]);
					return 3;
				}
	printf("verify ok\n");
	fflush(stdout);
	return 0;
}

/* Keeps rewriting a region, so that its pages are never stable. */
static void *churn(void *arg)
{
	struct filled *f = arg;
	uint64_t n = 0;
	size_t i;

	for (;;) {
		for (i = 0; i < f->len / 8; i += page / 8)
			f->p[i] = ++n;
		usleep(2000);
	}
	return NULL;
}

/* Keeps rewriting a region, every page with the same new value. */
static void *sweep(void *arg)
{
	struct filled *f = arg;
	uint64_t n = 0;
	size_t i;

	for (;;) {
		n++;
		for (i = 0; i < f->len / 8; i += page / 8)
			f->p[i] = n;
		usleep(2000);
	}
	return NULL;
}

static void region(const char *name, void *newest_byte)
{
	printf("region %s %lx %d\n", name, (unsigned long)newest_byte, (int)getpid());
	fflush(stdout);
}

static size_t mib(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end && *end != ':') {
		fprintf(stderr, "dupmem: bad size '%s'\n", s);
		exit(99);
	}
	return v << 20;
}

static void die(const char *what)
{
	fprintf(stderr, "dupmem: %s: %s\n", what, strerror(errno));
	exit(98);
}

/* Mappings whose VmFlags hold "mg", or -1 when smaps cannot be read. */
static int mergeable_mappings(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmFlags:", 8) && strstr(line, " mg"))
			n++;
	fclose(f);
	return n;
}

static void *grow_break(size_t len)
{
#ifdef __GLIBC__
	void *old = sbrk((intptr_t)len);
	if (old == (void *)-1)
		die("sbrk");
	return old;
#else
	/* musl's sbrk refuses increments: move the break with the syscall. */
	char *old = (char *)syscall(SYS_brk, 0);
	if ((char *)syscall(SYS_brk, old + len) != old + len)
		die("brk");
	return old;
#endif
}

/* A huge sparse region: little present, far apart, all one content. */
static void *reserve(size_t gib, size_t mib_present)
{
	size_t len = gib << 30, pieces = mib_present < 16 ? mib_present : 16, k;
	size_t piece = pieces ? ((mib_present << 20) / pieces) & ~(size_t)(page - 1) : 0;
	uint64_t seed = next_seed++;
	char *p;

	if (!gib || (mib_present << 20) > len)
		die("reserve=GIB:MIB needs 0 < MIB <= GIB * 1024");
	/* A PROT_NONE page below keeps it a region of its own: the kernel
	 * would merge reservations made one after the other into one. */
	p = mmap(NULL, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap reserve");
	if (mprotect(p, page, PROT_NONE))
		die("mprotect reserve");
	p += page;
	for (k = 0; k < pieces; k++) {
		struct filled f = { (uint64_t *)(p + (len / pieces * k & ~(size_t)((1 << 20) - 1))),
				    piece, SAME, seed, (uint64_t)getpid() };
		for (size_t w = 0; w < piece / 8; w++)
			f.p[w] = seed;
		if (nfilled < 64)
			filled[nfilled++] = f;
	}
	return p;
}

static int heap_by_brk(void)
{
	const char *h = getenv("DUPMEM_HEAP");

	return h && !strcmp(h, "brk");
}

static int run(int argc, char **argv, int i);
static void wait_merged(long pages);

/* Keeps KIB of filled stack alive while the remaining actions run. */
static int with_stack(size_t kib, int argc, char **argv, int i)
{
	volatile char buf[kib * 1024] __attribute__((aligned(4096)));
	size_t len = (kib * 1024) & ~(size_t)(page - 1);

	fill((void *)buf, len);
	region("stack", (char *)buf);
	return run(argc, argv, i);
}

static int run(int argc, char **argv, int i)
{
	for (; i < argc; i++) {
		char *a = argv[i], *v = strchr(a, '=');
		size_t len;

		if (v)
			v++;
		if (!strncmp(a, "mmap=", 5) || !strncmp(a, "mmapk=", 6) || !strncmp(a, "shared=", 7) ||
		    !strncmp(a, "remap=", 6)) {
			int shared = a[0] == 's';
			len = a[4] == 'k' ? mib(v) >> 10 : mib(v);
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				die("mmap");
			if (advise_regions && !shared && madvise(p, len, MADV_MERGEABLE))
				die("madvise(MADV_MERGEABLE)");
			if (a[0] == 'r') {
				p = mremap(p, len, 2 * len, MREMAP_MAYMOVE);
				if (p == MAP_FAILED)
					die("mremap");
				len *= 2;
			}
			fill(p, len);
			last_map = p, last_map_len = len;
			region(shared ? "shared" : a[0] == 'r' ? "remap" : "mmap", p);
		} else if (!strncmp(a, "unique=", 7) || !strncmp(a, "pairs=", 6) || !strncmp(a, "distinct=", 9) ||
			   !strncmp(a, "zeros=", 6) || !strncmp(a, "churn=", 6) || !strncmp(a, "sweep=", 6)) {
			enum pattern pat = a[0] == 'u' ? UNIQUE : a[0] == 'd' ? DISTINCT : a[0] == 'p' ? PAIRS : ZEROS;
			static struct filled churned[8];
			static int nchurned;
			pthread_t t;
			len = mib(v);
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				die("mmap");
			if (advise_regions && madvise(p, len, MADV_MERGEABLE))
				die("madvise(MADV_MERGEABLE)");
			if (a[0] == 'c' || (a[0] == 's' && a[1] == 'w')) {
				if (nchurned == 8)
					die("too many churn regions");
				churned[nchurned] = (struct filled){ (uint64_t *)p, len, SAME, 0, 0 };
				if (pthread_create(&t, NULL, a[0] == 'c' ? churn : sweep, &churned[nchurned++]))
					die("pthread_create");
				usleep(20000);
			} else {
				fill_pattern(p, len, pat);
			}
			*strchr(a, '=') = '\0';
			region(a, p);
		} else if (!strncmp(a, "hugezeros=", 10) || !strncmp(a, "hugefill=", 9)) {
			const size_t huge = 2 << 20;
			len = (mib(v) + huge - 1) & ~(huge - 1);
			char *m = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				die("mmap");
			char *p = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
			if (madvise(p, len, MADV_HUGEPAGE))
				die("madvise(MADV_HUGEPAGE)");
			if (advise_regions && madvise(p, len, MADV_MERGEABLE))
				die("madvise(MADV_MERGEABLE)");
			fill_pattern(p, len, a[4] == 'z' ? ZEROS : SAME);
			*strchr(a, '=') = '\0';
			region(a, p);
		} else if (!strncmp(a, "reserve=", 8)) {
			char *colon = strchr(v, ':');
			if (!colon)
				die("reserve=GIB:MIB");
			last_map_len = (mib(v) >> 20) << 30;
			last_map = reserve(mib(v) >> 20, mib(colon + 1) >> 20);
			region("reserve", last_map);
		} else if (!strncmp(a, "seed=", 5)) {
			next_seed = strtoull(v, NULL, 0);
		} else if (!strcmp(a, "verify")) {
			if (verify())
				return 3;
		} else if (!strncmp(a, "heap=", 5) && heap_by_brk()) {
			len = mib(v);
			char *p = grow_break(len);
			fill(p, len);
			region("heap", p + len - page);
		} else if (!strncmp(a, "heap=", 5)) {
			char *chunk = NULL;
			len = mib(v);
			for (size_t done = 0; done < len; done += 512) {
				chunk = malloc(512 - 16);
				if (!chunk)
					die("malloc");
				memset(chunk, 0x77, 512 - 16);
			}
			region("heap", chunk);
		} else if (!strncmp(a, "sbrk=", 5)) {
			len = mib(v);
			char *p = grow_break(len);
			fill(p, len);
			region("sbrk", p + len - page);
		} else if (!strncmp(a, "file=", 5)) {
			char *colon = strrchr(v, ':');
			if (!colon)
				die("file=PATH:MIB");
			*colon = '\0';
			len = mib(colon + 1);
			FILE *f = fopen(v, "w+");
			if (!f || ftruncate(fileno(f), (off_t)len))
				die(v);
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(f), 0);
			if (p == MAP_FAILED)
				die("mmap file");
			fclose(f);
			fill(p, len);
			region("file", p);
		} else if (!strncmp(a, "stack=", 6)) {
			return with_stack(strtoul(v, NULL, 10), argc, argv, i + 1);
		} else if (!strncmp(a, "name=", 5)) {
			if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)last_map,
				  last_map_len, (unsigned long)v))
				printf("name-failed %s %d\n", strerror(errno), (int)getpid());
		} else if (!strncmp(a, "sleep=", 6)) {
			struct timespec ts = { atol(v) / 1000, (atol(v) % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		} else if (!strncmp(a, "merged=", 7)) {
			wait_merged(atol(v));
		} else if (!strcmp(a, "merge=auto")) {
			if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0)) {
				if (errno != EINVAL)
					die("prctl(PR_SET_MEMORY_MERGE)");
				advise_regions = 1;     /* before 6.4 */
			}
		} else if (!strncmp(a, "merge=", 6)) {
			if (prctl(PR_SET_MEMORY_MERGE, atol(v), 0, 0, 0))
				die("prctl(PR_SET_MEMORY_MERGE)");
		} else if (!strcmp(a, "getmerge")) {
			printf("merge_any %d %d\n", (int)getpid(), prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0));
			fflush(stdout);
		} else if (!strcmp(a, "mergeable")) {
			printf("mergeable %d %d\n", (int)getpid(), mergeable_mappings());
			fflush(stdout);
		} else if (!strcmp(a, "fork")) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid < 0)
				die("fork");
			if (pid > 0) {
				int status;
				if (waitpid(pid, &status, 0) < 0)
					die("waitpid");
				return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			}
		} else if (!strcmp(a, "exec")) {
			argv[i] = argv[0];
			fflush(stdout);
			execv("/proc/self/exe", argv + i);
			die("exec");
		} else if (!strcmp(a, "wait")) {
			char line[64];
			printf("READY %d\n", (int)getpid());
			fflush(stdout);
			if (!fgets(line, sizeof line, stdin))
				clearerr(stdin);
		} else if (!strncmp(a, "exit=", 5)) {
			return atoi(v);
		} else {
			fprintf(stderr, "dupmem: unknown action '%s'\n", a);
			return 99;
		}
	}
	return 0;
}

/* merged=PAGES: see the header. */
static void wait_merged(long pages)
{
	const struct timespec tick = { 0, 50 * 1000000L };

	for (int i = 0; i < 120 * 20; i++) {
		FILE *f = fopen("/proc/self/ksm_merging_pages", "re");
		long now = -1;

		if (f) {
			if (fscanf(f, "%ld", &now) != 1)
				now = -1;
			fclose(f);
		}
		if (now < 0) {
			nanosleep(&(struct timespec){ 5, 0 }, NULL);
			return;
		}
		if (now >= pages)
			return;
		nanosleep(&tick, NULL);
	}
}

int main(int argc, char **argv)
{
	return run(argc, argv, 1);
}
