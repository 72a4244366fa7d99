/*
 * arch_aarch64.c: the aarch64 side of running a call in another thread
 * (arch.h).
 *
 * The kernel restarts a call before the tracer sees the stop.  When a
 * thread blocked in a call is interrupted, do_signal() takes the result
 * (x0), forgets the call (syscallno -1) and, for a restart code, already
 * puts the first argument back in x0 and the pc on the `svc` (pc - 4), all
 * before get_signal(), where PTRACE_INTERRUPT stops it.  Only when it is
 * let go from that same stop with no signal does the kernel finish: x8 =
 * restart_syscall for ERESTART_RESTARTBLOCK; and a signal delivered from
 * it turns the rewound call into EINTR where the handler asks for that.
 * Once the thread has run our call it is in another do_signal(), which
 * knows nothing of its own call.  So:
 *  - While it is still in the signal path of the first stop
 *    (t->kernel_restarts), its registers go back as they were: the
 *    kernel finishes the restart, exactly.
 *  - Later (the second interrupt stop), what the kernel would have done
 *    is done here: x8 = restart_syscall for a call of restart_block_call()
 *    (restart.c) that was rewound.  Not in the trampoline's registers
 *    (arch_resume_state): there the call runs again whole.  What the stop
 *    hides (the result code; the first argument of a call that failed
 *    with EINTR) is read from /proc/TID/syscall before the stop
 *    (arch_before_stop), and used only when the stop's sp, x8 and pc
 *    match that record.  A rewound call with no record to match (it
 *    entered the call after the record was read) is left as the kernel
 *    made it, counted in t->restart_unsure: were it nanosleep, it would
 *    sleep its whole time again.  A thread already in restart_syscall
 *    (x8 = 128) when ksm-run dies mid-call gets EINTR from it after the
 *    trampoline's rt_sigreturn: its first call cannot be known.  A
 *    signal delivered after the first stop's signal path restarts a
 *    rewound call after its handler even where the kernel would have
 *    failed it with EINTR (ERESTARTSYS without SA_RESTART, ERESTARTNOHAND).
 *
 * The trampoline: aarch64 has no jump through memory, so its registers
 * cannot all be restored by loads without a scratch register.  Instead
 * the code ends with rt_sigreturn from a signal frame written below the
 * thread's stack pointer, which restores every register, its FP/SIMD
 * state and its signal mask:
 *
 *     svc #0                   our call, sp at the frame
 *     mov x8, #139             __NR_rt_sigreturn
 *     svc #0
 *     brk #0                   never reached
 */
#if defined(__aarch64__)
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "ptrace/arch.h"
#include "ptrace/mem.h"
#include "ptrace/restart.h"
#include "common/files.h"

/* The processor state's bits that musl lacks (uapi asm/ptrace.h; glibc has it). */
#ifndef PSR_MODE32_BIT
#define PSR_MODE32_BIT 0x00000010
#endif
#ifndef PSR_BTYPE_MASK
#define PSR_BTYPE_MASK 0x00000c00
#endif

#define SVC_0 0xd4000001u               /* svc #0 */
#define STACK_MARGIN 128                /* no red zone in the ABI; kept all the same */
#define ALTSTACK_UNCHANGED 3            /* neither 0, SS_ONSTACK nor SS_DISABLE: see the frame */

const unsigned char arch_tramp_code[16] = {
	0x01, 0x00, 0x00, 0xd4,         /* svc #0 */
	0x68, 0x11, 0x80, 0xd2,         /* mov x8, #139 (rt_sigreturn) */
	0x01, 0x00, 0x00, 0xd4,         /* svc #0 */
	0x00, 0x00, 0x20, 0xd4,         /* brk #0 */
};
const size_t arch_tramp_code_len = sizeof arch_tramp_code;
const size_t arch_tramp_unit = 16;

/*
 * The kernel's struct rt_sigframe (arch/arm64/kernel/signal.c) and its
 * struct ucontext (arch/arm64/include/asm/ucontext.h, not in uapi): the
 * siginfo, then uc_flags, uc_link, uc_stack, the 64-bit signal mask padded
 * to glibc's 1024 bits, and the uapi struct sigcontext, 16-aligned.
 */
struct frame_stack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};

struct frame_ucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct frame_stack uc_stack;
	uint64_t uc_sigmask;
	uint8_t unused[1024 / 8 - sizeof(uint64_t)];
	struct sigcontext uc_mcontext;
};

struct rt_frame {
	uint8_t info[128];
	struct frame_ucontext uc;
};

