/*
 * report.c: the report when the command ends, as text for people or as one
 * JSON object (one line, so a --report-file can collect many runs).  The
 * JSON keys are documented in ksm-run(1) and must stay stable.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/files.h"
#include "common/human.h"
#include "common/jsonw.h"
#include "common/kfeature.h"
#include "common/known.h"
#include "common/kpages.h"
#include "common/msg.h"
#include "common/text.h"
#include "host/knobs.h"
#include "follow/report.h"
#include "follow/survivors.h"
#include "follow/treegroups.h"
#include "follow/tree.h"

static const char *sig_name(int sig)
{
	static char buf[16];
	static const struct { int n; const char *s; } names[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" }, { SIGXCPU, "SIGXCPU" },
		{ SIGXFSZ, "SIGXFSZ" }, { SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" }, { SIGSYS, "SIGSYS" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].n == sig)
			return names[i].s;
	snprintf(buf, sizeof buf, "SIG%d", sig);
	return buf;
}

/* What enabled KSM in what was followed, as the report judges it. */
enum coverage { COVERED_UNKNOWN, COVERED_NONE, COVERED_LIBRARY, COVERED_PRCTL, COVERED_ATTACH };
/* The JSON report's covered_by (ksm-run(1), JSON keys). */
static const char *const coverage_names[] = {
	[COVERED_UNKNOWN] = "unknown", [COVERED_NONE] = "none", [COVERED_LIBRARY] = "library",
	[COVERED_PRCTL] = "prctl", [COVERED_ATTACH] = "attach",
};

struct figures {
	long long page;
	int nprocs;
	long long tree_peak, tree_profit, tree_peak_profit;
	double runtime, ksmd_cpu, ksmd_pct, mean_scan;
	long long scans;
	const struct proc_info *main;
	bool lib_loaded;
	enum coverage covered_by;
	long long kept_user, kept_program, kept_secret;   /* summed over exit lines */
	int kept_reporting;                               /* processes whose line said */
	bool left_over;                                   /* the first counters were stale */
	long long saved, candidate;                       /* bytes; saved LLONG_MIN: not counted */
	int listed, survivors;                            /* rows shown; processes still alive */
	int merged;                                       /* processes that merged 64 KiB or more */
	int ended, killed;                                /* by --end-survivors: signalled, of them KILLed */
};

static long long delta(const struct sampler *s, const char *name)
{
	long long a = sys_value(&s->first, name), b = sys_value(&s->last, name);

	return a == LLONG_MIN || b == LLONG_MIN ? LLONG_MIN : b - a;
}

/* Counters that only grow: left-over figures do not spoil their change. */
static bool ever_growing(const char *name)
{
	return !strcmp(name, "full_scans") || !strcmp(name, "pages_scanned") || !strcmp(name, "pages_skipped");
}

/*
 * A change worth showing: none (LLONG_MIN) from left-over start figures,
 * which ksmd drops once it runs; the difference would be that, not what
 * the command did.
 */
static long long shown_delta(const struct sampler *s, bool left_over, const char *name)
{
	return left_over && !ever_growing(name) ? LLONG_MIN : delta(s, name);
}

/*
 * The table folds the processes that merged next to nothing (most helpers
 * of a shell script): under the process-wide flag every glibc program
 * merges a couple of pages of its own data that are alike everywhere.
 */
#define FOLD_BELOW_BYTES (64 * 1024)

static bool listed(const struct report_opts *o, const struct proc_info *p, long long page)
{
	return o->all_processes || p->peak_merging * page >= FOLD_BELOW_BYTES;
}

/* The parent a process had when it merged: after a reparenting it is ksm-run. */
static pid_t shown_ppid(const struct proc_info *p)
{
	return p->merge_ppid ? p->merge_ppid : p->ppid;
}

/* Did the library say, in P's exit line, that it enabled KSM there (a mode, not none or off)? */
static bool library_enabled(const struct proc_info *p)
{
	return p->from_lib && p->mode[0] && strcmp(p->mode, "none") && strcmp(p->mode, "off");
}

