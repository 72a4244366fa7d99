/*
 * sample.c: what the report is made of.  System-wide counters from sysfs,
 * ksmd's CPU time, and the command's process tree, walked through
 * /proc/PID/task/TID/children from ksm-run itself (a subreaper, so orphans
 * stay in the tree), plus the exit lines that libksmenable appends to
 * KSM_ENABLE_REPORT.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksmrun.h"
#include "ksmstat.h"

const char *const sys_counter_names[SYS_COUNTERS] = {
	"general_profit", "pages_shared", "pages_sharing", "pages_unshared",
	"pages_volatile", "ksm_zero_pages", "full_scans", "pages_scanned", "pages_skipped",
};

/* Checking the maps is costly; a library that loads does so at exec. */
#define MAPS_CHECKS 3

void sample_sys(struct sys_sample *out)
{
	char path[128], buf[64];
	long long v;

	out->t = now_s();
	for (int i = 0; i < SYS_COUNTERS; i++) {
		snprintf(path, sizeof path, "%s/%s", KSM_DIR, sys_counter_names[i]);
		out->v[i] = LLONG_MIN;
		if (!read_text(path, buf, sizeof buf) && !parse_ll(buf, LLONG_MIN + 1, LLONG_MAX, &v))
			out->v[i] = v;
	}
}

long long sys_value(const struct sys_sample *ss, const char *name)
{
	for (int i = 0; i < SYS_COUNTERS; i++)
		if (!strcmp(sys_counter_names[i], name))
			return ss->v[i];
	return LLONG_MIN;
}

/* The stat line after the command name, which may itself hold ") ". */
static char *stat_rest(pid_t pid, char *buf, size_t len, char *comm, size_t commlen)
{
	char path[64], *open_p, *close_p;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_text(path, buf, len) || !(open_p = strchr(buf, '(')) || !(close_p = strrchr(buf, ')')))
		return NULL;
	if (comm) {
		size_t n = (size_t)(close_p - open_p - 1);
		if (n >= commlen)
			n = commlen - 1;
		memcpy(comm, open_p + 1, n);
		comm[n] = '\0';
	}
	return close_p + 2;
}

/* ksmd is a kernel thread: a child of kthreadd (pid 2), a short list. */
static pid_t ksmd_among_kthreads(void)
{
	FILE *f = fopen("/proc/2/task/2/children", "re");
	char comm[32], path[64];
	int pid;
	pid_t found = 0;

	if (!f)
		return 0;
	while (!found && fscanf(f, "%d", &pid) == 1) {
		snprintf(path, sizeof path, "/proc/%d/comm", pid);
		if (!read_text(path, comm, sizeof comm) && !strcmp(comm, "ksmd"))
			found = pid;
	}
	fclose(f);
	return found;
}

pid_t find_ksmd(void)
{
	pid_t quick = ksmd_among_kthreads();

	if (quick)
		return quick;
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char buf[512], comm[32], *rest;
		long long pid;
		int ppid;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		rest = stat_rest((pid_t)pid, buf, sizeof buf, comm, sizeof comm);
		/* A kernel thread: its parent is kthreadd, pid 2. */
		if (rest && !strcmp(comm, "ksmd") && sscanf(rest, "%*c %d", &ppid) == 1 && ppid == 2)
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}

double ksmd_cpu_seconds(pid_t ksmd)
{
	char buf[1024], comm[32], *rest;
	unsigned long long ut, st;

	if (!ksmd || !(rest = stat_rest(ksmd, buf, sizeof buf, comm, sizeof comm)) || strcmp(comm, "ksmd"))
		return -1;
	/* utime and stime are fields 14 and 15; rest starts at field 3. */
	if (sscanf(rest, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

struct proc_info *sample_proc(struct sampler *s, pid_t pid)
{
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (s->nprocs == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct proc_info *p = realloc(s->procs, (size_t)cap * sizeof *p);
		if (!p)
			return NULL;
		s->procs = p;
		s->cap = cap;
	}
	struct proc_info *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->merge_any = -1;
	p->peak_profit = LLONG_MIN;
	return p;
}

static void read_ksm_stat(pid_t pid, struct proc_info *p)
{
	struct ksmenable_stat st;
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/ksm_stat", (int)pid);
	if (ksm_stat_parse(path, &st))
		return;
	if (st.merging_pages > p->peak_merging)
		p->peak_merging = st.merging_pages;
	if (st.process_profit != -1) {
		p->profit = st.process_profit;
		if (st.process_profit > p->peak_profit)
			p->peak_profit = st.process_profit;
	}
	if (st.merge_any >= 0)
		p->merge_any = st.merge_any;
}

static bool maps_have(pid_t pid, const char *lib)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, lib) != NULL;
	fclose(f);
	return found;
}

static void visit(struct sampler *s, pid_t pid, pid_t ppid, int depth)
{
	char path[80], buf[4096], comm[32];
	struct proc_info *p;
	DIR *d;
	struct dirent *e;

	if (depth > 64 || !stat_rest(pid, buf, sizeof buf, comm, sizeof comm))
		return;
	if (pid != s->root && (p = sample_proc(s, pid))) {
		p->ppid = ppid;
		p->sampled = true;
		snprintf(p->comm, sizeof p->comm, "%s", comm);
		read_ksm_stat(pid, p);
		if (s->libpath && !p->lib_mapped && p->maps_checks < MAPS_CHECKS) {
			p->maps_checks++;
			p->lib_mapped = maps_have(pid, s->libpath);
		}
	}
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
			visit(s, child, pid, depth + 1);
		fclose(f);
	}
	closedir(d);
}

