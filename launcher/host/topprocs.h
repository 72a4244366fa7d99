/*
 * topprocs.h - the machine's processes with merged pages, most first
 * (topprocs.c), from each one's /proc/PID/ksm_stat: for --status and
 * --status --watch.
 */
#ifndef KSMRUN_TOPPROCS_H
#define KSMRUN_TOPPROCS_H

struct top_process {
	int pid;
	long long merging;              /* ksm_merging_pages */
	long long profit;               /* ksm_process_profit, bytes (0 when the kernel lacks it) */
	char comm[32];
};

/*
 * Every readable process with merged pages, most merged first: their
 * number, and the array in *OUT (to free; NULL when none).  Processes
 * whose ksm_stat cannot be read (other users', without root) are left out.
 */
int top_processes_collect(struct top_process **out);

#endif
