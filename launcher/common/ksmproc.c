/* ksmproc.c - a process's KSM figures, from ksm_stat or by page frame. */
#include <stdio.h>

#include "common/kfeature.h"
#include "common/kpages.h"
#include "common/ksmproc.h"
#include "ksmstat.h"
#include "maps.h"

/* Before 5.19: the pages PID maps from KSM frames. */
static int by_frames(pid_t pid, struct ksmenable_stat *st)
{
	/* Opened once: a host-wide pass reads every process. */
	static struct kpages k = { .kpageflags = -1 };
	static int open_err;
	struct kpages_process p;

	if (k.kpageflags < 0 && !open_err)
		open_err = kpages_open(&k);
	if (open_err || kpages_of_process(&k, pid, NULL, NULL, &p))
		return -1;
	st->merging_pages = p.ksm_pages;
	st->mergeable = p.mergeable;
	return 0;
}

int ksm_proc_stat(pid_t pid, struct ksmenable_stat *st)
{
	char path[64];

	if (!kfeature_present(KF_KSM_STAT) && !kfeature_present(KF_MERGING_PAGES_FILE)) {
		ksm_stat_unknown(st);
		return by_frames(pid, st);
	}
	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
	return ksm_stat_at(path, st);
}

int ksm_stat_at(const char *path, struct ksmenable_stat *st)
{
	if (ksm_stat_parse(path, st))
		return -1;
	if (!kfeature_present(KF_MERGE_ANY_STAT))
		st->merge_any = st->mergeable = -1;     /* as read, or played absent */
	return 0;
}

struct private_regions {
	int mergeable, not;
};

/* The regions the flag makes mergeable: private memory, a file's included (not the stack). */
static int count_private(const struct region *r, void *arg)
{
	struct private_regions *a = arg;

	if (r->cls == REGION_ANON || r->cls == REGION_ANON_NAMED || r->cls == REGION_HEAP || r->cls == REGION_FILE) {
		if (r->mergeable == 1)
			a->mergeable++;
		else
			a->not++;
	}
	return 0;
}

int ksm_proc_merge_any_by_regions(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	return ksm_smaps_merge_any(path);
}

int ksm_proc_merge_any(pid_t pid, const struct ksmenable_stat *st)
{
	if (st->merge_any >= 0)
		return st->merge_any;
	/* Before 6.4 there is no such flag: a mergeable region is the program's own madvise. */
	return kfeature_present(KF_PRCTL) ? ksm_proc_merge_any_by_regions(pid) : 0;
}

int ksm_smaps_merge_any(const char *path)
{
	char buf[16384];
	struct private_regions a = { 0, 0 };

	if (maps_for_each(path, buf, sizeof buf, count_private, &a) != 0)
		return -1;
	if (a.mergeable)
		return 1;
	return a.not ? 0 : -1;
}
