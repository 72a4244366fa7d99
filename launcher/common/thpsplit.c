/*
 * thpsplit.c - the probe of thpsplit.h: does a split of a transparent
 * huge page free its zero-filled subpages?
 *
 * The probe runs in a child, so that nothing of it stays in ksm-run: the
 * child maps one aligned huge page with MADV_HUGEPAGE, writes it (zeros,
 * and 7 in its last byte, so that one subpage holds data), and then
 * MADV_FREE on its first page: the kernel splits a huge page that such a
 * call covers in part (madvise_free_huge_pmd) at once, where unmapping or
 * mprotect would only split the mapping and leave the page to the
 * deferred-split shrinker.  Rss falls by nearly the huge page where the
 * split freed its zero subpages; it stays where it did not (MADV_FREE
 * frees nothing until memory is short).  No counter of the kernel shows
 * the remap itself (thp_split_page counts splits), hence the measure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/files.h"
#include "common/parse.h"
#include "common/thpsplit.h"
#include "readfile.h"

#ifndef MADV_FREE
#define MADV_FREE 8
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif

#define HPAGE_SIZE_FILE "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/* What the child sends back: a stage it failed at, or the sample. */
enum child_stage { CHILD_OK, CHILD_NO_MAP, CHILD_NO_ADVICE, CHILD_NO_ROLLUP, CHILD_NO_FREE };

struct child_report {
	int stage;
	struct thp_split_sample sample;
};

/* A "Name:   123 kB" line of smaps_rollup, read without stdio (a child of fork). */
static long long rollup_kb(const char *text, const char *name)
{
	const char *p = strstr(text, name);
	long long v = 0;

	if (!p)
		return -1;
	for (p += strlen(name); *p == ' ' || *p == '\t'; p++)
		;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return v;
}

static int read_rollup(long long *rss, long long *huge)
{
	char buf[4096];

	if (read_small_file("/proc/self/smaps_rollup", buf, sizeof buf) < 0)
		return -1;
	*rss = rollup_kb(buf, "\nRss:");
	*huge = rollup_kb(buf, "\nAnonHugePages:");
	return *rss < 0 || *huge < 0 ? -1 : 0;
}

static void child(int out, size_t huge, size_t page)
{
	struct child_report rep = { CHILD_OK, { 0 } };
	struct thp_split_sample *s = &rep.sample;
	char *map, *p;
	size_t i;

	map = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		rep.stage = CHILD_NO_MAP;
		goto send;
	}
	p = (char *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
	/* Kept out of KSM in case ksm-run carries the process-wide flag. */
	(void)madvise(p, huge, MADV_UNMERGEABLE);
	if (madvise(p, huge, MADV_HUGEPAGE) < 0) {
		rep.stage = CHILD_NO_ADVICE;
		goto send;
	}
	if (read_rollup(&s->rss_before, &s->huge_start) < 0) {
		rep.stage = CHILD_NO_ROLLUP;
		goto send;
	}
	for (i = 0; i < huge; i += page)
		((volatile char *)p)[i] = 0;
	((volatile char *)p)[huge - 1] = 7;
	if (read_rollup(&s->rss_before, &s->huge_before) < 0) {
		rep.stage = CHILD_NO_ROLLUP;
		goto send;
	}
	if (madvise(p, page, MADV_FREE) < 0) {
		rep.stage = CHILD_NO_FREE;
		goto send;
	}
	if (read_rollup(&s->rss_after, &s->huge_after) < 0)
		rep.stage = CHILD_NO_ROLLUP;
send:
	(void)!write(out, &rep, sizeof rep);
	_exit(0);
}

enum thp_split_zero thp_split_zero_judge(const struct thp_split_sample *s, long long huge_kb, const char **why)
{
	long long fell = s->rss_before - s->rss_after;

	*why = NULL;
	if (s->huge_before - s->huge_start < huge_kb) {
		*why = "the kernel gave no transparent huge page (transparent_hugepage/enabled "
		       "is \"never\", or none was free)";
		return THP_SPLIT_ZERO_UNKNOWN;
	}
	if (s->huge_after > s->huge_before - huge_kb) {
		*why = "the kernel did not split the huge page";
		return THP_SPLIT_ZERO_UNKNOWN;
	}
	if (fell >= huge_kb / 2)
		return THP_SPLIT_ZERO_FREED;
	if (fell <= huge_kb / 8)
		return THP_SPLIT_ZERO_KEPT;
	*why = "the resident memory changed by an amount that says neither";
	return THP_SPLIT_ZERO_UNKNOWN;
}

static enum thp_split_zero probe(const char **why)
{
	char text[64];
	long long huge;
	long page = sysconf(_SC_PAGESIZE);
	struct child_report rep;
	int fd[2], status;
	pid_t pid;
	ssize_t n;

	if (read_text(HPAGE_SIZE_FILE, text, sizeof text) || parse_ll(text, 1, 1LL << 40, &huge) ||
	    huge < 2 * page) {
		*why = "this kernel has no transparent huge pages";
		return THP_SPLIT_ZERO_UNKNOWN;
	}
	if (pipe2(fd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		*why = strerror(errno);
		return THP_SPLIT_ZERO_UNKNOWN;
	}
	if (pid == 0) {
		close(fd[0]);
		child(fd[1], (size_t)huge, (size_t)page);
	}
	close(fd[1]);
	do
		n = read(fd[0], &rep, sizeof rep);
	while (n < 0 && errno == EINTR);
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof rep) {
		*why = "the probe's process ended without an answer";
		return THP_SPLIT_ZERO_UNKNOWN;
	}
	switch (rep.stage) {
	case CHILD_NO_MAP:
		*why = "no memory for the probe";
		return THP_SPLIT_ZERO_UNKNOWN;
	case CHILD_NO_ADVICE:
		*why = "MADV_HUGEPAGE refused (no transparent huge pages)";
		return THP_SPLIT_ZERO_UNKNOWN;
	case CHILD_NO_ROLLUP:
		*why = "/proc/self/smaps_rollup unreadable";
		return THP_SPLIT_ZERO_UNKNOWN;
	case CHILD_NO_FREE:
		*why = "MADV_FREE refused (Linux 4.5+)";
		return THP_SPLIT_ZERO_UNKNOWN;
	}
	return thp_split_zero_judge(&rep.sample, huge / 1024, why);
}

enum thp_split_zero thp_split_zero_probe(const char **why)
{
	static bool probed;
	static enum thp_split_zero answer;
	static const char *reason;

	if (!probed) {
		answer = probe(&reason);
		probed = true;
	}
	if (why)
		*why = reason;
	return answer;
}

const char *thp_split_zero_name(enum thp_split_zero v)
{
	return v == THP_SPLIT_ZERO_FREED ? "yes" : v == THP_SPLIT_ZERO_KEPT ? "no" : "unknown";
}
