/*
 * hoststate.h - what the ksm-run instances of a machine share, in one file
 * under one lock (/run/ksm-run/state): the knob values from before the
 * first of them, every live instance (with the command it runs), which one
 * holds the tuning, and in which phase (hoststate.c).  election.h says who
 * does what with it.
 */
#ifndef KSMRUN_HOSTSTATE_H
#define KSMRUN_HOSTSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "host/knobs.h"

#define MAX_USERS 256
#define MAX_TARGETS 256
#define USER_NAME_MAX 32

enum user_kind { USER_COMMAND, USER_DAEMON };

/*
 * The holder's phase as the state keeps it: the policy's (enum tune_phase,
 * whose values the first three are), or why the holder does not tune.
 */
enum held_phase { HELD_NONE, HELD_BOOST, HELD_STEADY, HELD_USER_RATE, HELD_YIELDED, HELD_PHASES };

/* "boost", "steady", "the user's rate", ...: for --status; and as a key for its JSON. */
const char *held_phase_name(int phase);
const char *held_phase_key(int phase);

struct state_user {
	pid_t pid;
	unsigned long long start;     /* /proc/PID/stat starttime: not a reused pid */
	enum user_kind kind;
	long long since;              /* when it registered, seconds since the epoch */
	bool wants_tuning;            /* would tune if it held the tuning */
	char name[USER_NAME_MAX];     /* its command's name, for --status */
};

/*
 * A process that --attach enabled: no instance (it neither tunes nor keeps
 * the knobs from being restored), but memory for the tuner to merge, as a
 * registered command's is, for as long as it lives.
 */
struct state_target {
	pid_t pid;
	unsigned long long start;     /* /proc/PID/stat starttime: not a reused pid */
	char name[USER_NAME_MAX];     /* its comm, for --status */
};

struct hoststate {
	bool exists;
	int nusers;
	struct state_user users[MAX_USERS];
	int ntargets;
	struct state_target targets[MAX_TARGETS];
	struct knob_set saved;        /* the knobs from before the first instance */
	pid_t tuner;                  /* who holds the tuning; 0 nobody */
	unsigned long long tuner_start;
	int tuner_phase;              /* enum held_phase */
	unsigned long gen;            /* bumped by every registration, of instances and targets */
};

/*
 * The text of a state file into *ST (TEXT is changed).  Every line is
 * checked: "user PID START [KIND SINCE WANTS NAME]" (a real pid, a start
 * time > 0), "target PID START NAME" (the same, and a plain name), "tuner
 * PID START PHASE" (an enum held_phase), or while nobody
 * holds the tuning "phase PHASE" (the one its last holder left in), "gen N", "knob NAME VALUE" (by the
 * rules options get).  Returns 0, or -1 with WHY.  For the unit tests and
 * the fuzzer too.
 */
int hoststate_parse(char *text, struct hoststate *st, char *why, size_t whylen);
/* ST as the text of a state file, into BUF; returns its length (>= SIZE: did not fit). */
size_t hoststate_format(const struct hoststate *st, char *buf, size_t size);

/*
 * Reads the state (st->exists tells whether there was one).  0, or -errno
 * after a message; a corrupt file is set aside (state.corrupt) and counts
 * as none, unless STRICT (then -EINVAL).
 */
int hoststate_load(struct hoststate *st, bool strict);
/* Writes it (atomically).  0 or -errno. */
int hoststate_store(const struct hoststate *st);
/* Removes it (the last instance restored the knobs).  0 or -errno. */
int hoststate_remove(void);
/* The state directory checked and the lock taken: the descriptor, or -errno (said). */
int hoststate_lock(void);
/* Without the lock, for --status: 0 read (a tuner that ended reads as none), -ENOENT none, -errno, or -EINVAL corrupt (WHY). */
int hoststate_peek(struct hoststate *st, char *why, size_t whylen);

bool user_alive(const struct state_user *u);
/* Drops users and targets that are gone, and SELF; a tuner that is gone is forgotten. */
void hoststate_prune(struct hoststate *st, pid_t self);
unsigned long long process_start_time(pid_t pid);

#endif
