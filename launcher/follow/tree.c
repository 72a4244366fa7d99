/*
 * tree.c: what the report is made of.  The machine's counters at the start
 * and now, and the command's process tree, walked through
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
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "common/kfeature.h"
#include "common/ksmproc.h"
#include "common/parse.h"
#include "common/procfs.h"
#include "host/candidate.h"
#include "host/counters.h"
#include "host/groups.h"
#include "kernel_abi.h"
#include "follow/frames.h"
#include "follow/tree.h"

/* Checking the maps is costly; a library that loads does so at exec. */
#define MAPS_CHECKS 3

static void read_lib_lines(struct sampler *s);

static size_t slot_of(const struct sampler *s, pid_t pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (s->index_cap - 1);

	while (s->index[i] >= 0 && s->procs[s->index[i]].pid != pid)
		i = (i + 1) & (s->index_cap - 1);
	return i;
}

/* Keeps the index at most half full.  0, or -1 when out of memory. */
static int grow_index(struct sampler *s)
{
	size_t cap = s->index_cap ? s->index_cap * 2 : 256;
	int *old = s->index, *idx = malloc(cap * sizeof *idx);

	if (!idx)
		return -1;
	for (size_t i = 0; i < cap; i++)
		idx[i] = -1;
	s->index = idx;
	s->index_cap = cap;
	for (int k = 0; k < s->nprocs; k++)
		s->index[slot_of(s, s->procs[k].pid)] = k;
	free(old);
	return 0;
}

/*
 * The record of PID, made if new.  While the command runs ksm-run must not
 * bail out: out of memory, or beyond MAX_TRACKED, the process is not
 * followed (NULL) and the report says the tree was cut.
 */
struct proc_info *sample_proc(struct sampler *s, pid_t pid)
{
	struct proc_info *p;
	size_t slot;

	if (s->index_cap && s->index[slot = slot_of(s, pid)] >= 0)
		return &s->procs[s->index[slot]];
	if (s->nprocs >= MAX_TRACKED) {
		s->truncated = true;
		return NULL;
	}
	if (((size_t)s->nprocs + 1) * 2 > s->index_cap && grow_index(s))
		return NULL;
	if (s->nprocs == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct proc_info *np = realloc(s->procs, (size_t)cap * sizeof *np);
		if (!np)
			return NULL;
		s->procs = np;
		s->cap = cap;
	}
	p = &s->procs[s->nprocs];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->merge_any = -1;
	p->profit = p->peak_profit = LLONG_MIN;        /* a kernel without ksm_process_profit: unknown */
	p->kept_user = p->kept_program = p->kept_secret = -1;
	s->index[slot_of(s, pid)] = s->nprocs++;
	return p;
}

/* MAIN: the command itself (ksm-run's child), whose merge flag the report's coverage line judges by. */
static void read_ksm_stat(pid_t pid, struct proc_info *p, bool main)
{
	struct ksmenable_stat st;

	if (ksm_proc_stat(pid, &st))
		return;
	p->merging = st.merging_pages > 0 ? st.merging_pages : 0;
	p->rmap_items = st.rmap_items > 0 ? st.rmap_items : 0;
	p->zero_pages = st.zero_pages > 0 ? st.zero_pages : 0;
	if (st.merging_pages > 0 && !p->merge_ppid)
		p->merge_ppid = p->ppid;
	if (st.merging_pages > p->peak_merging)
		p->peak_merging = st.merging_pages;
	if (st.process_profit != -1) {
		p->profit = st.process_profit;
		if (st.process_profit > p->peak_profit)
			p->peak_profit = st.process_profit;
	}
	if (st.merge_any >= 0)
		p->merge_any = st.merge_any;
	else if (main && kfeature_present(KF_PRCTL))
		p->merge_any = ksm_proc_merge_any_by_regions(pid);      /* 6.4 to 6.13: told by its regions */
}

/* The group a process is in (groups.h's rule), for the report's per-cgroup lines. */
static char *cgroup_now(pid_t pid)
{
	char path[64], text[8192], cg[4096];

	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
	if (read_text(path, text, sizeof text) || cgroup_of_text(text, cg, sizeof cg))
		return NULL;
	return strdup(cg);
}

