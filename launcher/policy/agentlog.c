/* agentlog.c: a line of the host agent's log, through the sink its caller gave. */
#include <stdarg.h>
#include <stdio.h>

#include "policy/agent.h"

void agent_logf(const struct agent *a, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	a->log(line);
}
