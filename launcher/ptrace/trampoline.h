/*
 * trampoline.h - the code an injected call runs at (trampoline.c): a
 * `syscall` instruction followed by code that restores the thread's own
 * registers and jumps back to where it was, so that a thread let go in the
 * middle of our call (ksm-run killed) goes on correctly by itself.
 * x86_64 only.
 */
#ifndef KSMRUN_TRAMPOLINE_H
#define KSMRUN_TRAMPOLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Puts the code into the unused tail of thread TID's vDSO, unless it is
 * there already; the address of its `syscall` instruction, or 0 with the
 * reason in WHY.  TID must be stopped by us.
 */
uint64_t trampoline_install(pid_t tid, char *why, size_t whylen);

/* Is there room for the restore block on the stack below RSP (its red zone kept)? */
bool trampoline_stack_ok(pid_t tid, uint64_t rsp);

#if defined(__x86_64__)
#include <sys/user.h>

/*
 * Writes the registers to resume with, R, where the code at TRAMP will
 * restore them from: a block below R's stack pointer and its red zone,
 * and R's rip beside the code.  The block's address (the stack pointer to
 * run the call with), or 0 when its stack or the code could not be written.
 */
uint64_t trampoline_arm(pid_t tid, uint64_t tramp, const struct user_regs_struct *r);
#endif

#endif
