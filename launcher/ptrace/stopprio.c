/*
 * stopprio.c: ksm-run's tracing thread raised for the length of a stop.
 *
 * A stop's worst cases (13.6 ms, 22 ms with 8 threads, against a 10 ms
 * budget; issue 20) were its waits for a CPU, not its work: each step of a
 * stop (the interrupt, a call's entry and exit, the second interrupt, the
 * detach) wakes the tracer, which may then wait behind the other tasks of
 * its core.  SCHED_FIFO at its lowest priority (1) runs it the moment it
 * wakes, ahead of every ordinary task, and no higher than any real-time
 * thread of the host (FIFO of equal priority does not preempt).  It cannot starve the host: in the stop the
 * tracer blocks in sigtimedwait/waitpid for each step of the target and
 * never spins, its own work in a stop is bounded by the stop budget, and
 * the kernel's RT throttling (sched_rt_runtime_us) stays as a backstop.
 * nice -20 (setpriority) is the other way, and the test hook chooses it
 * for the benchmark; it only weighs the tracer heavier in the fair share,
 * so a waking tracer may still wait for the running task's slice to end.
 *
 * Only the calling thread is changed (both calls act on a thread on
 * Linux), and only the way back is always permitted: leaving SCHED_FIFO,
 * or raising nice again.  SCHED_RESET_ON_FORK is not used because an
 * unprivileged thread (RLIMIT_RTPRIO) could not clear it on the way back,
 * and nothing forks in a stop.  The target's priority is never touched:
 * it is not ours to change, and it runs between the stops as it always did.
 *
 * The daemon's agent raises its stops too: its unit grants CAP_SYS_NICE,
 * lets sched_setscheduler through its filter and has RestrictRealtime=no
 * for this alone (launcher/systemd/ksmenable.service.in says why); where
 * the raise is refused all the same, the agent logs it once.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ptrace/stopprio.h"
#include "common/msg.h"

#define FIFO_PRIORITY 1
#define NICE_RAISED (-20)

static enum stopprio_kind hook_kind = STOPPRIO_FIFO;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

/* The benchmark's hook, KSM_RUN_TEST_STOP_PRIORITY (ignored when setuid). */
static void read_hook(void)
{
	const char *v = secure_getenv("KSM_RUN_TEST_STOP_PRIORITY");

	if (!v)
		return;
	if (!strcmp(v, "none"))
		hook_kind = STOPPRIO_NONE;
	else if (!strcmp(v, "nice"))
		hook_kind = STOPPRIO_NICE;
	else if (strcmp(v, "fifo"))
		msg("KSM_RUN_TEST_STOP_PRIORITY=%s: not none, fifo or nice; fifo is used", v);
}

enum stopprio_kind stopprio_kind(void)
{
	pthread_once(&hook_once, read_hook);
	return hook_kind;
}

static bool realtime(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_DEADLINE;
}

void stopprio_raise_as(struct stopprio *sp, enum stopprio_kind kind)
{
	struct sched_param fifo = { .sched_priority = FIFO_PRIORITY };
	int saved_errno = errno;

	memset(sp, 0, sizeof *sp);
	sp->raised = STOPPRIO_NONE;
	sp->policy = sched_getscheduler(0);
	errno = 0;
	sp->nice = getpriority(PRIO_PROCESS, 0);
	/* Unknown, or real-time already (its owner chose that): left as it is. */
	if (kind == STOPPRIO_NONE || sp->policy < 0 || (sp->nice == -1 && errno) ||
	    sched_getparam(0, &sp->param) || realtime(sp->policy))
		goto out;
	/* Not permitted (EPERM): it runs as it did, which is no harm; the caller may say so. */
	if (kind == STOPPRIO_FIFO) {
		if (sched_setscheduler(0, SCHED_FIFO, &fifo) == 0)
			sp->raised = STOPPRIO_FIFO;
		else
			sp->refused = errno;
	} else if (sp->nice > NICE_RAISED) {
		if (setpriority(PRIO_PROCESS, 0, NICE_RAISED) == 0)
			sp->raised = STOPPRIO_NICE;
		else
			sp->refused = errno;
	}
out:
	errno = saved_errno;
}

void stopprio_raise(struct stopprio *sp)
{
	stopprio_raise_as(sp, stopprio_kind());
}

void stopprio_restore(struct stopprio *sp)
{
	int saved_errno = errno;

	/* Leaving SCHED_FIFO keeps the nice it had (the kernel keeps it through). */
	if (sp->raised == STOPPRIO_FIFO)
		sched_setscheduler(0, sp->policy, &sp->param);
	else if (sp->raised == STOPPRIO_NICE)
		setpriority(PRIO_PROCESS, 0, sp->nice);
	sp->raised = STOPPRIO_NONE;
	errno = saved_errno;
}
