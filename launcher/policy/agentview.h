/*
 * agentview.h - what the host agent holds, read back from the daemon's
 * /run/ksm-run/agent (agentstate.h) for ksm-run --status: the processes
 * that still run (the same start time) with what each has merged now.
 */
#ifndef KSMRUN_POLICY_AGENTVIEW_H
#define KSMRUN_POLICY_AGENTVIEW_H

#include <stdio.h>

struct jsonw;

/* Each rule, what it matches and does, the processes it holds now; the domains.  Nothing without an agent. */
void agent_status_print(FILE *out);

/* The same as the object "policy" (null without an agent). */
void agent_status_json(struct jsonw *w);

#endif
