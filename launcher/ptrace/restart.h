/*
 * restart.h - system calls cut short by a stop (restart.c): the kernel's
 * restart codes, which programs never see, and the calls that signal(7)
 * says fail with EINTR after any stop, which ksm-run restarts itself.
 */
#ifndef KSMRUN_RESTART_H
#define KSMRUN_RESTART_H

#include <stdbool.h>
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

/* A call's result as words: strerror, with the kernel's codes 512-516 named. */
const char *restart_strerror(long result);

#endif
