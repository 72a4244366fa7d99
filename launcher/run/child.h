/*
 * child.h - starting the command, forwarding signals to it, reaping it,
 * and ending like it did (child.c).
 */
#ifndef KSMRUN_CHILD_H
#define KSMRUN_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct child {
	pid_t pid;
	double start, end;
	int status;		/* wait status of the command */
	int exec_errno;		/* nonzero: the command never ran */
	int errfd;		/* read end of the exec-error pipe */
};

/* Blocks the forwarded signals and SIGCHLD; makes ksm-run a subreaper. 0 or -errno. */
int child_prepare_signals(void);
/* Forks and execs ARGV; PRCTL_BEFORE_EXEC sets the process-wide KSM flag first. 0 or -errno. */
int child_start(struct child *c, char **argv, bool prctl_before_exec);
/* Waits up to TIMEOUT_MS, forwarding signals: 1 when the command ended, 0 on timeout. */
int child_wait(struct child *c, int timeout_ms);
/* The exit status ksm-run ends with: the command's, 128+signal, 126, 127. */
int child_exit_status(const struct child *c);
/* Ends ksm-run the way the command ended: same code, or the same signal. */
_Noreturn void child_exit_like(const struct child *c);

#endif
