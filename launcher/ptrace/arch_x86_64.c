/*
 * arch_x86_64.c: the x86-64 side of running a call in another thread
 * (arch.h).
 *
 * At an interrupt stop the kernel has not yet touched a call that the
 * stop cut short: rax holds its restart code and orig_rax its number, and
 * whatever registers are in place when the thread is let go from a stop
 * in the signal path, the kernel applies its restart to them.  So the
 * registers saved at the first stop are put back as they are.
 *
 * The trampoline (trampoline.c puts it in the vDSO's tail):
 *
 *     syscall
 *     pop r15 ... pop rdi      the general registers, from a block that
 *     popfq                    rsp points at (on its own stack, below
 *     pop rsp                  the red zone: the program never reads it)
 *     jmp [rip + slot]         the thread's rip, kept beside this code
 *
 * The rip is not on the stack: between `pop rsp` and the jump a signal
 * frame may be written below the restored rsp, where the block was.
 */
#if defined(__x86_64__)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "ptrace/arch.h"
#include "ptrace/mem.h"
#include "ptrace/restart.h"

#define USER_CS_64 0x33                 /* the code segment of 64-bit user space */
#define SYSCALL_INSN "\x0f\x05"
#define SLOT_AT 40                      /* the rip's slot, after the code and its padding */
#define RED_ZONE 128                    /* the x86-64 ABI's: the program may keep data there */

const unsigned char arch_tramp_code[SLOT_AT] = {
	0x0f, 0x05,                     /* syscall */
	0x41, 0x5f, 0x41, 0x5e,         /* pop r15; pop r14 */
	0x41, 0x5d, 0x41, 0x5c,         /* pop r13; pop r12 */
	0x5d, 0x5b,                     /* pop rbp; pop rbx */
	0x41, 0x5b, 0x41, 0x5a,         /* pop r11; pop r10 */
	0x41, 0x59, 0x41, 0x58,         /* pop r9;  pop r8 */
	0x58, 0x59, 0x5a, 0x5e, 0x5f,   /* pop rax, rcx, rdx, rsi, rdi */
	0x9d,                           /* popfq */
	0x5c,                           /* pop rsp */
	0xff, 0x25, SLOT_AT - 33, 0, 0, 0,  /* jmp [rip + 7]: the slot, after the padding */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,  /* int3: never reached */
};
const size_t arch_tramp_code_len = sizeof arch_tramp_code;
const size_t arch_tramp_unit = 48;      /* the code, padding, the slot */

/* The block the code pops, in its order. */
struct block {
	uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rax, rcx, rdx, rsi, rdi, flags, rsp;
};

int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, &r->r) ? -errno : 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, (void *)&r->r) ? -errno : 0;
}

bool arch_native(const struct arch_regs *r, char *why, size_t whylen)
{
	if (r->r.cs == USER_CS_64)
		return true;
	snprintf(why, whylen, "it is not a 64-bit process (code segment %#llx)", (unsigned long long)r->r.cs);
	return false;
}

void arch_before_stop(struct arch_thread *t)
{
	(void)t;                        /* the stop hides nothing here */
}

bool arch_in_syscall(struct arch_thread *t)
{
	return (long long)t->saved.r.orig_rax >= 0;
}

/*
 * Its own registers, except that a call that the stop alone made fail
 * with EINTR goes back to its `syscall` instruction (rip - 2 after it) to
 * run again, as if it had never been interrupted.  The handler path cannot
 * be mistaken for it: a handler's frame sets rax to 0, and sigreturn sets
 * orig_rax to -1.
 */
void arch_regs_to_leave(struct arch_thread *t, bool at_signal_stop, struct arch_regs *out, bool *restarted)
{
	struct user_regs_struct r = t->saved.r;
	unsigned char two[2];

	*restarted = false;
	if ((long long)r.orig_rax >= 0 && (long long)r.rax == -EINTR && restart_eintr_after_stop((long long)r.orig_rax) &&
	    !at_signal_stop && !restart_signal_pending(t->tid) &&
	    mem_read(t->tid, r.rip - 2, two, 2) && !memcmp(two, SYSCALL_INSN, 2)) {
		r.rax = r.orig_rax;
		r.rip -= 2;
		r.orig_rax = (unsigned long long)-1;
		*restarted = true;
	}
	out->r = r;
}

/* From the trampoline it returns to user space directly, where the kernel would have restarted on its way out. */
void arch_resume_state(struct arch_thread *t, bool at_signal_stop, struct arch_regs *out)
{
	bool restarted;
	struct user_regs_struct *r = &out->r;

	arch_regs_to_leave(t, at_signal_stop, out, &restarted);
	if ((long long)r->orig_rax >= 0 && restart_code((long long)r->rax)) {
		r->rax = (long long)r->rax == -RESTART_RESTARTBLOCK ? SYS_restart_syscall : r->orig_rax;
		r->rip -= 2;
	}
	r->orig_rax = (unsigned long long)-1;
}

void arch_point_at_call(struct arch_regs *out, uint64_t insn, uint64_t sp, long nr, const long args[6])
{
	struct user_regs_struct *r = &out->r;

	r->rsp = sp;
	r->rip = insn;
	r->rax = (unsigned long long)nr;
	r->orig_rax = (unsigned long long)-1;   /* no call of its own in progress: nothing of ours restarts */
	r->rdi = (unsigned long long)args[0];
	r->rsi = (unsigned long long)args[1];
	r->rdx = (unsigned long long)args[2];
	r->r10 = (unsigned long long)args[3];
	r->r8 = (unsigned long long)args[4];
	r->r9 = (unsigned long long)args[5];
}

long arch_call_result(const struct arch_regs *r)
{
	return (long)r->r.rax;
}

uint64_t arch_stack_pointer(const struct arch_regs *r)
{
	return r->r.rsp;
}

uint64_t arch_tramp_data_at(uint64_t rsp)
{
	return (rsp - RED_ZONE - sizeof(struct block)) & ~(uint64_t)15;
}

uint64_t arch_tramp_arm(struct arch_thread *t, uint64_t tramp, const struct arch_regs *regs)
{
	const struct user_regs_struct *r = &regs->r;
	struct block b = {
		r->r15, r->r14, r->r13, r->r12, r->rbp, r->rbx, r->r11, r->r10, r->r9, r->r8,
		r->rax, r->rcx, r->rdx, r->rsi, r->rdi, r->eflags, r->rsp,
	};
	uint64_t at = arch_tramp_data_at(r->rsp);
	uint64_t rip = r->rip;

	return mem_write(t->tid, at, &b, sizeof b) && mem_write(t->tid, tramp + SLOT_AT, &rip, sizeof rip) ? at : 0;
}

void arch_tramp_refresh(struct arch_thread *t)
{
	(void)t;                        /* the block holds registers only: nothing changes under it */
}
#endif
