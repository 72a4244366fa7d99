/*
 * marks - a careful program, for the tests of what the library must keep
 * out of KSM: it marks its own memory the way programs holding keys do.
 *
 *   marks ACTION...
 *
 * Regions are named; each is filled with pages of one value (duplicates of
 * each other, so that KSM merges them if it may), and announced as
 *   region NAME ADDR PID
 *
 *   map=NAME:MIB        anonymous private mapping, filled
 *   mapk=NAME:KIB       the same, sized in KiB (under 1 MiB: left to the rescan)
 *   renew=NAME          munmap, then a new mapping at the very same address
 *   unmergeable=NAME    madvise(MADV_UNMERGEABLE)      posix-unmergeable=NAME: through posix_madvise
 *   raw-unmergeable=NAME  the system call itself (the library cannot see it)
 *   mergeable=NAME      madvise(MADV_MERGEABLE), the program's own choice
 *   dontdump=NAME       madvise(MADV_DONTDUMP)         wipeonfork=NAME: MADV_WIPEONFORK
 *   mlock=NAME          mlock                         munlock=NAME
 *   mlock2=NAME         mlock2(flags 0): a sanitizer's runtime makes mlock a no-op, not mlock2
 *   mlockall / munlockall
 *   unmap=NAME          munmap                        move=NAME: mremap elsewhere, twice the size
 *   pieces=N            one mapping of 2N pages, every other page made
 *                       MADV_UNMERGEABLE: N separate ranges (fills the library's table)
 *   dontdump-pieces=N   the same with MADV_DONTDUMP (a table full of marks that are not secret)
 *   merge=0|1           prctl(PR_SET_MEMORY_MERGE)    getmerge: "merge_any PID N"
 *   apply=LIST          ksmenable_apply(LIST, NULL) when the library is loaded: "apply N ERRNO"
 *   fork                the rest runs in a child; the parent waits
 *   verify              every region still holds what was written ("verify ok", or exit 3)
 *   sleep=MS  wait (READY, then a line on stdin)
 */
#include <dlfcn.h>
#include <errno.h>
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

#define PR_SET_MEMORY_MERGE_ 67
#define PR_GET_MEMORY_MERGE_ 68

struct named {
	char name[32];
	uint64_t *p;
	size_t len;
	uint64_t value;
};

static struct named regions[32];
static int nregions;
static long page;

static void die(const char *what)
{
	fprintf(stderr, "marks: %s: %s\n", what, strerror(errno));
	exit(98);
}

static struct named *find(const char *name)
{
	for (int i = 0; i < nregions; i++)
		if (!strcmp(regions[i].name, name))
			return &regions[i];
	fprintf(stderr, "marks: no region '%s'\n", name);
	exit(99);
}

static void announce(const struct named *r)
{
	printf("region %s %lx %d\n", r->name, (unsigned long)r->p, (int)getpid());
	fflush(stdout);
}

static void fill(struct named *r)
{
	for (size_t i = 0; i < r->len / 8; i++)
		r->p[i] = r->value;
}

static void map_region(const char *arg, int shift)
{
	const char *colon = strchr(arg, ':');
	struct named *r = &regions[nregions];

	if (!colon || nregions == 32)
		die("map=NAME:MIB");
	snprintf(r->name, sizeof r->name, "%.*s", (int)(colon - arg), arg);
	r->len = strtoul(colon + 1, NULL, 10) << shift;
	r->value = 0x6b657973ULL * (uint64_t)(nregions + 1) | 1;
	r->p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->p == MAP_FAILED)
		die("mmap");
	fill(r);
	nregions++;
	announce(r);
}

static int verify(void)
{
	for (int k = 0; k < nregions; k++)
		for (size_t i = 0; regions[k].p && i < regions[k].len / 8; i++)
			if (regions[k].p[i] != regions[k].value) {
				printf("verify FAILED in %s\n", regions[k].name);
				return 3;
			}
	printf("verify ok\n");
	fflush(stdout);
	return 0;
}

static void advise(const char *name, int advice, const char *what)
{
	struct named *r = find(name);

	if (madvise(r->p, r->len, advice))
		die(what);
}

