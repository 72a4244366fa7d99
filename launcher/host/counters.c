/* counters.c - sampling the KSM counters and ksmd's CPU time. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/files.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "host/counters.h"
#include "kernel_abi.h"

const char *const sys_counter_names[SYS_COUNTERS] = {
	"general_profit", "pages_shared", "pages_sharing", "pages_unshared",
	"pages_volatile", "ksm_zero_pages", "full_scans", "pages_scanned", "pages_skipped",
};

void counters_sample(struct sys_sample *out, pid_t ksmd)
{
	counters_sample_from(out, KSM_SYSFS_DIR, ksmd);
}

void counters_sample_from(struct sys_sample *out, const char *dir, pid_t ksmd)
{
	char path[PATH_MAX], buf[64];
	long long v;

	out->t = now_s();
	for (int i = 0; i < SYS_COUNTERS; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, sys_counter_names[i]);
		out->v[i] = LLONG_MIN;
		if (!read_text(path, buf, sizeof buf) && !parse_ll(buf, LLONG_MIN + 1, LLONG_MAX, &v))
			out->v[i] = v;
	}
	out->profit_computed = false;
	if (out->v[0] == LLONG_MIN) {
		out->v[0] = counters_profit_of(sys_value(out, "pages_shared"), sys_value(out, "pages_sharing"),
					       sys_value(out, "pages_unshared"), sys_value(out, "pages_volatile"),
					       sys_value(out, "ksm_zero_pages"), sysconf(_SC_PAGESIZE));
		out->profit_computed = out->v[0] != LLONG_MIN;
	}
	out->ksmd_cpu = ksmd_cpu_seconds(ksmd);
}

/*
 * The kernel's rmap items: it shows pages_volatile as them less the other
 * three page counters (clamped at 0), so the four add up to them.
 * LLONG_MIN when one is missing or the sum overflows.
 */
static long long rmap_items_of(long long shared, long long sharing, long long unshared, long long volatile_)
{
	long long rmap;

	if (shared == LLONG_MIN || sharing == LLONG_MIN || unshared == LLONG_MIN || volatile_ == LLONG_MIN ||
	    __builtin_add_overflow(shared, sharing, &rmap) || __builtin_add_overflow(rmap, unshared, &rmap) ||
	    __builtin_add_overflow(rmap, volatile_, &rmap))
		return LLONG_MIN;
	return rmap;
}

long long counters_profit_of(long long shared, long long sharing, long long unshared, long long volatile_,
			     long long zero_pages, long long page)
{
	long long merged, gain, cost, profit, rmap = rmap_items_of(shared, sharing, unshared, volatile_);

	if (rmap == LLONG_MIN)
		return LLONG_MIN;
	if (zero_pages == LLONG_MIN)
		zero_pages = 0;
	if (__builtin_add_overflow(sharing, zero_pages, &merged) || __builtin_mul_overflow(merged, page, &gain) ||
	    __builtin_mul_overflow(rmap, KSM_RMAP_ITEM_BYTES, &cost) || __builtin_sub_overflow(gain, cost, &profit) ||
	    profit == LLONG_MIN)
		return LLONG_MIN;       /* no kernel counts that much: not a figure */
	return profit;
}

long long sys_value(const struct sys_sample *ss, const char *name)
{
	for (int i = 0; i < SYS_COUNTERS; i++)
		if (!strcmp(sys_counter_names[i], name))
			return ss->v[i];
	return LLONG_MIN;
}

long long sys_rmap_items(const struct sys_sample *ss)
{
	long long gp = sys_value(ss, "general_profit"), sharing = sys_value(ss, "pages_sharing");
	long long zero = sys_value(ss, "ksm_zero_pages"), rmap;

	if (gp != LLONG_MIN && sharing != LLONG_MIN) {
		if (zero == LLONG_MIN)
			zero = 0;
		return ((sharing + zero) * sysconf(_SC_PAGESIZE) - gp) / KSM_RMAP_ITEM_BYTES;
	}
	rmap = rmap_items_of(sys_value(ss, "pages_shared"), sharing, sys_value(ss, "pages_unshared"),
			     sys_value(ss, "pages_volatile"));
	return rmap == LLONG_MIN ? -1 : rmap;
}

/* ksmd is a kernel thread: a child of kthreadd (pid 2), a short list. */
static pid_t ksmd_among_kthreads(void)
{
	FILE *f = fopen("/proc/2/task/2/children", "re");
	char comm[32], path[64];
	int pid;
	pid_t found = 0;

	if (!f)
		return 0;
	while (!found && fscanf(f, "%d", &pid) == 1) {
		snprintf(path, sizeof path, "/proc/%d/comm", pid);
		if (!read_text(path, comm, sizeof comm) && !strcmp(comm, "ksmd"))
			found = pid;
	}
	fclose(f);
	return found;
}

pid_t ksmd_find(void)
{
	pid_t found = ksmd_among_kthreads();
	struct dirent *e;
	DIR *d;

	if (found || !(d = opendir("/proc")))
		return found;
	while (!found && (e = readdir(d))) {
		struct proc_stat st;
		long long pid;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid) || proc_stat_read((pid_t)pid, &st))
			continue;
		/* A kernel thread: its parent is kthreadd, pid 2. */
		if (!strcmp(st.comm, "ksmd") && st.ppid == 2)
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}

double ksmd_cpu_seconds(pid_t ksmd)
{
	struct proc_stat st;

	/* Still the kernel thread: a user's process may reuse the pid and call itself ksmd. */
	if (!ksmd || proc_stat_read(ksmd, &st) || strcmp(st.comm, "ksmd") || st.ppid != 2)
		return -1;
	return (double)(st.utime + st.stime) / (double)sysconf(_SC_CLK_TCK);
}

bool counters_left_over(const char *run, long long pages_shared, long long pages_sharing)
{
	return run && !strcmp(run, "0") && (pages_shared > 0 || pages_sharing > 0);
}

bool counters_left_over_now(void)
{
	char run[64], val[64];
	long long shared = 0, sharing = 0;

	if (read_text(KSM_SYSFS_DIR "/run", run, sizeof run))
		return false;
	if (read_text(KSM_SYSFS_DIR "/pages_shared", val, sizeof val) || parse_ll(val, 0, LLONG_MAX, &shared))
		shared = 0;
	if (read_text(KSM_SYSFS_DIR "/pages_sharing", val, sizeof val) || parse_ll(val, 0, LLONG_MAX, &sharing))
		sharing = 0;
	return counters_left_over(run, shared, sharing);
}
