/*
 * attach.c: ksm-run --attach=TARGET and --detach=TARGET, as a recipe.
 *
 * The targets are resolved and the knobs joined before any process is
 * touched (a bad target or, with --strict, a knob that cannot be written
 * is refused with 125 while nothing has changed).  Each target is then
 * handled alone, in a thread of its own, with every signal ksm-run can
 * block blocked, so that no handler of ours runs while a target is stopped
 * with our registers in it; INT and TERM end the attach between stops (and
 * a wait for a stop that never comes), and the targets not reached are
 * "not done".  A target that never stops (uninterruptible sleep) is let go
 * by the kernel when that thread ends (inject.h): it holds up no other.
 * Afterwards --attach follows the targets as a command's run follows
 * its command: samples, the machine's tuning, the report, until every
 * target has ended or ksm-run gets INT or TERM (the targets go on, KSM
 * still on in them).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach/attach.h"
#include "attach/handover.h"
#include "ptrace/target.h"
#include "common/files.h"
#include "common/jsonw.h"
#include "common/kfeature.h"
#include "common/msg.h"
#include "common/procfs.h"
#include "common/stopsig.h"
#include "common/targets.h"
#include "host/counters.h"
#include "host/hosttune.h"
#include "host/knobs.h"
#include "follow/follow.h"
#include "follow/jointune.h"
#include "follow/report.h"
#include "follow/tree.h"
#include "policy/agentstate.h"
#include "selection.h"

struct attach_run {
	const struct attach_opts *o;
	struct pid_list targets;
	struct target_result *res;
	pid_t *handled;                 /* the targets enabled or already so */
	int nhandled, nrefused, nended, nnot_done;
	int nunmatched;                 /* madvise form: no region matched the selection */
	struct pid_list absent;         /* PIDs given that no process had at resolution: in targets too */
	int nabsent;                    /* those: a failure, as kill(1)'s of a PID that names nothing */
	int nunreached;                 /* there at resolution, ended before they could be pinned: no failure */
	int stopped_by;                 /* INT or TERM came while handling the targets; 0 */
	const sigset_t *stops;          /* INT and TERM, blocked: taken between stops and ticks */
	struct host_tuner host;
	struct sampler s;
	double t0;
	char *list;                     /* "1234 (python3), ..." for the report, grown as it goes */
	size_t list_len, list_cap;
};

/* The JSON result: one word each. */
static const char *result_word(const struct target_result *r, bool disable)
{
	if (r->outcome == TARGET_ABSENT)
		return "absent";
	return r->outcome == TARGET_NONE_MATCHED ? "unmatched" : target_outcome_word(r, disable);
}

static void print_line(const struct target_result *r, const struct target_plan *p)
{
	char line[1024];

	target_result_line(r, p, line, sizeof line);
	printf("%s\n", line);
}

static void print_json(const struct attach_run *a, const struct target_plan *p)
{
	struct jsonw w;

	jw_start(&w, stdout);
	jw_object(&w, NULL);
	jw_string(&w, "action", p->disable ? "detach" : "attach");
	jw_string(&w, "form", p->process_wide ? "prctl" : "madvise");
	jw_array(&w, "targets");
	for (size_t i = 0; i < a->targets.n; i++) {
		const struct target_result *r = &a->res[i];

		jw_object(&w, NULL);
		jw_ll(&w, "pid", r->pid);
		jw_string(&w, "comm", r->comm);
		jw_string(&w, "result", result_word(r, p->disable));
		jw_string(&w, "reason", r->outcome == TARGET_REFUSED || r->outcome == TARGET_NOT_DONE ||
			  r->outcome == TARGET_ABSENT ? r->why : NULL);
		jw_ll(&w, "thread", r->tid);
		jw_fixed(&w, "stopped_ms", r->stopped_s * 1e3, 3, false);
		jw_ll(&w, "stops", r->stops);
		jw_fixed(&w, "longest_stop_ms", r->longest_stop_s * 1e3, 3, false);
		jw_ll(&w, "calls", r->calls);
		jw_ll(&w, "regions", r->regions);
		jw_ll(&w, "bytes", (long long)r->bytes);
		jw_bool(&w, "restarted_call", r->restarted);
		jw_tristate(&w, "ksm_merge_any", r->merge_any);
		jw_tristate(&w, "ksm_mergeable", r->mergeable);
		jw_string(&w, "flags_read_from", r->merge_any < 0 && r->mergeable < 0 ? NULL :
			  r->flags_by_regions ? "regions" : "ksm_stat");
		jw_end(&w);
	}
	jw_end(&w);
	jw_ll(&w, "handled", a->nhandled);
	jw_ll(&w, "refused", a->nrefused);
	jw_ll(&w, "unmatched", a->nunmatched);
	jw_ll(&w, "ended", a->nended);
	jw_ll(&w, "not_done", a->nnot_done);
	jw_ll(&w, "absent", a->nabsent);
	jw_finish(&w);
}

