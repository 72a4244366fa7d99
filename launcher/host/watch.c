/*
 * watch.c - --status --watch: savings system-wide and per cgroup, ksmd's
 * CPU over the interval, the tuner and its phase, the registered commands.
 * The stop signals are taken by sigtimedwait between views, so that INT
 * and TERM end it with 0 after a whole view, never in the middle of one.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/human.h"
#include "common/json.h"
#include "common/msg.h"
#include "common/stopsig.h"
#include "common/text.h"
#include "host/counters.h"
#include "host/groups.h"
#include "host/hoststate.h"
#include "host/knobs.h"
#include "host/watch.h"
#include "kernel_abi.h"

/* The knobs a view shows: whether KSM runs, and its rate. */
static const char *const shown_knobs[] = { "run", "pages_to_scan", "sleep_millisecs", "advisor_mode" };
#define NSHOWN (int)(sizeof shown_knobs / sizeof shown_knobs[0])

struct view {
	double interval;
	struct sys_sample now;
	double cpu_pct;                 /* ksmd over the last interval; negative before the second view */
	long long full_scans_delta;     /* LLONG_MIN before the second view */
	struct cgroup_groups groups;
	bool groups_ok;
	struct hoststate st;
	int st_r;                       /* hoststate_peek's */
};

static void text_view(const struct view *v)
{
	long long page = sysconf(_SC_PAGESIZE), sharing = sys_value(&v->now, "pages_sharing");
	char val[KNOB_VALUE_MAX], when[32];
	time_t t = time(NULL);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(when, sizeof when, "%H:%M:%S", &tm))
		snprintf(when, sizeof when, "-");
	/* Home, clear: the view is redrawn from the top. */
	printf("\033[H\033[2J");
	printf("ksm-run --status --watch, every %g s (Ctrl-C stops)   %s\n", v->interval, when);
	printf("knobs:  ");
	for (int i = 0; i < NSHOWN; i++)
		if (!knob_read(shown_knobs[i], val, sizeof val))
			printf(" %s=%s", shown_knobs[i], val);
	printf("\nsaved:   general_profit %s   pages_sharing %lld (%s)   pages_shared %lld\n",
	       human_bytes(sys_value(&v->now, "general_profit"), false), sharing,
	       human_bytes(sharing == LLONG_MIN ? LLONG_MIN : sharing * page, false),
	       sys_value(&v->now, "pages_shared"));
	printf("ksmd:    ");
	if (v->cpu_pct >= 0)
		printf("%.1f%% of a core", v->cpu_pct);
	else
		printf("CPU known after the first interval");
	printf("   full scans %lld", sys_value(&v->now, "full_scans"));
	if (v->full_scans_delta != LLONG_MIN)
		printf(" (+%lld)", v->full_scans_delta);
	if (counters_left_over_now())
		printf("\n         LEFT OVER: KSM is stopped (run=0); the counters keep what merged before");
	printf("\ntuner:   ");
	if (v->st_r == -ENOENT)
		printf("none (no ksm-run instance is registered)\n");
	else if (v->st_r)
		printf("unknown (the state cannot be read: %s)\n", v->st_r == -EINVAL ? "corrupt" : strerror(-v->st_r));
	else if (v->st.tuner)
		printf("pid %d, phase %s\n", (int)v->st.tuner, held_phase_name(v->st.tuner_phase));
	else
		printf("none\n");
	if (!v->st_r && v->st.nusers) {
		printf("\nregistered:\n  %7s %-8s %-6s %s\n", "PID", "KIND", "TUNES", "COMMAND");
		for (int i = 0; i < v->st.nusers; i++) {
			const struct state_user *u = &v->st.users[i];
			printf("  %7d %-8s %-6s %s%s\n", (int)u->pid, u->kind == USER_DAEMON ? "daemon" : "command",
			       u->pid == v->st.tuner ? "yes" : u->wants_tuning ? "no" : "never", printable(u->name),
			       user_alive(u) ? "" : "  (gone)");
		}
	}
	printf("\nper cgroup:\n");
	if (v->groups_ok)
		groups_text(stdout, &v->groups, sys_value(&v->now, "general_profit"), 10);
	else
		printf("  unknown (cannot read /proc)\n");
}

