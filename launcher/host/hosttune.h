/*
 * hosttune.h - one instance's part in tuning the machine (hosttune.c):
 * it registers (election.h), tunes when it holds the tuning (tune.h) for
 * the memory of every registered command, or of the whole machine for the
 * daemon (candidate.h), and notices when someone else changes the knobs
 * under it: it says so, names a known manager, and stops writing rather
 * than fight (unless told to take over).
 */
#ifndef KSMRUN_HOSTTUNE_H
#define KSMRUN_HOSTTUNE_H

#include <stdbool.h>

#include "common/logsink.h"
#include "host/counters.h"
#include "host/election.h"
#include "host/knobs.h"
#include "host/scancal.h"
#include "host/tune.h"

#define MAX_EVENTS 8

struct knob_event {
	double t;                       /* now_s() */
	long long wall;                 /* seconds since the epoch */
	char knob[32], from[KNOB_VALUE_MAX], to[KNOB_VALUE_MAX];
};

struct host_tuner {
	struct membership m;
	struct tuner policy;
	struct tune_config cfg;
	bool user_rate;                 /* the user's own rate: written, not tuned */
	bool no_tune;                   /* --no-tune */
	bool take_over;                 /* keep our values even when someone else writes */
	struct knob_set want;           /* what this instance asked for */
	struct knob_set expected;       /* the watched knobs as last seen or written */
	bool yielded;                   /* someone else changed them: we write no more */
	struct knob_event events[MAX_EVENTS];
	int nevents;
	char manager[128];              /* a known manager that runs, or "" */
	char sleep_before[KNOB_VALUE_MAX];
	bool left_over_at_start;        /* the counters were stale when it planned (counters_left_over) */
	bool have_advisor;
	long long candidate;            /* pages; -1 unknown */
	int candidate_procs;
	double pressure;
	const char *pressure_source;
	double cpu_t0, cpu0, cpu_pct;   /* ksmd's CPU over about a minute */
	pid_t ksmd;
	log_sink *log;                  /* the daemon's decisions (logsink.h); NULL: none */
	bool alone;                     /* --keep-knobs: no election */
	bool registered;                /* joined the machine's tuning (and may have left since) */
	pid_t tuner_pid;                /* who tuned at the last tick; 0 nobody */
	bool tuner_daemon;              /* a daemon is registered: it is the tuner */
	unsigned long decisions;        /* the policy's changes while this instance tuned */
	/* Processes followed besides a command's tree (attached ones) that the
	 * shared state does not hold (--keep-knobs, or a state that could not be
	 * written), counted when this instance tunes; the rest come through the
	 * state.  host_tuner_count_targets() sets them. */
	const pid_t *targets;
	int ntargets;
	struct scancal_watch scan_cost;   /* ksmd's CPU per page while this instance tunes */
};

/*
 * The knobs this instance would write if it held the tuning: the user's
 * WANT, the policy's boost (tuning by default) and run=1, into ALL (for a
 * check of the right to write them).  Starts the policy's clock at NOW.
 */
void host_tuner_plan(struct host_tuner *h, const struct knob_set *want, double now, struct knob_set *all);

/*
 * Joins the machine's tuning with the planned knobs ALL.  0, or -errno
 * (said): then it changes nothing and the command runs untuned.
 */
int host_tuner_join(struct host_tuner *h, const struct knob_set *all);

/* --keep-knobs: write ALL and tune alone, with no shared state and no restore. */
void host_tuner_alone(struct host_tuner *h, const struct knob_set *all);

/* One step: the election, someone else's writes, the policy. */
void host_tuner_tick(struct host_tuner *h, const struct sys_sample *first, const struct sys_sample *now);

/*
 * Processes attached to (N of them at PIDS, which must outlive the tuner's
 * use) that the machine's shared state could not be told of: their memory
 * counts as candidate memory while this instance tunes.
 */
void host_tuner_count_targets(struct host_tuner *h, const pid_t *pids, int n);

/* Leaves; the last instance restores.  0 or -errno. */
int host_tuner_leave(struct host_tuner *h);

/*
 * The phase of the machine's tuner (enum held_phase): this instance's own
 * when it tunes, else the shared state's (HELD_NONE: nobody tunes).
 */
int host_tuner_machine_phase(const struct host_tuner *h);

/* What the tuning did, for the report. */
const char *host_tuner_summary(const struct host_tuner *h, char *buf, size_t len);

#endif
