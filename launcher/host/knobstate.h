/*
 * knobstate.h - the knob values from before the first of overlapping
 * ksm-run instances, kept in /run/ksm-run/state under a lock, with the
 * list of live instances that use them: the last to end restores them.
 */
#ifndef KSMRUN_KNOBSTATE_H
#define KSMRUN_KNOBSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "host/knobs.h"

#define MAX_USERS 256

struct knobstate {
	bool exists;
	int nusers;
	struct state_user {
		pid_t pid;
		unsigned long long start;     /* /proc/PID/stat starttime: not a reused pid */
	} users[MAX_USERS];
	struct knob_set saved;
};

/* Registers this process and writes WANT, under the lock.  0 or -errno. */
int knobstate_begin(const struct knob_set *want);
/* Unregisters; the last user restores the saved values.  0 or -errno. */
int knobstate_end(void);
/* ksm-run --restore: the exit status. */
int knobstate_restore_cmd(void);
/* For --status, without the lock: 0 none or in use, 1 unreadable or corrupt, 2 left behind. */
int knobstate_describe(char *buf, size_t len);
/* Is there a saved state that this process could join? */
int knobstate_exists(void);

/*
 * The text of a state file into *ST (TEXT is changed).  Every line is
 * checked: "user PID START" (a real pid, a start time > 0) or "knob NAME
 * VALUE" (by the rules options get).  Returns 0, or -1 with WHY.  Exposed
 * for the unit tests and the fuzzer.
 */
int knobstate_parse(char *text, struct knobstate *st, char *why, size_t whylen);
/* ST as the text of a state file, into BUF; returns its length (>= SIZE: did not fit). */
size_t knobstate_format(const struct knobstate *st, char *buf, size_t size);

#endif