static int visit(pid_t pid, pid_t ppid, void *arg)
{
	struct sampler *s = arg;
	struct proc_stat st;
	struct proc_info *p;

	if (proc_stat_read(pid, &st))
		return 1;
	if ((p = sample_proc(s, pid))) {
		p->ppid = ppid;
		p->sampled = true;
		p->alive = true;
		long long peak_before = p->peak_merging;

		if (!p->cgroup)
			p->cgroup = cgroup_now(pid);
		snprintf(p->comm, sizeof p->comm, "%s", st.comm);
		read_ksm_stat(pid, p, ppid == s->root);         /* ksm-run's child: the command */
		/*
		 * Its group when its merged pages last grew: a service's helper
		 * may move itself first, and the shell that moves it may have had
		 * a few of its own pages merged before (seen in the guests).
		 */
		if (p->peak_merging > peak_before) {
			free(p->cgroup);
			p->cgroup = cgroup_now(pid);
		}
		if (s->libpath && !p->lib_mapped && p->maps_checks < MAPS_CHECKS) {
			p->maps_checks++;
			p->lib_mapped = proc_maps_mention(pid, s->libpath);
		}
	}
	return 0;
}

/*
 * The tree's saving is general_profit's formula for its processes alone,
 * with the KSM pages counted once by frame: (pages mapped from KSM pages -
 * distinct KSM pages + KSM zero pages) * page - rmap items * 64 bytes.
 * The frame pass (frames.c) costs about a microsecond per merged page, so
 * it runs when the tree's merged pages have grown by 5% since the last
 * one, or changed and 10 s have passed: the peak it keeps is then within
 * about 5% of the true one.  Not at all once it failed (not root).
 */
static void count_frames(struct sampler *s)
{
	long long merging = 0, rmap = 0, zero = 0, cand, page = sysconf(_SC_PAGESIZE);
	struct frame_count fc;
	pid_t *pids;
	int n = 0, err;

	cand = candidate_trees(&s->root, 1) + candidate_targets(s->targets, s->ntargets);
	if (cand > s->candidate_peak)
		s->candidate_peak = cand;
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].alive) {
			merging += s->procs[i].merging;
			rmap += s->procs[i].rmap_items;
			zero += s->procs[i].zero_pages;
		}
	if (s->frames_error || !merging)
		return;
	if (s->saved_last != LLONG_MIN && merging * 100 < s->frames_merging * 105 &&
	    (merging == s->frames_merging || s->last.t - s->frames_t < 10))
		return;
	if (!(pids = malloc((size_t)s->nprocs * sizeof *pids)))
		return;
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].alive && s->procs[i].merging)
			pids[n++] = s->procs[i].pid;
	err = frames_count(pids, n, &fc);
	free(pids);
	s->frames_t = s->last.t;
	s->frames_merging = merging;
	if (err) {
		s->frames_error = err;
		return;
	}
	/* general_profit's formula, for the tree: its KSM metadata counts against it. */
	s->saved_last = (fc.mapped - fc.distinct + zero) * page - rmap * KSM_RMAP_ITEM_BYTES;
	if (s->saved_last > s->saved_peak)
		s->saved_peak = s->saved_last;
}

void sample_init(struct sampler *s, const struct sys_sample *start, pid_t root, const char *libpath,
		 const char *report_path, const char *token)
{
	memset(s, 0, sizeof *s);
	s->root = root;
	s->token = token;
	s->libpath = libpath;
	s->report_path = report_path;
	s->ksmd = ksmd_find();
	s->first = *start;
	counters_sample(&s->last, s->ksmd);
	s->profit_peak = sys_value(&s->first, "general_profit");
	if (sys_value(&s->last, "general_profit") > s->profit_peak)
		s->profit_peak = sys_value(&s->last, "general_profit");
	s->profit_peak_live = LLONG_MIN;
	s->scans_t0 = s->scans_t1 = -1;
	s->saved_last = s->saved_peak = LLONG_MIN;
	if (report_path) {
		struct stat st;
		int fd = file_open_input(report_path, &st);
		if (fd >= 0) {
			s->report_off = lseek(fd, 0, SEEK_END);
			close(fd);
		}
	}
}

