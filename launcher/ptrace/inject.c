/*
 * inject.c: one thread of another process runs system calls for us.
 *
 * The sequence, and why each step is there:
 *  1. PTRACE_SEIZE (no stop, no signal sent) and PTRACE_INTERRUPT: the
 *     thread stops in the kernel's signal path, before it would go back to
 *     user space.  A call it was blocked in has been interrupted and holds
 *     its restart code (-ERESTARTSYS, ...) in the result register; nothing
 *     has restarted it yet (on aarch64 the kernel has begun to: arch_aarch64.c).
 *     Signals that arrive are delivered as they come.
 *  2. Its registers are saved.  For each call, the registers it would
 *     resume with (the kernel's restart applied) are written where the
 *     code of trampoline.c restores them from, and it is pointed at that
 *     code's `syscall` instruction with our call's number and arguments
 *     and no system call of its own in progress (orig_rax or syscallno -1,
 *     so that the kernel restarts nothing of ours), and run to the call's exit stop
 *     with PTRACE_SYSCALL.  The next call starts from that exit stop.
 *  3. After the last call, it is stopped once more by PTRACE_INTERRUPT on
 *     its way out, in the signal path, and only there are its own registers
 *     put back exactly: when it is let go the kernel itself restarts the
 *     interrupted call (or delivers a signal that came, with the right
 *     restart rules), just as after any stop of a debugger.  Restoring at
 *     the exit stop and letting go from there would hand it -ERESTARTSYS.
 * Should ksm-run die at any moment in between (SIGKILL, the OOM killer),
 * the kernel lets the thread go with the registers it has: ours, from
 * step 2 to step 3.  It then finishes our call and runs the trampoline's
 * restore, so it goes on where it was, as if ksm-run had let it go.
 * Some calls the kernel does not restart after a stop: epoll_wait and its
 * kin, semop, sigtimedwait, socket calls with a timeout, io_getevents fail
 * with EINTR after any stop, even with no signal handler (signal(7)).  Such
 * a call that was interrupted by the stop alone (no signal pending for it)
 * is restarted here instead, from its `syscall` instruction with its
 * arguments, which the kernel keeps in place (aarch64: as read before the
 * stop, arch_aarch64.c): the program never sees that
 * EINTR (a timeout of its own starts again, so it can only end later).
 * A signal that arrives while our registers are in place is not delivered
 * on them: its registers go back first, then it is delivered, and the call
 * is tried again from a fresh stop.  Our own call interrupted by a signal
 * (-ERESTARTSYS at its exit) is run again in the same way.
 * What differs between processors (registers, the restart the kernel
 * leaves to do, the trampoline's code and data) is in arch.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/arch.h"
#include "ptrace/inject.h"
#include "ptrace/restart.h"
#include "ptrace/trampoline.h"
#include "common/files.h"
#include "common/stopsig.h"

#if ARCH_INJECTS

#define MAX_RETRIES 8            /* signals that come in the way of one call */
#define MAX_RESTARTS 1000        /* our call interrupted by signals: each run goes further */
#define STOP_TIMEOUT_S 5.0

bool inject_supported(void)
{
	return true;
}

static struct arch_regs *saved_regs(struct inject *in)
{
	return &in->th.saved;
}

enum stop_kind { STOP_GONE, STOP_TRAP, STOP_GROUP, STOP_SYSCALL, STOP_SIGNAL, STOP_EXEC, STOP_TIMEOUT,
		 STOP_ASKED, STOP_ERROR };

/* The registers to let it go with from the stop it is in (arch.h). */
static void regs_to_leave(struct inject *in, struct arch_regs *r, bool *restarted)
{
	arch_regs_to_leave(&in->th, in->last_stop == STOP_SIGNAL, r, restarted);
}

/*
 * Waits for the thread's next stop, up to STOP_TIMEOUT_S; with MAY_GIVE_UP,
 * also until one of the stop signals is pending (STOP_ASKED).  A stop of a
 * tracee sends its tracer SIGCHLD, which the caller blocks (inject.h):
 * sigtimedwait takes it, so the wait ends the moment the thread stops, and
 * nothing else (no timer, no handler) is needed to bound it.  *SIG: the
 * signal of a signal-delivery or group stop.
 */
