/*
 * scancal.h - the host's per-page scan cost: ksmd's CPU-seconds over the
 * pages it scanned, measured while a ksm-run held the machine's tuning
 * (a command's run, --attach, the daemon) and kept in SCANCAL_PATH for
 * --estimate's cost prediction (scancal.c).
 *
 * Nothing is run to calibrate: no knob is written outside the tuning
 * election; real runs are measured as they go.  The file is written
 * through file_replace() (files.h) in a root-owned directory, and read as
 * input from outside: a link, another owner, a mode others can write, or
 * text that does not parse is refused with a message and not used.
 */
#ifndef KSMRUN_SCANCAL_H
#define KSMRUN_SCANCAL_H

#include <stdbool.h>
#include <stddef.h>

#include "host/counters.h"

#define SCANCAL_DIR "/var/lib/ksm-run"
#define SCANCAL_PATH SCANCAL_DIR "/scan-cost"
/* Enough work for a figure worth keeping: CPU time comes in 10 ms ticks. */
#define SCANCAL_MIN_PAGES 200000
#define SCANCAL_MIN_CPU_S 0.5
/* And both passes that merge new memory: the first records checksums, the
 * second merges (the trees' compares, the merge itself cost more). */
#define SCANCAL_MIN_SCANS 2

struct scancal {
	double ns_per_page;
	/* What a batch of pages_to_scan takes besides its CPU and the
	 * sleep_millisecs asked: the timer's rounding to jiffies, the wait
	 * for a CPU on a busy host.  Wall time over the batches, less both. */
	double batch_extra_ms;
	long long pages;                /* pages scanned in the measure */
	double cpu_seconds;             /* ksmd's CPU in it */
	char kernel[65];                /* uname -r where it was measured */
};

/*
 * Reads the calibration.  1: found and sound; 0: none kept (never
 * calibrated); -1: refused, with WHY naming the file and what is wrong.
 */
int scancal_load(struct scancal *out, char *why, size_t whylen);

/* Parses the file's text (the part of scancal_load that reads no file). */
int scancal_parse(const char *text, struct scancal *out, char *why, size_t whylen);

/* Keeps CAL (its ns_per_page: cpu_seconds over pages).  0, or -errno with WHY. */
int scancal_save(const struct scancal *cal, char *why, size_t whylen);

/*
 * The calibration from a measure: CPU_S and WALL_S over PAGES scanned at
 * PAGES_TO_SCAN every SLEEP_MS.  False when the measure says nothing.
 */
bool scancal_of_measure(double cpu_s, double wall_s, long long pages, long pages_to_scan, long sleep_ms,
			struct scancal *out);

/* The counters at one sample of a measure. */
struct scancal_point {
	double cpu, t;                  /* ksmd's CPU-seconds; now_s() */
	long long scanned, scans;       /* pages_scanned, full_scans */
	long long sharing;              /* pages_sharing */
};

#define SCANCAL_POINTS 16

/*
 * A run's measure, fed the samples while its instance holds the tuning at
 * one rate (the boost's, or the user's).  What --estimate predicts is the
 * cost of the passes that merge new memory, and a run's average is not it:
 * later passes over settled memory cost a tenth as much (smart scan skips
 * what it found unique; a merged page is only looked up), so the average
 * depends on how long the run went on after its memory settled.  So the
 * measure keeps the window of at least two full scans (and enough pages
 * and CPU to tell) in which pages_sharing grew the most, each window
 * ending at the first sample after a scan ended: for new memory, its
 * first two passes.  Not the costliest window: passes over memory that is
 * being written cost more and merge nothing.
 */
struct scancal_watch {
	bool started, done, have_best, have_extra;
	/* The measure's first sample, then the first sample after each
	 * change of full_scans: a ring of the last SCANCAL_POINTS. */
	struct scancal_point points[SCANCAL_POINTS];
	int npoints;
	struct scancal best;            /* the window that merged the most so far */
	long long best_growth;          /* its growth of pages_sharing */
	/* A batch's extra wait is the least of any window of two scans and
	 * SCANCAL_MIN_PAGES (no CPU needed): the timer's rounding, and what
	 * the host's load added at its quietest.  The load of the run that
	 * measures says nothing of the host when the estimate is made, and
	 * the window that merged the most may well be the moment it was
	 * busiest (guests booting beside ksmd). */
	double least_extra_ms;
	long pages_to_scan, sleep_ms;   /* in force when it started: a change ends it */
};

/* One sample, at PAGES_TO_SCAN every SLEEP_MS (the knobs in force; -1
 * unknown: no measure).  A change of rate ends the measure at the rate
 * before (kept if it is enough) and starts one at the new rate; once
 * kept, no other. */
void scancal_watch_sample(struct scancal_watch *w, const struct sys_sample *now, long pages_to_scan,
			  long sleep_ms);

/* The parts of it that read and write nothing: a measure starts at AT, at
 * PAGES_TO_SCAN every SLEEP_MS; a later point AT joins it. */
void scancal_watch_start(struct scancal_watch *w, const struct scancal_point *at, long pages_to_scan,
			 long sleep_ms);
void scancal_watch_point(struct scancal_watch *w, const struct scancal_point *at);
/* What the measure would keep: false when it has no window yet. */
bool scancal_watch_result(const struct scancal_watch *w, struct scancal *out);

/* The instance stops tuning or leaves: the measure's result is kept if it
 * has one (a warning on failure), and a later measure starts afresh. */
void scancal_watch_finish(struct scancal_watch *w);

#endif
