/*
 * outcome.h - what a caller of the ptrace engine (--attach, the host
 * agent) asks of one process and what came of it: the plan target.c
 * judges by and stops.c carries out, and the result both fill in and the
 * callers print or log.
 */
#ifndef KSMRUN_OUTCOME_H
#define KSMRUN_OUTCOME_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "selection.h"

enum target_outcome {
	TARGET_DONE,                    /* enabled (or disabled) now */
	TARGET_ALREADY,                 /* it was so already: not stopped */
	TARGET_REFUSED,                 /* left alone, or given back unchanged; see why */
	TARGET_NONE_MATCHED,            /* madvise form: no region matched the selection; not stopped */
	TARGET_ENDED,                   /* it ended before or during the attach: not a refusal */
	TARGET_NOT_DONE,                /* a stop signal came first: left alone; see why */
	TARGET_LATER,                   /* later_if_stuck: its thread would not stop now; see why */
	TARGET_ABSENT,                  /* a PID that no process had when the targets were resolved: a failure */
};

struct target_plan {
	bool disable;                   /* --detach */
	bool process_wide;              /* the prctl; else madvise of the selection */
	const struct selection *sel;    /* the madvise form's choice */
	double stop_budget_s;           /* the longest a stop should last; 0: 10 ms */
	double stop_wait_s;             /* how long its thread is waited for to stop; 0: 5 s */
	/*
	 * The agent's: a thread in uninterruptible sleep (a vfork parent waits
	 * for its child, or I/O) is not seized, and one that does not stop in
	 * STOP_WAIT_S is let go: TARGET_LATER, tried again later, so that no
	 * target holds up the others.
	 */
	bool later_if_stuck;
	const sigset_t *stops;          /* pending, they end the attach between stops; or NULL */
	/*
	 * What the caller judged besides the pin (the agent's rule: its
	 * cgroup, user, program), looked at again at each stop: NULL when it
	 * still holds, else why not (a refusal).  NULL: nothing more.
	 */
	const char *(*still_judged)(pid_t pid, void *ctx);
	void *judged_ctx;
};

struct target_result {
	pid_t pid, tid;                 /* the process, and the thread that made the calls */
	char comm[32];
	enum target_outcome outcome;
	char why[256];                  /* REFUSED: the reason and what to do */
	double stopped_s;               /* how long its thread was stopped, in all; 0 if never */
	double longest_stop_s;          /* the longest of its stops */
	int stops;                      /* how often (as many as the stop budget needs) */
	int calls;                      /* system calls it made for us */
	int regions;                    /* as read back: madvise form, regions advised (made unmergeable);
					 * prctl form, secret-like kept out (unmerged before the flag went) */
	unsigned long long bytes;       /* their size, as read back */
	int merge_any, mergeable;       /* ksm_stat afterwards: 1, 0, -1 unknown */
	bool flags_by_regions;          /* those two told by its regions' VmFlags: ksm_stat has no
					 * such lines (before 6.14) */
	bool restarted;                 /* a call failed by the stop was restarted for it */
	int raise_refused;              /* the errno of a stop's raise refused (stopprio.h), else 0 */
	bool died_in_call;              /* in (or of) a call made for us: a refusal */
	bool flag_carried;              /* refused for an exec that kept the flag we set (target.c) */
};

/* R refused, for the reason FMT says. */
__attribute__((format(printf, 2, 3)))
void target_refuse(struct target_result *r, const char *fmt, ...);

/* R refused: the kernel would not let us trace it; the reason and the fix. */
void target_not_permitted(struct target_result *r);

/* "enabled", "already disabled", "refused"...: R's outcome in a word or two. */
const char *target_outcome_word(const struct target_result *r, bool disable);

/*
 * R in one line (no newline), as --attach prints it and the agent logs it:
 * "1234 (php-fpm): enabled, process-wide (prctl); stopped 0.41 ms; ...".
 */
void target_result_line(const struct target_result *r, const struct target_plan *p, char *buf, size_t len);

#endif