static void make_plan(const struct attach_opts *o, struct target_plan *p, struct selection *sel)
{
	/* Every field: one not set here (the agent's still_judged) must be NULL, not the stack's. */
	*p = (struct target_plan){ 0 };
	p->disable = o->detach;
	/*
	 * Before 6.4 no process has the flag: what a detach without a
	 * selection takes out is every region advised, one by one, as the
	 * agent's off rule does there (--detach=agent on 5.10 was refused).
	 */
	p->process_wide = config_coverage(o->lib) == COVER_PROCESS && (!o->detach || kfeature_present(KF_PRCTL));
	selection_of_config(sel, o->lib);
	p->sel = sel;
	p->stop_budget_s = o->stop_budget;
}

/*
 * The OOM killer's score of ksm-run while it handles targets: -1000 (never
 * chosen) when it may lower it (root).  A killed ksm-run no longer harms a
 * target (inject.c), but a stopped target then waits no longer.  OLD gets
 * the score before, to be put back with oom_score_set(OLD, NULL).
 */
static void oom_score_set(const char *score, char *old, size_t oldlen)
{
	int fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	if (old && (n = read(fd, old, oldlen - 1)) > 0)
		old[n] = 0;
	else if (old)
		snprintf(old, oldlen, "0");
	if (pwrite(fd, score, strlen(score), 0) < 0) {
		/* not permitted: it keeps its score */
	}
	close(fd);
}

/* "PID (COMM)" of R appended to the list of the targets handled, for the report. */
static void list_add(struct attach_run *a, const struct target_result *r)
{
	char item[64];
	int n = snprintf(item, sizeof item, "%s%d (%s)", a->list_len ? ", " : "", (int)r->pid, r->comm);

	if (n >= (int)sizeof item)
		n = (int)sizeof item - 1;       /* a comm of 31 bytes at most: never so */

	a->list = xgrow(a->list, &a->list_cap, a->list_len + (size_t)n + 1, 1);
	memcpy(a->list + a->list_len, item, (size_t)n + 1);
	a->list_len += (size_t)n;
}

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return (a > b) - (a < b);
}

/*
 * The PIDs given that named no process join the targets, in their order,
 * so that each has its line (and its place in the JSON) like the others.
 */
static void join_absent(struct attach_run *a)
{
	size_t n = a->targets.n + a->absent.n;

	if (!a->absent.n)
		return;
	a->targets.pids = xgrow(a->targets.pids, &a->targets.cap, n, sizeof *a->targets.pids);
	memcpy(a->targets.pids + a->targets.n, a->absent.pids, a->absent.n * sizeof *a->absent.pids);
	a->targets.n = n;
	qsort(a->targets.pids, n, sizeof *a->targets.pids, cmp_pid);
}

/* PID named no process when the targets were resolved: it is not looked for again. */
static bool was_absent(const struct attach_run *a, pid_t pid, struct target_result *r)
{
	if (!a->absent.n || !bsearch(&pid, a->absent.pids, a->absent.n, sizeof pid, cmp_pid))
		return false;
	memset(r, 0, sizeof *r);
	r->pid = pid;
	r->outcome = TARGET_ABSENT;
	r->merge_any = r->mergeable = -1;
	snprintf(r->comm, sizeof r->comm, "?");
	snprintf(r->why, sizeof r->why, "no such process");
	return true;
}

