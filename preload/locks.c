/*
 * locks.c - signals held while a lock is held, and the marks table's lock
 * (which a child made without fork's handlers may take over: owner.h).
 *
 * glibc's pthread_sigmask leaves its own internal signals (thread
 * cancellation, setxid) unblocked, so a setuid in another thread still
 * completes while this one holds a lock.  The state is per thread, in
 * initial-exec TLS: reading it from a handler takes no lock and allocates
 * nothing.
 */
#include <pthread.h>
#include <signal.h>

#include "locks.h"
#include "marks.h"
#include "owner.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

static TLS int hold_depth;          /* signals_hold calls not yet released */
static TLS int always_held;         /* the thread blocks everything itself */
static TLS sigset_t saved_mask;     /* the mask before the outermost hold */

void signals_always_held(void)
{
	always_held = 1;
}

void signals_hold(void)
{
	sigset_t all;

	if (always_held || hold_depth++ > 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved_mask);
}

void signals_release(void)
{
	if (always_held || --hold_depth > 0)
		return;
	pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
}

static pthread_mutex_t marks_mutex = PTHREAD_MUTEX_INITIALIZER;

/*
 * A mutex is not fair: threads that mark memory without pause took it
 * again and again while a fork waited for it in its prepare handler.  A
 * fork that waits closes a gate, and threads that come for the lock
 * meanwhile queue at the gate behind it: the fork waits at most for those
 * already past.  Without a fork pending it costs one load.
 */
static pthread_mutex_t fork_gate = PTHREAD_MUTEX_INITIALIZER;
static int fork_pending;
/* owner_takeovers() when these locks were last made: a takeover since
 * makes them anew.  Atomic, relaxed: it orders nothing but itself. */
static unsigned made_at;

static void make_anew(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	marks_mutex = unlocked;
	fork_gate = unlocked;
	fork_pending = 0;
}

/*
 * Another process's threads may have held them (owner.h): made anew, and
 * the table they guarded, perhaps left half changed, is distrusted (the
 * library then advises nothing new: marks.h).
 */
static void take_over(void)
{
	__atomic_store_n(&made_at, owner_takeovers(), __ATOMIC_RELAXED);
	make_anew();
	marks_distrust();
}

/* Takes M, or makes the locks anew when their holder is a thread of another process. */
static void take(pthread_mutex_t *m)
{
	if (__atomic_load_n(&made_at, __ATOMIC_RELAXED) != owner_takeovers())
		take_over();
	if (pthread_mutex_trylock(m) == 0)
		return;
	if (owner_stale())
		take_over();
	pthread_mutex_lock(m);
}

void marks_lock(void)
{
	signals_hold();
	if (__atomic_load_n(&fork_pending, __ATOMIC_ACQUIRE)) {
		take(&fork_gate);
		pthread_mutex_unlock(&fork_gate);
	}
	take(&marks_mutex);
}

void marks_unlock(void)
{
	pthread_mutex_unlock(&marks_mutex);
	signals_release();
}

/*
 * Across fork: held from the prepare handler to the parent's or the
 * child's, with signals held too (a handler's mmap in between would wait
 * for the lock this thread holds).
 */
void marks_atfork_prepare(void)
{
	signals_hold();
	take(&fork_gate);
	__atomic_store_n(&fork_pending, 1, __ATOMIC_RELEASE);
	take(&marks_mutex);
	__atomic_store_n(&fork_pending, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fork_gate);
}

void marks_atfork_parent(void)
{
	marks_unlock();
}

/* Only the forking thread exists in the child: the locks are made anew, and are its own. */
void marks_atfork_child(void)
{
	make_anew();
	owner_is_self();
	signals_release();
}
