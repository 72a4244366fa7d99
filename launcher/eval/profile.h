/* profile.h - ksm-run --profile: merged memory by region class, and the
 * allow list that keeps most of it. */
#ifndef KSMRUN_PROFILE_H
#define KSMRUN_PROFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/kpages.h"
#include "selection.h"
#include "selector.h"

struct profile_class {
	char *name;
	long long cand_kb, merged_kb;      /* peaks over the run */
	unsigned procs;                    /* most processes holding it at once */
	long long tick_cand, tick_merged;  /* the sample being taken */
	unsigned tick_procs;
	pid_t tick_pid;
};

struct profile {
	double threshold;                  /* percent of merged memory to keep */
	struct profile_class *c;
	size_t n;
	unsigned samples;
	int incomplete;                    /* a class was left out: out of memory */
	bool by_frames;                    /* no smaps "KSM:" (before 6.6): merged by page frame */
	struct kpages frames;
	struct selector_list all, none;
	struct selection sel;
	/* After profile_finish: classes sorted by merged memory. */
	char recommended[8192];            /* selector list; "" when nothing merged */
	size_t nrecommended;               /* the first N classes */
	long long total_cand_kb, total_merged_kb;
	double kept_pct, dropped_pct;
};

void profile_init(struct profile *p, double threshold);
/* One sample of the smaps of PIDS (the command's process tree). */
void profile_sample(struct profile *p, const pid_t *pids, size_t n);
void profile_finish(struct profile *p);
void profile_print(FILE *f, const struct profile *p);
struct jsonw;
/* Two members of the report's object: "profile":{...} and "recommended_allow". */
void profile_json(struct jsonw *w, const struct profile *p);

#endif
