/*
 * daemon.h - ksm-run --daemon, the machine's KSM tuning service
 * (daemon.c): no command; it takes the tuning (election.h) for the whole
 * machine (candidate_host), logs one line per decision, and restores the
 * knobs when stopped by TERM or INT.  HUP logs where it stands.
 */
#ifndef KSMRUN_DAEMON_H
#define KSMRUN_DAEMON_H

#include "options.h"

/* The exit status: 0 stopped and restored, 1 stopped but a knob not restored; 125 refused. */
int daemon_main(const struct opts *o);

/*
 * Is stderr the journal?  systemd sets JOURNAL_STREAM=DEV:INODE for the
 * stream it connects; a stderr redirected since does not match.
 */
bool stderr_is_journal(void);

#endif
