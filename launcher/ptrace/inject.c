/*
 * inject.c: one thread of another process runs system calls for us.
 *
 * The sequence, and why each step is there:
 *  1. PTRACE_SEIZE (no stop, no signal sent) and PTRACE_INTERRUPT: the
 *     thread stops in the kernel's signal path, before it would go back to
 *     user space.  A call it was blocked in has been interrupted and holds
 *     its restart code (-ERESTARTSYS, ...) in the result register; nothing
 *     has restarted it yet.  Signals that arrive are delivered as they come.
 *  2. Its registers are saved.  For each call, the registers it would
 *     resume with (the kernel's restart applied) are written where the
 *     code of trampoline.c restores them from, and it is pointed at that
 *     code's `syscall` instruction with our call's number and arguments
 *     and no system call of its own in progress (orig_rax -1, so that the
 *     kernel restarts nothing of ours), and run to the call's exit stop
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
 * arguments, which the kernel keeps in place: the program never sees that
 * EINTR (a timeout of its own starts again, so it can only end later).
 * A signal that arrives while our registers are in place is not delivered
 * on them: its registers go back first, then it is delivered, and the call
 * is tried again from a fresh stop.  Our own call interrupted by a signal
 * (-ERESTARTSYS at its exit) is run again in the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/inject.h"
#include "ptrace/restart.h"
#include "ptrace/trampoline.h"
#include "common/files.h"
#include "common/stopsig.h"

#if defined(__x86_64__)
#include <sys/user.h>

#define USER_CS_64 0x33          /* the code segment of 64-bit user space */
#define SYSCALL_INSN "\x0f\x05"
#define MAX_RETRIES 8            /* signals that come in the way of one call */
#define MAX_RESTARTS 1000        /* our call interrupted by signals: each run goes further */
#define STOP_TIMEOUT_S 5.0

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(((struct inject *)0)->saved),
	       "room for the registers");

bool inject_supported(void)
{
	return true;
}

static struct user_regs_struct *saved_regs(struct inject *in)
{
	return (struct user_regs_struct *)(void *)in->saved;
}

enum stop_kind { STOP_GONE, STOP_TRAP, STOP_GROUP, STOP_SYSCALL, STOP_SIGNAL, STOP_EXEC, STOP_TIMEOUT,
		 STOP_ASKED, STOP_ERROR };

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

static int set_regs(struct inject *in, const struct user_regs_struct *r)
{
	return ptrace(PTRACE_SETREGS, in->tid, 0, (void *)r) ? -errno : 0;
}

/* Its own registers back in place (they are, unless a call of ours is in it). */
static int own_regs_back(struct inject *in)
{
	int err;

	if (!in->ours)
		return 0;
	if ((err = set_regs(in, saved_regs(in))))
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

/* Reads LEN bytes at ADDR of the thread's memory (it is ours to read while traced). */
static bool read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/mem", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len;
}

/*
 * The registers to leave it with: its own, except that a call that the
 * stop alone made fail with EINTR goes back to its `syscall` instruction
 * (rip - 2 after it) to run again, as if it had never been interrupted.
 * The handler path cannot be mistaken for it: a handler's frame sets rax
 * to 0, and sigreturn sets orig_rax to -1.
 */
static struct user_regs_struct regs_to_leave(struct inject *in, bool *restarted)
{
	struct user_regs_struct r = *saved_regs(in);
	unsigned char two[2];

	*restarted = false;
	if ((long long)r.orig_rax >= 0 && (long long)r.rax == -EINTR && restart_eintr_after_stop((long long)r.orig_rax) &&
	    in->last_stop != STOP_SIGNAL && !restart_signal_pending(in->tid) &&
	    read_mem(in->tid, r.rip - 2, two, 2) && !memcmp(two, SYSCALL_INSN, 2)) {
		r.rax = r.orig_rax;
		r.rip -= 2;
		r.orig_rax = (unsigned long long)-1;
		*restarted = true;
	}
	return r;
}

/*
 * The registers the thread would go on with if let go now with no signal
 * to deliver: those it is to be left with, and the kernel's restart of an
 * interrupted call applied (from the trampoline it returns to user space
 * directly, where the kernel would have done that on its way out).
 */
static struct user_regs_struct resume_state(struct inject *in)
{
	bool restarted;
	struct user_regs_struct r = regs_to_leave(in, &restarted);

	if ((long long)r.orig_rax >= 0 && restart_code((long long)r.rax)) {
		r.rax = (long long)r.rax == -RESTART_RESTARTBLOCK ? SYS_restart_syscall : r.orig_rax;
		r.rip -= 2;
	}
	r.orig_rax = (unsigned long long)-1;
	return r;
}

static int get_regs(struct inject *in, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, in->tid, 0, r) ? -errno : 0;
}

