/*
 * knobstate.h - the knob values from before the first of overlapping
 * ksm-run instances, kept in /run/ksm-run/state under a lock, with the
 * list of live instances that use them: the last to end restores them.
 */
#ifndef KSMRUN_KNOBSTATE_H
#define KSMRUN_KNOBSTATE_H

#include <stddef.h>

#include "host/knobs.h"

#define KNOBSTATE_DIR "/run/ksm-run"

/* Registers this process and writes WANT, under the lock.  0 or -errno. */
int knobstate_begin(const struct knob_set *want);
/* Unregisters; the last user restores the saved values.  0 or -errno. */
int knobstate_end(void);
/* ksm-run --restore: the exit status. */
int knobstate_restore_cmd(void);
/* For --status, without the lock: 0 none or in use, 1 unreadable, 2 left behind. */
int knobstate_describe(char *buf, size_t len);
/* Is there a saved state that this process could join? */
int knobstate_exists(void);

#endif
