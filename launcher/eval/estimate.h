/*
 * estimate.h - ksm-run --estimate: what KSM would save, without KSM.
 */
#ifndef KSMRUN_ESTIMATE_H
#define KSMRUN_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct estimate_opts {
	const char *target;        /* --estimate=TARGET */
	const char *allow, *deny;  /* --allow, --deny: selector lists, or NULL */
	double settle;             /* --settle=SECONDS; 0: a single pass */
	bool json;                 /* --json */
	const char *output;        /* NULL: stdout */
};

/* Runs the estimate; returns the exit status (0, or 125 for bad input). */
int estimate_main(const struct estimate_opts *o);

/* The scan's results, shared by estimate.c and estimate_report.c. */
struct est_class {
	char *name;                /* "heap", "stack", "anon", "anon:NAME", a path */
	uint64_t candidate;        /* present anonymous pages */
	double saved;              /* pages saved, fair shares */
	unsigned processes;
	unsigned last_proc;        /* to count processes once */
};

struct est_proc {
	pid_t pid;
	char comm[32];
	const char *skipped;       /* why it was not scanned, or NULL */
	uint64_t candidate, volatile_pages;
	double saved;
	long long merging_now, profit_now, rmap_now;   /* from ksm_stat; -1 unknown */
	size_t first_rec, nrec;    /* its records, after the scan */
};

struct est_result {
	struct est_proc *procs;
	size_t nprocs;
	struct est_class *classes;
	size_t nclasses;
	/* The prediction, in the kernel's terms. */
	uint64_t pages_sharing, pages_shared, pages_unshared, zero_pages;
	uint64_t rmap_items, candidate, volatile_pages, distinct;
	uint64_t within_pages, across_pages;  /* savings within one process / across */
	long long profit_bytes, merging_now, profit_now, rmap_now;
	long long saved_now;                  /* pages physically shared now; -1 unknown */
	uint64_t single_frame_pages;          /* mappings of one unmerged frame: never merged */
	int max_page_sharing, use_zero_pages;
	long long page_size;                  /* bytes, of the machine that was read */
	double seconds, settle;
	uint64_t bytes_read;
	size_t table_bytes, record_bytes;
	bool pfn_visible;
};

void estimate_print(FILE *f, const struct est_result *r, bool json);

#endif
