/* outcome.c - a target's result, in words (outcome.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace/outcome.h"
#include "common/files.h"
#include "common/human.h"
#include "common/msg.h"
#include "common/text.h"

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

const char *target_outcome_word(const struct target_result *r, bool disable)
{
	switch (r->outcome) {
	case TARGET_DONE: return disable ? "disabled" : "enabled";
	case TARGET_ALREADY: return disable ? "already disabled" : "already enabled";
	case TARGET_NONE_MATCHED: return "no region matched the selection";
	case TARGET_ENDED: return "ended";
	case TARGET_NOT_DONE: return "not done";
	case TARGET_LATER: return "not now";
	case TARGET_ABSENT: return "no such process";
	case TARGET_REFUSED: break;
	}
	return "refused";
}

static const char *yes_no(int v)
{
	return v == 1 ? "yes" : v == 0 ? "no" : "unknown";
}

void target_result_line(const struct target_result *r, const struct target_plan *p, char *buf, size_t len)
{
	buf[0] = '\0';
	if (r->outcome == TARGET_ABSENT) {
		text_appendf(buf, len, "%d: no such process", (int)r->pid);
		return;
	}
	if (r->outcome == TARGET_ENDED && !r->tid) {
		/* There when the targets were resolved, gone before it could be pinned. */
		text_appendf(buf, len, "%d: ended before it was reached", (int)r->pid);
		return;
	}
	/* Its name is its own to choose (PR_SET_NAME): escaped, like every name from outside. */
	text_appendf(buf, len, "%d (%s): %s", (int)r->pid, printable(r->comm), target_outcome_word(r, p->disable));
	if (r->outcome == TARGET_ENDED) {
		text_appendf(buf, len, "%s", r->tid ? " during the attach" : "");     /* it was there when the attach began */
		return;
	}
	if (r->outcome == TARGET_REFUSED || r->outcome == TARGET_NOT_DONE || r->outcome == TARGET_LATER) {
		text_appendf(buf, len, ": %s", r->why);
		if (r->stops && !r->died_in_call && !r->flag_carried)
			text_appendf(buf, len, " (it was stopped %.2f ms and given back as it was)", r->stopped_s * 1e3);
		return;
	}
	if (r->outcome == TARGET_DONE) {
		if (p->process_wide)
			text_appendf(buf, len, ", process-wide (prctl)");
		else
			text_appendf(buf, len, ", %d region%s (%s) %s", r->regions, r->regions == 1 ? "" : "s",
			    human_bytes((long long)r->bytes, false), p->disable ? "made unmergeable" : "advised");
		if (p->process_wide && !p->disable && r->regions)
			text_appendf(buf, len, ", %d secret-like region%s (%s) kept out", r->regions, r->regions == 1 ? "" : "s",
			    human_bytes((long long)r->bytes, false));
		text_appendf(buf, len, "; stopped %.2f ms", r->stopped_s * 1e3);
		if (r->stops > 1)
			text_appendf(buf, len, " in %d stops (the longest %.2f ms)", r->stops, r->longest_stop_s * 1e3);
		if (r->restarted)
			text_appendf(buf, len, " (its interrupted call restarted)");
	}
	text_appendf(buf, len, "; ksm_merge_any %s, ksm_mergeable %s", yes_no(r->merge_any), yes_no(r->mergeable));
	if (r->flags_by_regions)
		text_appendf(buf, len, " (by its regions' VmFlags: this kernel's ksm_stat has neither line)");
}
