/*
 * watch.c - --status --watch: savings system-wide, per process and per
 * cgroup, ksmd's CPU over the interval and their trend, the tuner and its
 * phase, the registered commands.  On a terminal the view (watchview.c)
 * is cut to the terminal's size; otherwise one JSON line per interval.
 * The stop signals are taken by sigtimedwait between views, so that INT
 * and TERM end it with 0 after a whole view, never in the middle of one.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonw.h"
#include "common/parse.h"
#include "common/stopsig.h"
#include "host/knobs.h"
#include "status/status.h"
#include "status/watch.h"
#include "status/watchview.h"
#include "kernel_abi.h"

/* The knobs a JSON line holds: whether KSM runs, and its rate. */
static const char *const json_knobs[] = { "run", "pages_to_scan", "sleep_millisecs", "advisor_mode" };
#define NJSON_KNOBS (int)(sizeof json_knobs / sizeof json_knobs[0])

/* A size from the environment (LINES, COLUMNS), else DEFAULT. */
static int env_size(const char *name, int dflt)
{
	long long v;

	return parse_ll(getenv(name), 1, 10000, &v) ? dflt : (int)v;
}

/* The terminal's size, read at every view (it may have been resized). */
static void screen_size(int *rows, int *cols)
{
	struct winsize ws;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
		return;
	}
	/* No size known (not a terminal, or a pseudo-terminal nobody sized): as curses does. */
	*rows = env_size("LINES", 24);
	*cols = env_size("COLUMNS", 80);
}

/* TEXT as at most ROWS - 1 lines of at most COLS characters (UTF-8), on stdout. */
static void put_clipped(const char *text, int rows, int cols)
{
	int line = 0;

	while (*text && line < rows - 1) {
		size_t len = strcspn(text, "\n");
		int chars = 0;
		size_t keep = 0;

		while (keep < len && (chars < cols || ((unsigned char)text[keep] & 0xc0) == 0x80)) {
			if (((unsigned char)text[keep] & 0xc0) != 0x80)
				chars++;
			keep++;
		}
		fwrite(text, 1, keep, stdout);
		putchar('\n');
		text += len + (text[len] == '\n');
		line++;
	}
}

static void text_view(const struct view *v)
{
	char *text = NULL;
	size_t size = 0;
	int rows, cols;
	FILE *f = open_memstream(&text, &size);

	screen_size(&rows, &cols);
	/* Home, clear: the view is redrawn from the top. */
	printf("\033[H\033[2J");
	if (!f) {
		printf("ksm-run --status --watch: out of memory for the view\n");
		return;
	}
	watch_text_view(f, v, rows, cols);
	if (fclose(f) == 0)
		put_clipped(text, rows, cols);
	free(text);
}

static void json_view(const struct view *v)
{
	char val[KNOB_VALUE_MAX];
	struct jsonw w;

	jw_start(&w, stdout);
	jw_object(&w, NULL);
	jw_ll(&w, "time", (long long)time(NULL));
	jw_g(&w, "interval", v->interval);
	jw_object(&w, "knobs");
	for (int i = 0; i < NJSON_KNOBS; i++)
		if (!knob_read(json_knobs[i], val, sizeof val))
			jw_knob(&w, json_knobs[i], val);
	jw_end(&w);
	jw_object(&w, "counters");
	for (int i = 0; i < SYS_COUNTERS; i++)
		if (v->now.v[i] != LLONG_MIN)
			jw_ll(&w, sys_counter_names[i], v->now.v[i]);
	jw_end(&w);
	jw_bool(&w, "general_profit_computed", v->now.profit_computed);
	jw_bool(&w, "counters_left_over", counters_left_over_now());
	jw_fixed(&w, "ksmd_cpu_seconds", v->now.ksmd_cpu, 2, true);
	jw_fixed(&w, "ksmd_cpu_percent", v->cpu_pct, 2, true);
	status_json_tuning(&w, v->st_r, &v->st);
	jw_end(&w);
	status_json_processes(&w, v->top, v->ntop, false);
	groups_json(&w, v->groups_ok ? &v->groups : NULL);
	jw_finish(&w);
}

/* One view's figures: now, and against the view before (PREV, NULL for the first). */
static void take_view(struct view *v, const struct sys_sample *prev, pid_t ksmd, struct watch_history *h)
{
	char why[256];
	long long fs, fs0;

	counters_sample(&v->now, ksmd);
	v->cpu_pct = -1;
	v->full_scans_delta = LLONG_MIN;
	if (prev && v->now.ksmd_cpu >= 0 && prev->ksmd_cpu >= 0 && v->now.t > prev->t)
		v->cpu_pct = 100.0 * (v->now.ksmd_cpu - prev->ksmd_cpu) / (v->now.t - prev->t);
	fs = sys_value(&v->now, "full_scans");
	fs0 = prev ? sys_value(prev, "full_scans") : LLONG_MIN;
	if (fs != LLONG_MIN && fs0 != LLONG_MIN)
		v->full_scans_delta = fs - fs0;
	v->groups_ok = groups_collect(&v->groups) == 0;
	v->ntop = top_processes_collect(&v->top);
	v->st_r = hoststate_peek(&v->st, why, sizeof why);
	watch_history_add(h, (struct watch_point){ sys_value(&v->now, "general_profit"), v->cpu_pct });
	v->hist = h;
}

int status_watch(double interval, bool json)
{
	static struct view v;
	static struct watch_history hist;
	struct sys_sample prev;
	bool tty = !json && isatty(STDOUT_FILENO), have_prev = false;
	pid_t ksmd = ksmd_find();
	sigset_t stops;

	if (access(KSM_SYSFS_DIR, F_OK)) {
		if (json || !tty)
			status_json_unavailable();
		else
			printf("KSM: not available (no %s: kernel without CONFIG_KSM)\n", KSM_SYSFS_DIR);
		return 0;
	}
	/* A reader that went away (| head) ends the watch through the write's error. */
	stop_signals_block(&stops, (const int[]){ SIGINT, SIGTERM, 0 });
	v.interval = interval;
	for (;;) {
		take_view(&v, have_prev ? &prev : NULL, ksmd, &hist);
		if (tty)
			text_view(&v);
		else
			json_view(&v);
		groups_free(&v.groups);
		free(v.top);
		v.top = NULL;
		if (fflush(stdout) || ferror(stdout))
			return 0;
		prev = v.now;
		have_prev = true;
		if (stop_signals_wait(&stops, interval))
			break;
	}
	return 0;
}
