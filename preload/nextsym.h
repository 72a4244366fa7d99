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

#endif
