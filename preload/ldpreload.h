/* ldpreload.h - the library's own entry in LD_PRELOAD (ldpreload.c). */
#ifndef KSMENABLE_LDPRELOAD_H
#define KSMENABLE_LDPRELOAD_H

/* Was this library loaded through LD_PRELOAD (not linked by the program)? */
int ldpreload_has_us(void);

/*
 * KSM_ENABLE_INHERIT=0: remove this library from LD_PRELOAD, so that the
 * programs this process executes do not load it.  Returns 0, or -1 when
 * LD_PRELOAD could not be changed (the caller warns).
 */
int ldpreload_drop_us(void);

#endif
