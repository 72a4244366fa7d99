/*
 * procevents.h - the kernel's process events (the proc connector, over
 * netlink): a fork, an exec, a change of user and an exit, told to the
 * agent as they happen, so that it reads only the processes that are new
 * or changed, at once, instead of every process of /proc each second.
 *
 * The kernel tells them only to a socket in the first network namespace,
 * opened with CAP_NET_ADMIN there; elsewhere procevents_open fails and the
 * agent scans /proc instead.
 */
#ifndef KSMRUN_POLICY_PROCEVENTS_H
#define KSMRUN_POLICY_PROCEVENTS_H

#include <stddef.h>
#include <sys/types.h>

enum procevent_kind {
	PROCEVENT_NEW,          /* a process started (a fork, not a thread's) */
	PROCEVENT_EXEC,         /* it runs another program */
	PROCEVENT_IDS,          /* its user or group changed */
	PROCEVENT_EXIT,         /* the process (its main thread) ended */
};

struct procevent {
	enum procevent_kind kind;
	pid_t pid;              /* the process: a thread group's id */
};

/*
 * A socket that receives the events, non-blocking, or -1 with errno
 * (EPROTONOSUPPORT: no connector in this network namespace; EPERM: not
 * allowed to listen).
 */
int procevents_open(void);

/*
 * Reads the events waiting on FD into OUT (at most MAX): how many, 0 when
 * none waits, or -1 with errno: ENOBUFS when the kernel dropped some
 * (events were lost: every process must be looked at again), another
 * errno when the socket failed.  Messages of other senders than the
 * kernel, and events of threads, are skipped.
 */
int procevents_read(int fd, struct procevent *out, size_t max);

/* Stops listening and closes FD (-1: nothing). */
void procevents_close(int fd);

#endif
