/*
 * stops.c: the calls of one target over short stops (stops.h).
 *
 * A stop freezes the thread that runs our calls, and an event loop with
 * it: unmerging hundreds of MiB inside one prctl(PR_SET_MEMORY_MERGE, 0)
 * stopped redis 156 ms.  So every stop has a budget (10 ms by default):
 * the merged memory is unmerged with MADV_UNMERGEABLE in chunks whose cost
 * is predicted from the time measured per MiB so far, as many as fit in
 * the stop; the target then runs for at least as long as it was stopped,
 * and the next stop goes on where this one ended.  The process-wide flag
 * is cleared last, when nothing merged is left for it to unmerge.
 * Enabling sets the flag and keeps the secret-like regions out in one stop
 * (split, ksmd could merge a secret in between); a selection is advised
 * over as many stops as the budget needs.
 *
 * In every stop /proc/PID/maps is read once more, and a region is acted on
 * only if it is still the one judged (the same class and name over the
 * part not done yet): another thread may have unmapped it meanwhile.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/arch.h"
#include "ptrace/inject.h"
#include "ptrace/pin.h"
#include "ptrace/restart.h"
#include "ptrace/seccomp.h"
#include "ptrace/stopprio.h"
#include "ptrace/stops.h"
#include "common/files.h"
#include "common/procfs.h"
#include "common/stopsig.h"
#include "kernel_abi.h"
#include "common/ksmproc.h"
#include "ksmstat.h"

#define FIRST_CHUNK (2UL << 20)         /* merged bytes unmerged before anything is measured */
#define LET_GO_S 0.001                  /* what putting it back costs, about (a loaded host: more) */
#define WALK_WEIGHT 16                  /* an unmerged page costs about 1/16 of a merged one */
#define LEARN_MIN_BYTES (64UL << 10)    /* the least a call must unmerge to teach its cost per byte */

struct engine {
	const struct pin *pin;          /* checked at the start of every stop */
	int signals_seen;               /* in.signals_passed when the pin was last checked */
	const struct target_plan *plan;
	struct plan_state *ps;
	struct target_result *r;
	struct inject in;
	struct seccomp_filters sf;
	double budget, t0;              /* this stop's start */
	double last_stop;               /* how long the last stop lasted, seconds */
	int next;                       /* the first range not done */
	unsigned long at;               /* where in it the work goes on (its start: not begun) */
	bool *still;                    /* per range, in this stop: still the region judged */
	bool *maybe_ended;              /* a refusal that may be its end on the way (pin_ended decides) */
	double s_per_unit, s_per_call;  /* measured: unmerging, and a call that unmerges nothing */
	double s_call_min;              /* the quickest call: what any call costs */
	unsigned long last_chunk;
	bool flag_done;                 /* the prctl, for the process-wide form */
};

unsigned long long region_ident(const struct region *g)
{
	unsigned long long h = 1469598103934665603ULL ^ (unsigned)g->cls;

	for (size_t i = 0; g->name && i < (g->cls == REGION_FILE ? strlen(g->name) : g->name_len); i++)
		h = (h ^ (unsigned char)g->name[i]) * 1099511628211ULL;
	return h;
}

static unsigned long range_from(const struct engine *e, int i)
{
	return i == e->next && e->at > e->ps->r[i].start ? e->at : e->ps->r[i].start;
}

/* In the stop: which of the ranges not done are still as judged (maps and ranges both ascend). */
struct recheck {
	struct engine *e;
	unsigned long *covered;
	int j;
};

static int recheck_region(const struct region *g, void *arg)
{
	struct recheck *rc = arg;
	struct plan_state *ps = rc->e->ps;

	while (rc->j < ps->n && ps->r[rc->j].end <= g->start)
		rc->j++;
	for (int k = rc->j; k < ps->n && ps->r[k].start < g->end; k++) {
		unsigned long s = range_from(rc->e, k) > g->start ? range_from(rc->e, k) : g->start;
		unsigned long t = ps->r[k].end < g->end ? ps->r[k].end : g->end;

		if (s >= t)
			continue;
		if (region_ident(g) != ps->r[k].ident)
			rc->e->still[k] = false;        /* something else is there now */
		else
			rc->covered[k] += t - s;
	}
	return 0;
}

