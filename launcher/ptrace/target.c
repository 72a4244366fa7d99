/*
 * target.c: one process, enabled or disabled from outside.
 *
 * It is pinned first (pin.h: the process, its program, its credentials),
 * then everything that can be judged without stopping it is judged, from
 * /proc (traced by someone, stopped, a kernel thread, libksmenable inside,
 * a program in secure execution, already so), through a thread of it
 * that lives; its regions are read
 * from smaps before the stop too, so the stop lasts only as long as the
 * calls.  The calls themselves, over short stops that each begin by
 * checking the pin, and the reading back of what they did are stops.c's.
 * A target that ended is "ended", never a refusal: whatever the kernel
 * said on the way (EPERM from PTRACE_SEIZE for a zombie, an smaps without
 * memory), the pidfd has the last word.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ptrace/inject.h"
#include "ptrace/pin.h"
#include "ptrace/readback.h"
#include "ptrace/stops.h"
#include "ptrace/target.h"
#include "common/files.h"
#include "common/kfeature.h"
#include "common/ksmproc.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "common/stopsig.h"
#include "kernel_abi.h"
#include "ksmstat.h"
#include "maps.h"

#define MAX_REGIONS (1 << 20)           /* far above vm.max_map_count's default of 65530 */

/*
 * The regions the calls act on.  Madvise form: those the selection
 * chooses (region_selected: never shared, special or secret-like unless
 * allowed) and not so already.  Prctl form, enabling: the secret-like ones,
 * to be made unmergeable again right after the flag is set; disabling:
 * every mergeable one, unmerged region by region before the flag is
 * cleared (stops.c), so that no stop unmerges everything at once.
 */
static int plan_region(const struct region *g, void *arg)
{
	struct plan_state *ps = arg;
	const struct target_plan *p = ps->plan;
	bool want;

	/*
	 * The flag's clearing unmerges the rest at no cost, where the flag was
	 * on.  Before 6.14 it was told by the regions, which a program's own
	 * madvise reads the same as: every mergeable region, lest one stay.
	 */
	if (p->process_wide && p->disable)
		want = g->mergeable == 1 && (g->ksm_kb != 0 || !kfeature_present(KF_MERGE_ANY_STAT));
	else if (p->process_wide)
		want = g->vmflags >= 0 && region_is_secret(g) && g->cls != REGION_SHARED && g->cls != REGION_SPECIAL;
	else if ((want = region_selected(p->sel, g)))
		ps->matched++;
	if (want && !p->process_wide)
		want = p->disable ? g->mergeable == 1 : g->mergeable != 1;
	if (!want)
		return 0;
	if (ps->n == ps->cap) {
		struct range *more = ps->cap < MAX_REGIONS ? realloc(ps->r, 2 * (size_t)ps->cap * sizeof *more) : NULL;

		if (!more) {
			ps->failed = true;
			return 1;
		}
		ps->r = more;
		ps->cap *= 2;
	}
	ps->r[ps->n++] = (struct range){ g->start, g->end, region_ident(g), g->ksm_kb, false };
	return 0;
}

/*
 * The /proc checks; false (with the reason) when the process is to be left
 * alone.  *MAYBE_ENDED: the reason may be its end on the way (pin_ended decides).
 */
