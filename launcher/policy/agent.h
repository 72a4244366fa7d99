/*
 * agent.h - the host agent (agent.c; one process judged: agentjudge.c):
 * the policy (policy.h) applied to
 * the machine's processes by the daemon, to those that run when it
 * starts and to every new one, with the attach machinery (target.h).
 */
#ifndef KSMRUN_POLICY_AGENT_H
#define KSMRUN_POLICY_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/logsink.h"
#include "policy/census.h"
#include "policy/policy.h"

/* What a rule did to a process. */
enum agent_result { AGENT_NONE, AGENT_ENABLED, AGENT_REFUSED, AGENT_DISABLED, AGENT_LEFT_ALONE, AGENT_WAITING };

/* A process the agent has judged, while it lives. */
struct agent_proc {
	pid_t pid;
	unsigned long long start;               /* with the PID, the process */
	unsigned long long start_code, start_stack;     /* the program: moved by an exec */
	bool seen;                              /* in this scan */
	bool stale;                             /* judged by a policy reloaded since: to be judged again */
	bool enabled;                           /* KSM on by the agent (or already), in DOMAIN */
	bool secure_mergeable;                  /* exec'd a program in secure execution, still mergeable */
	char comm[32];
	char domain[96];                        /* its security domain (domain.h), when judged by a rule */
	char rule[POLICY_NAME_MAX];             /* the rule that decided; "" none */
	enum agent_result result;
	char why[512];                          /* AGENT_REFUSED, AGENT_LEFT_ALONE, AGENT_WAITING: the reason */
	int tries;                              /* AGENT_WAITING: attaches that found it stuck */
	double retry_at;                        /* AGENT_WAITING: now_s() of the next try */
	unsigned long long cgroup_hash;         /* of the cgroup it was judged in (cgmoves.c); 0 unknown */
};

struct agent {
	const char *file;               /* the policy's main file */
	struct policy policy;
	bool active;                    /* a policy is loaded: processes are judged */
	struct agent_proc *procs;       /* every process judged, by PID */
	size_t nprocs, cap;
	char own_cgroup[4096];          /* the daemon's, left alone unless a rule names it */
	bool own_cgroup_known;          /* and it guards (agent.c) */
	bool own_cgroup_everyones;      /* PID 1's: no guard */
	size_t move_cursor;             /* the next record whose cgroup is looked at (cgmoves.c) */
	int events;                     /* the kernel's process events (procevents.h), or -1 */
	bool events_lost;               /* some were dropped: /proc is to be scanned */
	char events_why[128];           /* why there are none (events < 0 with a policy) */
	double last_scan;               /* of /proc, now_s() */
	const sigset_t *stops;          /* pending, they end an attach between stops */
	log_sink *log;                  /* its log lines (logsink.h) */
	/* The machine's mergeable processes by domain (census.h): the refusals, --status, the metrics. */
	struct census census;
	/* How many processes each outcome had, since the start. */
	unsigned long enabled, detached, refused;
	bool changed;                   /* since the last agent_publish() */
	long long started;              /* seconds of the epoch, for --status */
	bool said_not_raised;           /* a stop's raise was refused, and logged (once) */
};

/*
 * Reads the policy at FILE (NULL: the default; a default that does not
 * exist is no policy, FILE given must exist).  0; -1 when it is not valid
 * (its errors given to LOG first): the daemon then refuses to start.
 */
int agent_start(struct agent *a, const char *file, log_sink *log, const sigset_t *stops);

/*
 * HUP: the policy read again and checked as at the start.  A policy that
 * is not valid is not taken: the one in force stays, and the log says why.
 * A valid one applies to every process at the next scan; processes that it
 * no longer names are left as they are, unless a rule says off.
 */
void agent_reload(struct agent *a);

/* With process events, /proc is still scanned this often, for what they might miss (seconds). */
#define AGENT_CHECK_SCAN_S 30

/*
 * No target may hold up the others, the tuner or the metrics: a thread in
 * uninterruptible sleep (a vfork parent) is not seized, one that does not
 * stop within AGENT_STOP_WAIT_S is let go, and each is tried again after
 * AGENT_RETRY_FIRST_S, doubling up to AGENT_RETRY_MAX_S.
 */
#define AGENT_STOP_WAIT_S 0.25
#define AGENT_RETRY_FIRST_S 0.5
#define AGENT_RETRY_MAX_S 60.0

/*
 * Judges every process of /proc not judged yet (new ones, and those that
 * exec'd since), and applies the rule that matches.
 */
void agent_scan(struct agent *a);

/*
 * The process events that wait (none without a policy): the processes
 * they name are judged now.  Called often (every 100 ms) while
 * agent_listening().
 */
void agent_events(struct agent *a);

/* Is the agent told of new processes by the kernel?  Else it scans /proc at each tick. */
bool agent_listening(const struct agent *a);

/* The census of mergeable processes (census.h) is taken at least this often, for --status and the metrics. */
#define AGENT_CENSUS_S 5

/*
 * Each second: /proc scanned when the agent has no process events, when
 * some were lost, and every AGENT_CHECK_SCAN_S; the census every AGENT_CENSUS_S.
 */
void agent_tick(struct agent *a);

void agent_stop(struct agent *a);

/*
 * Judges process PID (named COMM) into its record *P, and applies the rule
 * that matches (agentjudge.c); false when it is to be judged again (the
 * agent was stopping: a stop signal came).
 */
bool agent_judge(struct agent *a, pid_t pid, const char *comm, struct agent_proc *p);

/*
 * A process moved to another cgroup after it was judged (cgmoves.c): can
 * the cgroup change a judgement?  The hash of PID's cgroup (0 unknown).
 * The records moved since they were judged, up to AGENT_MOVE_CHECKS of
 * them looked at in turn, marked stale: to be judged again.  Each look
 * reads a /proc/PID/cgroup: at 1000 a tick, on a host of 1000 processes,
 * that was a fifth of the idle daemon's CPU (perf, daemon-idle-bench);
 * at 250 a move is found within 4 s there, within a tick on a host of
 * 250 processes or fewer.
 */
#define AGENT_MOVE_CHECKS 250
bool agent_watches_moves(const struct agent *a);
unsigned long long agent_cgroup_hash(pid_t pid);
void agent_mark_moved(struct agent *a);

/*
 * The security domains of what the agent makes mergeable (agentdomains.c):
 * a merged page is a timing side channel between the processes that map it.
 */
/* A process the agent enabled in another domain than DOMAIN, or NULL. */
const struct agent_proc *agent_enabled_elsewhere(const struct agent *a, const char *domain);
/* Has the agent enabled a process in DOMAIN? */
bool agent_enabled_in(const struct agent *a, const char *domain);
/* Has a rule with cross-domain = yes enabled a process in DOMAIN? */
bool agent_domain_accepted(const struct agent *a, const char *domain);
/* The census of the machine's mergeable processes, taken again when older than SECONDS. */
void agent_census_fresh(struct agent *a, double seconds);
/*
 * Would enabling the process of F by rule R merge across security domains
 * without R accepting it?  Then why, in WHY.  *P gets F's domain.
 */
struct policy_rule;
struct proc_facts;
bool agent_mixes_domains(struct agent *a, const struct policy_rule *r, struct proc_facts *f,
			 struct agent_proc *p, char *why, size_t len);

#endif