static void recheck(struct engine *e)
{
	struct plan_state *ps = e->ps;
	struct recheck rc = { e, NULL, e->next };
	char path[64], *buf;

	if (e->next >= ps->n)
		return;                 /* nothing left to act on: no maps to read in the stop */
	buf = malloc(MAPS_BUF);
	for (int k = e->next; k < ps->n; k++)
		e->still[k] = true;
	pin_path(path, sizeof path, e->pin, "maps");
	rc.covered = calloc((size_t)ps->n + 1, sizeof *rc.covered);
	if (!rc.covered || !buf || maps_for_each(path, buf, MAPS_BUF, recheck_region, &rc) < 0) {
		for (int k = e->next; k < ps->n; k++)
			e->still[k] = false;     /* unknown: nothing is touched */
	} else {
		for (int k = e->next; k < ps->n; k++)
			e->still[k] &= rc.covered[k] == ps->r[k].end - range_from(e, k);
	}
	free(buf);
	free(rc.covered);
}

/* Is it still what was judged?  False (said in R) when not. */
static bool still_pinned(const struct pin *pin, struct target_result *r)
{
	enum pin_verdict v = pin_check(pin);

	if (v == PIN_SAME)
		return true;
	target_refuse(r, "%s", pin_reason(v));
	if (v == PIN_ENDED)
		r->outcome = TARGET_ENDED;
	return false;
}

/* What the caller judged besides the pin, at a stop; false (refused) when it no longer holds. */
static bool still_judged(const struct target_plan *plan, const struct pin *pin, struct target_result *r)
{
	const char *why;

	if (!plan->still_judged || !(why = plan->still_judged(pin->pid, plan->judged_ctx)))
		return true;
	target_refuse(r, "%s", why);
	return false;
}

/*
 * The kernel refused PTRACE_SEIZE: an exec under way refuses it for a
 * moment too (its old main thread is on its way out), so the pin is looked
 * at for 100 ms before the refusal is the kernel's.
 */
static bool still_pinned_soon(const struct pin *pin, struct target_result *r)
{
	for (int i = 0; i < 10; i++) {
		if (!still_pinned(pin, r))
			return false;
		usleep(10000);
	}
	return true;
}

/* Is SIGSYS pending for thread TID, a seccomp filter's answer to the call just made? */
static bool sigsys_pending(pid_t tid)
{
	char path[64], text[4096], *p;
	unsigned long long pending = 0;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (read_text(path, text, sizeof text))
		return true;            /* gone, or unknown: not a success */
	if ((p = strstr(text, "\nSigPnd:")))
		pending |= strtoull(p + 8, NULL, 16);
	if ((p = strstr(text, "\nShdPnd:")))
		pending |= strtoull(p + 8, NULL, 16);
	return pending & (1ULL << (SIGSYS - 1));
}

/*
 * One call in the stopped thread, if its seccomp policy lets it through.
 * A filter that answers it with TRAP or KILL all the same (the judge was
 * wrong) leaves SIGSYS pending, to be delivered when the thread goes on:
 * that, or its death in the call, is a refusal, never a success.
 * 0 with *RES; else -errno with the reason in R.
 */
static int call(struct engine *e, long nr, const long a[6], const char *name, long *res)
{
	struct target_result *r = e->r;
	struct seccomp_call sc = { (int32_t)nr, 0, e->in.insn, { 0 } };
	int err;

	/* A signal delivered meanwhile ran its code: a handler may have changed its credentials. */
	if (e->in.signals_passed != e->signals_seen) {
		e->signals_seen = e->in.signals_passed;
		if (!still_pinned(e->pin, r))
			return -ESTALE;
	}
#if ARCH_INJECTS
	sc.arch = ARCH_AUDIT;                   /* and the ip, after the call's instruction */
	sc.ip += ARCH_SYSCALL_LEN;
#endif
	for (int i = 0; i < 6; i++)
		sc.args[i] = (uint64_t)a[i];
	if (seccomp_allows(&e->sf, &sc, name, r->why, sizeof r->why)) {
		r->outcome = TARGET_REFUSED;
		return -EPERM;
	}
	r->calls++;
	err = inject_syscall(&e->in, nr, a, res, r->why, sizeof r->why);
	if (err == -ESRCH && e->in.death_sig == SIGSYS) {
		/* Killed by its seccomp filter for our call: a KILL the judge did not foresee. */
		snprintf(r->why, sizeof r->why, "it died during the call: its seccomp filter killed it for %s", name);
		r->died_in_call = true;
	} else if (err == -ESRCH) {
		snprintf(r->why, sizeof r->why, "it ended during the attach");  /* killed by another */
	} else if (!err && sigsys_pending(e->in.tid)) {
		snprintf(r->why, sizeof r->why, "it died during the call: its seccomp filter answered %s "
			 "with SIGSYS (TRAP or KILL), which ksm-run's judge did not foresee", name);
		r->died_in_call = true;
		err = -EPERM;
	}
	if (err)
		r->outcome = TARGET_REFUSED;
	return err;
}