int inject_begin(struct inject *in, pid_t tid, double wait_s, const sigset_t *stops, char *why, size_t whylen)
{
	struct user_regs_struct *r = saved_regs(in), leave;
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
	in->t_stop = now_s();
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
	if ((err = get_regs(in, r))) {
		snprintf(why, whylen, "PTRACE_GETREGS: %s", strerror(-err));
		goto fail;
	}
	in->regs_saved = true;
	if (r->cs != USER_CS_64) {
		snprintf(why, whylen, "it is not a 64-bit process (code segment %#llx)",
			 (unsigned long long)r->cs);
		err = -ENOEXEC;
		goto fail;
	}
	in->in_syscall = (long long)r->orig_rax >= 0;
	/*
	 * A call that the stop alone failed with EINTR goes back to run again
	 * now, not only at the end: let go early (ksm-run killed), it restarts
	 * too.  A signal's delivery gets the EINTR back (own_regs_back).
	 */
	if ((leave = regs_to_leave(in, &restarted), restarted) && set_regs(in, &leave) == 0)
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
	struct user_regs_struct r = resume_state(in);
	int err;

	if (r.rsp != in->stack_checked && !trampoline_stack_ok(in->tid, r.rsp))
		return -EFAULT;
	in->stack_checked = r.rsp;
	if (!(r.rsp = trampoline_arm(in->tid, in->insn, &r)))
		return -EFAULT;
	r.rip = in->insn;
	r.rax = (unsigned long long)nr;
	r.orig_rax = (unsigned long long)-1;
	r.rdi = (unsigned long long)args[0];
	r.rsi = (unsigned long long)args[1];
	r.rdx = (unsigned long long)args[2];
	r.r10 = (unsigned long long)args[3];
	r.r8 = (unsigned long long)args[4];
	r.r9 = (unsigned long long)args[5];
	if ((err = set_regs(in, &r)))
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
	int err;

	if ((err = own_regs_back(in)))
		return err;
	in->call_running = false;
	in->signals_passed++;
	if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0))
		return -errno;
	if ((err = resume(in, PTRACE_CONT, sig)) || (err = wait_trap(in, why, whylen, false)))
		return err;
	if ((err = get_regs(in, saved_regs(in))))
		return err;
	in->in_syscall = (long long)saved_regs(in)->orig_rax >= 0;
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
	struct user_regs_struct r;
	int err, sig, tries = 0, restarts = 0;
	bool entered = false;

	if (!in->seized || !in->stopped || !in->regs_saved)
		return -EINVAL;
	if ((err = start_call(in, nr, args)))
		goto ptrace_error;
	for (;;) {
		switch (wait_stop(in, &sig, false)) {
		case STOP_SYSCALL:
			if ((err = get_regs(in, &r)))
				goto ptrace_error;
			if (!entered) {
				entered = true;
				if ((err = resume(in, PTRACE_SYSCALL, 0)))
					goto ptrace_error;
				continue;
			}
			test_pause();
			/* Interrupted by a signal for it: delivered (below), then run again. */
			if (restart_code((long long)r.rax) && restarts++ < MAX_RESTARTS) {
				entered = false;
				if ((err = start_call(in, nr, args)))
					goto ptrace_error;
				continue;
			}
			*result = (long)r.rax;
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
		struct user_regs_struct now, leave;
		bool restarted;

		if (in->last_stop == STOP_SYSCALL)
			err = put_back(in);
		leave = regs_to_leave(in, &restarted);
		in->restarted |= restarted;
		if (!err && get_regs(in, &now) == 0 && memcmp(&now, &leave, sizeof now))
			err = set_regs(in, &leave);
		if (!err)
			in->ours = false;
	}
	if (in->seized && in->stopped && in->last_stop == STOP_SIGNAL)
		sig = in->last_sig;
	else
		sig = 0;
	in->t_go = now_s();
	if (in->seized && ptrace(PTRACE_DETACH, in->tid, 0, (void *)(long)sig) && !err)
		err = -errno;
	if (!in->seized && !err)
		err = -ESRCH;
	in->seized = in->stopped = false;
	return err;
}

#else /* not x86_64 */

bool inject_supported(void)
{
	return false;
}

int inject_begin(struct inject *in, pid_t tid, double wait_s, const sigset_t *stops, char *why, size_t whylen)
{
	(void)wait_s;
	(void)stops;
	memset(in, 0, sizeof *in);
	in->tid = tid;
	snprintf(why, whylen, "--attach is supported on x86_64 only");
	return -ENOSYS;
}

int inject_syscall(struct inject *in, long nr, const long args[6], long *result, char *why,
		   size_t whylen)
{
	(void)in, (void)nr, (void)args, (void)result;
	snprintf(why, whylen, "--attach is supported on x86_64 only");
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
