/*
 * watchview.c - --status --watch's view on a terminal.  An operator
 * leaves it open beside a service: it shows what --status shows that
 * changes (savings, ksmd's cost, the top processes, the groups, who
 * tunes), and the trend of the first two, in as many rows as the terminal
 * has and no more.  The tables share the rows left, one row each in turn,
 * so that each shows its top rows whatever the height.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/human.h"
#include "common/text.h"
#include "host/knobs.h"
#include "status/watchview.h"

/* The knobs a view shows: whether KSM runs, and its rate. */
static const char *const shown_knobs[] = { "run", "pages_to_scan", "sleep_millisecs", "advisor_mode" };
#define NSHOWN (int)(sizeof shown_knobs / sizeof shown_knobs[0])

/* A mark per view, lowest to highest: plain ASCII, which every terminal shows. */
static const char marks[] = "_.-=+*#@";
#define NMARKS ((int)sizeof marks - 1)

/* The space a trend line keeps for its label and its figures beside the marks. */
#define TREND_TEXT 40

void watch_history_add(struct watch_history *h, struct watch_point pt)
{
	if (h->n < WATCH_HISTORY) {
		h->p[(h->start + h->n++) % WATCH_HISTORY] = pt;
		return;
	}
	h->p[h->start] = pt;
	h->start = (h->start + 1) % WATCH_HISTORY;
}

/* The I-th of the last N points. */
static const struct watch_point *last_point(const struct watch_history *h, int n, int i)
{
	return &h->p[(h->start + h->n - n + i) % WATCH_HISTORY];
}

static bool point_known(const struct watch_point *p, bool cpu)
{
	return cpu ? p->cpu_pct >= 0 : p->saved != LLONG_MIN;
}

static double point_value(const struct watch_point *p, bool cpu)
{
	return cpu ? p->cpu_pct : (double)p->saved;
}

/*
 * The marks of the last N points of one figure, scaled from zero (or the
 * lowest, when below zero) to the highest; a blank where it was unknown.
 * *LO and *HI: that range.  Returns whether any point was known.
 */
static bool trend_marks(const struct watch_history *h, int n, bool cpu, char *out, double *lo, double *hi)
{
	bool any = false;

	*lo = *hi = 0;
	for (int i = 0; i < n; i++) {
		const struct watch_point *p = last_point(h, n, i);
		if (!point_known(p, cpu))
			continue;
		any = true;
		if (point_value(p, cpu) < *lo)
			*lo = point_value(p, cpu);
		if (point_value(p, cpu) > *hi)
			*hi = point_value(p, cpu);
	}
	for (int i = 0; i < n; i++) {
		const struct watch_point *p = last_point(h, n, i);
		int m = 0;
		if (!point_known(p, cpu)) {
			out[i] = ' ';
			continue;
		}
		if (*hi > *lo)
			m = (int)((point_value(p, cpu) - *lo) * (NMARKS - 1) / (*hi - *lo) + 0.5);
		out[i] = marks[m];
	}
	out[n] = '\0';
	return any;
}

static void trend_text(FILE *f, const struct view *v, int cols)
{
	const struct watch_history *h = v->hist;
	int n = cols - TREND_TEXT;
	char line[WATCH_HISTORY + 1];
	double lo, hi;

	/* The newest that fit beside the figures; a few at least on a narrow terminal. */
	if (n < 8)
		n = 8;
	if (n > h->n)
		n = h->n;
	fprintf(f, "trend: a mark every %g s, the newest at the right, from zero to the highest:\n", v->interval);
	fprintf(f, "  saved  ");
	if (trend_marks(h, n, false, line, &lo, &hi))
		fprintf(f, "%s  %s%s%s, high %s\n", line, human_bytes(v->hist->n ? last_point(h, 1, 0)->saved : LLONG_MIN, false),
			lo < 0 ? ", low " : "", lo < 0 ? human_bytes((long long)lo, false) : "",
			human_bytes((long long)hi, false));
	else
		fprintf(f, "%s  unknown (no general_profit, and no page counters to compute it)\n", line);
	fprintf(f, "  ksmd   ");
	if (trend_marks(h, n, true, line, &lo, &hi))
		fprintf(f, "%s  %.1f%% of a core, high %.1f%%\n", line, last_point(h, 1, 0)->cpu_pct >= 0 ?
			last_point(h, 1, 0)->cpu_pct : 0, hi);
	else
		fprintf(f, "%s  CPU known after the first interval\n", line);
}