/* Does its ksm_stat say the process-wide flag is WANT?  1 yes, 0 no, -1 unknown. */
static int merge_flag_is(const struct pin *pin, int want)
{
	char path[80];
	struct ksmenable_stat st;

	pin_path(path, sizeof path, pin, "ksm_stat");
	if (ksm_stat_at(path, &st) || st.merge_any < 0)
		return -1;
	return st.merge_any == want;
}

static int set_flag(struct engine *e, bool on)
{
	long a[6] = { PR_SET_MEMORY_MERGE, on, 0, 0, 0, 0 }, res = 0;
	int err = 0;

	/* Until its ksm_stat agrees (a thread of its own may set it again meanwhile). */
	for (int tries = 0; !err && (tries == 0 || (tries < 3 && merge_flag_is(e->pin, on) == 0)); tries++) {
		err = call(e, SYS_prctl, a, "prctl(PR_SET_MEMORY_MERGE)", &res);
		if (!err && res < 0) {
			target_refuse(e->r, "prctl(PR_SET_MEMORY_MERGE) failed in it: %s", restart_strerror(res));
			err = (int)res;
		}
	}
	e->flag_done = !err;
	return err;
}

static int advise(struct engine *e, unsigned long start, unsigned long len, int advice)
{
	long a[6] = { (long)start, (long)len, advice, 0, 0, 0 }, res = 0;
	int err = call(e, SYS_madvise, a, advice == MADV_MERGEABLE ? "madvise(MADV_MERGEABLE)" :
		       "madvise(MADV_UNMERGEABLE)", &res);

	/* ENOMEM: a gap in the range; the mapped parts were advised. */
	if (!err && res < 0 && res != -ENOMEM) {
		target_refuse(e->r, "madvise failed in it: %s", restart_strerror(res));
		err = (int)res;
	}
	return err;
}

/* What unmerging a byte of range I costs, in units (a merged byte is 1). */
static double density(const struct range *g)
{
	double size = (double)(g->end - g->start);

	return (g->ksm_kb >= 0 ? (double)g->ksm_kb * 1024 / size : 1.0) + 1.0 / WALK_WEIGHT;
}

/* The bytes of range I to unmerge now, with LEFT seconds of the stop left. */
static unsigned long chunk_for(struct engine *e, const struct range *g, unsigned long from, double left)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE), chunk;

	if (e->s_per_unit <= 0) {
		chunk = (unsigned long)(FIRST_CHUNK / density(g));
	} else if (left <= 0) {
		chunk = page;           /* the time is spent: the least there is (a stop makes progress) */
	} else {
		chunk = (unsigned long)(left * 0.5 / e->s_per_unit / density(g));
		if (e->last_chunk && chunk > 4 * e->last_chunk)
			chunk = 4 * e->last_chunk;      /* grow step by step: the next region may be denser */
	}
	chunk -= chunk % page;
	if (chunk < page)
		chunk = page;
	return chunk < g->end - from ? chunk : g->end - from;
}

static void learn(double *rate, double sample)
{
	*rate = *rate <= 0 || sample > *rate ? sample : (*rate + sample) / 2;
}

/*
 * When the stop's work must end.  The budget counts from the seize, but
 * the calls always get at least half of it: where stopping and reading the
 * maps alone cost more than the budget (a loaded host, a sanitized
 * ksm-run, an emulated machine: 15 to 20 ms were seen there), every stop
 * would otherwise unmerge a single page, and 64 MiB took 16,384 stops,
 * more than ten minutes.  Such a stop lasts its own cost and half the
 * budget.
 */
static double work_deadline(const struct engine *e)
{
	double by_budget = e->t0 + e->budget, least = now_s() + e->budget / 2 + LET_GO_S;

	return by_budget > least ? by_budget : least;
}

/*
 * The ranges from where the last stop ended, while the budget lasts (at
 * least one call per stop, so that every stop makes progress).  UNMERGE:
 * chunked by cost; else regions that touch are one call.  ALL: no budget.
 */