/*
 * What the library said in the tree's processes: 1 that it enabled KSM in
 * every one that reported, -1 that it did not in some, 0 nothing.  Where
 * the kernel cannot say whether a process has the process-wide flag
 * (before 6.4), the main process's own word may be missing while its
 * children's are there (sh -c).
 */
static int library_word_of_tree(const struct sampler *s)
{
	int enabled = 0;

	for (int i = 0; i < s->nprocs; i++) {
		const struct proc_info *p = &s->procs[i];
		if (!p->from_lib)
			continue;
		if (!library_enabled(p))
			return -1;
		enabled++;
	}
	return enabled > 0;
}

static void compute(struct figures *fg, const struct report_opts *o, const struct sampler *s,
		    const struct report_subject *j)
{
	memset(fg, 0, sizeof *fg);
	fg->page = sysconf(_SC_PAGESIZE);
	fg->runtime = j->end - j->start;
	/* A kernel without ksm_process_profit (Linux 6.1): unknown, not 0. */
	fg->tree_profit = fg->tree_peak_profit = LLONG_MIN;
	for (int i = 0; i < s->nprocs; i++) {
		fg->nprocs++;
		fg->tree_peak += s->procs[i].peak_merging;
		known_add(&fg->tree_profit, s->procs[i].profit);
		known_add(&fg->tree_peak_profit, s->procs[i].peak_profit);
		if (j->root && s->procs[i].pid == j->root)
			fg->main = &s->procs[i];
		if (s->procs[i].kept_user >= 0) {
			fg->kept_user += s->procs[i].kept_user;
			fg->kept_program += s->procs[i].kept_program;
			fg->kept_secret += s->procs[i].kept_secret;
			fg->kept_reporting++;
		}
	}
	fg->left_over = o->left_over;
	fg->saved = s->saved_peak;
	fg->candidate = s->candidate_peak * fg->page;
	for (int i = 0; i < s->nprocs; i++) {
		if (listed(o, &s->procs[i], fg->page))
			fg->listed++;
		if (s->procs[i].peak_merging * fg->page >= FOLD_BELOW_BYTES)
			fg->merged++;
		if (j->root && survivor(&s->procs[i], j->root))
			fg->survivors++;
		fg->ended += s->procs[i].ended_by != 0;
		fg->killed += s->procs[i].ended_by == SIGKILL;
	}
	fg->ksmd_cpu = s->first.ksmd_cpu >= 0 && s->last.ksmd_cpu >= 0 ? s->last.ksmd_cpu - s->first.ksmd_cpu : -1;
	fg->ksmd_pct = fg->ksmd_cpu >= 0 && s->last.t > s->first.t ?
		100.0 * fg->ksmd_cpu / (s->last.t - s->first.t) : -1;
	fg->scans = delta(s, "full_scans");
	fg->mean_scan = s->scans_t1 > s->scans_t0 && s->scans_t0 >= 0 ?
		(s->scan_t1 - s->scan_t0) / (double)(s->scans_t1 - s->scans_t0) : -1;
	const struct proc_info *m = fg->main;
	int word;
	fg->lib_loaded = m && (m->from_lib || m->lib_mapped);
	if (m && library_enabled(m))
		fg->covered_by = COVERED_LIBRARY;
	else if (m && m->merge_any == 1)
		fg->covered_by = fg->lib_loaded && !m->from_lib ? COVERED_LIBRARY : COVERED_PRCTL;
	else if (m && m->merge_any == 0 && m->sampled)
		fg->covered_by = fg->lib_loaded && !m->from_lib ? COVERED_LIBRARY : COVERED_NONE;
	else if ((word = library_word_of_tree(s)) > 0)
		fg->covered_by = COVERED_LIBRARY;       /* the main process said nothing (sh -c before 6.4, say) */
	else
		fg->covered_by = o->prctl_pre_exec || fg->lib_loaded || word ? COVERED_UNKNOWN : COVERED_NONE;
	if (j->what == FOLLOWED_ATTACHED)
		fg->covered_by = COVERED_ATTACH;        /* enabled from outside: no command to judge */
}

