/*
 * target.h - enabling or disabling KSM in one running process from
 * outside (target.c): the checks that leave it alone, the calls it is
 * made to run (inject.h), and what came of it.
 */
#ifndef KSMRUN_TARGET_H
#define KSMRUN_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "selection.h"

enum target_outcome {
	TARGET_DONE,                    /* enabled (or disabled) now */
	TARGET_ALREADY,                 /* it was so already: not stopped */
	TARGET_REFUSED,                 /* left alone, or given back unchanged; see why */
	TARGET_ENDED,                   /* it ended before or during the attach: not a refusal */
	TARGET_NOT_DONE,                /* a stop signal came first: left alone; see why */
};

struct target_plan {
	bool disable;                   /* --detach */
	bool process_wide;              /* the prctl; else madvise of the selection */
	const struct selection *sel;    /* the madvise form's choice */
	const sigset_t *stops;          /* pending, they end the attach between stops; or NULL */
};

struct target_result {
	pid_t pid, tid;                 /* the process, and the thread that made the calls */
	char comm[32];
	enum target_outcome outcome;
	char why[256];                  /* REFUSED: the reason and what to do */
	double stopped_s;               /* how long its thread was stopped, in all; 0 if never */
	double longest_stop_s;          /* the longest of its stops */
	int stops;                      /* how often (one per BATCH_REGIONS regions) */
	int calls;                      /* system calls it made for us */
	int regions;                    /* madvise form: regions advised; prctl form: secret-like kept out */
	unsigned long long bytes;       /* their size */
	int merge_any, mergeable;       /* ksm_stat afterwards: 1, 0, -1 unknown */
	bool restarted;                 /* a call failed by the stop was restarted for it */
};

/* Whether this kernel has PR_SET_MEMORY_MERGE (probed once in ksm-run itself). */
bool target_kernel_has_prctl(void);

/*
 * Does as PLAN says in process PID; never fails without filling *R.  The
 * process is pinned (pin.h) before it is judged, and every stop checks
 * that it is still the process, the program and the credentials judged.
 */
void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r);

#endif
