/* handover.c - the attached targets and the machine's ksmd and tuner. */
#include <stdio.h>
#include <string.h>

#include "attach/handover.h"
#include "common/msg.h"
#include "host/election.h"
#include "host/hoststate.h"
#include "host/knobs.h"

bool handover_ksmd_stopped(bool strict, char run[RUN_VALUE_MAX])
{
	/* Unreadable: a kernel without KSM, which the attach itself reports. */
	if (knob_read("run", run, RUN_VALUE_MAX) || !strcmp(run, "1"))
		return false;
	if (strict)
		die("--strict: KSM is stopped (run=%s) and --attach --no-wait does not start it: nothing would "
		    "merge; no target was touched (attach without --no-wait, which runs and tunes ksmd while it "
		    "follows the targets, or start ksmd first: ksm-run --daemon)", run);
	return true;
}

/* A name as the state keeps it: printable, no spaces. */
static void plain_copy(char *out, size_t len, const char *comm)
{
	size_t n = 0;

	for (; *comm && n + 1 < len; comm++)
		out[n++] = *comm > ' ' && *comm <= '~' ? *comm : '_';
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "-");
}

/* What becomes of the targets once this ksm-run has ended. */
static void say_future(const struct tuning_view *v, const char *stopped_run)
{
	char tuner[USER_NAME_MAX + 48] = "";

	if (stopped_run) {
		msg("KSM is stopped (run=%s): nothing merges in the targets until ksmd runs; --no-wait does not "
		    "start it (attach without --no-wait, which runs and tunes ksmd while it follows them, or "
		    "start it: ksm-run --daemon, or echo 1 >/sys/kernel/mm/ksm/run)", stopped_run);
		return;
	}
	/* The knobs from before the first instance come back when the last ends. */
	if (!v->instances || v->daemon || !v->saved_run[0] || !strcmp(v->saved_run, "1"))
		return;
	if (v->tuner)
		snprintf(tuner, sizeof tuner, " (the tuner: pid %d, %s)", (int)v->tuner, v->tuner_name);
	msg("ksmd runs for the ksm-run instances of this machine%s; when the last of them ends, run=%s "
	    "comes back and nothing more merges in the targets (ksm-run --daemon keeps ksmd running)",
	    tuner, v->saved_run);
}

bool handover_targets(const struct target_result *r, int n, bool no_wait, const char *stopped_run)
{
	static struct state_target t[MAX_TARGETS];
	struct tuning_view view = { 0 };
	int nt = 0, err = 0;
	bool handled = false, left_out = false;

	for (int i = 0; i < n; i++) {
		if (r[i].outcome != TARGET_DONE && r[i].outcome != TARGET_ALREADY)
			continue;
		handled = true;
		if (nt == MAX_TARGETS)
			left_out = true;
		else if ((t[nt].start = process_start_time(r[i].pid))) {   /* 0: ended since */
			t[nt].pid = r[i].pid;
			plain_copy(t[nt].name, sizeof t[nt].name, r[i].comm);
			nt++;
		}
	}
	if (!handled)
		return true;
	if (nt)
		err = election_add_targets(t, nt, &view);
	if (no_wait)
		say_future(&view, stopped_run);
	return !err && view.instances > 0 && !left_out;
}

void handover_drop_targets(const struct target_result *r, int n)
{
	static pid_t pids[MAX_TARGETS];
	int np = 0;

	for (int i = 0; i < n && np < MAX_TARGETS; i++)
		if ((r[i].outcome == TARGET_DONE || r[i].outcome == TARGET_ALREADY) && !r[i].merge_any &&
		    !r[i].mergeable)
			pids[np++] = r[i].pid;      /* as read back: KSM off in all of it */
	if (np)
		election_drop_targets(pids, np);
}
