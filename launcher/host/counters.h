/*
 * counters.h - the machine's KSM counters (/sys/kernel/mm/ksm) and ksmd's
 * CPU time, sampled together: what the tuner and the reports are fed.
 */
#ifndef KSMRUN_COUNTERS_H
#define KSMRUN_COUNTERS_H

#include <stdbool.h>
#include <sys/types.h>

#define SYS_COUNTERS 9
extern const char *const sys_counter_names[SYS_COUNTERS];

struct sys_sample {
	double t;                   /* now_s() when taken */
	long long v[SYS_COUNTERS];  /* LLONG_MIN: this kernel lacks it */
	/* general_profit computed by the kernel's formula from the page
	 * counters, where the kernel has no such file (before Linux 6.4). */
	bool profit_computed;
	double ksmd_cpu;            /* seconds; negative when unknown */
};

/*
 * Every counter now, and ksmd's CPU time (KSMD from ksmd_find, or 0).
 * Where the kernel lacks general_profit, it is computed (profit_computed).
 */
void counters_sample(struct sys_sample *out, pid_t ksmd);
/* The same from the files in DIR (recorded text of other kernels, in the unit tests). */
void counters_sample_from(struct sys_sample *out, const char *dir, pid_t ksmd);
/* A counter by name; LLONG_MIN when unknown. */
long long sys_value(const struct sys_sample *ss, const char *name);

/* The ksmd kernel thread's pid, or 0. */
pid_t ksmd_find(void);
double ksmd_cpu_seconds(pid_t ksmd);

/*
 * The pages ksmd tracks now, from the kernel's own formula:
 * general_profit = (pages_sharing + ksm_zero_pages) * page - rmap_items * 64;
 * where general_profit is missing (Linux 6.1), the sum of pages_shared,
 * pages_sharing, pages_unshared and pages_volatile.  -1 when neither can be had.
 */
long long sys_rmap_items(const struct sys_sample *ss);

/*
 * Are the counters left over from an earlier run?  ksmd updates
 * pages_shared, pages_sharing and general_profit only while it runs: with
 * run=0 they keep what they were when it stopped, processes that have
 * exited since included, and they drop only once it runs again.  RUN is
 * the run knob's text (NULL: unknown, taken as live).
 */
bool counters_left_over(const char *run, long long pages_shared, long long pages_sharing);
/* The same, of the machine now. */
bool counters_left_over_now(void);

/*
 * general_profit by the kernel's formula, (pages_sharing + ksm_zero_pages) *
 * page - rmap items * 64, from counters every kernel has (ksm_zero_pages
 * taken as 0 where it is LLONG_MIN, as the kernels without it merge no zero
 * page apart); LLONG_MIN when one of the page counters is.
 */
long long counters_profit_of(long long shared, long long sharing, long long unshared, long long volatile_,
			     long long zero_pages, long long page);

#endif
