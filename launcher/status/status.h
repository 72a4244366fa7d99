/* status.h - ksm-run --status: the machine's KSM state, read-only. */
#ifndef KSMRUN_STATUS_H
#define KSMRUN_STATUS_H

#include <stdbool.h>

/* Prints the status on stdout (JSON: one object); the exit status. */
int status_main(bool json);

struct jsonw;
struct hoststate;
struct top_process;

/* The JSON of the top processes: at most this many. */
#define JSON_TOP_PROCESSES 10

/*
 * The member "processes" of the object W is in: the first of the N top
 * processes T (topprocs.h), with what each keeps out of KSM when KEPT
 * (from its smaps: --status; --watch leaves them out).
 */
void status_json_processes(struct jsonw *w, const struct top_process *t, int n, bool kept);
/*
 * Opens the member "tuning" of the JSON object W is in, and writes the
 * machine's tuning into it from ST (read with the result R, hoststate_peek):
 * state, tuner, instances.  It stays open: the caller adds its own members
 * and closes it (jw_end).  --status and --status --watch both write it.
 */
void status_json_tuning(struct jsonw *w, int r, const struct hoststate *st);
/* {"available":false}: no KSM in this kernel. */
void status_json_unavailable(void);

/*
 * The probe behind "merge flag inherited across exec": --status runs
 * ksm-run again under the name STATUS_PROBE_NAME with the flag set; this
 * is that run's exit status (0: the flag survived exec).
 */
#define STATUS_PROBE_NAME "ksm-run-probe-exec"
int status_probe_exec_inherit(void);

#endif
