/*
 * watchview.h - what one view of --status --watch holds, and the view for
 * a terminal (watchview.c): as much as the screen takes, never more.
 */
#ifndef KSMRUN_WATCHVIEW_H
#define KSMRUN_WATCHVIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "host/counters.h"
#include "host/groups.h"
#include "host/hoststate.h"
#include "host/topprocs.h"

/* The trend kept: more views than any terminal is wide. */
#define WATCH_HISTORY 512

struct watch_point {
	long long saved;                /* general_profit, bytes; LLONG_MIN unknown */
	double cpu_pct;                 /* ksmd, % of a core; negative unknown */
};

/* The last views' figures, oldest first from START (a ring). */
struct watch_history {
	struct watch_point p[WATCH_HISTORY];
	int n, start;
};

void watch_history_add(struct watch_history *h, struct watch_point pt);

struct view {
	double interval;
	struct sys_sample now;
	double cpu_pct;                 /* ksmd over the last interval; negative before the second view */
	long long full_scans_delta;     /* LLONG_MIN before the second view */
	struct cgroup_groups groups;
	bool groups_ok;
	struct top_process *top;        /* most merged first */
	int ntop;
	struct hoststate st;
	int st_r;                       /* hoststate_peek's */
	const struct watch_history *hist;
};

/*
 * The view for a terminal of ROWS x COLS on F, from the top of the screen:
 * the figures, the trend, then the top processes, the groups and the
 * registered instances sharing the rows that are left.  At most ROWS - 1
 * lines (the cursor's line stays free, so nothing scrolls); the caller
 * cuts lines that are wider than COLS.
 */
void watch_text_view(FILE *f, const struct view *v, int rows, int cols);

#endif