static bool may_touch(const struct pin *pin, const struct target_plan *plan, struct target_result *r,
		      bool *maybe_ended)
{
	char path[80], text[4096], *p;
	long long tracer = 0;
	struct ksmenable_stat st;
	struct proc_stat ps;

	pin_path(path, sizeof path, pin, "status");
	if (read_text(path, text, sizeof text) || proc_stat_read(pin->tid, &ps)) {
		target_refuse(r, "its /proc files cannot be read");
		*maybe_ended = true;
		return false;
	}
	if ((p = strstr(text, "\nTracerPid:")))
		tracer = strtoll(p + 11, NULL, 10);
	if (pin->pid == getpid()) {
		target_refuse(r, "that is ksm-run itself");
		return false;
	}
	if (ps.flags & PROC_PF_KTHREAD) {
		target_refuse(r, "it is a kernel thread: it has no memory of its own");
		return false;
	}
	if (tracer > 0) {
		target_refuse(r, "it is traced by process %lld (a debugger or strace): left alone", tracer);
		return false;
	}
	if ((p = strstr(text, "\nState:")) && (p = strpbrk(p + 7, "RSDTtZXIPK")) && strchr("TtZX", *p)) {
		target_refuse(r, "%s", *p == 'Z' || *p == 'X' ? "it has ended (a zombie)" :
		       "it is stopped (state T): it was not touched; continue it first");
		*maybe_ended = *p == 'Z' || *p == 'X';
		return false;
	}
	/* It would not stop until it wakes: a vfork parent waits for its child, for as long as it takes. */
	if (plan->later_if_stuck && p && *p == 'D') {
		r->outcome = TARGET_LATER;
		snprintf(r->why, sizeof r->why, "it is in uninterruptible sleep (a vfork parent waiting for its "
			 "child, or I/O): not seized; tried again later");
		return false;
	}
	/* libksmenable in it: its own settings choose what merges. */
	if (proc_maps_mention(pin->tid, "/libksmenable.so")) {
		target_refuse(r, "libksmenable is loaded in it: its own settings (KSM_ENABLE_*) choose what merges, "
		       "and an attach would override them; left alone");
		return false;
	}
	if (!strstr(text, "\nVmSize:")) {
		target_refuse(r, "it has no memory (it is exiting)");
		*maybe_ended = true;
		return false;
	}
	/* What the library refuses (getauxval(AT_SECURE)), an attach refuses too; taking KSM out is no harm. */
	if (!plan->disable && proc_secure_exec(pin->pid, pin->tid) == 1) {
		target_refuse(r, "it runs a program in secure execution (setuid, setgid or file capabilities), "
		       "which libksmenable refuses too: left alone");
		return false;
	}
	pin_path(path, sizeof path, pin, "ksm_stat");
	if (ksm_stat_at(path, &st) == 0) {
		r->merge_any = st.merge_any;
		r->mergeable = st.mergeable;
	}
	if (plan->process_wide && r->merge_any == (plan->disable ? 0 : 1)) {
		r->outcome = TARGET_ALREADY;
		return false;
	}
	if (plan->process_wide && !kfeature_present(KF_PRCTL)) {
		target_refuse(r, "this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4): choose regions with "
		       "--allow (madvise), which older kernels have");
		return false;
	}
	return true;
}

/* Reads the regions to act on; -1 (said in R) when they cannot be. */
static int plan_ranges(const struct pin *pin, const struct target_plan *plan, struct plan_state *ps,
		       struct target_result *r)
{
	char path[80], *buf;
	int ret;

	ps->plan = plan;
	ps->n = 0;
	ps->cap = 1024;
	ps->matched = 0;
	ps->failed = false;
	if (!(ps->r = malloc((size_t)ps->cap * sizeof *ps->r)) || !(buf = malloc(MAPS_BUF))) {
		target_refuse(r, "out of memory");
		return -1;
	}
	pin_path(path, sizeof path, pin, "smaps");
	ret = maps_for_each(path, buf, MAPS_BUF, plan_region, ps);
	free(buf);
	if (ret < 0 && (errno == EACCES || errno == EPERM)) {
		target_not_permitted(r);       /* smaps asks for the right to trace it, as ptrace does */
		return -1;
	}
	if (ret < 0) {
		target_refuse(r, "its smaps cannot be read: %s", strerror(errno));
		return -1;
	}
	if (ps->failed) {
		target_refuse(r, "out of memory for its %d regions: nothing was done", ps->n);
		return -1;
	}
	return 0;
}

/*
 * Refused for an exec during the attach.  Since 6.7 the kernel carries the
 * process-wide flag across an exec: an exec that began once our prctl had
 * set it (in another thread, or while the call's thread was stopped at
 * its exit) hands it to the new program, which was never judged.  That is
 * said, not "left alone": the new image is not ours to touch, but whoever
 * reads the line may be (--detach).
 */
static void refuse_execd(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	struct ksmenable_stat st;
	int flag = 0;                   /* the new program's: 1, 0, -1 unknown */

	/* Only a prctl of ours that was made can have set it. */
	if (plan->process_wide && !plan->disable && r->calls)
		flag = ksm_proc_stat(pid, &st) ? -1 : ksm_proc_merge_any(pid, &st);
	if (flag == 0) {
		target_refuse(r, "%s", pin_reason(PIN_EXECD));
		return;
	}
	r->flag_carried = true;
	target_refuse(r, "it exec'd during the attach, after the process-wide flag was set: the new program, not "
		      "judged, %s KSM on (the kernel keeps the flag across an exec since 6.7); ksm-run --detach "
		      "turns it off", flag == 1 ? "has" : "may have");
}

