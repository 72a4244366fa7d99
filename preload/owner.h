/*
 * owner.h - which process the library's locks belong to (owner.c).
 *
 * A child made without fork's handlers (_Fork, a raw clone or fork system
 * call, as sandboxes and zygotes make theirs) has a copy of the library's
 * locks as the parent's threads held them at that moment, and those
 * threads do not exist in it: a lock one of them held would be waited for
 * forever.  So every lock of the library is tried first, and only when it
 * is taken does the waiter ask owner_stale(): is this a process the locks
 * do not belong to?  If so this process takes them over: each module then
 * makes its own locks anew, and what they guarded, which a vanished thread
 * may have left half changed, is no longer trusted (layout.c, locks.c).
 */
#ifndef KSMENABLE_OWNER_H
#define KSMENABLE_OWNER_H

/* The locks are this process's: at the library's start, and in fork's child handlers. */
void owner_is_self(void);

/*
 * A lock of the library was found taken: may its holder be a thread of
 * another process?  Yes when this process is not the owner and does not
 * share its memory (a vfork child does: the holder lives on in the
 * parent).  Then this process becomes the owner, and 1 is returned; the
 * caller makes its lock anew.  Costs getpid, and kcmp in a new process.
 */
int owner_stale(void);

/*
 * Has this process, or one it was forked from, taken the locks over?  A
 * module whose lock was not the one found taken learns it here, at its
 * next use.
 */
unsigned owner_takeovers(void);

#endif