_Static_assert(offsetof(struct frame_ucontext, uc_sigmask) == 40, "ucontext layout");
_Static_assert(offsetof(struct frame_ucontext, uc_mcontext) == 176, "ucontext layout");
_Static_assert(offsetof(struct rt_frame, uc) == 128, "rt_sigframe layout");
_Static_assert(offsetof(struct sigcontext, __reserved) == 288, "sigcontext layout");
_Static_assert(sizeof(struct fpsimd_context) == 528, "fpsimd_context layout");
_Static_assert(sizeof(struct user_regs_struct) == 34 * 8, "NT_PRSTATUS layout");
_Static_assert(sizeof(struct user_fpsimd_struct) == 528, "NT_PRFPREG layout");

/* What of the frame is written: up to the fpsimd record and the terminator after it. */
#define FRAME_USED (offsetof(struct rt_frame, uc.uc_mcontext.__reserved) + sizeof(struct fpsimd_context) + \
		    sizeof(struct _aarch64_ctx))

static int get_set(pid_t tid, int request, int type, void *buf, size_t len)
{
	struct iovec iov = { buf, len };

	if (ptrace(request, tid, (void *)(long)type, &iov))
		return -errno;
	return iov.iov_len == len ? 0 : -ENOEXEC;   /* shorter: an AArch32 task's registers */
}

int arch_get_regs(pid_t tid, struct arch_regs *r)
{
	int nr, err;

	memset(r, 0, sizeof *r);
	if ((err = get_set(tid, PTRACE_GETREGSET, NT_PRSTATUS, &r->r, sizeof r->r)) ||
	    (err = get_set(tid, PTRACE_GETREGSET, NT_ARM_SYSTEM_CALL, &nr, sizeof nr)))
		return err;
	r->syscallno = nr;
	return 0;
}

int arch_set_regs(pid_t tid, const struct arch_regs *r)
{
	int nr = (int)r->syscallno, err;

	if ((err = get_set(tid, PTRACE_SETREGSET, NT_PRSTATUS, (void *)&r->r, sizeof r->r)))
		return err;
	return get_set(tid, PTRACE_SETREGSET, NT_ARM_SYSTEM_CALL, &nr, sizeof nr);
}

bool arch_native(const struct arch_regs *r, char *why, size_t whylen)
{
	if (!(r->r.pstate & PSR_MODE32_BIT))
		return true;
	snprintf(why, whylen, "it is not a 64-bit process (an AArch32 task, pstate %#llx)",
		 (unsigned long long)r->r.pstate);
	return false;
}

void arch_before_stop(struct arch_thread *t)
{
	restart_read_blocked_call(t->tid, &t->before);
}

static bool svc_at(pid_t tid, uint64_t pc)
{
	uint32_t insn;

	return mem_read(tid, pc, &insn, sizeof insn) && insn == SVC_0;
}

enum cut { CUT_NONE, CUT_REWOUND, CUT_EINTR, CUT_UNSURE };

/* What the stop did to a call it cut short, by the record read before it (see the top). */
static enum cut cut_short(struct arch_thread *t, const struct user_regs_struct *s)
{
	const struct blocked_call *b = &t->before;

	if (b->known && s->sp == b->sp && s->regs[8] == (uint64_t)b->nr) {
		if (s->pc == b->pc - 4 && s->regs[0] == b->args[0])
			return CUT_REWOUND;
		if (s->pc == b->pc && (long long)s->regs[0] == -EINTR)
			return CUT_EINTR;
	}
	/* At an `svc` with a call that may want restart_syscall, and no record of it. */
	if ((s->regs[8] == SYS_nanosleep || s->regs[8] == SYS_clock_nanosleep || s->regs[8] == SYS_futex) &&
	    svc_at(t->tid, s->pc))
		return CUT_UNSURE;
	return CUT_NONE;
}

bool arch_in_syscall(struct arch_thread *t)
{
	return cut_short(t, &t->saved.r) != CUT_NONE;
}

static void leave(struct arch_thread *t, bool at_signal_stop, struct arch_regs *out, bool *restarted,
		  bool kernel_restarts)
{
	struct user_regs_struct *r = &out->r;
	const struct blocked_call *b = &t->before;
	enum cut cut;

	*out = t->saved;
	*restarted = false;
	cut = cut_short(t, r);
	if (cut == CUT_EINTR && restart_eintr_after_stop(b->nr) && !at_signal_stop &&
	    !restart_signal_pending(t->tid) && svc_at(t->tid, r->pc - 4)) {
		r->regs[0] = b->args[0];
		r->pc -= 4;
		*restarted = true;
	} else if (cut == CUT_REWOUND && !kernel_restarts && restart_block_call(b->nr, b->args)) {
		r->regs[8] = SYS_restart_syscall;
	} else if (cut == CUT_UNSURE && !kernel_restarts) {
		t->restart_unsure = true;
	}
	out->syscallno = -1;            /* the kernel restarts nothing of ours */
}

