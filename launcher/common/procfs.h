/*
 * procfs.h - /proc/PID/stat, read in one place: the command name may hold
 * spaces and parentheses, so the fields are counted from the last ')'.
 */
#ifndef KSMRUN_PROCFS_H
#define KSMRUN_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_stat {
	char comm[32];
	char state;
	pid_t ppid;
	unsigned long long utime, stime;   /* clock ticks */
	unsigned long long starttime;      /* clock ticks after boot */
	unsigned flags;                    /* the kernel's PF_* of the task (field 9) */
	/* Where its program's code and stack begin (fields 26, 28): set anew by
	 * every exec, randomized by ASLR; 0 when not shown (no right to trace it). */
	unsigned long long start_code, start_stack;
};

#define PROC_PF_KTHREAD 0x00200000u        /* flags: a kernel thread */

/* Returns 0, or -1 when PID is gone or its stat cannot be read. */
int proc_stat_read(pid_t pid, struct proc_stat *st);

/* Does PID (a process, or a thread's TID) still run: there, and neither a zombie nor dead? */
bool proc_running(pid_t pid);

/* The same, and the same process: one that started at START (stat's starttime), not a PID reused. */
bool proc_running_since(pid_t pid, unsigned long long start);

/* Does a thread of process PID still run?  Its main thread may have ended before the others. */
bool proc_any_thread_running(pid_t pid);

/*
 * A thread of process PID that runs, through which its files can be read
 * when its main thread has ended (its /proc/PID/exe is gone then, the
 * others run on): the main thread if it lives, else the first other; 0 none.
 */
pid_t proc_live_thread(pid_t pid);

/*
 * Does process PID (read through its thread TID) run a program in secure
 * execution, as the kernel tells it at exec (AT_SECURE: setuid, setgid,
 * file capabilities, an LSM's say)?  1, 0, or -1 when it cannot be read.
 */
int proc_secure_exec(pid_t pid, pid_t tid);

/*
 * Calls FN for every descendant of ROOT (not ROOT itself), parents before
 * children, through /proc/PID/task/TID/children; FN returns nonzero to skip
 * that process's own descendants.  Processes that end meanwhile are left out.
 */
typedef int (*proc_visit_fn)(pid_t pid, pid_t ppid, void *arg);
void proc_walk_tree(pid_t root, proc_visit_fn fn, void *arg);

/* Does a line of /proc/PID/maps hold TEXT (a library's path, say)?  false when unreadable. */
bool proc_maps_mention(pid_t pid, const char *text);

/*
 * Calls FN on each line of /proc/PID/maps (PID may be a thread's TID) until
 * it returns true; then true, else false (also when unreadable).
 */
typedef bool (*proc_maps_line_fn)(const char *line, void *arg);
bool proc_maps_find(pid_t pid, proc_maps_line_fn fn, void *arg);

/* RssAnon of /proc/PID/status in kB, or -1. */
long long proc_rss_anon_kb(pid_t pid);

/* The process (thread group) of PID, a process's PID or a thread's TID; -1 when unreadable. */
pid_t proc_tgid(pid_t pid);

/* Is frame PFN a KSM page now?  FD is /proc/kpageflags (root only), or -1. */
bool kpage_is_ksm(int fd, uint64_t pfn);

/*
 * /proc/kpageflags for kpage_is_ksm, or -1 where it cannot be read or
 * where the kernel flags every anonymous page KSM (common/kfeature.h): then
 * no frame is taken for a KSM page.
 */
int kpageflags_open(void);

/* Parse the text of a stat file (exposed for the unit tests). */
int proc_stat_parse(char *text, struct proc_stat *st);

#endif
