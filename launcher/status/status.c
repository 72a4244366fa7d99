/*
 * status.c: `ksm-run --status`, read-only and usable without root: the KSM
 * state now, what this kernel supports (probed, not guessed from the
 * version), the processes with the most merged pages, and any knob state
 * left behind by a killed ksm-run.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/kfeature.h"
#include "common/parse.h"
#include "common/text.h"
#include "host/knobs.h"
#include "common/jsonw.h"
#include "host/counters.h"
#include "host/groups.h"
#include "host/hoststate.h"
#include "host/managers.h"
#include "host/statefile.h"
#include "status/status.h"
#include "host/topprocs.h"
#include "kernel_abi.h"
#include "maps.h"
#include "policy/agentview.h"
#include "ptrace/target.h"
#include "selector.h"

/* Run by the exec probe below: did the merge flag survive exec? */
int status_probe_exec_inherit(void)
{
	return prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1 ? 0 : 1;
}

static const char *probe_exec(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return "unknown (fork failed)";
	if (pid == 0) {
		if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0))
			_exit(2);
		execl("/proc/self/exe", STATUS_PROBE_NAME, (char *)NULL);
		_exit(3);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return "unknown";
	switch (WEXITSTATUS(st)) {
	case 0: return "yes (the prctl flag survives exec: static binaries are covered)";
	case 1: return "no (kernel before 6.7: static binaries are not covered)";
	default: return "unknown";
	}
}

/* The machine's architecture, as uname -m says it. */
static const char *machine(void)
{
	static struct utsname u;

	return u.machine[0] || uname(&u) == 0 ? u.machine : "unknown";
}

static const char *probe_anon_names(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r;

	if (p == MAP_FAILED)
		return "unknown";
	r = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, (unsigned long)page,
		  (unsigned long)"ksm-run-probe");
	munmap(p, (size_t)page);
	return r == 0 ? "yes" : "no (kernel without CONFIG_ANON_VMA_NAME: anon:GLOB never matches)";
}

static void ksm_stat_fields(char *out, size_t len)
{
	char buf[1024], *line, *save = NULL;
	size_t n = 0;

	out[0] = '\0';
	if (read_text("/proc/self/ksm_stat", buf, sizeof buf)) {
		snprintf(out, len, "none (no /proc/PID/ksm_stat)");
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line && n < len; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, ": ")] = '\0';
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", line);
	}
}

struct kept {
	long long kept_kb, secret_kb;
};

/* Anonymous memory of a private region that is not mergeable, and secret-like. */
static int count_kept(const struct region *r, void *arg)
{
	struct kept *k = arg;

	if (r->cls == REGION_SHARED || r->cls == REGION_SPECIAL || r->anon_kb <= 0 || r->vmflags < 0)
		return 0;
	if (region_is_secret(r))
		k->secret_kb += r->anon_kb;
	else if (!(r->vmflags & VMF_MG))
		k->kept_kb += r->anon_kb;
	return 0;
}

/* From smaps: what a merging process keeps out (-1 each when unreadable). */
static void read_kept(int pid, struct kept *k)
{
	char path[64], buf[16384];

	snprintf(path, sizeof path, "/proc/%d/smaps", pid);
	k->kept_kb = k->secret_kb = 0;
	if (maps_for_each(path, buf, sizeof buf, count_kept, k) < 0)
		k->kept_kb = k->secret_kb = -1;
}