/* PATH in WIDTH columns: cut from the left, where paths share their start. */
static const char *fit_path(const char *path, int width)
{
	static char buf[512];
	const char *p = printable(path);
	size_t len = strlen(p);

	if (width < 8)
		width = 8;
	if (len <= (size_t)width)
		return p;
	snprintf(buf, sizeof buf, "...%s", p + len - (size_t)(width - 3));
	return buf;
}

static const char *cgroup_of_pid(int pid)
{
	static char cg[4096];
	char path[64], text[8192];

	snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
	if (read_text(path, text, sizeof text) || cgroup_of_text(text, cg, sizeof cg))
		return "?";
	return cg;
}

static void processes_text(FILE *f, const struct view *v, int rows, int cols)
{
	long long page = sysconf(_SC_PAGESIZE);

	if (!v->ntop) {
		fprintf(f, "top processes: none with merged pages%s\n",
			geteuid() ? " readable (other users' ksm_stat needs root)" : "");
		return;
	}
	fprintf(f, "top processes (%d of %d with merged pages):\n", rows, v->ntop);
	fprintf(f, "  %7s %-16s %10s %10s  %s\n", "PID", "COMM", "MERGED", "PROFIT", "CGROUP");
	for (int i = 0; i < rows && i < v->ntop; i++) {
		const struct top_process *t = &v->top[i];
		fprintf(f, "  %7d %-16s %10s %10s  %s\n", t->pid, printable(t->comm),
			human_bytes(t->merging * page, false), human_bytes(t->profit, false),
			fit_path(cgroup_of_pid(t->pid), cols - 50));
	}
}

static void groups_text_fit(FILE *f, const struct view *v, int rows, int cols)
{
	const struct cgroup_groups *gs = &v->groups;
	long long page = sysconf(_SC_PAGESIZE);

	if (!v->groups_ok) {
		fprintf(f, "per cgroup: unknown (cannot read /proc)\n");
		return;
	}
	if (!gs->n) {
		fprintf(f, "per cgroup: none with merged pages or candidate memory\n");
		return;
	}
	fprintf(f, "per cgroup (%d of %d with merged pages or candidate memory):\n", rows, gs->n);
	fprintf(f, "  %6s %10s %10s %10s  %s\n", "PROCS", "MERGED", "PROFIT", "CANDIDATE", "CGROUP");
	for (int i = 0; i < rows && i < gs->n; i++) {
		const struct cgroup_group *g = &gs->g[i];
		fprintf(f, "  %6d %10s %10s %10s  %s\n", g->procs, human_bytes(g->merged_pages * page, false),
			human_bytes(g->profit_bytes, false), human_bytes(g->candidate_pages * page, false),
			fit_path(g->path, cols - 44));
	}
}

static void registered_text(FILE *f, const struct view *v, int rows)
{
	fprintf(f, "registered (%d of %d):\n", rows, v->st.nusers);
	fprintf(f, "  %7s %-8s %-6s %s\n", "PID", "KIND", "TUNES", "COMMAND");
	for (int i = 0; i < rows && i < v->st.nusers; i++) {
		const struct state_user *u = &v->st.users[i];
		fprintf(f, "  %7d %-8s %-6s %s%s\n", (int)u->pid, u->kind == USER_DAEMON ? "daemon" : "command",
			u->pid == v->st.tuner ? "yes" : u->wants_tuning ? "no" : "never", printable(u->name),
			user_alive(u) ? "" : "  (gone)");
	}
}

