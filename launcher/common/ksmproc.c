/* ksmproc.c - a process's KSM figures, from ksm_stat or by page frame. */
#include <stdio.h>

#include "common/kfeature.h"
#include "common/kpages.h"
#include "common/ksmproc.h"
#include "ksmstat.h"

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
	return ksm_stat_parse(path, st);
}
