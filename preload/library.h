/*
 * library.h - the state of libksmenable in this process, shared by the
 * constructor (init.c), the interposed functions (interpose.c), the rescan
 * thread (rescan.c) and the exit report (report.c).
 */
#ifndef KSMENABLE_LIBRARY_H
#define KSMENABLE_LIBRARY_H

#include "advise.h"
#include "config.h"

/* What the library did in this process, for the report and the log. */
enum applied { APPLIED_NONE, APPLIED_OFF, APPLIED_PRCTL, APPLIED_MADVISE };

struct library {
	struct config cfg;
	struct selection sel;
	enum applied applied;
	const char *error;            /* why nothing was applied, or NULL */
	/* Set while madvise mode is in force: interposed calls and the rescan
	 * advise new regions.  Cleared when the kernel refuses KSM for good. */
	volatile int watching;
	struct advise_stats last;     /* the latest pass */
	unsigned long passes;
	int reported_errors;          /* bit per kernel error already warned about */
};

extern struct library lib;

/*
 * A kernel refusal ERR from madvise or prctl, during WHAT.  Warns once per
 * kind; stops watching when KSM cannot work here (EINVAL, EPERM).
 */
void library_kernel_error(int err, const char *what);

/* One advise pass with the library's selection, updating lib.last. */
void library_pass(void);

/* rescan.c: the helper thread that covers regions made after start. */
void rescan_start(void);
void rescan_stop(void);
void rescan_after_fork_child(void);
int rescan_running(void);

/* report.c: the KSM_ENABLE_REPORT line at exit. */
void report_write(void);

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#define PR_GET_MEMORY_MERGE 68
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#define EXPORT __attribute__((visibility("default")))

#endif
