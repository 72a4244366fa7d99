/*
 * owner.c - which process the library's locks belong to: see owner.h.
 *
 * The process is told by its pid; a child whose pid differs may still be
 * a vfork child, which shares the parent's memory (its locks are the
 * parent's, and their holder is alive there), so kcmp(KCMP_VM) decides.
 * Where kcmp cannot tell (a kernel without CONFIG_KCMP, or a policy that
 * forbids it) the waiter waits, as it always did; where the owner is gone
 * (ESRCH), its threads are too.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "owner.h"

#ifndef KCMP_VM
#define KCMP_VM 1
#endif

/*
 * Written at start, in fork's child handler (one thread) and by the one
 * waiter that takes the locks over; read by waiters on a taken lock:
 * atomic, relaxed (a waiter that reads a stale value takes over nothing,
 * or finds the takeover already made by the compare-and-swap).
 */
static pid_t owner;
/* Takeovers in this process and the ones it was forked from: atomic, relaxed. */
static unsigned takeovers;

void owner_is_self(void)
{
	__atomic_store_n(&owner, getpid(), __ATOMIC_RELAXED);
}

unsigned owner_takeovers(void)
{
	return __atomic_load_n(&takeovers, __ATOMIC_RELAXED);
}

/* Does process OTHER share this process's memory?  -1: cannot tell. */
static int same_memory(pid_t other)
{
	long r = syscall(SYS_kcmp, getpid(), other, KCMP_VM, 0UL, 0UL);

	if (r >= 0)
		return r == 0;
	return errno == ESRCH ? 0 : -1;
}

int owner_stale(void)
{
	pid_t was = __atomic_load_n(&owner, __ATOMIC_RELAXED), self = getpid();
	int saved_errno = errno, stale;

	stale = was != self && same_memory(was) == 0 &&
		__atomic_compare_exchange_n(&owner, &was, self, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (stale)
		__atomic_fetch_add(&takeovers, 1, __ATOMIC_RELAXED);
	errno = saved_errno;
	return stale;
}
