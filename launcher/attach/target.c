/*
 * target.c: one process, enabled or disabled from outside.
 *
 * Everything that can be judged without stopping it is judged first, from
 * /proc (traced by someone, stopped, a kernel thread, libksmenable inside,
 * already so); its regions are read from smaps before the stop too, so the
 * stop lasts only as long as the calls.  In the stop, /proc/PID/maps is
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
#include "attach/restart.h"
#include "attach/seccomp.h"
#include "attach/target.h"
#include "common/files.h"
#include "common/parse.h"
#include "common/procfs.h"
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

/* The /proc checks; false (with the reason) when the process is to be left alone. */
static bool may_touch(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	char path[64], text[4096], *p;
	long long tracer = 0;
	struct ksmenable_stat st;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_text(path, text, sizeof text)) {
		refuse(r, "it is gone");
		return false;
	}
	if ((p = strstr(text, "\nTracerPid:")))
		tracer = strtoll(p + 11, NULL, 10);
	if (pid == getpid()) {
		refuse(r, "that is ksm-run itself");
		return false;
	}
	if (tracer > 0) {
		refuse(r, "it is traced by process %lld (a debugger or strace): left alone", tracer);
		return false;
	}
	if ((p = strstr(text, "\nState:")) && (p = strpbrk(p + 7, "RSDTtZXIPK")) && strchr("TtZX", *p)) {
		refuse(r, "%s", *p == 'Z' || *p == 'X' ? "it has ended (a zombie)" :
		       "it is stopped (state T): it was not touched; continue it first");
		return false;
	}
	/* libksmenable in it: its own settings choose what merges. */
	if (proc_maps_mention(pid, "/libksmenable.so")) {
		refuse(r, "libksmenable is loaded in it: its own settings (KSM_ENABLE_*) choose what merges, "
		       "and an attach would override them; left alone");
		return false;
	}
	if (!strstr(text, "\nVmSize:")) {
		refuse(r, "it is a kernel thread: it has no memory of its own");
		return false;
	}
	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
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

/* The thread that makes the calls: the main one, unless it has ended. */
static pid_t pick_thread(pid_t pid)
{
	char path[64];
	struct dirent *e;
	long long tid;
	pid_t found = pid;
	DIR *d;

	if (proc_running(pid))
		return pid;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return pid;
	while ((e = readdir(d)))
		if (!parse_ll(e->d_name, 1, INT_MAX, &tid) && proc_running((pid_t)tid)) {
			found = (pid_t)tid;
			break;
		}
	closedir(d);
	return found;
}

static void read_comm(pid_t pid, char *comm, size_t len)
{
	struct proc_stat st;

	snprintf(comm, len, "%s", proc_stat_read(pid, &st) ? "?" : st.comm);
}