static enum stop_kind wait_stop(struct inject *in, int *sig, bool may_give_up)
{
	double t0 = now_s();
	sigset_t chld;
	pid_t r;
	int st;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while ((r = waitpid(in->tid, &st, __WALL | WNOHANG)) == 0) {
		/* Until a stop is ours, the caller's bound; once a call of ours runs, the full one. */
		double bound = may_give_up && in->wait_s > 0 ? in->wait_s : STOP_TIMEOUT_S;
		double left = bound - (now_s() - t0);
		struct timespec slice = { 0, 50 * 1000000L };  /* the stop signals are looked at as often */

		if (may_give_up && in->stops && stop_signal_pending(in->stops))
			return STOP_ASKED;
		if (left <= 0)
			return STOP_TIMEOUT;
		if (left < 0.05)
			slice.tv_nsec = (long)(left * 1e9);
		sigtimedwait(&chld, NULL, &slice);
	}
	if (r < 0)
		return errno == ECHILD ? STOP_GONE : STOP_ERROR;
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		in->seized = in->stopped = false;
		in->death_sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
		return STOP_GONE;
	}
	in->stopped = true;
	in->last_sig = *sig = WSTOPSIG(st);
	if (st >> 16 == PTRACE_EVENT_EXEC) {
		/* Another program now: what was saved of the old one must never be put back. */
		in->regs_saved = false;
		in->last_stop = STOP_EXEC;
		return STOP_EXEC;
	}
	if (st >> 16 == PTRACE_EVENT_STOP)
		in->last_stop = *sig == SIGTRAP ? STOP_TRAP : STOP_GROUP;
	else if (*sig == (SIGTRAP | 0x80))
		in->last_stop = STOP_SYSCALL;
	else
		in->last_stop = STOP_SIGNAL;
	return in->last_stop;
}

/*
 * Its own registers back in place (they are, unless a call of ours is in
 * it), at a signal's delivery: those it is to be left with there.
 */
static int own_regs_back(struct inject *in)
{
	struct arch_regs own;
	bool restarted;
	int err;

	if (!in->ours)
		return 0;
	regs_to_leave(in, &own, &restarted);
	if ((err = arch_set_regs(in->tid, &own)))
		return err;
	in->ours = false;
	return 0;
}

/* Resumes it with REQUEST (PTRACE_CONT, PTRACE_SYSCALL) and signal SIG. */
static int resume(struct inject *in, int request, int sig)
{
	if (ptrace(request, in->tid, 0, (void *)(long)sig))
		return -errno;
	in->stopped = false;
	return 0;
}

/*
 * Waits for the interrupt's stop, delivering signals that come first as
 * they would have been.  0; -ESRCH gone; -EBUSY stopped by job control;
 * -ESTALE it exec'd; -ETIMEDOUT no stop; -EINTR (MAY_GIVE_UP) a stop signal.
 */
static int wait_trap(struct inject *in, char *why, size_t whylen, bool may_give_up)
{
	int sig, err;

	for (;;) {
		switch (wait_stop(in, &sig, may_give_up)) {
		case STOP_TRAP:
			return 0;
		case STOP_SIGNAL:
			/* A signal is delivered on its own registers, never on ours. */
			in->signals_passed++;
			if ((err = own_regs_back(in)) || (err = resume(in, PTRACE_CONT, sig)))
				return err;
			continue;
		case STOP_GROUP:
			snprintf(why, whylen, "it is stopped by job control (%s); it was not touched",
				 strsignal(sig));
			return -EBUSY;
		case STOP_GONE:
			snprintf(why, whylen, "it ended while it was being attached to");
			return -ESRCH;
		case STOP_TIMEOUT:
			snprintf(why, whylen, "it did not stop within %.2g s (in uninterruptible sleep?)",
				 in->wait_s > 0 ? in->wait_s : STOP_TIMEOUT_S);
			return -ETIMEDOUT;
		case STOP_EXEC:
			snprintf(why, whylen, "it exec'd during the attach");
			return -ESTALE;
		case STOP_ASKED:
			snprintf(why, whylen, "ksm-run was asked to stop before it stopped");
			return -EINTR;
		case STOP_SYSCALL:
		case STOP_ERROR:
			break;
		}
		snprintf(why, whylen, "an unexpected stop while attaching");
		return -EPROTO;
	}
}

