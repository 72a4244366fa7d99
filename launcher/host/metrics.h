/*
 * metrics.h - --metrics-file (metrics.c): the machine's KSM figures in the
 * Prometheus text exposition format, for node_exporter's textfile
 * collector, written atomically (a new file in the same directory, then
 * rename) by the daemon at every tick and by a ksm-run at every sample.
 * ksm-run(1) METRICS lists every metric.
 */
#ifndef KSMRUN_METRICS_H
#define KSMRUN_METRICS_H

#include <stdbool.h>
#include <stdio.h>

#include "host/counters.h"
#include "host/groups.h"

#define METRICS_PREFIX "ksmenable_"
#define MAX_KSM_FILES 64

/* The files of /sys/kernel/mm/ksm as read once: knobs (writable) and counters. */
struct ksm_files {
	int n;
	struct ksm_file {
		char name[64];
		char value[64];
		bool writable;
	} f[MAX_KSM_FILES];
};

/* A command's process tree, for a plain ksm-run (run/runmetrics.c fills it). */
struct metrics_command {
	int processes;                  /* live now */
	long long merged_pages;         /* now, summed */
	long long profit_bytes;
	long long peak_merged_pages;    /* the sum of each process's peak, as the report's */
};

struct metrics_source {
	const struct ksm_files *files;
	const struct sys_sample *now;   /* ksmd's CPU time */
	int phase;                      /* enum held_phase of the machine's tuner; -1 unknown */
	unsigned long decisions;        /* this instance's tuner's decisions */
	const struct cgroup_groups *groups;       /* NULL: not collected */
	const struct metrics_command *command;    /* NULL: the daemon */
	long page;
};

/* Every file of /sys/kernel/mm/ksm, sorted by name. */
void ksm_files_read(struct ksm_files *out);

/* The exposition text of SRC on F (pure: for the unit tests). */
void metrics_format(FILE *f, const struct metrics_source *src);
/* A label value as the format escapes it: backslash, double quote, newline; bad UTF-8 as U+FFFD. */
void metrics_label(FILE *f, const char *s);

/*
 * PATH's directory exists, and PATH is not a directory: for options.c,
 * which refuses the option otherwise.  0, or -1 with WHY.
 */
int metrics_check_path(const char *path, char *why, size_t whylen);

/*
 * Writes SRC to PATH atomically: a new file (O_EXCL, O_NOFOLLOW, mode
 * 0644) in PATH's directory, renamed over PATH.  0, or -errno.
 */
int metrics_write(const char *path, const struct metrics_source *src);

/*
 * What an instance writes at each tick: the knobs and counters now, ksmd's
 * CPU time of NOW, the tuner's phase and H's decisions, the cgroups, and
 * COMMAND's tree (NULL for the daemon).  0, or -errno.
 */
struct host_tuner;
int metrics_write_host(const char *path, const struct host_tuner *h, const struct sys_sample *now,
		       const struct metrics_command *command);

#endif
