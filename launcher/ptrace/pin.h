/*
 * pin.h - a target held to what was judged (pin.c): the same process, the
 * same program and the same credentials, from the checks before it is
 * stopped to the last of its stops.  A PID names a process only until it
 * ends, and a process is another program after an exec (a setuid one
 * changes whose it is): what was judged of one must never be done to the
 * other.
 */
#ifndef KSMRUN_PIN_H
#define KSMRUN_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pin {
	pid_t pid;
	pid_t tid;                      /* a thread that lives: the main one unless it has ended */
	int pidfd;                      /* pidfd_open(2); -1 on kernels without it (before 5.3) */
	unsigned long long start;       /* the process's start time, /proc/PID/stat field 22 */
	struct pin_exec {
		dev_t dev;              /* /proc/PID/exe: its program's file */
		ino_t ino;
		unsigned long long start_code, start_stack;  /* set anew by every exec */
	} exec;
	char creds[192];                /* the Uid:, Gid: and Groups: lines of its status */
};

enum pin_verdict {
	PIN_SAME,                       /* the process, program and credentials judged */
	PIN_ENDED,                      /* it has ended (its PID may name another process now) */
	PIN_EXECD,                      /* it runs another program: it exec'd */
	PIN_CREDS,                      /* its credentials are not those judged */
	PIN_THREAD_GONE,                /* the thread TID ended; the process goes on as judged */
};

/*
 * Pins process PID as it is now.  0; -1 when it has ended (or never was:
 * errno ESRCH), or when PID is a thread of another process (errno EINVAL;
 * proc_tgid names that process).
 */
int pin_take(struct pin *p, pid_t pid);

/* Is it still what was judged?  Its thread P->tid is the one looked at. */
enum pin_verdict pin_check(const struct pin *p);

/* Has the process ended?  Waits up to WAIT_MS for it to end (0: a look). */
bool pin_ended(const struct pin *p, int wait_ms);

/* Why a verdict refuses it, for a target's line. */
const char *pin_reason(enum pin_verdict v);

/* /proc/PID/task/TID/NAME: the files of the thread that lives (of P->tid). */
void pin_path(char *path, size_t len, const struct pin *p, const char *name);

void pin_release(struct pin *p);

#endif
