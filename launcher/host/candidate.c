/* candidate.c - measuring the memory there is to merge. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "common/ksmproc.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "host/candidate.h"

static int add_rss(pid_t pid, pid_t ppid, void *arg)
{
	long long *kb = arg, v = proc_rss_anon_kb(pid);

	(void)ppid;
	if (v > 0)
		*kb += v;
	return 0;
}

long long candidate_trees(const pid_t *roots, int n)
{
	long long kb = 0;

	for (int i = 0; i < n; i++)
		proc_walk_tree(roots[i], add_rss, &kb);
	return kb * 1024 / sysconf(_SC_PAGESIZE);
}

long long candidate_targets(const pid_t *pids, int n)
{
	long long kb = 0;

	for (int i = 0; i < n; i++) {
		add_rss(pids[i], 0, &kb);
		proc_walk_tree(pids[i], add_rss, &kb);
	}
	return kb * 1024 / sysconf(_SC_PAGESIZE);
}

long long candidate_process_kb(pid_t pid, const struct ksmenable_stat *st)
{
	long long v;

	if (st->merge_any != 1 && st->mergeable != 1 && st->rmap_items <= 0)
		return 0;
	return (v = proc_rss_anon_kb(pid)) > 0 ? v : 0;
}

long long candidate_host(int *nprocs)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long long kb = 0, pid, v;

	*nprocs = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		struct ksmenable_stat st;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		if (ksm_proc_stat((pid_t)pid, &st))
			continue;
		if ((v = candidate_process_kb((pid_t)pid, &st)) > 0) {
			kb += v;
			(*nprocs)++;
		}
	}
	closedir(d);
	return kb * 1024 / sysconf(_SC_PAGESIZE);
}