int inject_begin(struct inject *in, pid_t tid, double wait_s, const sigset_t *stops, struct stopprio *prio,
		 char *why, size_t whylen)
{
	struct arch_regs *r = saved_regs(in), leave;
	bool restarted;
	int err;

	memset(in, 0, sizeof *in);
	in->tid = tid;
	in->wait_s = wait_s;
	in->stops = stops;
	/* An exec while it is ours is an event (STOP_EXEC), not a surprise. */
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC))) {
		err = -errno;
		snprintf(why, whylen, "PTRACE_SEIZE: %s", strerror(-err));
		return err;
	}
	in->seized = true;
	/* Raised only while seized: from here until just before the detach (inject_end). */
	if ((in->prio = prio))
		stopprio_raise(prio);
	in->t_stop = now_s();
	in->th.tid = tid;
	arch_before_stop(&in->th);
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		err = -errno;
		snprintf(why, whylen, "PTRACE_INTERRUPT: %s", strerror(-err));
		inject_end(in);
		return err;
	}
	/* It never stopped: it stays seized until this thread of ksm-run ends (inject.h). */
	if ((err = wait_trap(in, why, whylen, true)) == -ETIMEDOUT || err == -EINTR)
		return err;
	if (err)
		goto fail;
	in->th.kernel_restarts = true;
	if ((err = arch_get_regs(tid, r))) {
		if (err == -ENOEXEC)
			snprintf(why, whylen, "it is not a 64-bit process (its registers are not %s's)", ARCH_NAME);
		else
			snprintf(why, whylen, "PTRACE_GETREGS: %s", strerror(-err));
		goto fail;
	}
	in->regs_saved = true;
	if (!arch_native(r, why, whylen)) {
		err = -ENOEXEC;
		goto fail;
	}
	in->in_syscall = arch_in_syscall(&in->th);
	/*
	 * A call that the stop alone failed with EINTR goes back to run again
	 * now, not only at the end: let go early (ksm-run killed), it restarts
	 * too.  A signal's delivery gets the EINTR back (own_regs_back).
	 */
	if ((regs_to_leave(in, &leave, &restarted), restarted) && arch_set_regs(tid, &leave) == 0)
		in->ours = true;
	if (!(in->insn = trampoline_install(tid, why, whylen))) {
		err = -ENOEXEC;
		goto fail;
	}
	return 0;
fail:
	inject_end(in);
	return err;
}

/*
 * Points the thread at the trampoline with call NR(ARGS), the registers to
 * go on with written for its restore, and runs it to the call's entry.
 */
static int start_call(struct inject *in, long nr, const long args[6])
{
	struct arch_regs r;
	uint64_t sp;
	int err;

	arch_resume_state(&in->th, in->last_stop == STOP_SIGNAL, &r);
	sp = arch_stack_pointer(&r);
	if (sp != in->stack_checked && !trampoline_stack_ok(in->tid, sp))
		return -EFAULT;
	in->stack_checked = sp;
	if (!(sp = arch_tramp_arm(&in->th, in->insn, &r)))
		return -EFAULT;
	arch_point_at_call(&r, in->insn, sp, nr, args);
	if ((err = arch_set_regs(in->tid, &r)))
		return err;
	in->ours = true;
	in->call_running = true;
	return resume(in, PTRACE_SYSCALL, 0);
}

/*
 * A signal came while our registers were in place: its own go back, the
 * signal is delivered on them, and a fresh interrupt stop is awaited
 * (whose registers are then the ones to keep: a handler may be running).
 */
