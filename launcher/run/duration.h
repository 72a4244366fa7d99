/*
 * duration.h - --duration=SECONDS (duration.c): the command ends when its
 * time is up, as timeout(1) ends one, so that a program that never ends
 * by itself (a server) can be run and profiled for a while.
 */
#ifndef KSMRUN_DURATION_H
#define KSMRUN_DURATION_H

#include <stdbool.h>
#include <sys/types.h>

#include "run/child.h"

/* The grace between TERM and KILL, as --end-survivors gives. */
#define DURATION_KILL_AFTER_S 5.0

struct duration {
	double seconds;         /* --duration; 0: none */
	double term_at;         /* now_s() when TERM is due */
	bool termed, killed;    /* what was sent */
};

/* From the command's start (now_s() of it); SECONDS 0: no limit. */
void duration_start(struct duration *d, double seconds, double start);
/* WAIT_MS, shortened so that the next signal due is not late. */
int duration_wait_ms(const struct duration *d, int wait_ms);
/* Is TERM due now (and not sent yet)?  The caller samples once more first. */
bool duration_term_due(const struct duration *d);
/* Sends what is due to PID: TERM at the time, KILL a grace later. */
void duration_signal(struct duration *d, pid_t pid, bool quiet);
/*
 * timeout(1)'s status for a command it ended: 124, or 137 when it took
 * KILL; -1 when --duration did not end it (the command's own status).
 */
int duration_exit_status(const struct duration *d, const struct child *c);

#endif