static void top_processes(long long page)
{
	struct top_process *t;
	int n = top_processes_collect(&t);

	printf("\nprocesses with the most merged pages:\n");
	if (!n)
		printf("  none%s\n", geteuid() ? " readable (other users' ksm_stat needs root)" : "");
	else
		printf("  %7s %-16s %12s %14s %16s %14s\n", "PID", "COMM", "MERGED KiB", "PROFIT KiB",
		       "KEPT OUT KiB", "SECRET KiB");
	for (int i = 0; i < n && i < 10; i++) {
		struct kept k;
		char profit[24] = "n/a";        /* a kernel without ksm_process_profit (before 6.4) */

		read_kept(t[i].pid, &k);
		if (t[i].profit != LLONG_MIN)
			snprintf(profit, sizeof profit, "%lld", t[i].profit / 1024);
		printf("  %7d %-16s %12lld %14s %16lld %14lld\n", t[i].pid, printable(t[i].comm),
		       t[i].merging * page / 1024, profit, k.kept_kb, k.secret_kb);
	}
	if (n)
		printf("  (kept out: anonymous memory of private regions that is not mergeable, by the\n"
		       "   program's own MADV_UNMERGEABLE or the library's lists; secret-like: wiped on fork,\n"
		       "   or locked and kept out of core dumps; from smaps, -1 when unreadable)\n");
	free(t);
}

/* Per cgroup, beside general_profit (GP, bytes; LLONG_MIN unknown). */
static void group_figures(long long gp)
{
	struct cgroup_groups gs;

	printf("\nper cgroup (merged pages, ksm_process_profit and candidate memory of its processes):\n");
	if (groups_collect(&gs))
		printf("  unknown (cannot read /proc)\n");
	else
		groups_text(stdout, &gs, gp, 20);
	groups_free(&gs);
}

/* Who tunes, in which phase, every registered instance, and the saved knobs. */
static void tuning_text(void)
{
	static struct hoststate st;
	char why[256], mgr[128];
	int r = hoststate_peek(&st, why, sizeof why), live = 0;

	printf("\ntuning:\n");
	if (r == -ENOENT) {
		printf("  no ksm-run instance is registered\n");
	} else if (r == -EINVAL) {
		printf("  the state file is CORRUPT (%s): not used; `ksm-run --restore` refuses it\n", why);
	} else if (r < 0) {
		printf("  cannot read %s/state: %s%s\n", STATE_DIR, strerror(-r), r == -EACCES ? " (it is root's)" : "");
	} else {
		for (int i = 0; i < st.nusers; i++)
			live += user_alive(&st.users[i]);
		if (st.tuner)
			printf("  tuner:    pid %d, phase %s\n", (int)st.tuner, held_phase_name(st.tuner_phase));
		else
			printf("  tuner:    none\n");
		printf("  %7s %-8s %-6s %-20s %s\n", "PID", "KIND", "TUNES", "SINCE", "COMMAND");
		for (int i = 0; i < st.nusers; i++) {
			const struct state_user *u = &st.users[i];
			time_t since = (time_t)u->since;
			char when[32] = "-";
			struct tm tm;
			if (since && localtime_r(&since, &tm))
				strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
			printf("  %7d %-8s %-6s %-20s %s%s\n", (int)u->pid, u->kind == USER_DAEMON ? "daemon" : "command",
			       u->pid == st.tuner ? "yes" : u->wants_tuning ? "no" : "never", when, printable(u->name),
			       user_alive(u) ? "" : "  (gone)");
		}
		if (!live)
			printf("  saved knobs LEFT BEHIND by a killed ksm-run; `ksm-run --restore` puts them back:");
		else
			printf("  saved knobs (restored when the last ends):");
		for (int i = 0; i < st.saved.n; i++)
			printf(" %s=%s", st.saved.k[i].name, st.saved.k[i].value);
		printf("\n");
	}
	if (other_manager(mgr, sizeof mgr))
		printf("  another KSM manager runs: %s\n", mgr);
}

void status_json_unavailable(void)
{
	struct jsonw w;

	jw_start(&w, stdout);
	jw_object(&w, NULL);
	jw_bool(&w, "available", false);
	jw_finish(&w);
}

