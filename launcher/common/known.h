/*
 * known.h - figures that may be unknown, such as a process's profit on a
 * kernel without ksm_process_profit (before 6.4).  LLONG_MIN is unknown:
 * jw_ll writes it as null and human_bytes as "n/a", never as a number.
 */
#ifndef KSMRUN_KNOWN_H
#define KSMRUN_KNOWN_H

#include <limits.h>

/* SUM += V: the sum stays unknown until a known figure comes. */
static inline void known_add(long long *sum, long long v)
{
	if (v != LLONG_MIN)
		*sum = (*sum == LLONG_MIN ? 0 : *sum) + v;
}

/* ksm_stat's -1 for a field the kernel lacks, as LLONG_MIN. */
static inline long long known_of_stat(long long v)
{
	return v == -1 ? LLONG_MIN : v;
}

#endif
