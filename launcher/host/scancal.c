/*
 * scancal.c - the per-page scan cost, measured on real runs and kept
 * (scancal.h says why, and what is refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/parse.h"
#include "host/scancal.h"
#include "host/statefile.h"

#define SCANCAL_MAX_BYTES 1024
/* A per-page cost outside this is no measure of a real ksmd. */
#define NS_MIN 10.0
#define NS_MAX 1000000.0
#define EXTRA_MIN_MS -100.0
#define EXTRA_MAX_MS 1000.0

/* A directory or file that root or this user keeps, and no one else may write. */
static const char *untrusted(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "it belongs to another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "others can write it";
	return NULL;
}

/* WHY = "WHERE: WHAT" (WHERE NULL: WHAT alone); -1. */
static int refuse(char *why, size_t len, const char *where, const char *what)
{
	snprintf(why, len, "%s%s%s", where ? where : "", where ? ": " : "", what);
	return -1;
}

int scancal_parse(const char *text, struct scancal *out, char *why, size_t whylen)
{
	char line[256];
	const char *p = text;
	int lineno = 0, have = 0;

	memset(out, 0, sizeof *out);
	while (*p) {
		size_t n = strcspn(p, "\n");
		char key[32], *end;
		const char *val;

		lineno++;
		if (n >= sizeof line)
			return snprintf(why, whylen, "line %d is too long", lineno), -1;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (p[n] == '\n');
		if (!line[0] || line[0] == '#')
			continue;
		val = strchr(line, ' ');
		if (!val || (size_t)(val - line) >= sizeof key)
			return snprintf(why, whylen, "line %d: not 'NAME VALUE'", lineno), -1;
		snprintf(key, sizeof key, "%.*s", (int)(val - line), line);
		val++;
		errno = 0;
		if (!strcmp(key, "kernel")) {
			snprintf(out->kernel, sizeof out->kernel, "%s", val);
			continue;
		}
		if (!strcmp(key, "ns_per_page")) {
			out->ns_per_page = strtod(val, &end);
			have |= 1;
		} else if (!strcmp(key, "batch_extra_ms")) {
			out->batch_extra_ms = strtod(val, &end);
			have |= 8;
		} else if (!strcmp(key, "pages")) {
			out->pages = strtoll(val, &end, 10);
			have |= 2;
		} else if (!strcmp(key, "cpu_seconds")) {
			out->cpu_seconds = strtod(val, &end);
			have |= 4;
		} else {
			return snprintf(why, whylen, "line %d: unknown name '%.31s'", lineno, key), -1;
		}
		if (errno || end == val || *end)
			return snprintf(why, whylen, "line %d: '%.60s' is not a number", lineno, val), -1;
	}
	if (have != 15)
		return refuse(why, whylen, NULL, "it lacks ns_per_page, batch_extra_ms, pages or cpu_seconds");
	if (!(out->batch_extra_ms >= EXTRA_MIN_MS && out->batch_extra_ms <= EXTRA_MAX_MS))
		return refuse(why, whylen, NULL, "batch_extra_ms is out of range (-100 to 1000)");
	if (!(out->ns_per_page >= NS_MIN && out->ns_per_page <= NS_MAX))
		return refuse(why, whylen, NULL, "ns_per_page is out of range (10 to 1000000)");
	if (out->pages < SCANCAL_MIN_PAGES || !(out->cpu_seconds > 0))
		return refuse(why, whylen, NULL, "the measure behind it is too small");
	/* The figure must be what its own measure says. */
	double ns = out->cpu_seconds * 1e9 / (double)out->pages;
	if (ns < out->ns_per_page * 0.99 || ns > out->ns_per_page * 1.01)
		return refuse(why, whylen, NULL, "ns_per_page does not match cpu_seconds over pages");
	return 0;
}