void status_json_processes(struct jsonw *w, const struct top_process *t, int n, bool kept)
{
	long long page = sysconf(_SC_PAGESIZE);

	jw_array(w, "processes");
	for (int i = 0; i < n && i < JSON_TOP_PROCESSES; i++) {
		struct kept k;

		jw_object(w, NULL);
		jw_ll(w, "pid", t[i].pid);
		jw_string(w, "comm", t[i].comm);
		jw_ll(w, "merged_bytes", t[i].merging * page);
		jw_ll(w, "profit_bytes", t[i].profit);
		if (kept) {
			read_kept(t[i].pid, &k);
			jw_ll(w, "kept_out_bytes", k.kept_kb < 0 ? LLONG_MIN : k.kept_kb * 1024);
			jw_ll(w, "secret_bytes", k.secret_kb < 0 ? LLONG_MIN : k.secret_kb * 1024);
		}
		jw_end(w);
	}
	jw_end(w);
}

void status_json_tuning(struct jsonw *w, int r, const struct hoststate *st)
{
	jw_object(w, "tuning");
	jw_string(w, "state", r == -ENOENT ? "none" : r == -EINVAL ? "corrupt" : r < 0 ? "unreadable" : "ok");
	if (r == 0 && st->tuner) {
		jw_object(w, "tuner");
		jw_ll(w, "pid", st->tuner);
		jw_string(w, "phase", held_phase_key(st->tuner_phase));
		jw_end(w);
	} else {
		jw_null(w, "tuner");
	}
	jw_array(w, "instances");
	for (int i = 0; r == 0 && i < st->nusers; i++) {
		const struct state_user *u = &st->users[i];

		jw_object(w, NULL);
		jw_ll(w, "pid", u->pid);
		jw_string(w, "kind", u->kind == USER_DAEMON ? "daemon" : "command");
		jw_ll(w, "since", u->since);
		jw_bool(w, "tunes", u->pid == st->tuner);
		jw_bool(w, "wants_tuning", u->wants_tuning);
		jw_bool(w, "alive", user_alive(u));
		jw_string(w, "command", u->name);
		jw_end(w);
	}
	jw_end(w);
}

static void status_json(void)
{
	static const char *const counters[] = {
		"general_profit", "pages_shared", "pages_sharing", "pages_unshared", "pages_volatile",
		"ksm_zero_pages", "full_scans", "pages_scanned", "pages_skipped", "stable_node_chains",
		"stable_node_dups",
	};
	static struct hoststate st;
	struct cgroup_groups gs;
	struct knob_set knobs;
	struct top_process *t;
	struct jsonw w;
	struct sys_sample now;
	char path[128], val[64], why[256], mgr[128];
	long long v;
	int n, r;

	knobs_read_all(&knobs);
	jw_start(&w, stdout);
	jw_object(&w, NULL);
	jw_object(&w, "knobs");
	for (int i = 0; i < knobs.n; i++)
		jw_knob(&w, knobs.k[i].name, knobs.k[i].value);
	jw_end(&w);
	counters_sample(&now, 0);
	jw_object(&w, "counters");
	for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", KSM_SYSFS_DIR, counters[i]);
		if (read_text(path, val, sizeof val) || parse_ll(val, LLONG_MIN + 1, LLONG_MAX, &v))
			continue;
		jw_ll(&w, counters[i], v);
	}
	/* Where the kernel lacks the file, general_profit as computed ("general_profit_computed"). */
	if (now.profit_computed)
		jw_ll(&w, "general_profit", sys_value(&now, "general_profit"));
	jw_end(&w);
	jw_bool(&w, "general_profit_computed", now.profit_computed);
	jw_object(&w, "kernel");
	for (int f = 0; f < KF_COUNT; f++)
		jw_bool(&w, kfeature_info(f)->key, kfeature_present(f));
	jw_end(&w);
	jw_string(&w, "machine", machine());
	jw_bool(&w, "attach_supported", target_supported());
	r = hoststate_peek(&st, why, sizeof why);
	jw_bool(&w, "counters_left_over", counters_left_over_now());
	status_json_tuning(&w, r, &st);
	/* Inside "tuning", as before: the state saved for the knobs, and who else manages KSM. */
	if (r == 0) {
		jw_object(&w, "saved_knobs");
		for (int i = 0; i < st.saved.n; i++)
			jw_knob(&w, st.saved.k[i].name, st.saved.k[i].value);
		jw_end(&w);
	} else {
		jw_null(&w, "saved_knobs");
	}
	jw_string(&w, "other_manager", other_manager(mgr, sizeof mgr));
	jw_end(&w);
	n = top_processes_collect(&t);
	status_json_processes(&w, t, n, true);
	free(t);
	groups_json(&w, groups_collect(&gs) ? NULL : &gs);
	groups_free(&gs);
	agent_status_json(&w);
	jw_finish(&w);
}