static int advance(struct engine *e, int advice, bool all)
{
	struct plan_state *ps = e->ps;
	int calls = 0, err;
	double deadline;

	recheck(e);
	deadline = work_deadline(e);
	while (e->next < ps->n) {
		struct range *g = &ps->r[e->next];
		unsigned long from = range_from(e, e->next), to;
		double left = deadline - now_s() - LET_GO_S, predicted, t;
		int last = e->next;

		if (!e->still[e->next]) {
			e->next++;
			continue;
		}
		if (advice == MADV_UNMERGEABLE && g->ksm_kb != 0) {
			to = from + chunk_for(e, g, from, left);
			predicted = e->s_per_call + e->s_per_unit * (double)(to - from) * density(g);
		} else {
			/* Nothing merged in it (or advising): cheap, one call for regions that touch. */
			while (last + 1 < ps->n && e->still[last + 1] && ps->r[last + 1].start == ps->r[last].end &&
			       (advice == MADV_MERGEABLE || ps->r[last + 1].ksm_kb == 0))
				last++;
			to = ps->r[last].end;
			predicted = e->s_per_call;
		}
		if (calls && !all && predicted > left)
			break;
		t = now_s();
		if ((err = advise(e, from, to - from, advice)))
			return err;
		t = now_s() - t;
		calls++;
		for (int k = e->next; k <= last; k++)
			ps->r[k].called = true;
		if (advice == MADV_UNMERGEABLE && g->ksm_kb != 0) {
			/*
			 * The call's own cost (its least seen) apart, the rest is per
			 * unit unmerged.  A call of a few pages teaches only a lower
			 * cost: its time is mostly the machine's noise (a preempted
			 * ksm-run), which only adds, and read as a cost per page it
			 * made the next chunk a few pages too; a loaded, sanitized run
			 * never got out (2273 stops for 4098 pages).
			 */
			double fixed = e->s_call_min < t ? e->s_call_min : t / 2;
			double sample = (t - fixed) / ((double)(to - from) * density(g));

			if (to - from >= LEARN_MIN_BYTES || sample < e->s_per_unit)
				learn(&e->s_per_unit, sample);
			e->last_chunk = to - from;
		} else {
			learn(&e->s_per_call, t);
		}
		if (e->s_call_min <= 0 || t < e->s_call_min)
			e->s_call_min = t;
		e->at = to;
		if (to == ps->r[last].end) {
			e->next = last + 1;
			e->at = 0;
		}
	}
	return 0;
}

/* Prctl form, enabling: the flag, and the secret-like regions out again, in one stop. */
static int enable_process_wide(struct engine *e)
{
	int err;

	if ((err = set_flag(e, true)))
		return err;
	if ((err = advance(e, MADV_UNMERGEABLE, true))) {
		long off[6] = { PR_SET_MEMORY_MERGE, 0, 0, 0, 0, 0 }, res;
		char was[sizeof e->r->why];

		snprintf(was, sizeof was, "%s", e->r->why);
		if (!e->r->died_in_call)
			call(e, SYS_prctl, off, "prctl(PR_SET_MEMORY_MERGE)", &res);
		target_refuse(e->r, "its secret-like memory could not be kept out (%.160s): the process-wide flag "
		     "was switched off again", was);
	}
	return err;
}

/* The work of one stop. */
static int one_stop(struct engine *e)
{
	const struct target_plan *p = e->plan;
	int err, calls_before = e->r->calls;

	if (p->process_wide && !p->disable)
		return enable_process_wide(e);
	if ((err = advance(e, p->disable ? MADV_UNMERGEABLE : MADV_MERGEABLE, false)))
		return err;
	/*
	 * The flag last, when the budget allows (always in a stop of its own):
	 * all it has left to unmerge is what merged since.
	 */
	if (p->process_wide && e->next == e->ps->n &&
	    (e->r->calls == calls_before || now_s() - e->t0 < e->budget / 2))
		return set_flag(e, false);
	return 0;
}

static bool work_left(const struct engine *e)
{
	return e->plan->process_wide ? !e->flag_done : e->next < e->ps->n;
}

bool stops_interrupted(const struct target_plan *plan, struct target_result *r)
{
	int sig = plan->stops ? stop_signal_pending(plan->stops) : 0;
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";

	if (!sig)
		return false;
	if (r->stops) {
		target_refuse(r, "ksm-run got %s after %d stops: the rest was left as it was", name, r->stops);
	} else {
		r->outcome = TARGET_NOT_DONE;
		snprintf(r->why, sizeof r->why, "ksm-run got %s first: left alone", name);
	}
	return true;
}