static void json_exit(struct jsonw *w, const struct report_subject *j)
{
	jw_object(w, "exit");
	if (j->what == FOLLOWED_ATTACHED) {
		jw_string(w, "how", "attached");
		jw_string(w, "ended", j->ended);
		jw_string(w, "targets", j->targets);
	} else if (WIFSIGNALED(j->wait_status)) {
		jw_string(w, "how", "signaled");
		jw_null(w, "code");
		jw_ll(w, "signal", WTERMSIG(j->wait_status));
		jw_string(w, "signal_name", sig_name(WTERMSIG(j->wait_status)));
	} else {
		jw_string(w, "how", "exited");
		jw_ll(w, "code", WEXITSTATUS(j->wait_status));
		jw_null(w, "signal");
		jw_null(w, "signal_name");
	}
	jw_ll(w, "status", j->exit_status);
	jw_end(w);
}

static void json_system(struct jsonw *w, const struct sampler *s, const struct figures *fg)
{
	jw_object(w, "system");
	for (int i = 0; i < SYS_COUNTERS; i++) {
		jw_object(w, sys_counter_names[i]);
		jw_ll(w, "start", s->first.v[i]);
		jw_ll(w, "end", s->last.v[i]);
		jw_ll(w, "delta", shown_delta(s, fg->left_over, sys_counter_names[i]));
		jw_end(w);
	}
	jw_end(w);
	jw_object(w, "general_profit");
	jw_ll(w, "start", sys_value(&s->first, "general_profit"));
	jw_ll(w, "end", sys_value(&s->last, "general_profit"));
	jw_ll(w, "delta", shown_delta(s, fg->left_over, "general_profit"));
	jw_ll(w, "peak", s->profit_peak);
	jw_ll(w, "peak_live", s->profit_peak_live);
	jw_bool(w, "computed", s->last.profit_computed);
	jw_end(w);
	jw_bool(w, "counters_left_over", fg->left_over);
	jw_object(w, "full_scans");
	jw_ll(w, "completed", fg->scans);
	jw_fixed(w, "mean_scan_s", fg->mean_scan, 3, true);
	jw_end(w);
	jw_object(w, "ksmd");
	jw_fixed(w, "cpu_s", fg->ksmd_cpu, 2, true);
	jw_fixed(w, "cpu_percent", fg->ksmd_cpu >= 0 ? fg->ksmd_pct : -1, 1, true);
	jw_end(w);
}

static void json_processes(struct jsonw *w, const struct sampler *s)
{
	jw_array(w, "processes");
	for (int i = 0; i < s->nprocs; i++) {
		const struct proc_info *p = &s->procs[i];

		jw_object(w, NULL);
		jw_ll(w, "pid", p->pid);
		jw_ll(w, "ppid", p->ppid);
		jw_ll(w, "ppid_when_merging", shown_ppid(p));
		jw_string(w, "comm", p->comm);
		jw_bool(w, "library", p->from_lib || p->lib_mapped);
		jw_string(w, "mode", p->from_lib && p->mode[0] ? p->mode : NULL);
		jw_string(w, "error", p->error[0] ? p->error : NULL);
		jw_tristate(w, "merge_any", p->merge_any);
		jw_ll(w, "peak_ksm_merging_pages", p->peak_merging);
		jw_ll(w, "ksm_process_profit", p->profit);
		jw_ll(w, "peak_ksm_process_profit", p->peak_profit);
		jw_bool(w, "sampled", p->sampled);
		jw_bool(w, "exit_line", p->from_lib);
		if (p->kept_user >= 0) {
			jw_object(w, "kept_out");
			jw_ll(w, "user_bytes", p->kept_user);
			jw_ll(w, "program_bytes", p->kept_program);
			jw_ll(w, "secret_bytes", p->kept_secret);
			jw_end(w);
		} else {
			jw_null(w, "kept_out");
		}
		jw_end(w);
	}
	jw_end(w);
}

