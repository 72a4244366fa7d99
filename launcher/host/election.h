/*
 * election.h - one tuner per machine, however many ksm-run (election.c).
 *
 * Every instance registers in the shared state (hoststate.h) with its
 * command, under the lock.  The first that wants to tune holds the tuning;
 * a daemon takes it from a command's instance; the others register and do
 * not write rate knobs.  When the holder ends, the first live instance
 * that wants to tune takes over at its next tick (ticks come at least every
 * second).  The last instance to end restores the knobs from before the
 * first.
 */
#ifndef KSMRUN_ELECTION_H
#define KSMRUN_ELECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "host/hoststate.h"
#include "host/knobs.h"

struct membership {
	bool joined;                  /* registered in the state */
	bool tuning;                  /* holds the tuning now */
	bool wants_tuning;            /* would tune (no --no-tune) */
	enum user_kind kind;
	char name[USER_NAME_MAX];
	unsigned long gen_seen;
	char saved_sleep[KNOB_VALUE_MAX];  /* sleep_millisecs from before the first instance */
	bool locked;                  /* the state's lock is held, from a tick to its unlock */
	bool restored;                /* it left last, and put the knobs back */
	bool store_failed;            /* the last write of the state failed (said once) */
	int lock_fd;
};

struct election_news {
	bool became_tuner;            /* took the tuning over from one that ended */
	bool lost_tuning;             /* a daemon took it */
	bool new_work;                /* another instance registered since the last tick */
	int prior_phase;              /* the previous holder's phase, when taking over */
	pid_t tuner;                  /* who tunes now; 0 nobody */
	int users;                    /* live instances */
	pid_t roots[MAX_USERS];       /* their pids: their commands are their descendants */
	bool daemon;                  /* one of them is a daemon: tune for the whole machine */
	int ntargets;                 /* processes --attach enabled (hoststate.h): their memory */
	pid_t targets[MAX_TARGETS];   /* and their children's is the tuner's too */
};

/* What an attach that registered its targets learned of the machine's tuning. */
struct tuning_view {
	int instances;                /* live ksm-run instances; 0: nobody tunes, nothing registered */
	int added;                    /* targets new to the state */
	pid_t tuner;                  /* who tunes; 0 nobody */
	char tuner_name[USER_NAME_MAX];
	bool daemon;                  /* a ksm-run --daemon is registered */
	char saved_run[KNOB_VALUE_MAX];  /* run from before the first instance: back when the last ends */
};

/*
 * Registers this process (M says how) and writes WANT: every knob but the
 * rate knobs, and those only if this instance holds the tuning.  Returns
 * 0, or -errno after a message (then nothing was written): -EEXIST for a
 * daemon when another daemon is registered, -EUSERS when the state is full.
 * PHASE (an enum held_phase) is noted if it takes the tuning.
 */
int election_join(struct membership *m, const struct knob_set *want, int phase);

/*
 * At least every second: who tunes, take over if the holder is gone, note
 * our phase.  On success the lock stays held until election_unlock(), so
 * that the holder writes its knobs before anyone can take the tuning from
 * it (a daemon that joined in between would see them as someone else's).
 */
int election_tick(struct membership *m, int phase, struct election_news *news);
/* Still under that lock: the tick made this instance the holder, and it
 * took up PHASE.  The state says so at once, not at its next tick (until
 * then it would name the new holder with its phase from before, off). */
void election_took_over(struct membership *m, int phase);
void election_unlock(struct membership *m);

/*
 * --attach: the processes T (KSM now on in them) join the machine's tuning
 * as a new command does: the tuner counts their memory and their
 * children's while they live, and the registration brings its boost back.
 * Only where instances are registered (without one nobody tunes, and none
 * will restore what a state would save): then VIEW->instances is 0 and
 * nothing is written.  No lock is taken, and nothing said, where there is
 * no state this process may join (not root).  0 (VIEW says more), or
 * -errno (said).
 */
int election_add_targets(const struct state_target *t, int n, struct tuning_view *view);

/* --detach: the processes PIDS (KSM off in them now) leave the state.  0 or -errno. */
int election_drop_targets(const pid_t *pids, int n);

/* Unregisters; the last instance restores the knobs.  0 or -errno. */
int election_leave(struct membership *m);

/* Is there a state that this process could join? */
bool election_state_exists(void);

#endif
