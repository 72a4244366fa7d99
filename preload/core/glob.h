/*
 * glob.h - the patterns of anon:GLOB and file:GLOB selectors, matched the
 * way fnmatch(3) without flags matches them in the C locale ('*' and '?'
 * also match '/'), by our own code: it never allocates (fnmatch does, in a
 * UTF-8 locale, and the library matches inside interposed mmap) and it
 * judges bytes, not the host program's locale.  What glob_problem()
 * accepts is exactly what glob_match() understands.
 *
 *   *  any bytes     ?  one byte     \c  the byte c
 *   [abc] [a-z] [!a] [^a] []a] [[:alpha:]] [[=a=]] [[.a.]] [\]]  one byte of a set
 */
#ifndef KSMENABLE_GLOB_H
#define KSMENABLE_GLOB_H

#include <stddef.h>

/* NULL when PATTERN is well formed, else what is wrong with it. */
const char *glob_problem(const char *pattern);

/* Does NAME (LEN bytes, no NUL needed) match the well-formed PATTERN? */
int glob_match(const char *pattern, const char *name, size_t len);

#endif