/* The figures of the machine now: five lines, six when the counters are left over. */
static int figures_text(FILE *f, const struct view *v)
{
	long long page = sysconf(_SC_PAGESIZE), sharing = sys_value(&v->now, "pages_sharing");
	char val[KNOB_VALUE_MAX], when[32];
	time_t t = time(NULL);
	struct tm tm;
	int lines = 5;

	if (!localtime_r(&t, &tm) || !strftime(when, sizeof when, "%H:%M:%S", &tm))
		snprintf(when, sizeof when, "-");
	fprintf(f, "ksm-run --status --watch, every %g s (Ctrl-C stops)   %s\n", v->interval, when);
	fprintf(f, "knobs:  ");
	for (int i = 0; i < NSHOWN; i++)
		if (!knob_read(shown_knobs[i], val, sizeof val))
			fprintf(f, " %s=%s", shown_knobs[i], val);
	fprintf(f, "\nsaved:   general_profit %s%s  pages_sharing %lld (%s)  pages_shared %lld\n",
		human_bytes(sys_value(&v->now, "general_profit"), false), v->now.profit_computed ? " (computed)" : "", sharing,
		human_bytes(sharing == LLONG_MIN ? LLONG_MIN : sharing * page, false),
		sys_value(&v->now, "pages_shared"));
	fprintf(f, "ksmd:    ");
	if (v->cpu_pct >= 0)
		fprintf(f, "%.1f%% of a core", v->cpu_pct);
	else
		fprintf(f, "CPU known after the first interval");
	fprintf(f, "   full scans %lld", sys_value(&v->now, "full_scans"));
	if (v->full_scans_delta != LLONG_MIN)
		fprintf(f, " (+%lld)", v->full_scans_delta);
	if (counters_left_over_now()) {
		fprintf(f, "\n         LEFT OVER: KSM is stopped (run=0); the counters keep what merged before");
		lines++;
	}
	fprintf(f, "\ntuner:   ");
	if (v->st_r == -ENOENT)
		fprintf(f, "none (no ksm-run instance is registered)\n");
	else if (v->st_r)
		fprintf(f, "unknown (the state cannot be read: %s)\n", v->st_r == -EINVAL ? "corrupt" : strerror(-v->st_r));
	else if (v->st.tuner)
		fprintf(f, "pid %d, phase %s\n", (int)v->st.tuner, held_phase_name(v->st.tuner_phase));
	else
		fprintf(f, "none\n");
	return lines;
}

enum { SEC_PROCESSES, SEC_TREND, SEC_GROUPS, SEC_REGISTERED, NSEC };

struct section {
	int heading;                    /* lines before its rows; 0: nothing to show */
	int want;                       /* rows it has */
	bool shown;
	int rows;                       /* rows it gets */
};

/*
 * The rows left, shared: first every section's heading in the order of
 * SEC_* (what matters most first, while rows last), then one row to each
 * section in turn while any wants more.
 */
static void share_rows(struct section *s, int left)
{
	bool more = true;

	for (int i = 0; i < NSEC; i++) {
		s[i].shown = s[i].heading && left >= s[i].heading;
		s[i].rows = 0;
		if (s[i].shown)
			left -= s[i].heading;
	}
	while (more && left > 0) {
		more = false;
		for (int i = 0; i < NSEC && left > 0; i++)
			if (s[i].shown && s[i].rows < s[i].want) {
				s[i].rows++;
				left--;
				more = true;
			}
	}
}

void watch_text_view(FILE *f, const struct view *v, int rows, int cols)
{
	struct section s[NSEC] = {
		[SEC_PROCESSES] = { .heading = v->ntop ? 2 : 1, .want = v->ntop },
		[SEC_TREND] = { .heading = 3 },
		[SEC_GROUPS] = { .heading = v->groups_ok && v->groups.n ? 2 : 1,
				 .want = v->groups_ok ? v->groups.n : 0 },
		[SEC_REGISTERED] = { .heading = !v->st_r && v->st.nusers ? 2 : 0,
				     .want = !v->st_r ? v->st.nusers : 0 },
	};

	share_rows(s, rows - 1 - figures_text(f, v));
	if (s[SEC_TREND].shown)
		trend_text(f, v, cols);
	if (s[SEC_PROCESSES].shown)
		processes_text(f, v, s[SEC_PROCESSES].rows, cols);
	if (s[SEC_GROUPS].shown)
		groups_text_fit(f, v, s[SEC_GROUPS].rows, cols);
	if (s[SEC_REGISTERED].shown)
		registered_text(f, v, s[SEC_REGISTERED].rows);
}
