/*
 * target.c: one process, enabled or disabled from outside.
 *
 * Everything that can be judged without stopping it is judged first, from
 * /proc (traced by someone, stopped, a kernel thread, libksmenable inside,
 * already so); its regions are read from smaps before the stop too, so the
 * stop lasts only as long as the calls.  The calls themselves, over short
 * stops, and the reading back of what they did are stops.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "attach/inject.h"
#include "attach/stops.h"
#include "attach/target.h"
#include "common/files.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "kernel_abi.h"
#include "ksmstat.h"
#include "maps.h"

#define MAX_REGIONS (1 << 20)           /* far above vm.max_map_count's default of 65530 */
#define MAPS_BUF (1 << 20)

bool target_kernel_has_prctl(void)
{
	static int known = -1;

	if (known < 0)
		known = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) >= 0;
	return known;
}

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

	if (p->process_wide && p->disable)
		want = g->mergeable == 1 && g->ksm_kb != 0;    /* the flag's clearing unmerges the rest at no cost */
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
void target_not_permitted(struct target_result *r)
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
	ps->matched = 0;
	ps->failed = false;
	if (!(ps->r = malloc((size_t)ps->cap * sizeof *ps->r)) || !(buf = malloc(MAPS_BUF))) {
		refuse(r, "out of memory");
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	ret = maps_for_each(path, buf, MAPS_BUF, plan_region, ps);
	free(buf);
	if (ret < 0 && (errno == EACCES || errno == EPERM)) {
		target_not_permitted(r);       /* smaps asks for the right to trace it, as ptrace does */
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

void target_apply(pid_t pid, const struct target_plan *plan, struct target_result *r)
{
	struct plan_state ps = { 0 };

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
		/* Nothing to do: as it should be already, or nothing was chosen at all. */
		r->outcome = ps.matched ? TARGET_ALREADY : TARGET_NONE_MATCHED;
		goto done;
	}
	r->tid = pick_thread(pid);
	stops_run(pid, plan, &ps, r);
done:
	stops_read_back(pid, plan, &ps, r);
	free(ps.r);
}
