/*
 * agentstate.h - what the host agent holds, published by the daemon in
 * /run/ksm-run/agent and shown by ksm-run --status (agentstate.c).
 */
#ifndef KSMRUN_POLICY_AGENTSTATE_H
#define KSMRUN_POLICY_AGENTSTATE_H

#include <stdbool.h>
#include <stdio.h>

struct agent;

/* Writes A's rules and the processes they decided, when that changed since the last call. */
void agent_publish(struct agent *a);
/* The daemon is stopping: what it held is no longer its to say (kept as AGENT_LAST_FILE). */
void agent_unpublish(void);

/*
 * ksm-run --detach=agent: the processes that the host agent enabled and
 * that still run (the same process: PID and start), from the file of an
 * agent that was killed, else of the last one that stopped.  0, or -1
 * with WHY: an agent runs, none left a file, or none of them runs.
 */
struct pid_list;
int agent_enabled_left(struct pid_list *out, char *why, size_t len);

/*
 * A's figures for the metrics: each rule's processes that run now and
 * what those it enabled merged; the domains of the machine's mergeable
 * memory (census.h).  RULES has room for A's
 * rules (POLICY_MAX_RULES at most); the rules' names are A's.
 */
struct metrics_agent;
struct metrics_rule;
void agent_figures(const struct agent *a, struct metrics_rule *rules, struct metrics_agent *out);

/* Splits LINE of the file at tabs, in place, into at most N fields; how many. */
int agent_fields(char *line, char **f, int n);

/*
 * Who published the agent file, and does it still run?  0, or -1 when there
 * is no file of an agent (none ran, or it stopped as it should: it removes
 * the file).  LAST_SEEN is the file's time of change, touched at every tick
 * while the agent runs: for one that is gone, when it stopped (to a second).
 */
struct agent_life {
	bool running;
	long pid;
	long long started, last_seen;   /* seconds of the epoch */
};
int agent_life_read(struct agent_life *l);
/* ksm-run --restore: the file of an agent that is gone (killed) is removed, and said. */
void agent_forget_gone(void);

/* The file in STATE_DIR, and how long it may be. */
#define AGENT_FILE "agent"
#define AGENT_LAST_FILE "agent.last"
#define AGENT_TEXT_MAX (1 << 20)

#endif
