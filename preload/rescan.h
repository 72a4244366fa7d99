/*
 * rescan.h - the helper thread that covers regions made after start
 * (madvise mode): it repeats the advise pass every KSM_ENABLE_RESCAN_MS.
 */
#ifndef KSMENABLE_RESCAN_H
#define KSMENABLE_RESCAN_H

void rescan_start(void);
/* Ends and joins the thread; does nothing in a process that does not own it. */
void rescan_stop(void);
/*
 * Around a call the kernel refuses to multi-threaded processes (entering
 * a user, mount or time namespace): pause returns 1 when it paused (then
 * call rescan_resume after the call), 0 when there was nothing to pause.
 */
int rescan_pause(void);
void rescan_resume(void);
/* pthread_atfork prepare handler: waits while the thread starts or ends (rescan.c says why). */
void rescan_before_fork(void);
/* pthread_atfork child handler: resets the state, starts nothing (rescan.c says why). */
void rescan_after_fork_child(void);
/*
 * Called first by every wrapped function: in a forked child that has
 * lived a rescan period, starts its own thread.  Keeps errno.
 */
void rescan_start_if_due(void);
int rescan_running(void);

#endif
