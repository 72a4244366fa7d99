/*
 * ksm-run: shared declarations between the launcher's files.
 * Each file has one job; see the comment at the top of each.
 */
#ifndef KSMRUN_H
#define KSMRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KSM_DIR "/sys/kernel/mm/ksm"
#define STATE_DIR "/run/ksm-run"
#ifndef KSMENABLE_LIBDIR
#define KSMENABLE_LIBDIR "/usr/local/lib"
#endif

/* Exit statuses as env(1) and timeout(1) have them. */
#define EXIT_OWN 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#define PR_GET_MEMORY_MERGE 68
#endif

#define FMT(a, b) __attribute__((format(printf, a, b)))

/* msg.c */
extern const char *progname;
extern int quiet_msgs;
void warnx_(const char *fmt, ...) FMT(1, 2);
void warn_errno(int err, const char *fmt, ...) FMT(2, 3);
_Noreturn void die(const char *fmt, ...) FMT(1, 2);
double now_s(void);
int read_text(const char *path, char *buf, size_t len);
int parse_ll(const char *s, long long min, long long max, long long *out);
const char *human_bytes(long long bytes, bool sign);

/* knobs.c */
#define MAX_KNOBS 40
#define KNOB_NAME_MAX 64
#define KNOB_VALUE_MAX 64
struct knob_set {
	int n;
	struct knob {
		char name[KNOB_NAME_MAX];
		char value[KNOB_VALUE_MAX];
	} k[MAX_KNOBS];
};
const char *knob_known_name(int i);
int knob_read(const char *name, char *buf, size_t len);
int knob_write(const char *name, const char *value);
int knob_validate(const char *name, const char *value, char *why, size_t whylen);
const char *knob_lookup(const struct knob_set *s, const char *name);
void knob_put(struct knob_set *s, const char *name, const char *value);
void knob_order(struct knob_set *s);
int knobs_read_all(struct knob_set *s);
int knobs_apply(const struct knob_set *want, int *failed);
int knobs_restore(const struct knob_set *saved);
bool knob_probe_writable(const char *name, int *err);
const char *knob_write_hint(const char *name, int err);

/* state.c: the knob state saved before the first of overlapping runs. */
int state_begin(const struct knob_set *want);
int state_end(void);
int state_restore_cmd(void);
int state_describe(char *buf, size_t len);

/* preload.c */
int preload_find(const char *override, char *out, size_t len);
int preload_setenv(const char *lib);

/* child.c */
struct child {
	pid_t pid;
	double start, end;
	int status;		/* wait status of the command */
	int exec_errno;		/* nonzero: the command never ran */
	int errfd;		/* read end of the exec-error pipe */
};
int child_prepare_signals(void);
int child_start(struct child *c, char **argv, bool prctl_before_exec);
int child_wait(struct child *c, int timeout_ms);
_Noreturn void child_exit_like(const struct child *c);
int child_exit_status(const struct child *c);

/* sample.c */
#define SYS_COUNTERS 9
extern const char *const sys_counter_names[SYS_COUNTERS];
struct sys_sample {
	double t;
	long long v[SYS_COUNTERS];
	double ksmd_cpu;	/* seconds; negative when unknown */
};
struct proc_info {
	pid_t pid, ppid;
	char comm[32];
	long long peak_merging;
	long long profit, peak_profit;
	int merge_any;		/* -1 unknown, 0, 1 */
	bool sampled, from_lib, lib_mapped;
	int maps_checks;
	char mode[16];
	char error[128];
};
struct sampler {
	struct sys_sample first, last;
	long long profit_peak;	/* highest general_profit seen */
	double scan_t0, scan_t1;	/* times full_scans first and last moved */
	long long scans_t0, scans_t1;
	int nprocs, cap;
	struct proc_info *procs;
	pid_t ksmd;
	const char *libpath;
	const char *report_path;
	off_t report_off;
	pid_t root;
};
void sample_init(struct sampler *s, pid_t root, const char *libpath, const char *report_path);
void sample_tick(struct sampler *s);
void sample_read_lib_lines(struct sampler *s);
void sample_sys(struct sys_sample *out);
long long sys_value(const struct sys_sample *ss, const char *name);
double ksmd_cpu_seconds(pid_t ksmd);
pid_t find_ksmd(void);
struct proc_info *sample_proc(struct sampler *s, pid_t pid);

/* tune.c: the default tuning policy */
struct tuner {
	int phase;		/* 0 off, 1 boost, 2 steady */
	double boost_start, boost_total;
	long long start_scans, rmap_at_handover, steady_pages;
	int nhist, boosts;
	struct { double t; long long scans, sharing; } hist[64];
	char sleep_before[KNOB_VALUE_MAX];
	char handover[512];
};
void tune_default_knobs(struct knob_set *want, struct tuner *t);
void tune_tick(struct tuner *t, const struct sampler *s);

/* report.c */
struct profile;
struct report_opts {
	bool json;
	const char *file;
	char **argv;
	bool prctl_pre_exec;
	const struct knob_set *knobs;	/* in force during the run */
	const char *tuning;
	const struct profile *profile;	/* --profile: its table and advice */
};
int report_write(const struct report_opts *o, const struct sampler *s, const struct child *c);
void json_str(FILE *f, const char *s);

/* status.c */
int status_main(void);
int status_probe_exec_inherit(void);

#endif
