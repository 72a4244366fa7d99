/*
 * stopprio.h - the scheduling priority of ksm-run's tracing thread while a
 * target is stopped (stopprio.c): raised just after the target is seized,
 * put back as it was just before it is let go (inject.h), so that a busy host's other
 * work does not stand between a stop and the tracer that ends it.  The
 * calling thread only, never the target; when not permitted, nothing
 * changes and nothing is said here (the caller may: the daemon's agent
 * logs it once, its unit being meant to allow it).
 */
#ifndef KSMRUN_STOPPRIO_H
#define KSMRUN_STOPPRIO_H

#include <sched.h>
#include <stdbool.h>

/* How the thread is raised. */
enum stopprio_kind {
	STOPPRIO_NONE,                  /* not at all */
	STOPPRIO_FIFO,                  /* SCHED_FIFO, its lowest priority (the default) */
	STOPPRIO_NICE,                  /* nice -20 */
};

/* What the thread was before the raise, to be put back. */
struct stopprio {
	enum stopprio_kind raised;      /* what was done; STOPPRIO_NONE: nothing to put back */
	int refused;                    /* the errno of a raise refused (EPERM; EACCES for nice), else 0 */
	int policy;                     /* sched_getscheduler(), SCHED_RESET_ON_FORK included */
	struct sched_param param;
	int nice;
};

/*
 * The kind used: STOPPRIO_FIFO, or what the test hook
 * KSM_RUN_TEST_STOP_PRIORITY says ("none", "fifo", "nice"; ignored when
 * setuid), read once.
 */
enum stopprio_kind stopprio_kind(void);

/* Raises the calling thread as stopprio_kind() says; SP holds what to put back. */
void stopprio_raise(struct stopprio *sp);

/* Raises the calling thread the KIND way (the unit test's entry). */
void stopprio_raise_as(struct stopprio *sp, enum stopprio_kind kind);

/* Puts the calling thread back as SP says; safe after a raise that did nothing, and twice. */
void stopprio_restore(struct stopprio *sp);

#endif