void arch_regs_to_leave(struct arch_thread *t, bool at_signal_stop, struct arch_regs *out, bool *restarted)
{
	leave(t, at_signal_stop, out, restarted, t->kernel_restarts);
}

/*
 * A rewound call is run again as it was, x8 its own number, not
 * restart_syscall: the trampoline ends in rt_sigreturn, which sets
 * restart_block.fn to do_no_restart_syscall, so restart_syscall after it
 * fails with EINTR (seen: a nanosleep cut short so).  Run again, a
 * relative sleep or futex timeout starts anew and can only end later.
 */
void arch_resume_state(struct arch_thread *t, bool at_signal_stop, struct arch_regs *out)
{
	bool restarted;

	leave(t, at_signal_stop, out, &restarted, true);
}

void arch_point_at_call(struct arch_regs *out, uint64_t insn, uint64_t sp, long nr, const long args[6])
{
	struct user_regs_struct *r = &out->r;

	r->sp = sp;
	r->pc = insn;
	r->pstate &= ~(uint64_t)PSR_BTYPE_MASK;   /* not reached by a branch: no BTI landing expected */
	r->regs[8] = (uint64_t)nr;
	for (int i = 0; i < 6; i++)
		r->regs[i] = (uint64_t)args[i];
	out->syscallno = -1;
}

long arch_call_result(const struct arch_regs *r)
{
	return (long)r->r.regs[0];
}

uint64_t arch_stack_pointer(const struct arch_regs *r)
{
	return r->r.sp;
}

uint64_t arch_tramp_data_at(uint64_t sp)
{
	return (sp - STACK_MARGIN - FRAME_USED) & ~(uint64_t)15;
}

/* Its blocked signals (/proc/TID/status SigBlk): stable while it is stopped. */
static bool blocked_mask(pid_t tid, uint64_t *mask)
{
	char path[64], text[4096], *p;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (read_text(path, text, sizeof text) || !(p = strstr(text, "\nSigBlk:")))
		return false;
	*mask = strtoull(p + 8, NULL, 16);
	return true;
}

/*
 * The frame rt_sigreturn restores R from: its registers, its FP/SIMD state
 * (an fpsimd record, then the terminator), its signal mask, and a
 * sigaltstack that restore_altstack() must leave as it is: do_sigaltstack()
 * refuses an unknown mode (EINVAL) before it changes anything, and
 * restore_altstack() ignores its answer.
 */
uint64_t arch_tramp_arm(struct arch_thread *t, uint64_t tramp, const struct arch_regs *regs)
{
	static struct rt_frame f;
	struct user_fpsimd_struct fp;
	struct fpsimd_context *fc = (struct fpsimd_context *)(void *)f.uc.uc_mcontext.__reserved;
	struct _aarch64_ctx *end = (struct _aarch64_ctx *)(void *)(fc + 1);
	uint64_t at = arch_tramp_data_at(regs->r.sp), mask;

	(void)tramp;                    /* the code needs nothing beside it */
	if (get_set(t->tid, PTRACE_GETREGSET, NT_PRFPREG, &fp, sizeof fp) || !blocked_mask(t->tid, &mask))
		return 0;
	memset(&f, 0, FRAME_USED);
	f.uc.uc_stack.ss_flags = ALTSTACK_UNCHANGED;
	f.uc.uc_sigmask = mask;
	memcpy(f.uc.uc_mcontext.regs, regs->r.regs, sizeof f.uc.uc_mcontext.regs);
	f.uc.uc_mcontext.sp = regs->r.sp;
	f.uc.uc_mcontext.pc = regs->r.pc;
	f.uc.uc_mcontext.pstate = regs->r.pstate;
	fc->head.magic = FPSIMD_MAGIC;
	fc->head.size = sizeof *fc;
	fc->fpsr = fp.fpsr;
	fc->fpcr = fp.fpcr;
	memcpy(fc->vregs, fp.vregs, sizeof fc->vregs);
	end->magic = 0;
	end->size = 0;
	if (!mem_write(t->tid, at, &f, FRAME_USED))
		return 0;
	t->tramp_data = at;
	return at;
}

/*
 * The mask at the first stop may be a call's own (ppoll, epoll_pwait and
 * the like set it for their time); the kernel puts the thread's back when
 * the first stop's signal path ends, before our call runs.  So the frame's
 * mask is read again at each call's exit.
 */
void arch_tramp_refresh(struct arch_thread *t)
{
	uint64_t mask;

	if (t->tramp_data && blocked_mask(t->tid, &mask))
		mem_write(t->tid, t->tramp_data + offsetof(struct rt_frame, uc.uc_sigmask), &mask, sizeof mask);
}
#endif
