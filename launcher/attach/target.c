/*
 * target.c: one process, enabled or disabled from outside.
 *
 * It is pinned first (pin.h: the process, its program, its credentials),
 * then everything that can be judged without stopping it is judged, from
 * /proc (traced by someone, stopped, a kernel thread, libksmenable inside,
 * already so), through a thread of it that lives; its regions are read
 * from smaps before the stop too, so the stop lasts only as long as the
 * calls.  Every stop begins by checking the pin: an exec, new credentials
 * or its end since the judgement, and nothing is done.  A target that
 * ended is "ended", never a refusal: whatever the kernel said on the way
 * (EPERM from PTRACE_SEIZE for a zombie, an smaps without memory), the
 * pidfd has the last word.  In the stop, /proc/PID/maps is
 * read once more, and a region is advised only if it is still the one that
 * was judged (the same range and file): one of its other threads may have
 * unmapped it and mapped something else there meanwhile.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/inject.h"
#include "attach/pin.h"
#include "attach/seccomp.h"
#include "attach/target.h"
#include "common/files.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "common/stopsig.h"
#include "kernel_abi.h"
#include "ksmstat.h"
#include "maps.h"

#define AUDIT_ARCH_X86_64 0xc000003eU
#define BATCH_REGIONS 256               /* regions changed in one stop: a stop stays short */
#define MAX_REGIONS (1 << 20)           /* far above vm.max_map_count's default of 65530 */
#define MAPS_BUF (1 << 20)

struct range {
	unsigned long start, end;
	unsigned long long ident;       /* a hash of the maps line's class and name */
};

struct plan_state {
	const struct target_plan *plan;
	struct range *r;
	int n, cap;
	bool failed;                    /* too many, or out of memory */
};

bool target_kernel_has_prctl(void)
{
	static int known = -1;

	if (known < 0)
		known = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) >= 0;
	return known;
}

static unsigned long long region_ident(const struct region *g)
{
	unsigned long long h = 1469598103934665603ULL ^ (unsigned)g->cls;

	for (size_t i = 0; g->name && i < (g->cls == REGION_FILE ? strlen(g->name) : g->name_len); i++)
		h = (h ^ (unsigned char)g->name[i]) * 1099511628211ULL;
	return h;
}

/*
 * The regions the calls act on.  Madvise form: those the selection
 * chooses (region_selected: never shared, special or secret-like unless
 * allowed) and not so already.  Prctl form, enabling: the secret-like ones,
 * to be made unmergeable again right after the flag is set.
 */
static int plan_region(const struct region *g, void *arg)
{
	struct plan_state *ps = arg;
	const struct target_plan *p = ps->plan;
	bool want;

	if (p->process_wide)
		want = !p->disable && g->vmflags >= 0 && region_is_secret(g) &&
		       g->cls != REGION_SHARED && g->cls != REGION_SPECIAL;
	else
		want = region_selected(p->sel, g) && (p->disable ? g->mergeable == 1 : g->mergeable != 1);
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
	ps->r[ps->n++] = (struct range){ g->start, g->end, region_ident(g) };
	return 0;
}

/* In the stop: is each range still the region it was?  Those that are not are dropped. */
struct recheck {
	struct range *r;
	int n;
	bool *still;
};

static int recheck_region(const struct region *g, void *arg)
{
	struct recheck *rc = arg;

	for (int i = 0; i < rc->n; i++)
		if (rc->r[i].start == g->start && rc->r[i].end == g->end && rc->r[i].ident == region_ident(g))
			rc->still[i] = true;
	return 0;
}

__attribute__((format(printf, 2, 3)))
static void refuse(struct target_result *r, const char *fmt, ...)
{
	va_list ap;

	r->outcome = TARGET_REFUSED;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
}

