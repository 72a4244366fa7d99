/*
 * tree.h - sampling the command's process tree and the machine's KSM
 * counters while the command runs (tree.c): the figures of the report.
 */
#ifndef KSMRUN_TREE_H
#define KSMRUN_TREE_H

#include <stdbool.h>
#include <sys/types.h>

#include "host/counters.h"

struct proc_info {
	pid_t pid, ppid;
	pid_t merge_ppid;	/* its parent when it was first seen merging (0: never) */
	bool alive;		/* seen at the last sample */
	int ended_by;		/* the last signal --end-survivors sent it, 0 none */
	char *cgroup;		/* its group (groups.h) when first seen merging; NULL unknown */
	char comm[32];
	long long merging;	/* at the last sample */
	long long rmap_items, zero_pages; /* at the last sample; 0 unknown */
	long long peak_merging;
	long long profit, peak_profit;
	int merge_any;		/* -1 unknown, 0, 1 */
	bool sampled, from_lib, lib_mapped;
	int maps_checks;
	char mode[16];
	char error[128];
	/* From its exit line: what the library kept out, and why (bytes; -1 unknown). */
	long long kept_user, kept_program, kept_secret;
};

struct sampler {
	struct sys_sample first, last;
	long long profit_peak;	/* highest general_profit seen */
	/* Highest general_profit seen two full scans after the first sample, when
	 * ksmd has dropped what stale counters held; LLONG_MIN: none yet. */
	long long profit_peak_live;
	double scan_t0, scan_t1;	/* times full_scans first and last moved */
	long long scans_t0, scans_t1;
	int nprocs, cap;
	struct proc_info *procs;
	pid_t ksmd;
	const char *libpath;
	const char *report_path;
	const char *token;             /* lines without it are not the command's */
	off_t report_off;
	unsigned long foreign_lines;   /* lines that lacked the token: ignored */
	bool truncated;                /* more processes than MAX_TRACKED */
	/* The tree's saving by page frame (frames.c), at the last pass and its peak, bytes. */
	long long saved_last, saved_peak; /* LLONG_MIN: never counted */
	int frames_error;              /* -errno of the last pass, 0 */
	double frames_t;               /* when the last pass ran */
	long long frames_merging;      /* the tree's merged pages then */
	long long candidate_peak;      /* the tree's candidate memory, pages (candidate.c) */
	pid_t root;                     /* followed with its descendants; 0: none */
	/* Other processes followed with their trees (those ksm-run attached to). */
	const pid_t *targets;
	int ntargets;
	/* pid -> index into procs: open addressing, a power of two. */
	int *index;
	size_t index_cap;
};

/*
 * What ksm-run follows: a command it started (its tree, from ROOT),
 * processes that already ran, attached to from outside (TARGETS, with
 * their trees), or no process: the machine alone (the daemon, whose
 * sampler holds only the counters).
 */
enum followed { FOLLOWED_COMMAND, FOLLOWED_ATTACHED, FOLLOWED_MACHINE };

/* The most processes of one tree that are followed. */
#define MAX_TRACKED 65536

/*
 * ROOT is ksm-run itself (its children are the tree); LIBPATH the library
 * whose mapping shows it loaded (or NULL); REPORT_PATH the library's exit
 * lines (or NULL), which count only with TOKEN.  The counters at the start
 * are START's: taken before ksm-run wrote any knob (its run=1 and boost
 * would move them before the first sample otherwise).
 */
void sample_init(struct sampler *s, const struct sys_sample *start, pid_t root, const char *libpath,
		 const char *report_path,
		 const char *token);
/* One sample: counters, every process of the tree, new exit lines. */
void sample_tick(struct sampler *s);
/* The record of PID, made if new; NULL when out of memory (it is not followed). */
struct proc_info *sample_proc(struct sampler *s, pid_t pid);

#endif