static int yield_to_signal(struct inject *in, int sig, char *why, size_t whylen)
{
	struct arch_regs put, now;
	bool restarted;
	int err;

	if ((err = own_regs_back(in)))
		return err;
	regs_to_leave(in, &put, &restarted);
	in->call_running = false;
	in->signals_passed++;
	if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0))
		return -errno;
	if ((err = resume(in, PTRACE_CONT, sig)) || (err = wait_trap(in, why, whylen, false)))
		return err;
	if ((err = arch_get_regs(in->tid, &now)))
		return err;
	/*
	 * A handler was set up (the registers moved): the stop it is in now is
	 * in another signal path, and what was cut short before is in the
	 * handler's frame, the kernel's to restart.  Else the signal ended in
	 * the kernel (ignored), and it is still in the same signal path.
	 */
	if (memcmp(&now, &put, sizeof now)) {
		in->th.kernel_restarts = false;
		in->th.before.known = false;
	}
	*saved_regs(in) = now;
	in->in_syscall = arch_in_syscall(&in->th);
	return 0;
}

/*
 * A test's window: with KSM_RUN_TEST_INJECT_PAUSE_MS set, ksm-run pauses
 * this long at each call's exit with our registers in the thread, and
 * says so on stderr before and after, so that a test can kill it there
 * and know that it did (tests/42-attach.bats).  It changes nothing else.
 */
static void test_pause(void)
{
	static long ms = -1;
	const char *v;

	if (ms < 0)
		ms = (v = secure_getenv("KSM_RUN_TEST_INJECT_PAUSE_MS")) ? strtol(v, NULL, 10) : 0;
	if (ms <= 0)
		return;
	fputs("ksm-run: test pause: the call's registers are in the target\n", stderr);
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000 }, NULL);
	fputs("ksm-run: test pause: over\n", stderr);
}

int inject_syscall(struct inject *in, long nr, const long args[6], long *result, char *why,
		   size_t whylen)
{
	struct arch_regs r;
	int err, sig, tries = 0, restarts = 0;
	bool entered = false;

	if (!in->seized || !in->stopped || !in->regs_saved)
		return -EINVAL;
	if ((err = start_call(in, nr, args)))
		goto ptrace_error;
	for (;;) {
		switch (wait_stop(in, &sig, false)) {
		case STOP_SYSCALL:
			if ((err = arch_get_regs(in->tid, &r)))
				goto ptrace_error;
			if (!entered) {
				entered = true;
				in->th.kernel_restarts = false; /* it left the first stop's signal path */
				if ((err = resume(in, PTRACE_SYSCALL, 0)))
					goto ptrace_error;
				continue;
			}
			arch_tramp_refresh(&in->th);
			test_pause();
			/* Interrupted by a signal for it: delivered (below), then run again. */
			if (restart_code(arch_call_result(&r)) && restarts++ < MAX_RESTARTS) {
				entered = false;
				if ((err = start_call(in, nr, args)))
					goto ptrace_error;
				continue;
			}
			*result = arch_call_result(&r);
			in->call_running = false;   /* at its exit: ours are in place, it runs nothing */
			return 0;
		case STOP_SIGNAL:
			/* Before the call's entry: the entry and exit stops have no signal between. */
			if ((err = yield_to_signal(in, sig, why, whylen)))
				return err;
			if (++tries > MAX_RETRIES + restarts) {
				snprintf(why, whylen, "signals kept arriving while it ran the call");
				return -EAGAIN;
			}
			if ((err = start_call(in, nr, args)))
				goto ptrace_error;
			continue;
		case STOP_GONE:
			snprintf(why, whylen, "it ended during the attach");
			return -ESRCH;
		case STOP_GROUP:
			snprintf(why, whylen, "it was stopped by job control during the attach");
			return -EBUSY;
		case STOP_TIMEOUT:
			snprintf(why, whylen, "the call did not return within %.0f s", STOP_TIMEOUT_S);
			return -ETIMEDOUT;
		case STOP_EXEC:
			snprintf(why, whylen, "it exec'd during the attach");
			return -ESTALE;
		case STOP_TRAP:
		case STOP_ASKED:
		case STOP_ERROR:
			break;
		}
		snprintf(why, whylen, "an unexpected stop while it ran the call");
		return -EPROTO;
	}
ptrace_error:
	snprintf(why, whylen, "%s: %s", err == -EFAULT ? "its stack or vDSO could not be written" : "ptrace",
		 strerror(-err));
	return err;
}

