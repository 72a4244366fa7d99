/*
 * nearest.h - "did you mean": the known name nearest to a misspelt one,
 * for ksm-run's options and the library's KSM_ENABLE_* variables alike.
 */
#ifndef KSMENABLE_NEAREST_H
#define KSMENABLE_NEAREST_H

#include <stddef.h>

/*
 * The edit distance of A (LA bytes) and B (LB bytes) with transpositions
 * (a swapped pair counts one): SIZE_MAX when either is 64 bytes or longer.
 * No allocation, 1.5 KiB of stack: the library calls it in its constructor.
 */
size_t name_distance(const char *a, size_t la, const char *b, size_t lb);

/* Is distance D near enough, for a name of LEN bytes, to be a typo? */
int name_is_near(size_t d, size_t len);

#endif
