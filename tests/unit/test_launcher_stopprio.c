/*
 * Unit tests of the tracing thread's priority for a stop
 * (launcher/ptrace/stopprio.c): whatever the thread was before the raise
 * (nice 0, nice 5, SCHED_BATCH), it is exactly that after the restore, on
 * the thread that was raised only.  As root the raise happens and is seen;
 * without the permission it does nothing, which is checked too.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ptrace/stopprio.h"
#include "unit.h"

struct sched_now {
	int policy, prio, nice;
};

static struct sched_now sched_now(void)
{
	struct sched_param p = { 0 };
	struct sched_now s;

	s.policy = sched_getscheduler(0);
	sched_getparam(0, &p);
	s.prio = p.sched_priority;
	errno = 0;
	s.nice = getpriority(PRIO_PROCESS, 0);
	return s;
}

static bool same(struct sched_now a, struct sched_now b)
{
	return a.policy == b.policy && a.prio == b.prio && a.nice == b.nice;
}

/* May this process raise a thread to SCHED_FIFO 1 (root, CAP_SYS_NICE, RLIMIT_RTPRIO)? */
static bool may_raise(void)
{
	struct sched_param fifo = { .sched_priority = 1 }, other = { 0 };

	if (sched_setscheduler(0, SCHED_FIFO, &fifo))
		return false;
	sched_setscheduler(0, SCHED_OTHER, &other);
	return true;
}

/* Raise and restore KIND in a thread that starts at POLICY and NICE; checks run inside it. */
struct case_ {
	enum stopprio_kind kind;
	int policy, nice;
	bool permitted;
};

static void *one_case(void *arg)
{
	const struct case_ *c = arg;
	struct sched_param zero = { 0 };
	struct sched_now before, during;
	struct stopprio sp;

	CHECK(sched_setscheduler(0, c->policy, &zero) == 0);
	CHECK(setpriority(PRIO_PROCESS, 0, c->nice) == 0);
	before = sched_now();
	CHECK(before.nice == c->nice);
	errno = 1234;
	stopprio_raise_as(&sp, c->kind);
	CHECK(errno == 1234);           /* kept */
	during = sched_now();
	/* A refusal is kept for the caller to say (the agent logs it): EPERM, or EACCES for nice. */
	CHECK(!sp.refused == (c->permitted || c->kind == STOPPRIO_NONE));
	if (!c->permitted || c->kind == STOPPRIO_NONE) {
		CHECK(same(during, before));
		CHECK(sp.raised == STOPPRIO_NONE);
	} else if (c->kind == STOPPRIO_FIFO) {
		CHECK(during.policy == SCHED_FIFO && during.prio == 1);
		CHECK(sp.raised == STOPPRIO_FIFO);
	} else {
		CHECK(during.policy == c->policy && during.nice == -20);
		CHECK(sp.raised == STOPPRIO_NICE);
	}
	errno = 1234;
	stopprio_restore(&sp);
	CHECK(errno == 1234);
	CHECK(same(sched_now(), before));
	stopprio_restore(&sp);          /* twice: still as before */
	CHECK(same(sched_now(), before));
	return NULL;
}

static void run_case(enum stopprio_kind kind, int policy, int nice)
{
	struct case_ c = { kind, policy, nice, may_raise() };
	struct sched_now main_before = sched_now();
	pthread_t t;

	CHECK(pthread_create(&t, NULL, one_case, &c) == 0);
	pthread_join(t, NULL);
	CHECK(same(sched_now(), main_before));  /* another thread's raise: this one untouched */
}

static void test_fifo_restores(void)
{
	run_case(STOPPRIO_FIFO, SCHED_OTHER, 0);
	run_case(STOPPRIO_FIFO, SCHED_OTHER, 5);
	run_case(STOPPRIO_FIFO, SCHED_BATCH, 3);
}

static void test_nice_restores(void)
{
	run_case(STOPPRIO_NICE, SCHED_OTHER, 0);
	run_case(STOPPRIO_NICE, SCHED_OTHER, 5);
	run_case(STOPPRIO_NICE, SCHED_BATCH, 3);
}

static void test_none_changes_nothing(void)
{
	run_case(STOPPRIO_NONE, SCHED_OTHER, 0);
	run_case(STOPPRIO_NONE, SCHED_OTHER, 5);
}

/* A thread its owner made real-time is left as it is. */
static void *realtime_case(void *arg)
{
	struct sched_param rr = { .sched_priority = 2 };
	struct sched_now before;
	struct stopprio sp;

	(void)arg;
	if (sched_setscheduler(0, SCHED_RR, &rr))
		return NULL;
	before = sched_now();
	stopprio_raise_as(&sp, STOPPRIO_FIFO);
	CHECK(same(sched_now(), before));
	CHECK(sp.raised == STOPPRIO_NONE && !sp.refused);      /* left as its owner chose: no refusal */
	stopprio_restore(&sp);
	CHECK(same(sched_now(), before));
	return NULL;
}

static void test_realtime_left_alone(void)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, realtime_case, NULL) == 0);
	pthread_join(t, NULL);
}

static void test_default_kind(void)
{
	/* The suite sets no hook: the default is FIFO. */
	CHECK(stopprio_kind() == STOPPRIO_FIFO);
}

UNIT_MAIN(UNIT_TEST(test_fifo_restores), UNIT_TEST(test_nice_restores), UNIT_TEST(test_none_changes_nothing),
	  UNIT_TEST(test_realtime_left_alone), UNIT_TEST(test_default_kind))
