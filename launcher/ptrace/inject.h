/*
 * inject.h - making one thread of another process run system calls, the
 * way a debugger's `call` does (inject.c): PTRACE_SEIZE and
 * PTRACE_INTERRUPT stop that thread alone, its registers are saved, it is
 * sent to a `syscall` instruction followed by code that restores them
 * (trampoline.h: should ksm-run die meanwhile, the thread goes on
 * unharmed), and afterwards its registers are put back at a second
 * interrupt stop, so that the kernel itself restarts a system call the
 * thread was blocked in, exactly as after any stop.
 *
 * The stops are awaited with sigtimedwait on SIGCHLD, bounded (5 s, or the
 * caller's bound for a stop not ours yet): the
 * caller must keep SIGCHLD blocked.  A thread that never stops
 * (uninterruptible sleep) stays seized, a stop requested, until the
 * thread of ksm-run that seized it ends: the kernel then lets it go and
 * the stop never happens.  So each target is handled in a thread of its
 * own (attach.c).
 * x86_64 and aarch64 (arch.h): elsewhere inject_begin() fails with -ENOSYS.
 */
#ifndef KSMRUN_INJECT_H
#define KSMRUN_INJECT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/arch.h"
#include "ptrace/stopprio.h"

/* Does this build know how to make another process call the kernel? */
bool inject_supported(void);

struct inject {
	pid_t tid;
	bool seized, stopped;           /* traced by us; in a ptrace stop now */
	bool regs_saved;
	bool in_syscall;                /* it was stopped inside a system call */
	int death_sig;                  /* the signal it died of, when it died under us; 0 */
	bool call_running;              /* our call runs on our registers: it cannot be left */
	uint64_t insn;                  /* address of the `syscall` instruction used (trampoline.h) */
	uint64_t stack_checked;         /* the stack pointer whose room for the block was checked */
	struct arch_thread th;          /* its registers and what the processor's side keeps (arch.h) */
	double t_stop, t_go;            /* when it stopped and when it went on (now_s()) */
	int signals_passed;             /* signals that arrived meanwhile, delivered as they came */
	bool ours;                      /* registers other than its own are in it (inject.c) */
	bool restarted;                 /* a call failed by the stop alone was restarted (inject.c) */
	int last_stop, last_sig;        /* the kind of the stop it is in (inject.c), its signal */
	double wait_s;                  /* how long a stop that is not ours yet is waited for (0: 5 s) */
	const sigset_t *stops;          /* pending, they end such a wait; or NULL */
	struct stopprio *prio;          /* raised while it is seized (inject_begin); or NULL */
};

/*
 * Seizes thread TID and stops it (PTRACE_INTERRUPT), saving its registers;
 * an exec while it is seized is an event (PTRACE_O_TRACEEXEC).  The stop is
 * waited for WAIT_S seconds (0: 5 s; the agent waits less, and tries again
 * later, so that no target holds up the others), or until one of the
 * signals STOPS (NULL: none; INT and TERM, say) is pending: they stay
 * pending.  While nothing of ours is in the thread, any later wait for a
 * stop ends for them too.
 * 0; or -errno with a reason in WHY (traced by someone else, not
 * permitted, gone, stopped by job control, not a 64-bit process; -ESTALE
 * it exec'd; -ETIMEDOUT it did not stop; -EINTR a stop signal came first),
 * and the thread is left as it was, or for the last two still seized
 * until this thread of ksm-run ends.
 * PRIO (NULL: none) raises this thread of ksm-run (stopprio.h) from just
 * after the seize until just before the thread is let go (inject_end), so
 * that the thread is never raised while the target is not traced, nor
 * while it runs on its own again.
 */
int inject_begin(struct inject *in, pid_t tid, double wait_s, const sigset_t *stops, struct stopprio *prio,
		 char *why, size_t whylen);

/*
 * In the stopped thread, runs system call NR with ARGS (six, unused ones
 * 0); *RESULT is what the call returned (a negative errno when it failed).
 * 0, or -errno when the thread could not be made to run it (then the
 * caller ends the session with inject_end(), which still puts it back;
 * -ESRCH: it is gone).
 */
int inject_syscall(struct inject *in, long nr, const long args[6], long *result, char *why,
		   size_t whylen);

/*
 * Puts the saved registers back and lets the thread go: it then goes on
 * as if never stopped (after an exec, the new program's are left as they
 * are).  0, or -errno (the thread died meanwhile: -ESRCH; it never
 * stopped: -ETIMEDOUT, see above).  Safe to call after any failure, also
 * twice.
 */
int inject_end(struct inject *in);

/* How long the thread was stopped, in seconds (after inject_end). */
double inject_stopped_for(const struct inject *in);

#endif
