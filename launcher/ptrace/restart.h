/*
 * restart.h - system calls cut short by a stop (restart.c): the kernel's
 * restart codes, which programs never see, and the calls that signal(7)
 * says fail with EINTR after any stop, which ksm-run restarts itself.
 */
#ifndef KSMRUN_RESTART_H
#define KSMRUN_RESTART_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* include/linux/errno.h: the kernel turns these into a restart or EINTR. */
#define RESTARTSYS 512
#define RESTARTNOINTR 513
#define RESTARTNOHAND 514
#define RESTART_RESTARTBLOCK 516

/* Is RESULT one of the kernel's restart codes (negative, as a call returns them)? */
bool restart_code(long long result);

/* Does call NR fail with EINTR after any stop of its thread (signal(7))? */
bool restart_eintr_after_stop(long long nr);

/* Does a signal wait for thread TID that it does not block?  (true when unknown) */
bool restart_signal_pending(pid_t tid);

/*
 * The system call a thread is blocked in, as /proc/TID/syscall tells it
 * while the thread sleeps: its number, its arguments as it made the call
 * (the first one too, which on aarch64 the stop's registers lose), its
 * stack pointer and the address after its system call instruction.
 */
struct blocked_call {
	bool known;                     /* false: it was running, or not in a call */
	long nr;
	uint64_t args[6], sp, pc;
};

/* Reads thread TID's blocked call into *B (B->known false when it is in none). */
void restart_read_blocked_call(pid_t tid, struct blocked_call *b);

/* Does call NR with ARGS, cut short by a signal, ask for restart_syscall (ERESTART_RESTARTBLOCK)? */
bool restart_block_call(long nr, const uint64_t args[6]);

/* A call's result as words: strerror, with the kernel's codes 512-516 named. */
const char *restart_strerror(long result);

#endif