/* The stop could not begin: why, in words (R). */
static void not_begun(struct engine *e, int err)
{
	struct target_result *r = e->r;
	int sig;

	r->outcome = err == -ETIMEDOUT && e->plan->later_if_stuck ? TARGET_LATER : TARGET_REFUSED;
	if (err == -EINTR && e->plan->stops && (sig = stop_signal_pending(e->plan->stops)))
		snprintf(r->why, sizeof r->why, "ksm-run got %s before it stopped: left alone",
			 sig == SIGINT ? "SIGINT" : "SIGTERM");
	else if (err == -EPERM && still_pinned_soon(e->pin, r))
		target_not_permitted(r);
	*e->maybe_ended = err == -EPERM || err == -ESRCH;
	if (err == -ESRCH && still_pinned(e->pin, r))
		target_refuse(r, "the thread it was stopped in ended during the attach; try again");
}

/* The stop just ended, in the target's figures. */
static void count_stop(struct engine *e)
{
	struct target_result *r = e->r;
	double stop = inject_stopped_for(&e->in);

	r->stopped_s += stop;
	e->last_stop = stop;
	if (stop > r->longest_stop_s)
		r->longest_stop_s = stop;
	r->stops++;
	r->restarted |= e->in.restarted;
}

void stops_run(const struct pin *pin, const struct target_plan *plan, struct plan_state *ps,
	       struct target_result *r, bool *maybe_ended)
{
	struct engine e = { .pin = pin, .plan = plan, .ps = ps, .r = r, .maybe_ended = maybe_ended };
	struct stopprio prio = { .raised = STOPPRIO_NONE };
	int err;

	e.budget = plan->stop_budget_s > 0 ? plan->stop_budget_s : STOP_BUDGET_DEFAULT_S;
	if (!(e.still = calloc((size_t)ps->n + 1, sizeof *e.still))) {
		target_refuse(r, "out of memory");
		return;
	}
	r->outcome = TARGET_DONE;
	while (work_left(&e)) {
		/*
		 * It runs between the stops, at least as long as it was last
		 * stopped: not the longest stop, of which one slow one (ksm-run
		 * preempted) made every later pause 115 ms.
		 */
		if (r->stops) {
			double pause = e.last_stop > 0.001 ? e.last_stop : 0.001;

			nanosleep(&(struct timespec){ 0, (long)(pause * 1e9) }, NULL);
		}
		/* Between stops, INT and TERM end the attach. */
		if (stops_interrupted(plan, r))
			break;
		/* Raised from the seize until it is let go (inject.h), and restored here on every path. */
		err = inject_begin(&e.in, r->tid, plan->stop_wait_s, plan->stops, &prio, r->why, sizeof r->why);
		r->raise_refused = r->raise_refused ? r->raise_refused : prio.refused;
		if (err) {
			stopprio_restore(&prio);
			if (e.in.t_go > 0)      /* seized, stopped and let go: a stop all the same */
				count_stop(&e);
			not_begun(&e, err);
			break;
		}
		e.t0 = e.in.t_stop;      /* the seize and the interrupt count too */
		e.signals_seen = e.in.signals_passed;
		/* Every stop begins with the pin: an exec, new credentials or its end, and nothing is done. */
		if (still_pinned(pin, r) && still_judged(plan, pin, r)) {
			seccomp_load(e.in.tid, &e.sf);
			one_stop(&e);
			seccomp_free(&e.sf);
		}
		err = inject_end(&e.in);
		stopprio_restore(&prio);
		count_stop(&e);
		if (err == -ESRCH || err == -ESTALE || (r->outcome == TARGET_REFUSED && pin_ended(pin, 0))) {
			*maybe_ended = true;    /* its thread went: the process may be on its way out */
			/*
			 * Or an exec in another thread killed it: that thread has the
			 * PID and, for a moment, still the old program (de_thread comes
			 * before exec_mmap).  The exec is given 100 ms to show.
			 */
			if (still_pinned_soon(pin, r) && !r->died_in_call)
				target_refuse(r, "the thread it was stopped in ended during the attach; try again");
			break;
		}
		if (err && r->outcome != TARGET_REFUSED && r->outcome != TARGET_ENDED)
			target_refuse(r, "it could not be let go cleanly: %s", strerror(-err));
		if (r->outcome == TARGET_REFUSED || r->outcome == TARGET_ENDED)
			break;
	}
	free(e.still);
}
