/*
 * rescan.h - the helper thread that covers regions made after start
 * (madvise mode): it repeats the advise pass every KSM_ENABLE_RESCAN_MS.
 */
#ifndef KSMENABLE_RESCAN_H
#define KSMENABLE_RESCAN_H

void rescan_start(void);
void rescan_stop(void);
/* pthread_atfork child handler: the thread does not exist in the child. */
void rescan_after_fork_child(void);
int rescan_running(void);

#endif