/* "1234, 1240": the PIDs that named no process, for the message at the end. */
static char *absent_list(const struct attach_run *a)
{
	size_t cap = 0, len = 0;
	char *s = NULL, item[24];

	for (size_t i = 0; i < a->absent.n; i++) {
		int n = snprintf(item, sizeof item, "%s%d", i ? ", " : "", (int)a->absent.pids[i]);

		s = xgrow(s, &cap, len + (size_t)n + 1, 1);
		memcpy(s + len, item, (size_t)n + 1);
		len += (size_t)n;
	}
	return s;
}

/*
 * Said at once, not after the targets are followed: the PIDs that named no
 * process (a failure), or that every target ended before it was reached
 * (found then, so no failure: a churning service's workers end at any
 * time, as they do during the attach).
 */
static void say_absent(const struct attach_run *a, bool disable)
{
	if (a->nabsent) {
		char *list = absent_list(a);

		msg("--%s: no such process: %s (nothing was done to %s)", disable ? "detach" : "attach",
		    list, a->nabsent == 1 ? "it" : "them");
		free(list);
	} else if (a->nunreached == (int)a->targets.n) {
		msg("--%s: every target ended before it was reached (nothing was done)", disable ? "detach" : "attach");
	}
}

/*
 * Each target in turn; INT and TERM stay pending (blocked since before the
 * first) and end the attach between stops: the targets not reached are
 * "not done".
 */
static void handle_targets(struct attach_run *a, const struct target_plan *p)
{
	char oom_was[16];

	a->res = xcalloc(a->targets.n, sizeof *a->res);
	a->handled = xcalloc(a->targets.n, sizeof *a->handled);

	oom_score_set("-1000", oom_was, sizeof oom_was);
	for (size_t i = 0; i < a->targets.n; i++) {
		struct target_result *r = &a->res[i];

		if (!was_absent(a, a->targets.pids[i], r))
			target_apply(a->targets.pids[i], p, r);
		switch (r->outcome) {
		case TARGET_REFUSED: case TARGET_LATER: a->nrefused++; break;  /* --attach never asks for later */
		case TARGET_ABSENT: a->nabsent++; break;
		case TARGET_ENDED: a->nended++; a->nunreached += !r->tid; break;
		case TARGET_NOT_DONE: a->nnot_done++; break;
		case TARGET_NONE_MATCHED: a->nunmatched++; break;  /* left alone, not followed, not a refusal */
		case TARGET_DONE:
		case TARGET_ALREADY:
			a->handled[a->nhandled++] = r->pid;
			list_add(a, r);
			break;
		}
		if (!a->o->json)
			print_line(r, p);
		if (!a->stopped_by && (a->stopped_by = stop_signal_pending(p->stops)))
			msg("got %s: the targets not reached were not touched", a->stopped_by == SIGINT ? "SIGINT" : "SIGTERM");
	}
	oom_score_set(oom_was, NULL, 0);
	if (a->o->json)
		print_json(a, p);
	fflush(stdout);
	say_absent(a, p->disable);
}

static bool any_alive(const struct attach_run *a)
{
	for (int i = 0; i < a->nhandled; i++)
		if (proc_any_thread_running(a->handled[i]))
			return true;
	return false;
}

/* The follow loop's wait: for INT or TERM, then for the last target's end. */
static int wait_targets(void *ctx, double wait_s)
{
	struct attach_run *a = ctx;
	int sig;

	if (wait_s > 0 && (sig = stop_signals_wait(a->stops, wait_s)))
		return sig;
	return any_alive(a) ? 0 : FOLLOW_ENDED;
}

/*
 * As a command's run (follow.h): a sample every --interval, the tuning
 * looked after every second, then the tuning left and the report.  INT and
 * TERM, taken by sigtimedwait between ticks, end the following, not the
 * targets.
 */
