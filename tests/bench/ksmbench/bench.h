/*
 * bench.h - what the parts of ksmbench share: the variants measured side
 * by side, and the helpers that run, time and inspect them (common.c).
 */
#ifndef KSMBENCH_BENCH_H
#define KSMBENCH_BENCH_H

#include <stddef.h>
#include <sys/types.h>

#define PR_GET_MEMORY_MERGE_ 68
#define PAIR_LEN (64 << 10)

enum preload { NO_PRELOAD, PRELOAD_LIB, PRELOAD_EMPTY };

struct variant {
	const char *name;
	enum preload preload;
	const char *mode; /* KSM_ENABLE_MODE, or NULL to leave it unset */
};

extern const char *self_exe;

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long count(const char *what, const char *text, long min, long max);
double now_ns(void);
/* The Qth quantile (0..1) of V[0..N); sorts V. */
double quantile(double *v, size_t n, double q);
void sleep_ms(long ms);
char **child_env(const char *const *extra);
char **variant_env(const struct variant *v, const char *lib, const char *empty, const char *more);
int wait_child(pid_t pid);
/* Runs ARGV with ENV; its stdout goes to OUT (size LEN, NUL-terminated).  Returns its status. */
int run_capture(char *const argv[], char *const env[], char *out, size_t len);
char *make_mappings(long mappings);
long count_maps(void);
long count_mergeable(unsigned long lo, unsigned long hi);

/* The subcommands, one file each. */
int cmd_start(int argc, char **argv);
int cmd_spawn(int argc, char **argv);
int cmd_mmap(int argc, char **argv);
int cmd_mmap_loop(int argc, char **argv);
int cmd_rescan(int argc, char **argv);
int cmd_rescan_child(int argc, char **argv);
int cmd_fork_load(int argc, char **argv);

#endif
