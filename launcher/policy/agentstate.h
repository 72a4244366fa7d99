/*
 * agentstate.h - what the host agent holds, published by the daemon in
 * /run/ksm-run/agent and shown by ksm-run --status (agentstate.c).
 */
#ifndef KSMRUN_POLICY_AGENTSTATE_H
#define KSMRUN_POLICY_AGENTSTATE_H

#include <stdio.h>

struct agent;

/* Writes A's rules and the processes they decided, when that changed since the last call. */
void agent_publish(struct agent *a);
/* The daemon is stopping: what it held is no longer its to say. */
void agent_unpublish(void);

/* --status: each rule, what it matches and does, and the processes it holds now; the domains. */
void agent_status_print(FILE *out);

#endif
