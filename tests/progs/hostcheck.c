/*
 * hostcheck - checks that the interposed functions leave the host's view
 * unchanged: errno after successful and failing calls, return values, and
 * no recursion when many mappings come and go.  Prints "hostcheck ok" or
 * one line per problem, and exits 1 on any problem.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#define PR_GET_MEMORY_MERGE 68

static int problems;

static void expect_errno(const char *what, int want)
{
	if (errno != want) {
		printf("%s: errno %d (%s), expected %d\n", what, errno, strerror(errno), want);
		problems++;
	}
}

int main(void)
{
	const size_t len = 64 * 1024;
	int i, ret;
	char *p;

	errno = 1234;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		printf("mmap failed\n"), problems++;
	expect_errno("successful mmap", 1234);

	errno = 0;
	if (mmap(NULL, len, PROT_READ, MAP_PRIVATE, 987, 0) != MAP_FAILED)
		printf("mmap of a bad fd succeeded\n"), problems++;
	expect_errno("mmap of a bad fd", EBADF);

	/* -1 with EINVAL where the kernel has no such prctl (before 6.4), as without the library. */
	errno = 1234;
	ret = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0);
	if (ret != 0 && ret != 1 && ret != -1)
		printf("PR_GET_MEMORY_MERGE returned %d\n", ret), problems++;
	expect_errno("PR_GET_MEMORY_MERGE", ret == -1 ? EINVAL : 1234);

	/* Fails where the kernel has no CONFIG_ANON_VMA_NAME. */
	errno = 1234;
	ret = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, len, (unsigned long)"x");
	expect_errno("PR_SET_VMA_ANON_NAME", ret ? EINVAL : 1234);

	errno = 0;
	if (prctl(-1, 0, 0, 0, 0) != -1)
		printf("prctl(-1) succeeded\n"), problems++;
	expect_errno("prctl(-1)", EINVAL);

	for (i = 0; i < 20000; i++) {
		char *q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED) {
			printf("mmap %d failed: %s\n", i, strerror(errno));
			problems++;
			break;
		}
		q[0] = 1;
		munmap(q, len);
	}
	if (!problems)
		printf("hostcheck ok\n");
	return problems != 0;
}