static void write_json(FILE *f, const struct report_opts *o, const struct sampler *s,
		       const struct report_subject *j, const struct figures *fg)
{
	struct jsonw w;

	jw_start(&w, f);
	jw_object(&w, NULL);
	jw_array(&w, "command");
	for (char **a = j->argv; *a; a++)
		jw_string(&w, NULL, *a);
	jw_end(&w);
	jw_ll(&w, "pid", j->root);
	json_exit(&w, j);
	jw_fixed(&w, "runtime_s", fg->runtime, 3, false);
	jw_object(&w, "coverage");
	jw_bool(&w, "library_loaded", fg->lib_loaded);
	jw_bool(&w, "prctl_before_exec", o->prctl_pre_exec);
	jw_string(&w, "covered_by", coverage_names[fg->covered_by]);
	jw_end(&w);
	/* What the command saved comes first, as in the text. */
	jw_object(&w, "saved");
	jw_string(&w, "rule", fg->saved != LLONG_MIN ? "frames" : "none");
	jw_ll(&w, "bytes", fg->saved);
	jw_ll(&w, "last_bytes", s->saved_last);
	jw_ll(&w, "candidate_bytes", fg->candidate);
	jw_string(&w, "frames_error", s->frames_error ? kpages_error_text(s->frames_error) : NULL);
	jw_end(&w);
	jw_ll(&w, "page_size", fg->page);
	json_system(&w, s, fg);
	jw_array(&w, "survivors");
	for (int i = 0; i < s->nprocs; i++)
		if (j->root && survivor(&s->procs[i], j->root))
			jw_ll(&w, NULL, s->procs[i].pid);
	jw_end(&w);
	jw_ll(&w, "ended_survivors", fg->ended);
	jw_ll(&w, "killed_survivors", fg->killed);
	json_processes(&w, s);
	jw_object(&w, "tree");
	jw_ll(&w, "processes", fg->nprocs);
	jw_ll(&w, "peak_ksm_merging_pages", fg->tree_peak);
	jw_ll(&w, "peak_merged_bytes", fg->tree_peak * fg->page);
	jw_ll(&w, "ksm_process_profit", fg->tree_profit);
	jw_ll(&w, "peak_ksm_process_profit", fg->tree_peak_profit);
	jw_end(&w);
	jw_object(&w, "knobs");
	for (int i = 0; i < o->knobs->n; i++)
		jw_knob(&w, o->knobs->k[i].name, o->knobs->k[i].value);
	jw_end(&w);
	tree_groups_json(&w, s, fg->page);
	jw_string(&w, "tuning", o->tuning);
	jw_object(&w, "kept_out");
	jw_ll(&w, "user_bytes", fg->kept_user);
	jw_ll(&w, "program_bytes", fg->kept_program);
	jw_ll(&w, "secret_bytes", fg->kept_secret);
	jw_ll(&w, "processes_reporting", fg->kept_reporting);
	jw_end(&w);
	jw_ll(&w, "foreign_report_lines", (long long)s->foreign_lines);
	jw_bool(&w, "tree_truncated", s->truncated);
	if (o->extra)
		o->extra->json(&w, o->extra->ctx);
	jw_finish(&w);
}

/* The lead line: what the command saved, by page frame, and the rule. */
static void write_saved(FILE *f, const struct sampler *s, const struct figures *fg)
{
	if (fg->saved == LLONG_MIN) {
		fprintf(f, "  saved:    not counted by page frame (%s); ",
			s->frames_error ? kpages_error_text(s->frames_error) : "no page was merged");
		if (fg->tree_profit != LLONG_MIN)
			fputs("the sum of the processes' ksm_process_profit below counts the copy KSM keeps too, "
			      "and overstates\n", f);
		else    /* it came with general_profit (kfeature.c): the sample tells whether the kernel has it */
			fprintf(f, "the processes' own profit is unknown too (ksm_process_profit %s)\n",
				sys_value(&s->last, "general_profit") != LLONG_MIN && !s->last.profit_computed ?
				"not read" : kfeature_absent_text("general_profit"));
		return;
	}
	fprintf(f, "  saved:    %s", human_bytes(fg->saved, false));
	if (fg->candidate > 0)
		fprintf(f, " (%.1f%% of the command's candidate memory, %s)", 100.0 * fg->saved / fg->candidate,
			human_bytes(fg->candidate, false));
	fputs(" at the peak: the pages its processes\n"
	      "            map from KSM pages, less the distinct KSM pages among them (by page frame),\n"
	      "            less KSM's metadata for them\n", f);
}

