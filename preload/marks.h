/*
 * marks.h - what the program itself said about its memory, remembered so
 * that the library never overrides it (marks.c).
 *
 * The interposed madvise, mlock and munmap family record, per address
 * range, the marks below.  The advise passes, the mmap path and the API ask
 * the table before they make anything mergeable: a range the program made
 * MADV_UNMERGEABLE is never advised again, and secret-like memory is kept
 * out (and unmerged in prctl mode) unless the user allows it.
 *
 * The table is a fixed array (MARKS_MAX ranges): recording never
 * allocates, since allocators call madvise and munmap.  It lives in the
 * process's memory, so a forked child has the same table.  When it is full
 * the library stops advising anything new (marks_full) rather than forget
 * a range; secret-like memory is still made unmergeable when marked.
 *
 * Callers hold marks_lock() around every call but marks_any, marks_near,
 * marks_full and marks_lock_all.  Marks that outlive their memory (an
 * allocator's munmap the library does not see) can only make it advise
 * less, never more.
 */
#ifndef KSMENABLE_MARKS_H
#define KSMENABLE_MARKS_H

#include <stddef.h>

#define MARKS_MAX 1024

enum {
	MARK_KEPT_OUT = 1,      /* the program made it MADV_UNMERGEABLE */
	MARK_MERGEABLE = 2,     /* the program made it MADV_MERGEABLE itself */
	MARK_DONTDUMP = 4,      /* MADV_DONTDUMP (VmFlags dd) */
	MARK_LOCKED = 8,        /* mlock, mlock2 (lo) */
	MARK_WIPEONFORK = 16,   /* MADV_WIPEONFORK (wf) */
	MARK_ALL = 31,
};

/* On [START, END): add SET, remove CLEAR.  0, or -1 when the table is full. */
int marks_change(unsigned long start, unsigned long end, unsigned set, unsigned clear);

/* Called for each piece of a range with the marks it has (0: none). */
typedef void (*marks_fn)(unsigned long start, unsigned long end, unsigned marks, void *arg);

/* Walks [START, END) in address order, gaps included as marks 0. */
void marks_walk(unsigned long start, unsigned long end, marks_fn fn, void *arg);

/* The ranges with any of MASK, in address order. */
void marks_each(unsigned mask, marks_fn fn, void *arg);

/*
 * mremap: the marks of [OLD, OLD+OLD_LEN) move to NEW, growing with it
 * (KEEP_OLD: MREMAP_DONTUNMAP, the old range stays mapped and marked).
 */
int marks_move(unsigned long old, size_t old_len, unsigned long new, size_t new_len, int keep_old);

/* Is anything recorded?  Cheap, for the munmap fast path. */
int marks_any(void);
/*
 * Could anything recorded overlap [START, END)?  Without the lock: mmap
 * and munmap ask it before they take the lock (which holds signals: two
 * system calls), and most of what they map is far from any mark.
 */
int marks_near(unsigned long start, unsigned long end);
/* Has the table ever been full (the library then advises nothing new)? */
int marks_full(void);
/* The table may be wrong (a thread that changed it vanished: owner.h): treated as full. */
void marks_distrust(void);

/* mlockall: until munlockall, all memory counts as locked (see marks.c). */
void marks_lock_all(int on);

/* Secret-like marks: wiped on fork, or locked and kept out of dumps. */
int marks_secret(unsigned marks);

/*
 * The table's lock, for callers that must check and act atomically
 * (locks.c): signals are held while it is held.
 */
void marks_lock(void);
void marks_unlock(void);

/* pthread_atfork handlers: the lock is held across fork, then released. */
void marks_atfork_prepare(void);
void marks_atfork_parent(void);
void marks_atfork_child(void);

#endif