static void json_view(const struct view *v)
{
	char val[KNOB_VALUE_MAX];
	bool first = true;

	printf("{\"time\":%lld,\"interval\":%g,\"knobs\":{", (long long)time(NULL), v->interval);
	for (int i = 0; i < NSHOWN; i++)
		if (!knob_read(shown_knobs[i], val, sizeof val)) {
			printf("%s\"%s\":", first ? "" : ",", shown_knobs[i]);
			json_str(stdout, val);
			first = false;
		}
	printf("},\"counters\":{");
	first = true;
	for (int i = 0; i < SYS_COUNTERS; i++)
		if (v->now.v[i] != LLONG_MIN) {
			printf("%s\"%s\":%lld", first ? "" : ",", sys_counter_names[i], v->now.v[i]);
			first = false;
		}
	printf("},\"counters_left_over\":");
	json_bool(stdout, counters_left_over_now());
	printf(",\"ksmd_cpu_seconds\":");
	if (v->now.ksmd_cpu >= 0)
		printf("%.2f", v->now.ksmd_cpu);
	else
		printf("null");
	printf(",\"ksmd_cpu_percent\":");
	if (v->cpu_pct >= 0)
		printf("%.2f", v->cpu_pct);
	else
		printf("null");
	printf(",\"tuning\":{\"state\":\"%s\",\"tuner\":",
	       v->st_r == -ENOENT ? "none" : v->st_r == -EINVAL ? "corrupt" : v->st_r ? "unreadable" : "ok");
	if (!v->st_r && v->st.tuner)
		printf("{\"pid\":%d,\"phase\":\"%s\"}", (int)v->st.tuner, held_phase_key(v->st.tuner_phase));
	else
		printf("null");
	printf(",\"instances\":[");
	for (int i = 0; !v->st_r && i < v->st.nusers; i++) {
		const struct state_user *u = &v->st.users[i];
		printf("%s{\"pid\":%d,\"kind\":\"%s\",\"tunes\":%s,\"alive\":%s,\"command\":", i ? "," : "", (int)u->pid,
		       u->kind == USER_DAEMON ? "daemon" : "command", u->pid == v->st.tuner ? "true" : "false",
		       user_alive(u) ? "true" : "false");
		json_str(stdout, u->name);
		putchar('}');
	}
	printf("]},\"groups\":");
	if (v->groups_ok)
		groups_json(stdout, &v->groups);
	else
		printf("null");
	printf("}\n");
}

int status_watch(double interval, bool json)
{
	static struct view v;
	struct sys_sample prev;
	bool tty = !json && isatty(STDOUT_FILENO), have_prev = false;
	pid_t ksmd = ksmd_find();
	char why[256];
	sigset_t stops;

	if (access(KSM_SYSFS_DIR, F_OK)) {
		if (json || !tty)
			printf("{\"available\":false}\n");
		else
			printf("KSM: not available (no %s: kernel without CONFIG_KSM)\n", KSM_SYSFS_DIR);
		return 0;
	}
	/* A reader that went away (| head) ends the watch through the write's error. */
	stop_signals_block(&stops, (const int[]){ SIGINT, SIGTERM, 0 });
	v.interval = interval;
	for (;;) {
		long long fs, fs0;

		counters_sample(&v.now, ksmd);
		v.cpu_pct = -1;
		v.full_scans_delta = LLONG_MIN;
		if (have_prev && v.now.ksmd_cpu >= 0 && prev.ksmd_cpu >= 0 && v.now.t > prev.t)
			v.cpu_pct = 100.0 * (v.now.ksmd_cpu - prev.ksmd_cpu) / (v.now.t - prev.t);
		fs = sys_value(&v.now, "full_scans");
		fs0 = have_prev ? sys_value(&prev, "full_scans") : LLONG_MIN;
		if (fs != LLONG_MIN && fs0 != LLONG_MIN)
			v.full_scans_delta = fs - fs0;
		v.groups_ok = groups_collect(&v.groups) == 0;
		v.st_r = hoststate_peek(&v.st, why, sizeof why);
		if (tty)
			text_view(&v);
		else
			json_view(&v);
		groups_free(&v.groups);
		if (fflush(stdout) || ferror(stdout))
			return 0;
		prev = v.now;
		have_prev = true;
		if (stop_signals_wait(&stops, interval))
			break;
	}
	return 0;
}