/* The command's processes: those that merged (all with --report-all). */
static void write_tree(FILE *f, const struct report_opts *o, const struct sampler *s, const struct figures *fg)
{
	fprintf(f, "  this command's process tree (what this command earned):\n");
	if (!s->nprocs) {
		fputs("    no process of the command was sampled (it ended before the first sample)\n", f);
		return;
	}
	if (fg->listed)
		fprintf(f, "    %7s %7s %-16s %-8s %12s %12s %12s\n", "PID", "PPID", "COMM", "LIBRARY", "PEAK MERGED",
			"PEAK PROFIT", "LAST PROFIT");
	for (int i = 0; i < s->nprocs; i++) {
		const struct proc_info *p = &s->procs[i];
		if (!listed(o, p, fg->page))
			continue;
		fprintf(f, "    %7d %7d %-16s %-8s %12s %12s %12s\n", (int)p->pid, (int)shown_ppid(p), printable(p->comm),
			p->from_lib ? (p->mode[0] ? printable(p->mode) : "yes") : p->lib_mapped ? "yes" : "no",
			human_bytes(p->peak_merging * fg->page, false), human_bytes(p->peak_profit, false), human_bytes(p->profit, false));
	}
	if (fg->nprocs > fg->listed)
		fprintf(f, "    (%d process%s that merged under 64 KiB not listed: --report-all lists them)\n",
			fg->nprocs - fg->listed, fg->nprocs - fg->listed == 1 ? "" : "es");
	if (!fg->merged)
		fputs("    no process of the tree merged 64 KiB or more\n", f);
	if (fg->listed)
		fputs("    (PPID: the parent when it merged; LIBRARY: the library's mode from its exit line\n"
		      "     (prctl, madvise, off; none: a setting was refused), yes: loaded, no exit line yet,\n"
		      "     no: not loaded (static, setuid, or LD_PRELOAD cleared))\n", f);
	fprintf(f, "    total: %d process%s, peak merged %s, peak profit %s, last profit %s (profits count\n"
		"    the copy KSM keeps: the saved line above does not)\n", fg->nprocs,
		fg->nprocs == 1 ? "" : "es", human_bytes(fg->tree_peak * fg->page, false), human_bytes(fg->tree_peak_profit, false),
		human_bytes(fg->tree_profit, false));
}

/* Processes of the tree still running when the command ended: ksm-run leaves them be. */
static void write_survivors(FILE *f, const struct sampler *s, const struct report_subject *j, const struct figures *fg)
{
	int shown = 0;

	fprintf(f, "  WARNING: %d process%s of the command's tree still running (ksm-run does not wait for "
		"them; KSM stays on for them):", fg->survivors, fg->survivors == 1 ? "" : "es");
	for (int i = 0; i < s->nprocs && shown < 10; i++)
		if (survivor(&s->procs[i], j->root)) {
			fprintf(f, " %d (%s)", (int)s->procs[i].pid, printable(s->procs[i].comm));
			shown++;
		}
	fputs(fg->survivors > shown ? " ...\n" : "\n", f);
}

/* A counter's line: its figures, or that this kernel does not have it (LLONG_MIN: no such file). */
static void counter_line(FILE *f, const char *name, long long first, long long last, bool only_last)
{
	if (first == LLONG_MIN || last == LLONG_MIN)
		fprintf(f, "    %-15s %s\n", name, kfeature_absent_text(name));
	else if (only_last)
		fprintf(f, "    %-15s %lld pages at the end\n", name, last);
	else
		fprintf(f, "    %-15s %lld -> %lld pages\n", name, first, last);
}

