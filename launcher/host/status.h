/* status.h - ksm-run --status: the machine's KSM state, read-only. */
#ifndef KSMRUN_STATUS_H
#define KSMRUN_STATUS_H

#include <stdbool.h>

/* Prints the status on stdout (JSON: one object); the exit status. */
int status_main(bool json);

/*
 * The probe behind "merge flag inherited across exec": --status runs
 * ksm-run again under the name STATUS_PROBE_NAME with the flag set; this
 * is that run's exit status (0: the flag survived exec).
 */
#define STATUS_PROBE_NAME "ksm-run-probe-exec"
int status_probe_exec_inherit(void);

#endif