/* Reads the regions to act on; -1 (said in R) when they cannot be. */
static int plan_ranges(pid_t pid, const struct target_plan *plan, struct plan_state *ps,
		       struct target_result *r)
{
	char path[64], *buf;
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
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
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

static void keep_unchanged(pid_t pid, struct batch *ps)
{
	struct recheck rc = { ps->r, ps->n, NULL };
	char path[64], *buf;
	int kept = 0;

	if (!ps->n)
		return;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
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

/* Does its ksm_stat say the process-wide flag is WANT?  1 yes, 0 no, -1 unknown. */
static int merge_flag_is(pid_t pid, int want)
{
	char path[64];
	struct ksmenable_stat st;

	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
	if (ksm_stat_parse(path, &st) || st.merge_any < 0)
		return -1;
	return st.merge_any == want;
}

/* One call in the stopped thread, if its seccomp policy lets it through. */
static int call(struct inject *in, const struct seccomp_filters *sf, long nr, const long a[6],
		const char *name, long *res, struct target_result *r)
{
	struct seccomp_call sc = { (int32_t)nr, AUDIT_ARCH_X86_64, in->insn + 2, { 0 } };

	for (int i = 0; i < 6; i++)
		sc.args[i] = (uint64_t)a[i];
	if (seccomp_allows(sf, &sc, name, r->why, sizeof r->why))
		return -EPERM;
	r->calls++;
	return inject_syscall(in, nr, a, res, r->why, sizeof r->why);
}

/*
 * The calls, in the stop.  Prctl form, enabling: the flag, then the
 * secret-like regions unmergeable again; if that fails the flag goes back
 * off, so that a secret never stays mergeable.
 */
static void make_calls(struct inject *in, const struct target_plan *plan, bool with_prctl,
		       struct batch *ps, struct target_result *r)
{
	struct seccomp_filters sf;
	long res = 0;
	int madv = plan->disable ? MADV_UNMERGEABLE : MADV_MERGEABLE;

	seccomp_load(in->tid, &sf);
	keep_unchanged(r->pid, ps);
	if (with_prctl) {
		long a[6] = { PR_SET_MEMORY_MERGE, plan->disable ? 0 : 1, 0, 0, 0, 0 };

		/* Until its ksm_stat agrees: a detach is done when the flag reads off. */
		for (int tries = 0; tries == 0 || (tries < 3 && merge_flag_is(r->pid, !plan->disable) == 0); tries++) {
			if (call(in, &sf, SYS_prctl, a, "prctl(PR_SET_MEMORY_MERGE)", &res, r))
				goto refused;
			if (res < 0) {
				refuse(r, "prctl(PR_SET_MEMORY_MERGE) failed in it: %s", restart_strerror(res));
				goto out;
			}
		}
	}
	if (plan->process_wide)
		madv = MADV_UNMERGEABLE;
	for (int i = 0, first; i < ps->n; i++) {
		/* Regions that touch are one call: the kernel applies it to each. */
		for (first = i; i + 1 < ps->n && ps->r[i + 1].start == ps->r[i].end; i++)
			;
		long a[6] = { (long)ps->r[first].start, (long)(ps->r[i].end - ps->r[first].start), madv, 0, 0, 0 };
		int err = call(in, &sf, SYS_madvise, a, madv == MADV_MERGEABLE ? "madvise(MADV_MERGEABLE)" :
			       "madvise(MADV_UNMERGEABLE)", &res, r);

		if (!err && res < 0 && res != -ENOMEM) {
			snprintf(r->why, sizeof r->why, "madvise failed in it: %s", restart_strerror(res));
			err = (int)res;
		}
		if (err && plan->process_wide) {
			long off[6] = { PR_SET_MEMORY_MERGE, 0, 0, 0, 0, 0 };
			char was[sizeof r->why];

			snprintf(was, sizeof was, "%s", r->why);
			call(in, &sf, SYS_prctl, off, "prctl(PR_SET_MEMORY_MERGE)", &res, r);
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
	r->outcome = TARGET_REFUSED;
out:
	seccomp_free(&sf);
}

/* It died under us (killed, or another thread ended it): a clean refusal. */
static void ended(struct target_result *r)
{
	refuse(r, "it ended during the attach");
	r->gone = true;
}

void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	struct plan_state ps = { 0 };
	struct ksmenable_stat st;
	struct inject in;
	char path[64];
	int err;

	memset(r, 0, sizeof *r);
	r->pid = pid;
	r->merge_any = r->mergeable = -1;
	read_comm(pid, r->comm, sizeof r->comm);
	if (!inject_supported()) {
		refuse(r, "--attach is supported on x86_64 only");
		return;
	}
	if (!may_touch(pid, plan, r) || plan_ranges(pid, plan, &ps, r))
		goto done;
	if (!plan->process_wide && ps.n == 0) {
		r->outcome = TARGET_ALREADY;
		goto done;
	}
	r->tid = pick_thread(pid);
	/* In stops of BATCH_REGIONS regions at most; the prctl and the first secrets in the first. */
	for (int first = 0; first == 0 || first < ps.n; first += BATCH_REGIONS) {
		struct batch b = { ps.r ? ps.r + first : NULL, ps.n - first < BATCH_REGIONS ? ps.n - first : BATCH_REGIONS };
		double stop;

		if ((err = inject_begin(&in, r->tid, r->why, sizeof r->why))) {
			r->outcome = TARGET_REFUSED;
			if (err == -EPERM)
				not_permitted(r);
			else if (err == -ESRCH || !proc_running(pid))
				ended(r);
			goto done;
		}
		make_calls(&in, plan, plan->process_wide && first == 0, &b, r);
		err = inject_end(&in);
		stop = inject_stopped_for(&in);
		r->stopped_s += stop;
		if (stop > r->longest_stop_s)
			r->longest_stop_s = stop;
		r->stops++;
		r->restarted |= in.restarted;
		if (err == -ESRCH || (r->outcome == TARGET_REFUSED && !proc_running(pid)))
			ended(r);
		else if (err && r->outcome != TARGET_REFUSED)
			refuse(r, "it could not be let go cleanly: %s", strerror(-err));
		if (r->outcome == TARGET_REFUSED)
			goto done;
	}
done:
	free(ps.r);
	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
	if (ksm_stat_parse(path, &st) == 0) {
		r->merge_any = st.merge_any;
		r->mergeable = st.mergeable;
	}
}
