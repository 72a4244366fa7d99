/*
 * preload.h - finding libksmenable and putting it in LD_PRELOAD (preload.c).
 */
#ifndef KSMRUN_PRELOAD_H
#define KSMRUN_PRELOAD_H

#include <stddef.h>

/*
 * The library's path into OUT: OVERRIDE (--preload) if given, else next to
 * ksm-run, in ../lib from it, or in the libdir of the build; never ".".
 * Returns 0, or -1 (with a message when OVERRIDE is not a library file).
 */
int preload_find(const char *override, char *out, size_t len);
/* Prepends LIB to LD_PRELOAD, keeping the user's entries.  0 or -1. */
int preload_setenv(const char *lib);

#endif