static void pieces(long n, int advice, const char *name)
{
	char *p = mmap(NULL, (size_t)(2 * n * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap pieces");
	for (long i = 0; i < n; i++)
		if (madvise(p + 2 * i * page, (size_t)page, advice))
			die("madvise pieces");
	printf("region %s %lx %d\n", name, (unsigned long)p, (int)getpid());
	fflush(stdout);
}

static void apply(const char *list)
{
	int (*fn)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "ksmenable_apply");
	int r;

	if (!fn) {
		printf("apply none 0\n");
	} else {
		errno = 0;
		r = fn(list, NULL);
		printf("apply %d %d\n", r, r < 0 ? errno : 0);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	page = sysconf(_SC_PAGESIZE);
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *v = strchr(a, '=');

		if (v)
			v++;
		if (!strncmp(a, "map=", 4)) {
			map_region(v, 20);
		} else if (!strncmp(a, "mapk=", 5)) {
			map_region(v, 10);
		} else if (!strncmp(a, "renew=", 6)) {
			struct named *r = find(v);
			void *q;
			if (munmap(r->p, r->len))
				die("munmap");
			q = mmap(r->p, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (q != r->p)
				die("mmap MAP_FIXED");
			fill(r);
			announce(r);
		} else if (!strncmp(a, "unmergeable=", 12)) {
			advise(v, MADV_UNMERGEABLE, "madvise(MADV_UNMERGEABLE)");
		} else if (!strncmp(a, "posix-unmergeable=", 18)) {
			struct named *r = find(v);
			if ((errno = posix_madvise(r->p, r->len, MADV_UNMERGEABLE)))
				die("posix_madvise");
		} else if (!strncmp(a, "raw-unmergeable=", 16)) {
			struct named *r = find(v);
			if (syscall(SYS_madvise, r->p, r->len, MADV_UNMERGEABLE))
				die("madvise syscall");
		} else if (!strncmp(a, "mergeable=", 10)) {
			advise(v, MADV_MERGEABLE, "madvise(MADV_MERGEABLE)");
		} else if (!strncmp(a, "dontdump=", 9)) {
			advise(v, MADV_DONTDUMP, "madvise(MADV_DONTDUMP)");
		} else if (!strncmp(a, "wipeonfork=", 11)) {
			advise(v, MADV_WIPEONFORK, "madvise(MADV_WIPEONFORK)");
		} else if (!strncmp(a, "mlock=", 6)) {
			struct named *r = find(v);
			if (mlock(r->p, r->len))
				die("mlock");
		} else if (!strncmp(a, "mlock2=", 7)) {
			struct named *r = find(v);
#ifdef __GLIBC__
			if (mlock2(r->p, r->len, 0))
				die("mlock2");
#else
			(void)r;
			errno = ENOSYS;         /* musl has no mlock2 wrapper */
			die("mlock2");
#endif
		} else if (!strncmp(a, "munlock=", 8)) {
			struct named *r = find(v);
			if (munlock(r->p, r->len))
				die("munlock");
		} else if (!strcmp(a, "mlockall")) {
			if (mlockall(MCL_CURRENT))
				die("mlockall");
		} else if (!strcmp(a, "munlockall")) {
			if (munlockall())
				die("munlockall");
		} else if (!strncmp(a, "unmap=", 6)) {
			struct named *r = find(v);
			if (munmap(r->p, r->len))
				die("munmap");
			r->p = NULL;
		} else if (!strncmp(a, "move=", 5)) {
			struct named *r = find(v);
			void *q = mremap(r->p, r->len, 2 * r->len, MREMAP_MAYMOVE);
			if (q == MAP_FAILED)
				die("mremap");
			r->p = q;
			r->len *= 2;
			fill(r);
			announce(r);
		} else if (!strncmp(a, "pieces=", 7)) {
			pieces(atol(v), MADV_UNMERGEABLE, "pieces");
		} else if (!strncmp(a, "dontdump-pieces=", 16)) {
			pieces(atol(v), MADV_DONTDUMP, "dontdump-pieces");
		} else if (!strncmp(a, "merge=", 6)) {
			if (prctl(PR_SET_MEMORY_MERGE_, atol(v), 0, 0, 0))
				die("prctl(PR_SET_MEMORY_MERGE)");
		} else if (!strcmp(a, "getmerge")) {
			printf("merge_any %d %d\n", (int)getpid(), prctl(PR_GET_MEMORY_MERGE_, 0, 0, 0, 0));
			fflush(stdout);
		} else if (!strncmp(a, "apply=", 6)) {
			apply(v);
		} else if (!strcmp(a, "fork")) {
			pid_t pid;
			int status;
			fflush(stdout);
			if ((pid = fork()) < 0)
				die("fork");
			if (pid > 0) {
				if (waitpid(pid, &status, 0) < 0)
					die("waitpid");
				return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			}
		} else if (!strcmp(a, "verify")) {
			if (verify())
				return 3;
		} else if (!strncmp(a, "sleep=", 6)) {
			struct timespec ts = { atol(v) / 1000, (atol(v) % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		} else if (!strcmp(a, "wait")) {
			char line[64];
			printf("READY %d\n", (int)getpid());
			fflush(stdout);
			if (!fgets(line, sizeof line, stdin))
				clearerr(stdin);
		} else {
			fprintf(stderr, "marks: unknown action '%s'\n", a);
			return 99;
		}
	}
	return 0;
}