/*
 * After the last call, at its exit stop, a second interrupt stops it in
 * the signal path, and only there do its own registers go back (see the
 * top): restored at the exit stop, a thread let go before that second stop
 * (ksm-run killed) would go back to user space with its restart code in
 * place of the restart.  Until then the trampoline covers it.
 */
static int put_back(struct inject *in)
{
	char why[128];
	int err;

	if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0))
		return -errno;
	if ((err = resume(in, PTRACE_CONT, 0)) || (err = wait_trap(in, why, sizeof why, false)))
		return err;
	return own_regs_back(in);
}

int inject_end(struct inject *in)
{
	int err = 0, sig;

	if (!in->seized)
		return 0;
	/*
	 * A stop that never came: while our call runs on our registers it
	 * cannot be left, and it returns (prctl, madvise), so that wait has no
	 * bound.  Otherwise its own registers are in place, and a thread that
	 * does not stop within the bound (uninterruptible sleep), or when a
	 * stop signal came, is given up: still seized, with a stop requested,
	 * until the thread that seized it ends (inject.h).
	 */
	while (!in->stopped && in->seized) {
		enum stop_kind k = wait_stop(in, &sig, !in->call_running);

		if (k == STOP_SIGNAL)
			resume(in, PTRACE_CONT, sig);
		else if (k == STOP_GONE || k == STOP_ERROR)
			break;
		else if ((k == STOP_TIMEOUT || k == STOP_ASKED) && !in->call_running)
			return -ETIMEDOUT;
	}
	/*
	 * At an exit stop ours are in place: put back through a second stop.
	 * At a stop in the signal path (interrupt, job control, a signal's
	 * delivery) its own go back in place and it is let go from there, a
	 * signal being delivered with them.
	 */
	if (in->seized && in->stopped && in->regs_saved) {
		struct arch_regs now, leave;
		bool restarted;

		if (in->last_stop == STOP_SYSCALL)
			err = put_back(in);
		regs_to_leave(in, &leave, &restarted);
		in->restarted |= restarted;
		if (!err && arch_get_regs(in->tid, &now) == 0 && memcmp(&now, &leave, sizeof now))
			err = arch_set_regs(in->tid, &leave);
		if (!err)
			in->ours = false;
	}
	if (in->seized && in->stopped && in->last_stop == STOP_SIGNAL)
		sig = in->last_sig;
	else
		sig = 0;
	if (in->prio)
		stopprio_restore(in->prio);     /* before the target runs on its own again */
	in->t_go = now_s();
	if (in->seized && ptrace(PTRACE_DETACH, in->tid, 0, (void *)(long)sig) && !err)
		err = -errno;
	if (!in->seized && !err)
		err = -ESRCH;
	in->seized = in->stopped = false;
	return err;
}

#else /* no arch.h for this processor */

bool inject_supported(void)
{
	return false;
}

int inject_begin(struct inject *in, pid_t tid, double wait_s, const sigset_t *stops, struct stopprio *prio,
		 char *why, size_t whylen)
{
	(void)wait_s;
	(void)stops;
	(void)prio;
	memset(in, 0, sizeof *in);
	in->tid = tid;
	snprintf(why, whylen, "--attach is supported on x86_64 and aarch64 only");
	return -ENOSYS;
}

int inject_syscall(struct inject *in, long nr, const long args[6], long *result, char *why,
		   size_t whylen)
{
	(void)in, (void)nr, (void)args, (void)result;
	snprintf(why, whylen, "--attach is supported on x86_64 and aarch64 only");
	return -ENOSYS;
}

int inject_end(struct inject *in)
{
	(void)in;
	return 0;
}

#endif

double inject_stopped_for(const struct inject *in)
{
	return in->t_go > in->t_stop ? in->t_go - in->t_stop : 0;
}