/* "+N" for the counter NAME, or that this kernel does not count it. */
static const char *growth_text(const struct sampler *s, const char *name, char *buf, size_t len)
{
	long long d = delta(s, name);

	if (d == LLONG_MIN)
		return kfeature_absent_text(name);
	snprintf(buf, len, "+%lld", d);
	return buf;
}

/*
 * What every process on the machine merged.  Left-over start figures (KSM
 * stopped with counters of an earlier run, see counters_left_over) are only
 * a note: ksmd drops them once it runs, and a change from them would read
 * as a loss of this command's.
 */
static void write_system(FILE *f, const struct sampler *s, const struct figures *fg)
{
	char scanned[32], skipped[32];

	bool have_profit = sys_value(&s->last, "general_profit") != LLONG_MIN;

	fputs("  system-wide, every process on this machine (not only this command):\n", f);
	if (!have_profit)
		fprintf(f, "    general_profit  %s\n", kfeature_absent_text("general_profit"));
	else if (!fg->left_over)
		fprintf(f, "    general_profit  %s -> %s  (%s), peak %s while it ran\n",
			human_bytes(sys_value(&s->first, "general_profit"), false),
			human_bytes(sys_value(&s->last, "general_profit"), false),
			human_bytes(delta(s, "general_profit"), true), human_bytes(s->profit_peak, false));
	else if (s->profit_peak_live != LLONG_MIN)
		fprintf(f, "    general_profit  %s at the end, peak %s after ksmd dropped the leftovers (two full scans)\n",
			human_bytes(sys_value(&s->last, "general_profit"), false), human_bytes(s->profit_peak_live, false));
	else
		fprintf(f, "    general_profit  %s at the end (no sample after ksmd dropped the leftovers: two full scans)\n",
			human_bytes(sys_value(&s->last, "general_profit"), false));
	if (have_profit && s->last.profit_computed)
		fprintf(f, "                    computed by the kernel's formula from the page counters: this kernel\n"
			"                    has no general_profit file (Linux %s+)\n", kfeature_info(KF_GENERAL_PROFIT)->since);
	for (int i = 1; i < 6; i++)
		counter_line(f, sys_counter_names[i], s->first.v[i], s->last.v[i], fg->left_over);
	fprintf(f, "    full scans      %lld during the run", fg->scans);
	if (fg->mean_scan >= 0)
		fprintf(f, ", %.1f s per scan", fg->mean_scan);
	fprintf(f, "\n    pages_scanned   %s", growth_text(s, "pages_scanned", scanned, sizeof scanned));
	fprintf(f, ", pages_skipped %s\n", growth_text(s, "pages_skipped", skipped, sizeof skipped));
	if (fg->ksmd_cpu >= 0)
		fprintf(f, "    ksmd CPU        %.2f s, %.1f%% of one core\n", fg->ksmd_cpu, fg->ksmd_pct);
	if (fg->left_over)
		fprintf(f, "    note: left over at the start, not this run's: KSM was stopped (run=0) and its\n"
			"          counters still held what merged before, also in processes gone since\n"
			"          (general_profit %s, pages_sharing %lld); ksmd drops that once it runs,\n"
			"          so no change from those figures is shown\n",
			human_bytes(sys_value(&s->first, "general_profit"), false), sys_value(&s->first, "pages_sharing"));
}

/* The text report's "enabled:" line. */
static const char *coverage_text(const struct figures *fg)
{
	switch (fg->covered_by) {
	case COVERED_ATTACH: return "by ksm-run --attach, from outside (see the lines above)";
	case COVERED_LIBRARY: return "by libksmenable in the command";
	case COVERED_PRCTL: return fg->lib_loaded ? "by the prctl (libksmenable loaded)" :
		"by the prctl before exec only: libksmenable did not load (static, setuid, or cleared environment)";
	case COVERED_NONE: return "NOTHING enabled KSM in the command";
	case COVERED_UNKNOWN: break;
	}
	if (fg->main && fg->main->sampled)
		return "not known: this kernel does not show a process's merge flag (ksm_stat's ksm_merge_any, "
		       "Linux 6.14+), and the command's regions could not be read";
	return "not observed (the command ended before the first sample)";
}

