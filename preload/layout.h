/*
 * layout.h - the program's changes to its address space, seen by the
 * interposed mmap, munmap and mremap, so that an advise pass never acts on
 * a stale view (layout.c).
 *
 * A pass reads /proc/self/maps and then advises ranges from it.  If the
 * program unmapped a region meanwhile and mapped a new one at that address,
 * advising the old range would cover part of the new mapping: the kernel
 * splits it, and the program's own mremap of what it made as one mapping
 * fails with EFAULT.  So each change is recorded (a ring of the latest
 * ranges, numbered), and a pass advises a range only if no change since it
 * read the maps touches it, checked and advised while no change can be
 * under way.  What is skipped is judged again at the next pass.
 */
#ifndef KSMENABLE_LAYOUT_H
#define KSMENABLE_LAYOUT_H

/* Around the program's mmap, munmap or mremap (shared: they run in parallel). */
void layout_change_begin(void);
/* Records [START, END) as changed (START == END: nothing) and ends the change. */
void layout_change_end(unsigned long start, unsigned long end);
/* Records one more range within the change (mremap: where it was and where it is). */
void layout_change_note(unsigned long start, unsigned long end);

/* The number of the next change: a pass takes it before it reads the maps. */
unsigned long layout_now(void);

/*
 * Exclusive: no change is under way while held; signals are held too
 * (locks.h).  0 when the lock is retired (see layout_unusable_here): then
 * nothing may be advised; layout_unlock is called either way.
 */
int layout_lock(void);
void layout_unlock(void);
/* With the lock: did a change since SINCE touch [START, END)?  (Or too many to know.) */
int layout_changed_since(unsigned long since, unsigned long start, unsigned long end);

/*
 * May this thread not take the lock alone now?  It is inside a change (a
 * signal handler interrupted it), or the lock is retired (a child of a
 * fork made inside one, or of a process that took the library's locks
 * over: owner.h): a pass then advises nothing.
 */
int layout_unusable_here(void);

/* Is anyone asking?  Changes are recorded only while passes run (madvise mode, the API). */
void layout_track(int on);
int layout_tracking(void);

void layout_atfork_prepare(void);
void layout_atfork_parent(void);
void layout_atfork_child(void);

#endif