void sample_init(struct sampler *s, pid_t root, const char *libpath, const char *report_path)
{
	memset(s, 0, sizeof *s);
	s->root = root;
	s->libpath = libpath;
	s->report_path = report_path;
	s->ksmd = find_ksmd();
	sample_sys(&s->first);
	s->first.ksmd_cpu = ksmd_cpu_seconds(s->ksmd);
	s->last = s->first;
	s->profit_peak = sys_value(&s->first, "general_profit");
	s->scans_t0 = s->scans_t1 = -1;
	if (report_path) {
		int fd = open(report_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			s->report_off = lseek(fd, 0, SEEK_END);
			close(fd);
		}
	}
}

void sample_tick(struct sampler *s)
{
	long long prev = sys_value(&s->last, "full_scans"), cur;

	sample_sys(&s->last);
	s->last.ksmd_cpu = ksmd_cpu_seconds(s->ksmd);
	cur = sys_value(&s->last, "full_scans");
	if (sys_value(&s->last, "general_profit") > s->profit_peak)
		s->profit_peak = sys_value(&s->last, "general_profit");
	/* Times when a full scan ended, to the resolution of the interval. */
	if (cur != LLONG_MIN && prev != LLONG_MIN && cur != prev) {
		if (s->scans_t0 < 0) {
			s->scans_t0 = cur;
			s->scan_t0 = s->last.t;
		} else {
			s->scans_t1 = cur;
			s->scan_t1 = s->last.t;
		}
	}
	visit(s, s->root, 0, 0);
	sample_read_lib_lines(s);
}

/* A value in one of the library's JSON lines: the text after "key":. */
static const char *json_field(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof pat, "\"%s\":", key);
	if (!(p = strstr(line, pat)))
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	return p;
}

static void json_string(const char *v, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	if (!v || *v != '"')
		return;
	for (v++; *v && *v != '"' && n + 1 < len; v++) {
		if (*v == '\\' && v[1])
			v++;
		out[n++] = *v;
	}
	out[n] = '\0';
}

static void lib_line(struct sampler *s, const char *line)
{
	const char *v;
	long long pid, n;
	struct proc_info *p;

	if (!(v = json_field(line, "pid")) || sscanf(v, "%lld", &pid) != 1 || pid <= 0 || pid > INT_MAX)
		return;
	if (!(p = sample_proc(s, (pid_t)pid)))
		return;
	p->from_lib = true;
	if ((v = json_field(line, "ppid")) && sscanf(v, "%lld", &n) == 1)
		p->ppid = (pid_t)n;
	if ((v = json_field(line, "comm")))
		json_string(v, p->comm, sizeof p->comm);
	if ((v = json_field(line, "mode")))
		json_string(v, p->mode, sizeof p->mode);
	if ((v = json_field(line, "error")))
		json_string(v, p->error, sizeof p->error);
	if ((v = json_field(line, "ksm_merging_pages")) && sscanf(v, "%lld", &n) == 1 && n > p->peak_merging)
		p->peak_merging = n;
	if ((v = json_field(line, "ksm_process_profit")) && sscanf(v, "%lld", &n) == 1) {
		p->profit = n;
		if (n > p->peak_profit)
			p->peak_profit = n;
	}
	if ((v = json_field(line, "ksm_merge_any")))
		p->merge_any = !strncmp(v, "true", 4);
}

void sample_read_lib_lines(struct sampler *s)
{
	char buf[8192];
	ssize_t n;
	int fd;

	if (!s->report_path || (fd = open(s->report_path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	/* Only whole lines are consumed; a partial one is read again later. */
	while ((n = pread(fd, buf, sizeof buf - 1, s->report_off)) > 0) {
		char *line = buf, *nl;
		buf[n] = '\0';
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			lib_line(s, line);
			line = nl + 1;
		}
		if (line == buf) {
			/* A line longer than the buffer: skip it. */
			s->report_off += n;
			continue;
		}
		s->report_off += line - buf;
	}
	close(fd);
}
