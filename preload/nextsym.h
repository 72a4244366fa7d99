/*
 * nextsym.h - the libc function that an interposed function wraps, looked
 * up on first use (nextsym.c).
 */
#ifndef KSMENABLE_NEXTSYM_H
#define KSMENABLE_NEXTSYM_H

/*
 * The next definition of NAME after this library, cached in *SLOT.  NULL
 * only while this very thread is inside the lookup (dlsym may allocate,
 * and allocators call mmap): the caller then makes the system call itself.
 */
void *next_symbol(void *volatile *slot, const char *name);

#define NEXT(slot, name) ((__typeof__(slot))next_symbol((void *volatile *)&(slot), name))

/*
 * Called by the constructor: look up at once the functions that allocators
 * call from inside their own locks (mmap, mmap64, munmap, mremap, madvise).
 * A first lookup allocates (glibc's dlsym frees its error state), and an
 * allocator whose mmap is the program's first must not be called back.
 */
void interpose_bind_early(void);        /* interpose.c */
void interpose_marks_bind_early(void);  /* interpose_marks.c */

#endif
