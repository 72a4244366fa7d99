/*
 * library.h - the state of libksmenable in this process (library.c), shared
 * by the constructor (init.c), the interposed functions (interpose.c), the
 * rescan thread (rescan.c), the exit report (report.c) and the API.
 */
#ifndef KSMENABLE_LIBRARY_H
#define KSMENABLE_LIBRARY_H

#include "advise.h"
#include "config.h"
#include "kernel_abi.h"

/* What the library did in this process, for the report and the log. */
enum applied { APPLIED_NONE, APPLIED_OFF, APPLIED_PRCTL, APPLIED_MADVISE };

struct library {
	struct config cfg;
	struct selection sel;
	enum applied applied;
	const char *error;            /* why nothing was applied, or NULL */
	/* Set while madvise mode is in force: interposed calls and the rescan
	 * advise new regions.  Cleared when the kernel refuses KSM for good,
	 * from any thread: read and written only through library_watching()
	 * and library_stop_watching(). */
	int watching;
	struct advise_stats last;     /* the latest pass */
	unsigned long passes;
	unsigned long reported_errors; /* bit per kind of error already warned about: __atomic_fetch_or */
};

extern struct library lib;

/*
 * State shared between threads without a lock is read and written with
 * the __atomic builtins, each variable's order said where it is defined.
 * watching guards no other data: relaxed, so each interposed call pays a
 * plain load.
 */
static inline int library_watching(void)
{
	return __atomic_load_n(&lib.watching, __ATOMIC_RELAXED);
}

static inline void library_set_watching(int on)
{
	__atomic_store_n(&lib.watching, on, __ATOMIC_RELAXED);
}

/*
 * A kernel refusal ERR from madvise or prctl, during WHAT.  Warns once per
 * kind; stops watching when KSM cannot work here (EINVAL, EPERM).
 */
void library_kernel_error(int err, const char *what);

/* One advise pass with the library's selection, updating lib.last. */
void library_pass(void);
/* The same on the rescan thread's open /proc/self/maps. */
void library_pass_fd(int maps_fd);

/* The process-wide flag, PR_SET_MEMORY_MERGE: 0 or -1 with errno. */
int library_process_merge(int on);

#define EXPORT __attribute__((visibility("default")))

#endif
