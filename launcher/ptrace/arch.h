/*
 * arch.h - what making another thread run a system call needs to know of
 * the processor (arch_x86_64.c, arch_aarch64.c): how its registers are
 * read and written, which registers it is let go with after a stop that
 * cut a call short, how it is pointed at the trampoline with a call, and
 * the trampoline's code and restore data.  The sequence of stops around
 * them is the same everywhere (inject.c).
 */
#ifndef KSMRUN_PTRACE_ARCH_H
#define KSMRUN_PTRACE_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/restart.h"

#if defined(__x86_64__)
#include <sys/user.h>

#define ARCH_INJECTS 1
#define ARCH_NAME "x86_64"
#define ARCH_AUDIT 0xc000003eU          /* AUDIT_ARCH_X86_64, what a seccomp filter sees */
#define ARCH_SYSCALL_LEN 2              /* `syscall`: a call's ip is its address + 2 */

struct arch_regs {
	struct user_regs_struct r;
};

#elif defined(__aarch64__)
/*
 * sys/user.h, not the kernel's asm/ptrace.h, which musl-gcc has not: glibc
 * and musl both name the NT_PRSTATUS and NT_PRFPREG sets there, laid out as
 * the kernel's user_pt_regs and user_fpsimd_state.
 */
#include <sys/user.h>

#define ARCH_INJECTS 1
#define ARCH_NAME "aarch64"
#define ARCH_AUDIT 0xc00000b7U          /* AUDIT_ARCH_AARCH64 */
#define ARCH_SYSCALL_LEN 4              /* `svc #0` */

struct arch_regs {
	struct user_regs_struct r;      /* NT_PRSTATUS */
	int64_t syscallno;              /* NT_ARM_SYSTEM_CALL: -1 outside a call (no padding to compare) */
};

#else
#define ARCH_INJECTS 0

struct arch_regs {
	char none;
};
#endif

/* A seized thread as the processor's side sees it (inject.c keeps one in struct inject). */
struct arch_thread {
	pid_t tid;
	struct arch_regs saved;         /* its registers, saved at a stop in its signal path */
	struct blocked_call before;     /* the call it slept in before the stop (aarch64 reads it) */
	bool kernel_restarts;           /* still in the first stop's signal path: let go, the kernel restarts */
	bool restart_unsure;            /* aarch64: a call cut short that no record matched */
	uint64_t tramp_data;            /* where the trampoline's restore data was last written */
};

#if ARCH_INJECTS

int arch_get_regs(pid_t tid, struct arch_regs *r);
int arch_set_regs(pid_t tid, const struct arch_regs *r);

/* Is R a 64-bit process of this architecture, the only kind we run calls in?  Else why not. */
bool arch_native(const struct arch_regs *r, char *why, size_t whylen);

/*
 * Called after PTRACE_SEIZE and before PTRACE_INTERRUPT, while the thread
 * may still sleep in a call: what the stop will hide is read then.
 */
void arch_before_stop(struct arch_thread *t);

/* Was the thread, whose registers at a stop T->saved holds, inside a system call? */
bool arch_in_syscall(struct arch_thread *t);

/*
 * The registers to let it go with from the stop it is in (AT_SIGNAL_STOP:
 * a signal's delivery, which gets its call's result as it is): its own, except that a call the stop alone failed with EINTR goes back
 * to its system call instruction to run again (*RESTARTED), and what the
 * kernel does to a call cut short is done where the kernel no longer will.
 */
void arch_regs_to_leave(struct arch_thread *t, bool at_signal_stop, struct arch_regs *r, bool *restarted);

/*
 * The registers it would go on with in user space if let go now with no
 * signal to deliver: those to leave it with, the kernel's restart of an
 * interrupted call applied.  The trampoline restores these.
 */
void arch_resume_state(struct arch_thread *t, bool at_signal_stop, struct arch_regs *r);

/* R pointed at the trampoline's system call instruction INSN, with call NR(ARGS) and stack pointer SP. */
void arch_point_at_call(struct arch_regs *r, uint64_t insn, uint64_t sp, long nr, const long args[6]);

/* A call's result, at its exit stop. */
long arch_call_result(const struct arch_regs *r);

uint64_t arch_stack_pointer(const struct arch_regs *r);

/* The trampoline's code (trampoline.c puts it in the vDSO), in units of ARCH_TRAMP_UNIT bytes. */
extern const unsigned char arch_tramp_code[];
extern const size_t arch_tramp_code_len, arch_tramp_unit;

/* Where, below stack pointer SP, the trampoline's restore data goes, and how much it is. */
uint64_t arch_tramp_data_at(uint64_t sp);

/*
 * Writes what the trampoline at TRAMP needs to restore R: the data below
 * R's stack pointer.  The stack pointer to run the call with, or 0 when it
 * could not be written.
 */
uint64_t arch_tramp_arm(struct arch_thread *t, uint64_t tramp, const struct arch_regs *r);

/* At each call's exit stop: what the restore data took from the thread, brought up to date. */
void arch_tramp_refresh(struct arch_thread *t);
#endif

#endif