void sample_tick(struct sampler *s)
{
	long long prev = sys_value(&s->last, "full_scans"), cur;

	counters_sample(&s->last, s->ksmd);
	cur = sys_value(&s->last, "full_scans");
	if (sys_value(&s->last, "general_profit") > s->profit_peak)
		s->profit_peak = sys_value(&s->last, "general_profit");
	/* Two full scans visit every process ksmd tracks: the slots of those gone are dropped. */
	if (cur != LLONG_MIN && sys_value(&s->first, "full_scans") != LLONG_MIN &&
	    cur >= sys_value(&s->first, "full_scans") + 2 && sys_value(&s->last, "general_profit") != LLONG_MIN &&
	    sys_value(&s->last, "general_profit") > s->profit_peak_live)
		s->profit_peak_live = sys_value(&s->last, "general_profit");
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
	for (int i = 0; i < s->nprocs; i++)
		s->procs[i].alive = false;
	proc_walk_tree(s->root, visit, s);
	for (int i = 0; i < s->ntargets; i++) {
		struct proc_stat st;

		if (proc_stat_read(s->targets[i], &st) == 0 && visit(s->targets[i], st.ppid, s) == 0)
			proc_walk_tree(s->targets[i], visit, s);
	}
	read_lib_lines(s);
	count_frames(s);
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

/*
 * A string of the library's lines, unescaped: \c, and \uXXXX as UTF-8 (the
 * library escapes controls that way; it writes no surrogates).  Cut at a
 * whole character to fit OUT.
 */
static void json_string(const char *v, char *out, size_t len)
{
	size_t n = 0;
	unsigned cp;
	int used;

	out[0] = '\0';
	if (!v || *v != '"')
		return;
	for (v++; *v && *v != '"'; v++) {
		char ch[4];
		size_t k = 1;

		if (v[0] == '\\' && v[1] == 'u' && strspn(v + 2, "0123456789abcdefABCDEF") >= 4 &&
		    sscanf(v + 2, "%4x%n", &cp, &used) == 1 && used == 4) {
			v += 5;
			if (cp < 0x80)
				ch[0] = (char)cp;
			else if (cp < 0x800)
				ch[0] = (char)(0xc0 | cp >> 6), ch[1] = (char)(0x80 | (cp & 0x3f)), k = 2;
			else
				ch[0] = (char)(0xe0 | cp >> 12), ch[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
				ch[2] = (char)(0x80 | (cp & 0x3f)), k = 3;
		} else {
			if (*v == '\\' && v[1])
				v++;
			ch[0] = *v;
		}
		if (n + k >= len || (k == 1 && !ch[0]))
			break;
		memcpy(out + n, ch, k);
		n += k;
	}
	out[n] = '\0';
}

static void lib_line(struct sampler *s, const char *line)
{
	const char *v;
	long long pid, n;
	struct proc_info *p;

	if (!s->token || !(v = json_field(line, "token")) || strncmp(v, "\"", 1) ||
	    strncmp(v + 1, s->token, strlen(s->token)) || v[1 + strlen(s->token)] != '"') {
		s->foreign_lines++;
		return;
	}
	if (!(v = json_field(line, "pid")) || sscanf(v, "%lld", &pid) != 1 || pid <= 0 || pid > INT_MAX ||
	    pid == s->root)
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
	if ((v = json_field(line, "ksm_process_profit")) && sscanf(v, "%lld", &n) == 1 && n != -1) {
		p->profit = n;
		if (n > p->peak_profit)
			p->peak_profit = n;
	}
	if ((v = json_field(line, "ksm_merge_any")))
		p->merge_any = !strncmp(v, "true", 4);
	if ((v = json_field(line, "kept_out"))) {
		unsigned long a, b, c;
		unsigned long long user, prog, secret;
		if (sscanf(v, "{\"user\":{\"regions\":%lu,\"bytes\":%llu},\"program\":{\"ranges\":%lu,"
			   "\"bytes\":%llu},\"secret\":{\"ranges\":%lu,\"bytes\":%llu}",
			   &a, &user, &b, &prog, &c, &secret) == 6) {
			p->kept_user = (long long)user;
			p->kept_program = (long long)prog;
			p->kept_secret = (long long)secret;
		}
	}
}

static void read_lib_lines(struct sampler *s)
{
	char buf[8192];
	struct stat st;
	ssize_t n;
	int fd;

	/* KSM_ENABLE_REPORT may name anything: a FIFO must not block the run. */
	if (!s->report_path || (fd = file_open_input(s->report_path, &st)) < 0)
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
