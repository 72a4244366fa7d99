/*
 * restart.c: what becomes of a system call that a stop cut short: the
 * kernel's restart codes, and the calls that fail with EINTR after any
 * stop (restart.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "ptrace/restart.h"
#include "common/files.h"

/* musl's wrapper has no kernel headers: the futex ABI's few values here. */
#if defined __has_include
#if __has_include(<linux/futex.h>)
#include <linux/futex.h>
#endif
#endif
#ifndef FUTEX_WAIT
#define FUTEX_WAIT 0                    /* include/uapi/linux/futex.h */
#define FUTEX_WAIT_BITSET 9
#define FUTEX_CMD_MASK (~(128 | 256))   /* the private and realtime flags off */
#endif

bool restart_code(long long result)
{
	return result == -RESTARTSYS || result == -RESTARTNOINTR || result == -RESTARTNOHAND ||
	       result == -RESTART_RESTARTBLOCK;
}

/*
 * Calls that fail with EINTR after a stop though no handler runs: the list
 * of signal(7) ("Interruption of system call and library functions by stop
 * signals"), whose socket calls do so when the socket has a timeout
 * (SO_RCVTIMEO, SO_SNDTIMEO: without one they restart), with the calls of
 * older kernels in it too, and io_getevents, seen to on 6.18.  Each may be
 * run again as it was: a timeout starts again, a socket's partial transfer
 * is returned as a count, not as EINTR, so EINTR means nothing was done.
 */
bool restart_eintr_after_stop(long long nr)
{
	switch (nr) {
#ifdef SYS_epoll_wait                   /* not on arm64 (epoll_pwait only) */
	case SYS_epoll_wait:
#endif
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_rt_sigtimedwait:       /* sigtimedwait and sigwaitinfo */
	case SYS_accept:
	case SYS_accept4:
	case SYS_connect:
	case SYS_recvfrom:              /* recv, recvfrom */
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_sendto:                /* send, sendto */
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_io_getevents:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
	case SYS_msgrcv:                /* Linux 2.6.8 and earlier */
	case SYS_msgsnd:
		return true;
	}
	return false;
}

/* Does a signal wait for the thread that it does not block? (/proc/TID/status) */
bool restart_signal_pending(pid_t tid)
{
	char path[64], text[4096], *p;
	unsigned long long pnd = 0, shd = 0, blk = 0;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (read_text(path, text, sizeof text))
		return true;             /* unknown: as if one did */
	if ((p = strstr(text, "\nSigPnd:")))
		pnd = strtoull(p + 8, NULL, 16);
	if ((p = strstr(text, "\nShdPnd:")))
		shd = strtoull(p + 8, NULL, 16);
	if ((p = strstr(text, "\nSigBlk:")))
		blk = strtoull(p + 8, NULL, 16);
	return ((pnd | shd) & ~blk) != 0;
}

void restart_read_blocked_call(pid_t tid, struct blocked_call *b)
{
	char path[64], text[256];
	unsigned long long a[8];
	long nr;

	memset(b, 0, sizeof *b);
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)tid);
	/* "NR ARG0 .. ARG5 SP PC" (hex with 0x), or "-1 SP PC", or "running" */
	if (read_text(path, text, sizeof text) ||
	    sscanf(text, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4],
		   &a[5], &a[6], &a[7]) != 9 || nr < 0)
		return;
	b->nr = nr;
	for (int i = 0; i < 6; i++)
		b->args[i] = a[i];
	b->sp = a[6];
	b->pc = a[7];
	b->known = true;
}

/*
 * The kernel's users of ERESTART_RESTARTBLOCK that a thread blocks in:
 * nanosleep and clock_nanosleep with a relative time (an absolute one
 * gives ERESTARTNOHAND), and futex waits with a timeout (without one,
 * ERESTARTSYS).  poll has one too, but only where it exists (not arm64).
 */
bool restart_block_call(long nr, const uint64_t args[6])
{
	switch (nr) {
#ifdef SYS_nanosleep
	case SYS_nanosleep:
		return true;
#endif
	case SYS_clock_nanosleep:
		return !(args[1] & TIMER_ABSTIME);
	case SYS_futex: {
		unsigned op = (unsigned)args[1] & FUTEX_CMD_MASK;

		return (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) && args[3] != 0;
	}
#ifdef SYS_poll
	case SYS_poll:
		return (int)args[2] >= 0;
#endif
	}
	return false;
}

const char *restart_strerror(long result)
{
	/* The kernel keeps these from programs; one that reaches us says the call was cut short. */
	switch (result < 0 ? -result : result) {
	case 512: return "interrupted by a signal (ERESTARTSYS), not run to its end";
	case 513: return "interrupted by a signal (ERESTARTNOINTR), not run to its end";
	case 514: return "interrupted by a signal (ERESTARTNOHAND), not run to its end";
	case 515: return "not supported by the kernel (ENOIOCTLCMD)";
	case 516: return "interrupted by a signal (ERESTART_RESTARTBLOCK), not run to its end";
	}
	return strerror((int)(result < 0 ? -result : result));
}
