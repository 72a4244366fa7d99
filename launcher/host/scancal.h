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
/* And the passes that merge, whose pages cost more than a checksum (the
 * merge, the trees' compares): the scan under way, then two full ones. */
#define SCANCAL_MIN_SCANS 3

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

/*
 * A run's measure, fed the samples while its instance holds the tuning:
 * from the first sample at a rate to the last at that rate, so that it
 * covers the passes that merge as well as the first (the boost's whole
 * length under the default tuning, the run's at a fixed rate).
 */
struct scancal_watch {
	bool started, done;
	double cpu0, t0, cpu1, t1;
	long long scanned0, scans0, scanned1, scans1;
	long pages_to_scan, sleep_ms;   /* in force when it started: a change ends it */
};

/* One sample, at PAGES_TO_SCAN every SLEEP_MS (the knobs in force; -1
 * unknown: no measure).  A change of rate ends the measure at the rate
 * before (kept if it is enough) and starts one at the new rate; once
 * kept, no other. */
void scancal_watch_sample(struct scancal_watch *w, const struct sys_sample *now, long pages_to_scan,
			  long sleep_ms);

/* The instance stops tuning or leaves: the measure so far is kept if it is
 * enough (a warning on failure), and a later one starts afresh. */
void scancal_watch_finish(struct scancal_watch *w);

#endif