static void follow_targets(struct attach_run *a)
{
	struct follow f = { .s = &a->s, .host = &a->host, .metrics_file = a->o->metrics_file,
			    .interval = a->o->interval, .what = FOLLOWED_ATTACHED };
	struct report_opts ro = { .json = a->o->json, .file = a->o->report_file, .all_processes = a->o->report_all };
	char end[160], *spec;
	int sig;

	if (a->stopped_by) {
		/* A stop signal came while the targets were handled: a sample, and the end. */
		sample_tick(&a->s);
		sig = a->stopped_by;
	} else {
		sig = follow_loop(&f, &(struct follow_hooks){ wait_targets, NULL, a }, 0);
	}
	if (sig > 0)
		snprintf(end, sizeof end, "ksm-run got %s: the targets go on, KSM still on in them",
			 sig == SIGINT ? "SIGINT" : "SIGTERM");
	else
		snprintf(end, sizeof end, "every target has ended");
	spec = xmalloc(strlen(a->o->target) + 16);
	sprintf(spec, "--attach=%s", a->o->target);
	struct report_subject j = {
		.what = FOLLOWED_ATTACHED, .argv = (char *[]){ "ksm-run", spec, NULL }, .start = a->t0,
		.end = now_s(), .targets = a->list ? a->list : "", .ended = end,
	};
	follow_end(&f, &ro, &j, a->o->quiet);
	free(spec);
}

int attach_main(const struct attach_opts *o)
{
	static struct attach_run a;
	struct target_plan plan;
	struct selection sel;
	sigset_t stops;
	struct sys_sample start;
	char why[512], run[RUN_VALUE_MAX];
	bool ksmd_stopped, registered = false;

	a.o = o;
	make_plan(o, &plan, &sel);
	if (plan.disable && !strcmp(o->target, DETACH_AGENT)) {
		if (agent_enabled_left(&a.targets, why, sizeof why))
			die("--detach=%s: %s", o->target, why);
	} else if (targets_resolve(o->target, &a.targets, &a.absent, why, sizeof why)) {
		die("--%s=%s: %s", plan.disable ? "detach" : "attach", o->target, why);
	}
	join_absent(&a);
	/* INT and TERM wait for sigtimedwait: none ends ksm-run with a target stopped. */
	stop_signals_block(&stops, (const int[]){ SIGINT, SIGTERM, 0 });
	plan.stops = a.stops = &stops;
	bool follow = !plan.disable && !o->no_wait;

	/* --no-wait starts no ksmd: with it stopped nothing would merge. */
	ksmd_stopped = !plan.disable && o->no_wait && handover_ksmd_stopped(o->tuning.strict, run);
	counters_sample(&start, ksmd_find());          /* the report's start: before any knob is written */
	if (follow)
		run_join_tuning(&a.host, &o->tuning, "attach");
	a.t0 = now_s();
	if (follow)
		sample_init(&a.s, &start, getpid(), NULL, NULL, NULL);
	handle_targets(&a, &plan);
	/* Their memory reaches the machine's tuner as a new command's does. */
	if (!plan.disable && !o->tuning.keep)
		registered = handover_targets(a.res, (int)a.targets.n, o->no_wait, ksmd_stopped ? run : NULL);
	else if (plan.disable)
		handover_drop_targets(a.res, (int)a.targets.n);
	if (follow) {
		if (!registered)
			host_tuner_count_targets(&a.host, a.handled, a.nhandled);
		a.s.targets = a.handled;
		a.s.ntargets = a.nhandled;
		if (a.nhandled) {
			follow_targets(&a);
		} else {
			run_leave_tuning(&a.host, NULL);
		}
	}
	if (a.stopped_by)
		return 128 + a.stopped_by;
	/*
	 * A PID that named no process when ksm-run looked is a failure, as in
	 * kill(1), renice(1) and taskset(1): a mistyped or stale PID must not
	 * pass for done (said when the targets were handled: say_absent).
	 */
	return a.nrefused || a.nabsent ? 1 : 0;
}
