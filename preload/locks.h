/*
 * locks.h - signals held back while a thread holds one of the library's
 * locks (locks.c), so that a signal handler's mmap, munmap, madvise or fork
 * never waits for a lock its own thread holds.
 *
 * The locks: the marks table's mutex (marks_lock, marks.h, defined in
 * locks.c) and the layout lock's exclusive side (layout_lock, layout.h).
 * Both are held across real system calls and table changes; a handler that
 * ran there and entered the library again would deadlock (or, for the
 * fork's atfork handlers, wait forever).  Holding signals costs two
 * pthread_sigmask calls, paid only where a lock is taken: the shared side
 * of the layout lock, taken by every mmap and munmap in madvise mode, is
 * re-entrant instead (layout.c).  Signals that arrive meanwhile are
 * delivered when the lock is released, none is lost.
 */
#ifndef KSMENABLE_LOCKS_H
#define KSMENABLE_LOCKS_H

/* Blocks every signal for this thread until the matching signals_release (they nest). */
void signals_hold(void);
void signals_release(void);

/* This thread blocks every signal for good (the rescan thread): holding costs nothing. */
void signals_always_held(void);

#endif
