/* outcome.c - a target's refusals, in words (outcome.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "attach/outcome.h"
#include "common/files.h"

void target_refuse(struct target_result *r, const char *fmt, ...)
{
	va_list ap;

	r->outcome = TARGET_REFUSED;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
}

/* Why the kernel would not let us trace it, and what to do. */
void target_not_permitted(struct target_result *r)
{
	char scope[16] = "";

	if (read_text("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope) == 0 && atoi(scope) > 0)
		target_refuse(r, "not permitted to trace it: Yama's kernel.yama.ptrace_scope "
		       "is %d; run ksm-run as root%s", atoi(scope),
		       atoi(scope) == 1 ? ", or set the sysctl to 0" : "");
	else
		target_refuse(r, "not permitted to trace it: it belongs to another user or is "
		       "not dumpable; run ksm-run as root");
}
