/*
 * layout.c - a numbered ring of the program's latest address-space
 * changes, and the lock that keeps a pass's check and its madvise together.
 */
#include <pthread.h>

#include "layout.h"

#define RING 256

static struct change {
	unsigned long start, end;
	unsigned long seq;              /* its number + 1 once written; 0 empty */
} ring[RING];
static unsigned long head;              /* number of the next change */
static volatile int tracking;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;

void layout_track(int on)
{
	tracking = on;
}

int layout_tracking(void)
{
	return tracking;
}

void layout_change_begin(void)
{
	pthread_rwlock_rdlock(&lock);
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
	pthread_rwlock_unlock(&lock);
}

unsigned long layout_now(void)
{
	return __atomic_load_n(&head, __ATOMIC_ACQUIRE);
}

void layout_lock(void)
{
	pthread_rwlock_wrlock(&lock);
}

void layout_unlock(void)
{
	pthread_rwlock_unlock(&lock);
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

void layout_atfork_prepare(void)
{
	pthread_rwlock_wrlock(&lock);
}

void layout_atfork_parent(void)
{
	pthread_rwlock_unlock(&lock);
}

/* Only the forking thread exists in the child: the lock is made anew. */
void layout_atfork_child(void)
{
	static const pthread_rwlock_t unlocked = PTHREAD_RWLOCK_INITIALIZER;

	lock = unlocked;
}