/* Why the kernel would not let us trace it, and what to do. */
static void not_permitted(struct target_result *r)
{
	char scope[16] = "";

	if (read_text("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope) == 0 && atoi(scope) > 0)
		refuse(r, "not permitted to trace it: Yama's kernel.yama.ptrace_scope "
		       "is %d; run ksm-run as root%s", atoi(scope),
		       atoi(scope) == 1 ? ", or set the sysctl to 0" : "");
	else
		refuse(r, "not permitted to trace it: it belongs to another user or is "
		       "not dumpable; run ksm-run as root");
}

/* /proc/PID/task/TID/NAME: the files of the thread that lives (pin.h). */
static void thread_path(char *path, size_t len, const struct pin *pin, const char *name)
{
	snprintf(path, len, "/proc/%d/task/%d/%s", (int)pin->pid, (int)pin->tid, name);
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

	thread_path(path, sizeof path, pin, "status");
	if (read_text(path, text, sizeof text) || proc_stat_read(pin->tid, &ps)) {
		refuse(r, "its /proc files cannot be read");
		*maybe_ended = true;
		return false;
	}
	if ((p = strstr(text, "\nTracerPid:")))
		tracer = strtoll(p + 11, NULL, 10);
	if (pin->pid == getpid()) {
		refuse(r, "that is ksm-run itself");
		return false;
	}
	if (ps.flags & PROC_PF_KTHREAD) {
		refuse(r, "it is a kernel thread: it has no memory of its own");
		return false;
	}
	if (tracer > 0) {
		refuse(r, "it is traced by process %lld (a debugger or strace): left alone", tracer);
		return false;
	}
	if ((p = strstr(text, "\nState:")) && (p = strpbrk(p + 7, "RSDTtZXIPK")) && strchr("TtZX", *p)) {
		refuse(r, "%s", *p == 'Z' || *p == 'X' ? "it has ended (a zombie)" :
		       "it is stopped (state T): it was not touched; continue it first");
		*maybe_ended = *p == 'Z' || *p == 'X';
		return false;
	}
	/* libksmenable in it: its own settings choose what merges. */
	if (proc_maps_mention(pin->tid, "/libksmenable.so")) {
		refuse(r, "libksmenable is loaded in it: its own settings (KSM_ENABLE_*) choose what merges, "
		       "and an attach would override them; left alone");
		return false;
	}
	if (!strstr(text, "\nVmSize:")) {
		refuse(r, "it has no memory (it is exiting)");
		*maybe_ended = true;
		return false;
	}
	thread_path(path, sizeof path, pin, "ksm_stat");
	if (ksm_stat_parse(path, &st) == 0) {
		r->merge_any = st.merge_any;
		r->mergeable = st.mergeable;
	}
	if (plan->process_wide && r->merge_any == (plan->disable ? 0 : 1)) {
		r->outcome = TARGET_ALREADY;
		return false;
	}
	if (plan->process_wide && !target_kernel_has_prctl()) {
		refuse(r, "this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4): choose regions with "
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
	ps->failed = false;
	if (plan->process_wide && plan->disable)
		return 0;
	if (!(ps->r = malloc((size_t)ps->cap * sizeof *ps->r)) || !(buf = malloc(MAPS_BUF))) {
		refuse(r, "out of memory");
		return -1;
	}
	thread_path(path, sizeof path, pin, "smaps");
	ret = maps_for_each(path, buf, MAPS_BUF, plan_region, ps);
	free(buf);
	if (ret < 0 && (errno == EACCES || errno == EPERM)) {
		not_permitted(r);       /* smaps asks for the right to trace it, as ptrace does */
		return -1;
	}
	if (ret < 0) {
		refuse(r, "its smaps cannot be read: %s", strerror(errno));
		return -1;
	}
	if (ps->failed) {
		refuse(r, "out of memory for its %d regions: nothing was done", ps->n);
		return -1;
	}
	return 0;
}

/* In the stop: drops the ranges of B that are no longer the regions judged. */
struct batch {
	struct range *r;
	int n;
};

static void keep_unchanged(const struct pin *pin, struct batch *ps)
{
	struct recheck rc = { ps->r, ps->n, NULL };
	char path[80], *buf;
	int kept = 0;

	if (!ps->n)
		return;
	thread_path(path, sizeof path, pin, "maps");
	if (!(rc.still = calloc((size_t)ps->n, sizeof *rc.still)) || !(buf = malloc(MAPS_BUF))) {
		free(rc.still);
		ps->n = 0;               /* unknown: nothing is advised */
		return;
	}
	if (maps_for_each(path, buf, MAPS_BUF, recheck_region, &rc) < 0)
		memset(rc.still, 0, (size_t)ps->n * sizeof *rc.still);
	for (int i = 0; i < ps->n; i++)
		if (rc.still[i])
			ps->r[kept++] = ps->r[i];
	ps->n = kept;
	free(buf);
	free(rc.still);
}

/* The stop, the pin, and the filters the calls are judged by. */
struct stop {
	struct inject *in;
	const struct pin *pin;
	struct seccomp_filters sf;
	int signals_seen;               /* in->signals_passed when the pin was last checked */
};

/* Is it still what was judged?  False (said in R) when not. */
static bool still_pinned(const struct pin *pin, struct target_result *r)
{
	enum pin_verdict v = pin_check(pin);

	if (v == PIN_SAME)
		return true;
	refuse(r, "%s", pin_reason(v));
	if (v == PIN_ENDED)
		r->outcome = TARGET_ENDED;
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

/*
 * One call in the stopped thread, if its seccomp policy lets it through.
 * A signal delivered to it meanwhile ran its code (a handler may have
 * changed its credentials, as setuid(2) in another thread does through
 * one): the pin is checked again first.
 */
static int call(struct stop *sp, long nr, const long a[6], const char *name, long *res,
		struct target_result *r)
{
	struct inject *in = sp->in;
	struct seccomp_call sc = { (int32_t)nr, AUDIT_ARCH_X86_64, in->insn + 2, { 0 } };

	if (in->signals_passed != sp->signals_seen) {
		sp->signals_seen = in->signals_passed;
		if (!still_pinned(sp->pin, r))
			return -ESTALE;
	}
	for (int i = 0; i < 6; i++)
		sc.args[i] = (uint64_t)a[i];
	if (seccomp_allows(&sp->sf, &sc, name, r->why, sizeof r->why))
		return -EPERM;
	r->calls++;
	return inject_syscall(in, nr, a, res, r->why, sizeof r->why);
}

/*
 * The calls, in the stop.  Prctl form, enabling: the flag, then the
 * secret-like regions unmergeable again; if that fails the flag goes back
 * off, so that a secret never stays mergeable.
 */
static void make_calls(struct inject *in, const struct pin *pin, const struct target_plan *plan,
		       bool with_prctl, struct batch *ps, struct target_result *r)
{
	struct stop sp = { in, pin, { 0 }, in->signals_passed };
	long res = 0;
	int madv = plan->disable ? MADV_UNMERGEABLE : MADV_MERGEABLE;

	seccomp_load(in->tid, &sp.sf);
	keep_unchanged(pin, ps);
	if (with_prctl) {
		long a[6] = { PR_SET_MEMORY_MERGE, plan->disable ? 0 : 1, 0, 0, 0, 0 };

		if (call(&sp, SYS_prctl, a, "prctl(PR_SET_MEMORY_MERGE)", &res, r))
			goto refused;
		if (res < 0) {
			refuse(r, "prctl(PR_SET_MEMORY_MERGE) failed in it: %s", strerror((int)-res));
			goto out;
		}
	}
	if (plan->process_wide)
		madv = MADV_UNMERGEABLE;
	for (int i = 0, first; i < ps->n; i++) {
		/* Regions that touch are one call: the kernel applies it to each. */
		for (first = i; i + 1 < ps->n && ps->r[i + 1].start == ps->r[i].end; i++)
			;
		long a[6] = { (long)ps->r[first].start, (long)(ps->r[i].end - ps->r[first].start), madv, 0, 0, 0 };
		int err = call(&sp, SYS_madvise, a, madv == MADV_MERGEABLE ? "madvise(MADV_MERGEABLE)" :
			       "madvise(MADV_UNMERGEABLE)", &res, r);

		if (!err && res < 0 && res != -ENOMEM) {
			snprintf(r->why, sizeof r->why, "madvise failed in it: %s", strerror((int)-res));
			err = (int)res;
		}
		if (err == -ESTALE)     /* not what was judged any more: nothing more is done in it */
			goto refused;
		if (err && plan->process_wide) {
			long off[6] = { PR_SET_MEMORY_MERGE, 0, 0, 0, 0, 0 };
			char was[sizeof r->why];

			snprintf(was, sizeof was, "%s", r->why);
			call(&sp, SYS_prctl, off, "prctl(PR_SET_MEMORY_MERGE)", &res, r);
			snprintf(r->why, sizeof r->why, "its secret-like memory could not be kept out (%.160s): "
				 "the process-wide flag was switched off again", was);
			r->outcome = TARGET_REFUSED;
			goto out;
		}
		if (err)
			goto refused;
		if (res == 0) {
			r->regions += i - first + 1;
			r->bytes += ps->r[i].end - ps->r[first].start;
		}
	}
	r->outcome = TARGET_DONE;
	goto out;
refused:
	if (r->outcome != TARGET_ENDED)
		r->outcome = TARGET_REFUSED;
out:
	seccomp_free(&sp.sf);
}

/* A stop signal pending for ksm-run (plan->stops), or 0. */
static int stop_signal(const struct target_plan *plan)
{
	return plan->stops ? stop_signal_pending(plan->stops) : 0;
}

/*
 * The stops, one after another: in each, the pin is checked before
 * anything is done; between them a stop signal ends the attach.
 * MAYBE_ENDED: a refusal that may be its end on the way.
 */
static void stops(struct pin *pin, const struct target_plan *plan, struct plan_state *ps,
		  struct target_result *r, bool *maybe_ended)
{
	struct inject in;
	int err;

	/* In stops of BATCH_REGIONS regions at most; the prctl and the first secrets in the first. */
	for (int first = 0; first == 0 || first < ps->n; first += BATCH_REGIONS) {
		struct batch b = { ps->r ? ps->r + first : NULL, ps->n - first < BATCH_REGIONS ? ps->n - first : BATCH_REGIONS };
		int sig = stop_signal(plan);
		double stop;

		if (sig) {
			const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";

			if (first) {
				refuse(r, "ksm-run got %s after %d of its %d regions: the rest were left as they were",
				       name, first, ps->n);
			} else {
				r->outcome = TARGET_NOT_DONE;
				snprintf(r->why, sizeof r->why, "ksm-run got %s first: left alone", name);
			}
			return;
		}
		if ((err = inject_begin(&in, r->tid, r->why, sizeof r->why))) {
			r->outcome = TARGET_REFUSED;
			if (err == -EINTR && (sig = stop_signal(plan)))
				snprintf(r->why, sizeof r->why, "ksm-run got %s before it stopped: left alone",
					 sig == SIGINT ? "SIGINT" : "SIGTERM");
			else if (err == -EPERM && still_pinned_soon(pin, r))
				not_permitted(r);
			*maybe_ended = err == -EPERM || err == -ESRCH;
			/* An exec, or its end, named as such. */
			if ((err == -ESTALE || err == -ESRCH) && still_pinned(pin, r) && err == -ESRCH)
				refuse(r, "the thread it was stopped in ended during the attach; try again");
			return;
		}
		if (still_pinned(pin, r))
			make_calls(&in, pin, plan, plan->process_wide && first == 0, &b, r);
		err = inject_end(&in);
		stop = inject_stopped_for(&in);
		r->stopped_s += stop;
		if (stop > r->longest_stop_s)
			r->longest_stop_s = stop;
		r->stops++;
		r->restarted |= in.restarted;
		if (err == -ESRCH || err == -ESTALE || (r->outcome == TARGET_REFUSED && pin_ended(pin, 0))) {
			if (still_pinned(pin, r))
				refuse(r, "the thread it was stopped in ended during the attach; try again");
			return;
		}
		if (err && r->outcome != TARGET_REFUSED && r->outcome != TARGET_ENDED)
			refuse(r, "it could not be let go cleanly: %s", strerror(-err));
		if (r->outcome == TARGET_REFUSED || r->outcome == TARGET_ENDED)
			return;
	}
}

void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	struct plan_state ps = { 0 };
	struct ksmenable_stat st;
	struct proc_stat comm;
	struct pin pin;
	char path[80];
	bool maybe_ended = false;

	memset(r, 0, sizeof *r);
	r->pid = pid;
	r->merge_any = r->mergeable = -1;
	snprintf(r->comm, sizeof r->comm, "?");
	if (!inject_supported()) {
		refuse(r, "--attach is supported on x86_64 only");
		return;
	}
	/* Pinned before anything is read of it: what is judged is what the pin holds. */
	if (pin_take(&pin, pid)) {
		if (errno == EINVAL)
			refuse(r, "%d is a thread of another process, not a process: give its process (Tgid)", (int)pid);
		else
			r->outcome = TARGET_ENDED;
		return;
	}
	r->tid = pin.tid;
	if (proc_stat_read(pid, &comm) == 0)
		snprintf(r->comm, sizeof r->comm, "%s", comm.comm);
	if (stop_signal(plan)) {
		stops(&pin, plan, &ps, r, &maybe_ended);        /* says "not done" */
		goto done;
	}
	if (!may_touch(&pin, plan, r, &maybe_ended))
		goto done;
	if (plan_ranges(&pin, plan, &ps, r)) {
		maybe_ended = true;     /* an smaps that cannot be read, of a process on its way out */
		goto done;
	}
	if (!plan->process_wide && ps.n == 0) {
		r->outcome = TARGET_ALREADY;
		goto done;
	}
	stops(&pin, plan, &ps, r, &maybe_ended);
done:
	/* Whatever was said on the way, a process that ended has ended (its pidfd says so). */
	if (r->outcome == TARGET_REFUSED && pin_ended(&pin, maybe_ended ? 250 : 0))
		r->outcome = TARGET_ENDED;
	free(ps.r);
	thread_path(path, sizeof path, &pin, "ksm_stat");
	if (r->outcome != TARGET_ENDED && ksm_stat_parse(path, &st) == 0) {
		r->merge_any = st.merge_any;
		r->mergeable = st.mergeable;
	}
	pin_release(&pin);
}