static void write_text(FILE *f, const struct report_opts *o, const struct sampler *s,
		       const struct report_subject *j, const struct figures *fg)
{
	fputs("ksm-run: report\n  command:  ", f);
	for (char **a = j->argv; *a; a++)
		fprintf(f, "%s%s", a == j->argv ? "" : " ", printable(*a));
	if (j->what == FOLLOWED_ATTACHED)
		fprintf(f, "\n  attached: %s\n  ended:    after %.2f s: %s\n", printable(j->targets),
			fg->runtime, j->ended);
	else if (WIFSIGNALED(j->wait_status))
		fprintf(f, "\n  ended:    killed by %s after %.2f s\n", sig_name(WTERMSIG(j->wait_status)), fg->runtime);
	else
		fprintf(f, "\n  ended:    exit status %d after %.2f s\n", WEXITSTATUS(j->wait_status), fg->runtime);
	fprintf(f, "  enabled:  %s\n", coverage_text(fg));
	write_saved(f, s, fg);
	write_system(f, s, fg);
	write_tree(f, o, s, fg);
	tree_groups_text(f, s, fg->page);
	if (fg->ended)
		fprintf(f, "  --end-survivors: %d process%s of the tree still running when the command ended: "
			"sent TERM%s\n", fg->ended, fg->ended == 1 ? "" : "es",
			fg->killed ? ", then KILL to those left after 5 s" : "; all ended");
	if (fg->survivors)
		write_survivors(f, s, j, fg);
	if (fg->kept_reporting)
		fprintf(f, "  kept out of KSM (from %d process%s' exit lines): %s by the user's lists, %s by the "
			"program's own MADV_UNMERGEABLE, %s secret-like\n", fg->kept_reporting,
			fg->kept_reporting == 1 ? "" : "es", human_bytes(fg->kept_user, false),
			human_bytes(fg->kept_program, false), human_bytes(fg->kept_secret, false));
	if (s->foreign_lines)
		fprintf(f, "  WARNING: %lu lines in the report file did not carry this run's token: "
			"someone else wrote them; ignored\n", s->foreign_lines);
	if (s->truncated)
		fprintf(f, "  (the tree had more than %d processes: the rest were not followed)\n", MAX_TRACKED);
	/* The tuning's history first, then the knobs as it left them: they agree. */
	fprintf(f, "  tuning:   %s\n  knobs at the end:", o->tuning);
	for (int i = 0; i < o->knobs->n; i++)
		fprintf(f, " %s=%s", o->knobs->k[i].name, o->knobs->k[i].value);
	fputc('\n', f);
	if (o->extra)
		o->extra->text(f, o->extra->ctx);
}

int report_write(const struct report_opts *o, const struct sampler *s, const struct report_subject *j)
{
	struct figures fg;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int r = 0;

	if (!mem)
		return -errno;
	compute(&fg, o, s, j);
	if (fg.survivors && (o->json || o->file))
		msg("%d process%s of the command's tree %s still running after it ended (the report's survivors)",
		    fg.survivors, fg.survivors == 1 ? "" : "es", fg.survivors == 1 ? "is" : "are");
	/*
	 * On stderr, JSON shares the stream with the command's own output, which
	 * may end mid-line: the object starts a line of its own, so that the last
	 * line is always the whole report (--report-file keeps it apart).
	 */
	if (o->json && !o->file)
		fputc('\n', mem);
	if (o->json)
		write_json(mem, o, s, j, &fg);
	else
		write_text(mem, o, s, j, &fg);
	fclose(mem);
	if (o->file) {
		int err = file_append(o->file, text, len, 0644);
		if (err) {
			msg("cannot write the report to %s: %s", o->file, file_strerror(-err));
			r = -1;
		}
	} else if (fputs(text, stderr) < 0) {
		r = -1;
	}
	free(text);
	return r;
}
