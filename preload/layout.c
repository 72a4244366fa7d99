/*
 * layout.c - a numbered ring of the program's latest address-space
 * changes, and the lock that keeps a pass's check and its madvise together.
 *
 * The lock is a read-write lock: changes share it, a pass (and fork's
 * prepare handler) takes it alone.  Writers are preferred: with readers
 * preferred, threads that map without pause kept it shared for as long as
 * they ran, and a fork waited up to 0.9 s (tests/bench: fork-under-load).
 * A writer-preferring lock deadlocks a reader that takes it again while a
 * writer waits, and a signal handler's mmap does exactly that: so the
 * shared side is re-entrant per thread (a count in TLS), and a nested
 * change is recorded under the outer one's hold.  The exclusive side holds
 * signals (locks.h) instead: no handler runs while it is held.
 */
#include <pthread.h>

#include "layout.h"
#include "locks.h"
#include "owner.h"

#define RING 256

static struct change {
	unsigned long start, end;
	unsigned long seq;              /* its number + 1 once written; 0 empty */
} ring[RING];
static unsigned long head;              /* number of the next change */
/* Set by the constructor and the fork handlers, read by every interposed
 * call: atomic, relaxed (a switch, ordering nothing). */
static int tracking;

#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
#define LOCK_INITIALIZER PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
static int pass_turnstile(void) { return 1; }
static int turnstile_lock(void) { return 1; }
static void turnstile_unlock(void) {}
static void turnstile_reset(void) {}
#else
/*
 * Elsewhere (musl prefers readers) a writer holds a turnstile while it
 * waits for the lock, and new readers pass through it: they queue behind.
 */
#define LOCK_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
static pthread_mutex_t turnstile = PTHREAD_MUTEX_INITIALIZER;
static int turnstile_lock(void)
{
	if (pthread_mutex_trylock(&turnstile) == 0)
		return 1;
	if (owner_stale())
		return 0;
	pthread_mutex_lock(&turnstile);
	return 1;
}
static void turnstile_unlock(void) { pthread_mutex_unlock(&turnstile); }
static int pass_turnstile(void)
{
	if (!turnstile_lock())
		return 0;
	turnstile_unlock();
	return 1;
}
static void turnstile_reset(void)
{
	static const pthread_mutex_t open_turnstile = PTHREAD_MUTEX_INITIALIZER;
	turnstile = open_turnstile;
}
#endif
static pthread_rwlock_t lock = LOCK_INITIALIZER;
/* A child of a fork made inside a change of its thread: the lock is not used
 * again (see the end).  Set by fork's child handler, while the forking
 * thread is the only one; read by any thread, signal handlers included:
 * atomic, relaxed (it orders nothing else). */
static int retired;

/*
 * Retired too in a process that took the library's locks over from
 * another (owner.h): threads that do not exist here may be counted in it,
 * as readers a writer would wait for forever.
 */
static int is_retired(void)
{
	return __atomic_load_n(&retired, __ATOMIC_RELAXED) || owner_takeovers();
}

/* Takes the lock by TRY, or else by WAIT unless its holder may be gone (then retired). */
static int take(int (*try)(pthread_rwlock_t *), int (*wait)(pthread_rwlock_t *))
{
	if (try(&lock) == 0)
		return 1;
	if (owner_stale())
		return 0;
	wait(&lock);
	return 1;
}

#define TLS __thread __attribute__((tls_model("initial-exec")))

/* Shared holds of this thread, waited for or held: a handler that interrupts one must not take it. */
static TLS int reading;
/* fork's prepare handler ran inside one (a fork from a handler). */
static TLS int fork_inside_read;

void layout_track(int on)
{
	__atomic_store_n(&tracking, on, __ATOMIC_RELAXED);
}

int layout_tracking(void)
{
	return __atomic_load_n(&tracking, __ATOMIC_RELAXED);
}

/*
 * Counted before the lock is taken and after it is released: a handler
 * that runs while this thread waits for it, or has just let it go, records
 * its change without the lock (a pass may then miss it: it may advise a
 * range that changed, as before the ring existed), but never waits for
 * its own thread.
 */
void layout_change_begin(void)
{
	if (reading++ > 0 || is_retired())
		return;
	if (pass_turnstile())
		take(pthread_rwlock_tryrdlock, pthread_rwlock_rdlock);
}

void layout_change_note(unsigned long start, unsigned long end)
{
	if (start < end) {
		unsigned long n = __atomic_fetch_add(&head, 1, __ATOMIC_ACQ_REL);
		struct change *c = &ring[n % RING];
		c->start = start;
		c->end = end;
		__atomic_store_n(&c->seq, n + 1, __ATOMIC_RELEASE);
	}
}

void layout_change_end(unsigned long start, unsigned long end)
{
	layout_change_note(start, end);
	if (reading == 1 && !is_retired())
		pthread_rwlock_unlock(&lock);
	reading--;
}

int layout_unusable_here(void)
{
	return reading > 0 || is_retired();
}

unsigned long layout_now(void)
{
	return __atomic_load_n(&head, __ATOMIC_ACQUIRE);
}

static int lock_exclusive(void)
{
	int held;

	if (!turnstile_lock())
		return 0;
	held = take(pthread_rwlock_trywrlock, pthread_rwlock_wrlock);
	turnstile_unlock();
	return held;
}

int layout_lock(void)
{
	signals_hold();
	return !is_retired() && lock_exclusive();
}

void layout_unlock(void)
{
	if (!is_retired())
		pthread_rwlock_unlock(&lock);
	signals_release();
}

int layout_changed_since(unsigned long since, unsigned long start, unsigned long end)
{
	unsigned long now = layout_now();

	if (now - since > RING)
		return 1;               /* older ones are overwritten: assume the worst */
	for (unsigned long n = since; n < now; n++) {
		const struct change *c = &ring[n % RING];
		if (c->seq != n + 1 || (c->start < end && start < c->end))
			return 1;
	}
	return 0;
}

/*
 * A fork from a signal handler that interrupted this thread's change (or
 * its wait for the lock) cannot take the lock alone: this very thread
 * holds it, or is counted in it.  It need not either: while that hold
 * lasts no pass runs, and a change of another thread that the child sees
 * half written has no number yet (layout_changed_since assumes the worst).
 */
void layout_atfork_prepare(void)
{
	signals_hold();
	fork_inside_read = reading > 0;
	if (!fork_inside_read && !is_retired())
		lock_exclusive();
}

void layout_atfork_parent(void)
{
	if (!fork_inside_read && !is_retired())
		pthread_rwlock_unlock(&lock);
	signals_release();
}

/*
 * Only the forking thread exists in the child: the lock is made anew.  In
 * the child of a fork made inside a change, that change goes on when the
 * handler returns, and whether its wait for the lock had counted it in the
 * parent's lock or will count it in the new one cannot be known; so that
 * child never uses the lock again (its passes advise nothing: see
 * guard_advise), and the waiting change finds a free lock.
 */
void layout_atfork_child(void)
{
	static const pthread_rwlock_t unlocked = LOCK_INITIALIZER;

	lock = unlocked;
	turnstile_reset();
	if (fork_inside_read)
		__atomic_store_n(&retired, 1, __ATOMIC_RELAXED);
	signals_release();
}