/* target_apply in the calling thread, with every signal blocked. */
static void apply_here(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	struct plan_state ps = { 0 };
	struct proc_stat comm;
	struct pin pin;
	bool maybe_ended = false;

	memset(r, 0, sizeof *r);
	r->pid = pid;
	r->merge_any = r->mergeable = -1;
	snprintf(r->comm, sizeof r->comm, "?");
	if (!inject_supported()) {
		target_refuse(r, "--attach is supported on x86_64 and aarch64 only");
		return;
	}
	/* Pinned before anything is read of it: what is judged is what the pin holds. */
	if (pin_take(&pin, pid)) {
		bool thread = errno == EINVAL;
		pid_t tgid = thread ? proc_tgid(pid) : -1;

		if (tgid > 0)
			target_refuse(r, "%d is a thread of process %d, not a process: give %d", (int)pid, (int)tgid,
				      (int)tgid);
		else if (thread)        /* it ended since: its process, unknown */
			target_refuse(r, "%d is a thread of another process, not a process: give its process (Tgid)", (int)pid);
		else
			r->outcome = TARGET_ENDED;
		return;
	}
	r->tid = pin.tid;
	if (proc_stat_read(pid, &comm) == 0)
		snprintf(r->comm, sizeof r->comm, "%s", comm.comm);
	if (stops_interrupted(plan, r) || !may_touch(&pin, plan, r, &maybe_ended))
		goto done;
	if (plan_ranges(&pin, plan, &ps, r)) {
		maybe_ended = true;     /* an smaps that cannot be read, of a process on its way out */
		goto done;
	}
	if (!plan->process_wide && ps.n == 0) {
		/* Nothing to do: as it should be already, or nothing was chosen at all. */
		r->outcome = ps.matched ? TARGET_ALREADY : TARGET_NONE_MATCHED;
		goto done;
	}
	stops_run(&pin, plan, &ps, r, &maybe_ended);
done:
	if (r->outcome != TARGET_ENDED && r->outcome != TARGET_NOT_DONE && r->outcome != TARGET_LATER) {
		bool done = r->outcome == TARGET_DONE;

		stops_read_back(&pin, plan, &ps, r);
		/* Read back wrong: a process on its way out reads as if nothing were done. */
		maybe_ended |= done && r->outcome == TARGET_REFUSED;
	}
	/*
	 * Whatever was said on the way, a process that ended has ended (its
	 * pidfd says so), unless it died in a call made for us: a refusal.  One
	 * that exec'd or changed credentials meanwhile is refused for that (a
	 * refusal on the way, such as an smaps gone with its thread, says less).
	 */
	if (r->outcome == TARGET_REFUSED && !r->died_in_call) {
		enum pin_verdict v = pin_check(&pin);

		if (v == PIN_ENDED || pin_ended(&pin, maybe_ended ? 250 : 0))
			r->outcome = TARGET_ENDED;
		else if (v == PIN_EXECD)
			refuse_execd(pid, plan, r);
		else if (v == PIN_CREDS)
			target_refuse(r, "%s", pin_reason(v));
	} else if (r->outcome == TARGET_ALREADY || r->outcome == TARGET_NONE_MATCHED) {
		/*
		 * Judged from what was read, with no stop: an exec in the middle
		 * (its new maps read under the old name) judged another program.
		 */
		enum pin_verdict v = pin_check(&pin);

		if (v == PIN_ENDED)
			r->outcome = TARGET_ENDED;
		else if (v == PIN_EXECD || v == PIN_CREDS)
			target_refuse(r, "%s", pin_reason(v));
	}
	free(ps.r);
	pin_release(&pin);
}

struct apply_job {
	pid_t pid;
	const struct target_plan *plan;
	struct target_result *r;
};

static void *apply_job(void *arg)
{
	struct apply_job *j = arg;

	apply_here(j->pid, j->plan, j->r);
	return NULL;
}

/*
 * A thread of its own, so that a thread that never stopped, still seized,
 * is let go when it ends (inject.h).  Every signal blocked, here and so in
 * that thread: SIGCHLD is how a stop is awaited, and the stop signals are
 * to stay pending for the caller.
 */
void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	struct apply_job j = { pid, plan, r };
	sigset_t all, old;
	pthread_t t;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&t, NULL, apply_job, &j))
		apply_here(pid, plan, r);       /* such a target is let go when ksm-run ends */
	else
		pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

bool target_supported(void)
{
	return inject_supported();
}
