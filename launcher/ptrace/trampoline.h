/*
 * trampoline.h - the code an injected call runs at (trampoline.c): a
 * system call instruction followed by code that restores the thread's own
 * registers and goes back to where it was, so that a thread let go in the
 * middle of our call (ksm-run killed) goes on correctly by itself.  The
 * code and its restore data are the processor's (arch.h).
 */
#ifndef KSMRUN_TRAMPOLINE_H
#define KSMRUN_TRAMPOLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Puts the code into the unused tail of thread TID's vDSO, unless it is
 * there already; the address of its system call instruction, or 0 with the
 * reason in WHY.  TID must be stopped by us.
 */
uint64_t trampoline_install(pid_t tid, char *why, size_t whylen);

/* Is there room for the restore data on the stack below SP (a red zone kept)? */
bool trampoline_stack_ok(pid_t tid, uint64_t sp);

#endif
