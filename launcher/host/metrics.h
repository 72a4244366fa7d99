/*
 * metrics.h - --metrics-file (metrics.c): the machine's KSM figures in the
 * Prometheus text exposition format, for node_exporter's textfile
 * collector, written atomically (a new file in the same directory, then
 * rename) by the daemon at every tick and by a ksm-run at every sample.
 * ksm-run-daemon(8), METRICS, lists every metric.
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

/*
 * A command's process tree, for a plain ksm-run (run/runmetrics.c fills
 * it).  Its series carry two labels: COMMAND, the program's name, for
 * people, and FILE, the metrics file's own name, which tells apart two
 * files of one textfile directory even when both run the same program
 * (two files of one directory cannot have the same name, and the name
 * stays across restarts, where a pid would not).
 */
struct metrics_command {
	const char *command;            /* the program's name; hostile: escaped */
	const char *file;               /* the metrics file's base name */
	int processes;                  /* live now */
	long long merged_pages;         /* now, summed */
	long long profit_bytes;
	long long peak_merged_pages;    /* the sum of each process's peak, as the report's */
	long long saved_bytes;          /* by page frame, at the last count; LLONG_MIN not counted */
	long long peak_saved_bytes;     /* its peak: the report's "saved" line */
};

/* The host agent's figures (policy/agentstate.c fills them): each rule, and the domains. */
struct metrics_rule {
	const char *name;
	int enabled, disabled, refused, left_alone, waiting;    /* its processes that run now */
	long long merged_pages;                         /* of those enabled */
};

struct metrics_agent {
	const struct metrics_rule *rules;
	int n;
	int domains;                    /* security domains of the machine's mergeable memory (census.h) */
	int unaccepted_domains;         /* of them, those where no rule with cross-domain = yes enabled a process */
};

/* Does the host agent run (policy/agentstate.h's agent_life)?  Its daemon says 1 and the time of each tick. */
struct metrics_agent_life {
	bool running;
	long long last_seen;            /* seconds of the epoch */
};

struct metrics_source {
	const struct ksm_files *files;
	const struct sys_sample *now;   /* ksmd's CPU time */
	int phase;                      /* enum held_phase of the machine's tuner; -1 unknown */
	unsigned long decisions;        /* this instance's tuner's decisions */
	const struct cgroup_groups *groups;       /* NULL: not collected */
	const struct metrics_command *command;    /* NULL: the daemon */
	const struct metrics_agent *agent;        /* the daemon's agent with a policy; or NULL */
	const struct metrics_agent_life *life;    /* NULL: no agent ran, or it stopped as it should */
	bool command_only;              /* the machine's series are another writer's */
	long page;
};

/* The exposition text of SRC on F (pure: for the unit tests). */
void metrics_format(FILE *f, const struct metrics_source *src);
/* A label value as the format escapes it: backslash, double quote, newline; bad UTF-8 as U+FFFD. */
void metrics_label(FILE *f, const char *s);

/*
 * PATH's directory exists, and PATH is not a directory: for options.c,
 * which refuses the option otherwise.  0, or -1 with WHY.
 */
int metrics_check_path(const char *path, char *why, size_t whylen);

/* Warns (not fatal: another reader may take any name) when PATH is not a *.prom, all node_exporter reads. */
void metrics_warn_name(const char *path);

/*
 * What an instance writes at each tick: when MACHINE, the machine's
 * series (the knobs and counters now, ksmd's CPU time of NOW, the tuner's
 * phase and H's decisions, the cgroups, AGENT's rules when not NULL); and
 * COMMAND's tree (NULL for the daemon).  0, or -errno.
 */
struct host_tuner;
int metrics_write_host(const char *path, const struct host_tuner *h, const struct sys_sample *now,
		       const struct metrics_command *command, const struct metrics_agent *agent,
		       const struct metrics_agent_life *life, bool machine);

/*
 * Who writes the machine's series: node_exporter refuses (on every scrape,
 * yet with HTTP 200) a series that two files of its directory both hold,
 * so one writer per machine has them: the daemon; else the ksm-run that
 * holds the tuning; else, while nobody tunes, the first registered
 * instance; a --keep-knobs instance (not registered) only while nobody
 * else is registered.  An instance that becomes that writer waits
 * METRICS_HANDOVER_S first: the previous one, which looks every second,
 * drops them from its file in that time.
 */
#define METRICS_HANDOVER_S 2.0
struct metrics_role {
	bool machine;                   /* writes the machine's series now */
	double eligible_since;          /* now_s() when it became the writer; 0 not */
};

/* R at NOW for H (DAEMON: the daemon's); true when R->machine changed: write the file at once. */
bool metrics_role_update(struct metrics_role *r, const struct host_tuner *h, bool daemon, double now);

#endif