int status_main(bool json)
{
	static const char *const counters[] = {
		"general_profit", "pages_shared", "pages_sharing", "pages_unshared", "pages_volatile",
		"ksm_zero_pages", "full_scans", "pages_scanned", "pages_skipped", "stable_node_chains",
		"stable_node_dups",
	};
	struct knob_set knobs;
	char buf[4096], fields[256];
	long long page = sysconf(_SC_PAGESIZE), gp;
	struct sys_sample now;

	if (access(KSM_SYSFS_DIR, F_OK)) {
		if (json)
			status_json_unavailable();
		else
			printf("KSM: not available (no %s: kernel without CONFIG_KSM)\n", KSM_SYSFS_DIR);
		return 0;
	}
	if (json) {
		status_json();
		return 0;
	}
	knobs_read_all(&knobs);
	printf("KSM knobs:");
	for (int i = 0; i < knobs.n; i++)
		printf(" %s=%s", knobs.k[i].name, knobs.k[i].value);
	printf("\nKSM counters:");
	for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
		snprintf(buf, sizeof buf, "%s/%s", KSM_SYSFS_DIR, counters[i]);
		char val[64];
		if (!read_text(buf, val, sizeof val))
			printf(" %s=%s", counters[i], val);
	}
	counters_sample(&now, 0);
	if ((gp = sys_value(&now, "general_profit")) != LLONG_MIN)
		printf("\ngeneral_profit: %lld KiB saved system-wide (after KSM's own metadata)%s", gp / 1024,
		       now.profit_computed ? ",\n  computed from the page counters: this kernel has no general_profit file" : "");
	if (counters_left_over_now())
		printf("\n  LEFT OVER: KSM is stopped (run=0), nothing merges now; the counters keep what was\n"
		       "  merged before it stopped, also for processes that have exited since");
	ksm_stat_fields(fields, sizeof fields);
	printf("\n\nkernel support (probed; where missing, the mainline kernel that brought it and what ksm-run does):\n");
	for (int f = 0; f < KF_COUNT; f++) {
		const struct kfeature_info *k = kfeature_info(f);
		if (kfeature_present(f))
			printf("  %s: yes\n", k->what);
		else if (k->since)
			printf("  %s: no (Linux %s+): %s\n", k->what, k->since, k->without);
		else
			printf("  %s: no: %s\n", k->what, k->without);
	}
	printf("  merge flag inherited across exec: %s\n", kfeature_present(KF_PRCTL) ? probe_exec() : "no");
	printf("  ksm_stat fields: %s\n", fields);
	printf("  named anonymous mappings: %s\n", probe_anon_names());
	printf("  knobs writable: %s\n", access(KSM_SYSFS_DIR "/run", W_OK) ? "no (needs root)" : "yes");
	printf("  --attach on this machine (%s): %s\n", machine(),
	       target_supported() ? "yes" : "no: ksm-run makes a target call the kernel on x86_64 and aarch64 only");
	top_processes(page);
	group_figures(gp);
	tuning_text();
	fflush(stdout);
	agent_status_print(stdout);
	return 0;
}
