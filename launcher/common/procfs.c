/* procfs.c - parsing /proc/PID/stat, and what else of a process /proc tells. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "common/files.h"
#include "common/kfeature.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "kernel_abi.h"

int proc_stat_parse(char *text, struct proc_stat *st)
{
	char *open_p = strchr(text, '('), *close_p = strrchr(text, ')');
	int ppid;
	size_t n;

	if (!open_p || !close_p || close_p < open_p)
		return -1;
	n = (size_t)(close_p - open_p - 1);
	if (n >= sizeof st->comm)
		n = sizeof st->comm - 1;
	memcpy(st->comm, open_p + 1, n);
	st->comm[n] = '\0';
	/* Fields 3 (state) to 22 (starttime), from after the name; 26 and 28 if there. */
	st->start_code = st->start_stack = 0;
	if (sscanf(close_p + 1, " %c %d %*d %*d %*d %*d %u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu"
		   " %*u %*d %*u %llu %*u %llu",
		   &st->state, &ppid, &st->flags, &st->utime, &st->stime, &st->starttime,
		   &st->start_code, &st->start_stack) < 6)
		return -1;
	st->ppid = (pid_t)ppid;
	return 0;
}

int proc_stat_read(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024];

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_text(path, buf, sizeof buf))
		return -1;
	return proc_stat_parse(buf, st);
}

bool proc_running_since(pid_t pid, unsigned long long start)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) == 0 && st.state != 'Z' && st.state != 'X' && st.starttime == start;
}

bool proc_running(pid_t pid)
{
	struct proc_stat st;

	return proc_stat_read(pid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

static bool thread_lives(pid_t pid, pid_t tid)
{
	char path[64], text[1024];
	struct proc_stat st;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	return read_text(path, text, sizeof text) == 0 && proc_stat_parse(text, &st) == 0 &&
	       st.state != 'Z' && st.state != 'X';
}

pid_t proc_live_thread(pid_t pid)
{
	char path[64];
	struct dirent *e;
	long long tid;
	pid_t found = 0;
	DIR *d;

	if (thread_lives(pid, pid))
		return pid;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while (!found && (e = readdir(d)))
		if (!parse_ll(e->d_name, 1, INT_MAX, &tid) && thread_lives(pid, (pid_t)tid))
			found = (pid_t)tid;
	closedir(d);
	return found;
}

bool proc_any_thread_running(pid_t pid)
{
	return proc_live_thread(pid) != 0;
}

int proc_secure_exec(pid_t pid, pid_t tid)
{
	unsigned long v[2 * 64];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/task/%d/auxv", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, v, sizeof v);
	close(fd);
	/* Pairs of (type, value), ended by AT_NULL: the kernel writes them at exec, they fit. */
	for (ssize_t i = 0; n > 0 && (i + 2) * (ssize_t)sizeof v[0] <= n && v[i] != AT_NULL; i += 2)
		if (v[i] == AT_SECURE)
			return v[i + 1] != 0;
	return -1;
}

static void walk(pid_t pid, pid_t ppid, int depth, proc_visit_fn fn, void *arg)
{
	char path[80];
	struct dirent *e;
	DIR *d;

	if (depth > 64 || (depth && fn(pid, ppid, arg)))
		return;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		long long tid;
		FILE *f;
		int child;

		if (parse_ll(e->d_name, 1, INT_MAX, &tid))
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%lld/children", (int)pid, tid);
		if (!(f = fopen(path, "re")))
			continue;
		while (fscanf(f, "%d", &child) == 1)
			walk((pid_t)child, pid, depth + 1, fn, arg);
		fclose(f);
	}
	closedir(d);
}

void proc_walk_tree(pid_t root, proc_visit_fn fn, void *arg)
{
	walk(root, 0, 0, fn, arg);
}

bool proc_maps_find(pid_t pid, proc_maps_line_fn fn, void *arg)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof line, f))
		found = fn(line, arg);
	fclose(f);
	return found;
}

static bool line_mentions(const char *line, void *text)
{
	return strstr(line, text) != NULL;
}

bool proc_maps_mention(pid_t pid, const char *text)
{
	return proc_maps_find(pid, line_mentions, (void *)text);
}

/* The number after "\nKEY" (as "\nTgid:") in /proc/PID/status: 0, or -1 when unreadable. */
static int status_number(pid_t pid, const char *key, long long *v)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_text(path, buf, sizeof buf) || !(p = strstr(buf, key)))
		return -1;
	*v = strtoll(p + strlen(key), NULL, 10);
	return 0;
}

pid_t proc_tgid(pid_t pid)
{
	long long v;

	return status_number(pid, "\nTgid:", &v) == 0 && v > 0 && v <= INT_MAX ? (pid_t)v : -1;
}

long long proc_rss_anon_kb(pid_t pid)
{
	long long v;

	return status_number(pid, "\nRssAnon:", &v) == 0 ? v : -1;
}

int kpageflags_open(void)
{
	return kfeature_present(KF_KPAGEFLAGS_KSM) ? open("/proc/kpageflags", O_RDONLY | O_CLOEXEC) : -1;
}

bool kpage_is_ksm(int fd, uint64_t pfn)
{
	uint64_t flags;

	return fd >= 0 && pread(fd, &flags, 8, (off_t)(pfn * 8)) == 8 && (flags >> KPF_KSM & 1);
}