int scancal_load(struct scancal *out, char *why, size_t whylen)
{
	char text[SCANCAL_MAX_BYTES + 1], inner[160];
	struct stat st;
	const char *bad;
	ssize_t n;
	int fd;

	memset(out, 0, sizeof *out);
	if (lstat(SCANCAL_DIR, &st))
		return errno == ENOENT ? 0 : refuse(why, whylen, SCANCAL_DIR, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return refuse(why, whylen, SCANCAL_DIR, "not a directory (a link or file planted there?)");
	if ((bad = untrusted(&st)))
		return refuse(why, whylen, SCANCAL_DIR, bad);
	fd = open(SCANCAL_PATH, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return refuse(why, whylen, SCANCAL_PATH,
			      errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1 || (bad = untrusted(&st)) ||
	    st.st_size > SCANCAL_MAX_BYTES) {
		close(fd);
		return refuse(why, whylen, SCANCAL_PATH,
			      !S_ISREG(st.st_mode) ? "not a regular file" : st.st_nlink != 1 ? "it has another name (a hard link)" :
			      bad ? bad : "too large");
	}
	n = read(fd, text, SCANCAL_MAX_BYTES);
	close(fd);
	if (n < 0)
		return refuse(why, whylen, SCANCAL_PATH, strerror(errno));
	text[n] = '\0';
	if (strlen(text) != (size_t)n)
		return refuse(why, whylen, SCANCAL_PATH, "it holds a NUL byte");
	if (scancal_parse(text, out, inner, sizeof inner) < 0) {
		snprintf(why, whylen, SCANCAL_PATH ": %s", inner);
		return -1;
	}
	return 1;
}

/* What a batch of PAGES_TO_SCAN took beyond its CPU and its SLEEP_MS. */
static double batch_extra_ms(double cpu_s, double wall_s, long long pages, long pages_to_scan, long sleep_ms)
{
	double batches = (double)pages / (double)(pages_to_scan > 0 ? pages_to_scan : 1);
	double ms = (wall_s - cpu_s) * 1000.0 / batches - (double)sleep_ms;

	return ms < EXTRA_MIN_MS ? EXTRA_MIN_MS : ms > EXTRA_MAX_MS ? EXTRA_MAX_MS : ms;
}

bool scancal_of_measure(double cpu_s, double wall_s, long long pages, long pages_to_scan, long sleep_ms,
			struct scancal *out)
{
	memset(out, 0, sizeof *out);
	if (pages < SCANCAL_MIN_PAGES || cpu_s < SCANCAL_MIN_CPU_S || pages_to_scan <= 0 || wall_s < cpu_s)
		return false;
	out->pages = pages;
	out->cpu_seconds = cpu_s;
	out->ns_per_page = cpu_s * 1e9 / (double)pages;
	out->batch_extra_ms = batch_extra_ms(cpu_s, wall_s, pages, pages_to_scan, sleep_ms);
	return out->ns_per_page >= NS_MIN && out->ns_per_page <= NS_MAX;
}

int scancal_save(const struct scancal *cal, char *why, size_t whylen)
{
	char text[512];
	struct utsname u;
	int len, r;

	if (uname(&u))
		snprintf(u.release, sizeof u.release, "unknown");
	if (statedir_check(SCANCAL_DIR, 1, why, whylen))
		return -EPERM;
	len = snprintf(text, sizeof text,
		       "# ksm-run: ksmd's CPU per page scanned, measured while a ksm-run tuned (ksm-run(1), --estimate)\n"
		       "ns_per_page %.6g\nbatch_extra_ms %.3f\npages %lld\ncpu_seconds %.6g\nkernel %s\n",
		       cal->ns_per_page, cal->batch_extra_ms, cal->pages, cal->cpu_seconds, u.release);
	if ((r = file_replace(SCANCAL_PATH, text, (size_t)len, 0644))) {
		snprintf(why, whylen, "%s: %s", SCANCAL_PATH, file_strerror(-r));
		return r;
	}
	return 0;
}

void scancal_watch_start(struct scancal_watch *w, const struct scancal_point *at, long pages, long sleep_ms)
{
	*w = (struct scancal_watch){ .started = true, .npoints = 1, .pages_to_scan = pages, .sleep_ms = sleep_ms };
	w->points[0] = *at;
}

static const struct scancal_point *point(const struct scancal_watch *w, int i)
{
	return &w->points[i % SCANCAL_POINTS];
}

/* The window that ends at the newest point: from the latest earlier point
 * that leaves it two scans, SCANCAL_MIN_PAGES and (with NEED_CPU)
 * SCANCAL_MIN_CPU_S.  NULL when there is none. */
static const struct scancal_point *window_start(const struct scancal_watch *w, bool need_cpu)
{
	const struct scancal_point *end = point(w, w->npoints - 1), *from;
	int oldest = w->npoints > SCANCAL_POINTS ? w->npoints - SCANCAL_POINTS : 0;

	for (int i = w->npoints - 2; i >= oldest; i--) {
		from = point(w, i);
		if (end->scans - from->scans >= SCANCAL_MIN_SCANS && end->scanned - from->scanned >= SCANCAL_MIN_PAGES &&
		    (!need_cpu || end->cpu - from->cpu >= SCANCAL_MIN_CPU_S))
			return from;
	}
	return NULL;
}

/* The windows that end at the newest point: the one that merged more than
 * any before becomes the best; the least extra wait is kept apart, from
 * windows without the CPU that a figure per page needs (passes over
 * settled memory take little CPU, and they show the host at its
 * quietest). */
static void weigh_windows(struct scancal_watch *w)
{
	const struct scancal_point *end = point(w, w->npoints - 1), *from;
	struct scancal cal;

	if ((from = window_start(w, false)) && end->t - from->t >= end->cpu - from->cpu) {
		double extra = batch_extra_ms(end->cpu - from->cpu, end->t - from->t, end->scanned - from->scanned,
					      w->pages_to_scan, w->sleep_ms);

		if (!w->have_extra || extra < w->least_extra_ms)
			w->least_extra_ms = extra;
		w->have_extra = true;
	}
	if ((from = window_start(w, true)) &&
	    scancal_of_measure(end->cpu - from->cpu, end->t - from->t, end->scanned - from->scanned, w->pages_to_scan,
			       w->sleep_ms, &cal) &&
	    (!w->have_best || end->sharing - from->sharing > w->best_growth)) {
		w->best = cal;
		w->best_growth = end->sharing - from->sharing;
		w->have_best = true;
	}
}

void scancal_watch_point(struct scancal_watch *w, const struct scancal_point *at)
{
	/* Only the first sample after a scan ended: a window is whole passes. */
	if (!w->started || at->scans == point(w, w->npoints - 1)->scans)
		return;
	w->points[w->npoints % SCANCAL_POINTS] = *at;
	w->npoints++;
	weigh_windows(w);
}

bool scancal_watch_result(const struct scancal_watch *w, struct scancal *out)
{
	if (!w->have_best)
		return false;
	*out = w->best;
	if (w->have_extra && w->least_extra_ms < out->batch_extra_ms)
		out->batch_extra_ms = w->least_extra_ms;
	return true;
}

void scancal_watch_finish(struct scancal_watch *w)
{
	struct scancal cal;
	char why[320];

	if (!w->started || w->done)
		return;
	w->started = false;
	if (!scancal_watch_result(w, &cal))
		return;
	w->done = true;
	if (scancal_save(&cal, why, sizeof why))
		msg("the scan cost was measured but not kept: %s", why);
}

void scancal_watch_sample(struct scancal_watch *w, const struct sys_sample *now, long pages, long sleep_ms)
{
	struct scancal_point at = { now->ksmd_cpu, now->t, sys_value(now, "pages_scanned"),
				    sys_value(now, "full_scans"), sys_value(now, "pages_sharing") };

	/* Root only: the directory is root's.  No pages_scanned (before 6.6): no measure. */
	if (w->done || geteuid() != 0 || at.scanned == LLONG_MIN || at.scans == LLONG_MIN || at.cpu < 0)
		return;
	if (pages <= 0 || sleep_ms < 0)
		return;
	/* A measure is of one rate: the boost's, or the user's. */
	if (w->started && (pages != w->pages_to_scan || sleep_ms != w->sleep_ms)) {
		scancal_watch_finish(w);
		if (w->done)
			return;
	}
	if (!w->started)
		scancal_watch_start(w, &at, pages, sleep_ms);
	else
		scancal_watch_point(w, &at);
}
