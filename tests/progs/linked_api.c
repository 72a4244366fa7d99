/*
 * linked_api - a program that links libksmenable (no LD_PRELOAD) and uses
 * its API.  Prints what it sees, one fact a line, then waits for stdin:
 *   merge_any PID N        PR_GET_MEMORY_MERGE at start
 *   region mmap ADDR PID   an 8 MiB region of duplicate pages
 *   apply N                ksmenable_apply("anon", NULL)
 *   bad-selector ERRNO     ksmenable_apply("bogus", NULL)
 *   stat ...               ksmenable_read_stat
 *   version V
 *   READY PID
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ksmenable.h"

int main(void)
{
	const size_t len = 8 << 20;
	struct ksmenable_stat st;
	char line[64], *p;
	int n;

	printf("merge_any %d %d\n", (int)getpid(), prctl(68, 0, 0, 0, 0));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	memset(p, 0x42, len);
	printf("region mmap %lx %d\n", (unsigned long)p, (int)getpid());
	n = ksmenable_apply("anon", NULL);
	printf("apply %d\n", n);
	errno = 0;
	n = ksmenable_apply("bogus", NULL);
	printf("bad-selector %d %s\n", n, errno == EINVAL ? "EINVAL" : strerror(errno));
	if (ksmenable_read_stat(&st) == 0)
		printf("stat rmap_items=%lld merging_pages=%lld profit=%lld merge_any=%d\n",
		       st.rmap_items, st.merging_pages, st.process_profit, st.merge_any);
	else
		printf("stat failed %s\n", strerror(errno));
	printf("version %s\n", ksmenable_version());
	printf("READY %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	if (ksmenable_read_stat(&st) == 0)
		printf("stat merging_pages=%lld\n", st.merging_pages);
	return 0;
}
