/*
 * estimate.c - ksm-run --estimate: predict what KSM would save, without KSM.
 *
 * For each target process: the KSM-compatible private regions that the
 * allow/deny lists select (maps), their present anonymous pages (pagemap:
 * present, not file-backed, not the shared zero page), read in runs of
 * contiguous pages from /proc/PID/mem and hashed.  Past a stretch of
 * pagemap without any, the kernel is asked where the next one is
 * (PAGEMAP_SCAN, present.c), so that terabytes of reserved address space
 * cost next to nothing.  Older kernels: smaps says which regions hold
 * nothing anonymous, and the others are read whole.  Identical contents
 * are counted across everything scanned, and the kernel's own accounting
 * turns the counts into pages_shared, pages_sharing and general_profit.
 *
 * Only present anonymous (or copy-on-write) pages count: KSM never scans
 * file pages or pages that are not there, and counting them more than
 * doubles the prediction.  Nothing is written anywhere: the targets are
 * only read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/files.h"
#include "common/ksmproc.h"
#include "common/msg.h"
#include "common/parse.h"
#include "common/present.h"
#include "common/procfs.h"
#include "common/targets.h"
#include "eval/contents.h"
#include "eval/estimate_cost.h"
#include "eval/estimate.h"
#include "eval/estimate_predict.h"
#include "eval/estimate_recheck.h"
#include "eval/estimate_report.h"
#include "eval/fingerprint_take.h"
#include "eval/hugezero.h"
#include "eval/regionclass.h"
#include "kernel_abi.h"
#include "maps.h"
#include "selection.h"
#include "selector.h"

/*
 * A read-only tool has nothing to undo: out of memory, it stops (the x*()
 * allocators of msg.h).
 */

/*
 * Why a process was skipped, where the verdict depends on it: a TARGET whose
 * processes were all absent from the start matched nothing (exit 125); one
 * whose processes went away while they were read was right, and its
 * estimate ends with nothing left (exit 1).  Compared by address.
 */
static const char SKIP_ABSENT[] = "no such process";
static const char SKIP_VANISHED[] = "vanished during the scan";
static const char SKIP_VANISHED_SETTLE[] = "vanished between the two passes (--settle)";

static unsigned class_index(struct est_result *res, const struct region *r)
{
	char name[4200];
	size_t i;

	region_class_name(r, name, sizeof name);
	for (i = 0; i < res->nclasses; i++)
		if (!strcmp(res->classes[i].name, name))
			return (unsigned)i;
	res->classes = xrealloc(res->classes, (res->nclasses + 1) * sizeof *res->classes);
	memset(&res->classes[i], 0, sizeof res->classes[i]);
	res->classes[i].name = xstrdup(name);
	res->classes[i].last_proc = (unsigned)-1;
	res->nclasses++;
	return (unsigned)i;
}

static void progress(struct scan *s)
{
	double t = now_s();

	if (!s->progress || t - s->start < 1.0 || t - s->last_progress < 0.25)
		return;
	s->last_progress = t;
	/* A progress line that rewrites itself: not a message of msg.c. */
	fprintf(stderr, "\r%s: estimating: %zu of %zu processes, %.0f MiB read", progname,
		(size_t)s->proc + 1, s->res->nprocs, s->res->bytes_read / 1048576.0);
}

/*
 * Read pages [FROM, FROM + N) of the batch, contiguous in the target, into
 * the buffer; a page that cannot be read (gone since pagemap was read) is
 * marked and skipped.  Returns -1 only when the process itself is gone.
 */
static int read_run(struct scan *s, int from, int n, unsigned char *ok)
{
	ssize_t got;
	int i;

	ssize_t page = (ssize_t)s->page;

	got = pread(s->mem_fd, s->buf + (size_t)from * s->page, (size_t)n * s->page,
		    (off_t)s->batch_addr[from]);
	if (got < 0 && errno != EIO && errno != EFAULT && errno != ENOMEM) {
		s->fail = errno == ESRCH ? SKIP_VANISHED
			: errno == EPERM || errno == EACCES ? "permission denied (cannot read its memory)"
			: strerror(errno);
		return -1;
	}
	if (got < 0)
		got = 0;
	for (i = 0; i < n; i++)
		ok[from + i] = (ssize_t)(i + 1) * page <= got;
	/* A short read stops at the first page that failed: try the rest. */
	if (got < (ssize_t)n * page && got / page + 1 < n)
		return read_run(s, from + (int)(got / page) + 1, n - (int)(got / page) - 1, ok);
	return 0;
}

/*
 * Read and hash the pages collected so far, one pread of /proc/PID/mem per
 * run of contiguous pages (measured here, it copies four to six times
 * faster than process_vm_readv, whose kernel copy is the slow memcpy).
 */
static int flush_batch(struct scan *s, struct region_rec *rr)
{
	unsigned char ok[BATCH_PAGES];
	int i, start;

	for (start = 0; start < s->nbatch; start = i) {
		for (i = start + 1; i < s->nbatch && s->batch_addr[i] == s->batch_addr[i - 1] + s->page; i++)
			;
		if (read_run(s, start, i - start, ok) < 0)
			return -1;
	}
	s->recs = xgrow(s->recs, &s->rec_cap, s->nrec + (size_t)s->nbatch, sizeof *s->recs);
	for (i = 0; i < s->nbatch; i++) {
		struct record *rec;

		if (!ok[i])
			continue;
		rec = &s->recs[s->nrec++];
		rec->addr = s->batch_addr[i];
		rec->pfn = s->batch_pfn[i];
		rec->hash = scan_page_hash(s, s->buf + (size_t)i * s->page);
		rr->n++;
		s->res->bytes_read += s->page;
	}
	s->nbatch = 0;
	progress(s);
	return 0;
}

/* Pages are batched up to 1 MiB; contiguous ones are read as one run. */
static int add_page(struct scan *s, struct region_rec *rr, uint64_t addr, uint64_t pfn)
{
	s->batch_pfn[s->nbatch] = pfn;
	s->batch_addr[s->nbatch++] = addr;
	return s->nbatch == BATCH_PAGES ? flush_batch(s, rr) : 0;
}

/*
 * Pages [ADDR, END) by their pagemap entries: present, anonymous, not the
 * zero page; read in windows of PAGEMAP_CHUNK entries.  A window without
 * any is a hole: where the kernel has PAGEMAP_SCAN, it says where the next
 * such page is, so that terabytes of reserved address space (an
 * AddressSanitizer shadow) cost a call per stretch of pages, not the
 * pagemap entry of every page, while memory that is present is read as it
 * always was.
 */
static int read_pagemap(struct scan *s, struct region_rec *rr, uint64_t addr, uint64_t end)
{
	uint64_t entries[PAGEMAP_CHUNK];

	while (addr < end) {
		size_t want = (end - addr) / s->page, i, kept = 0;
		ssize_t n;

		if (want > PAGEMAP_CHUNK)
			want = PAGEMAP_CHUNK;
		n = pread(s->pagemap_fd, entries, want * 8, (off_t)(addr / s->page * 8));
		if (n <= 0) {
			s->fail = n < 0 && errno == EACCES ? "permission denied (pagemap)" : SKIP_VANISHED;
			return -1;
		}
		s->res->pagemap_entries += (uint64_t)n / 8;
		for (i = 0; i < (size_t)n / 8; i++, addr += s->page) {
			uint64_t e = entries[i];
			if (!(e & PM_PRESENT) || (e & PM_FILE_OR_SHARED))
				continue;
			/* The shared zero page is no KSM candidate (seen with root only). */
			if (s->zero_pfn && (e & PM_PFN_MASK) == s->zero_pfn)
				continue;
			kept++;
			if (add_page(s, rr, addr, e & PM_PFN_MASK) < 0)
				return -1;
		}
		if (kept || !s->pagemap_scan || addr >= end)
			continue;
		/* The kernel skips the zero page too where pagemap shows frames
		 * (root), as the test above does: the same pages either way. */
		switch (present_next(s->pagemap_fd, addr, end, s->zero_pfn != 0, &addr)) {
		case 0:
			return 0;
		case -1:
			s->fail = errno == ESRCH ? SKIP_VANISHED : strerror(errno);
			return -1;
		}
	}
	return 0;
}

static int visit_region(const struct region *r, void *arg)
{
	struct scan *s = arg;
	struct region_rec *rr;

	if (!region_selected(&s->sel, r))
		return 0;
	s->regs = xgrow(s->regs, &s->reg_cap, s->nregs + 1, sizeof *s->regs);
	rr = &s->regs[s->nregs++];
	rr->proc = s->proc;
	rr->cls = class_index(s->res, r);
	rr->first = s->nrec;
	rr->n = 0;
	/* Without PAGEMAP_SCAN, smaps says which regions hold nothing
	 * anonymous (with it, anon_kb is not known: maps), and a region too
	 * large to read entry by entry is left out. */
	if (!s->pagemap_scan && r->anon_kb != 0 && r->end - r->start > WALK_WITHOUT_SCAN_MAX) {
		s->res->left_out_regions++;
		s->res->left_out_bytes += (uint64_t)(r->anon_kb > 0 ? r->anon_kb : 0) * 1024;
		return 0;
	}
	if (r->anon_kb != 0 && read_pagemap(s, rr, r->start, r->end) < 0)
		return -1;
	return s->nbatch ? flush_batch(s, rr) : 0;
}

static void read_ksm_stat(struct est_proc *p)
{
	struct ksmenable_stat st;

	ksm_proc_stat(p->pid, &st);       /* unreadable: every field -1 */
	p->merging_now = st.merging_pages;
	p->profit_now = st.process_profit;
	p->rmap_now = st.rmap_items;
}

static void read_comm(struct est_proc *p)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/comm", (int)p->pid);
	if (read_text(path, p->comm, sizeof p->comm))
		p->comm[0] = '\0';
}

/*
 * Why opening a target's file failed.  ENOENT: the process is gone; absent
 * in the first pass (a PID that matched nothing), vanished in the second.
 */
static const char *open_failure(const struct scan *s, int err, const char *denied)
{
	if (err != ENOENT && err != ESRCH)
		return denied;
	return s->pass ? SKIP_VANISHED_SETTLE : SKIP_ABSENT;
}

/* One pass over one process; on failure its records are dropped. */
static void scan_process(struct scan *s, struct est_proc *p)
{
	char path[64], mapsbuf[16384];
	size_t rec0 = s->nrec, reg0 = s->nregs;
	int ret;

	s->pid = p->pid;
	s->fail = NULL;
	s->nbatch = 0;
	snprintf(path, sizeof path, "/proc/%d/pagemap", (int)p->pid);
	s->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->pagemap_fd < 0) {
		p->skipped = open_failure(s, errno, "permission denied (pagemap)");
		return;
	}
	snprintf(path, sizeof path, "/proc/%d/mem", (int)p->pid);
	s->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->mem_fd < 0) {
		close(s->pagemap_fd);
		p->skipped = open_failure(s, errno, "permission denied (cannot read its memory)");
		return;
	}
	if (!s->pass && s->res->settle <= 0) {
		/* Who it is and how much it holds, for the recheck to compare
		 * (estimate_recheck.c: only without --settle's second pass). */
		struct proc_stat st;
		p->start = proc_stat_read(p->pid, &st) ? 0 : st.starttime;
		p->anon_kb = proc_rss_anon_kb(p->pid);
	}
	/* Without PAGEMAP_SCAN, smaps tells which regions hold anything
	 * anonymous; with it, maps is enough and cheaper to read. */
	snprintf(path, sizeof path, "/proc/%d/%s", (int)p->pid, s->pagemap_scan ? "maps" : "smaps");
	ret = maps_for_each(path, mapsbuf, sizeof mapsbuf, visit_region, s);
	close(s->pagemap_fd);
	close(s->mem_fd);
	/* A process that exited while it was read: /proc/PID/mem reads nothing. */
	snprintf(path, sizeof path, "/proc/%d", (int)p->pid);
	if (!s->fail && access(path, F_OK) < 0)
		s->fail = SKIP_VANISHED;
	if (ret < 0 && !s->fail)
		s->fail = errno == ENOENT || errno == ESRCH ? SKIP_VANISHED : "permission denied (maps)";
	if (s->fail) {
		p->skipped = s->fail;
		s->nrec = rec0;
		s->nregs = reg0;
		return;
	}
	p->first_rec = rec0;
	p->nrec = s->nrec - rec0;
}

static void scan_all(struct scan *s, int pass)
{
	size_t i;

	s->pass = pass;
	s->nrec = s->nregs = 0;
	for (i = 0; i < s->res->nprocs; i++) {
		s->proc = (unsigned)i;
		if (!s->res->procs[i].skipped)
			scan_process(s, &s->res->procs[i]);
	}
}

/*
 * --settle: pages whose content differs between the two passes, or that
 * the first pass did not see, are volatile; KSM never merges them.  Both
 * passes list a process's pages in address order, so one walk compares.
 */
static void mark_volatile(struct scan *s, const struct record *old, const struct est_proc *old_procs)
{
	size_t i;

	for (i = 0; i < s->res->nprocs; i++) {
		struct est_proc *p = &s->res->procs[i];
		const struct record *a, *aend;
		struct record *b, *bend;

		/* A pass that kept no page has no array: no pointer arithmetic on NULL. */
		if (p->skipped || !p->nrec)
			continue;
		a = old_procs[i].nrec ? old + old_procs[i].first_rec : NULL;
		aend = a ? a + old_procs[i].nrec : NULL;
		b = s->recs + p->first_rec;
		bend = b + p->nrec;
		for (; b < bend; b++) {
			while (a < aend && a->addr < b->addr)
				a++;
			if (a == aend || a->addr != b->addr || a->hash != b->hash) {
				b->hash = VOLATILE_HASH;
				p->volatile_pages++;
			}
		}
	}
}

static long knob(const char *name, long fallback)
{
	char path[128], buf[64];
	long long v;

	snprintf(path, sizeof path, "%s/%s", KSM_SYSFS_DIR, name);
	if (read_text(path, buf, sizeof buf) || parse_ll(buf, 0, INT_MAX, &v))
		return fallback;
	return (long)v;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The PFN of the shared zero page, where pagemap shows PFNs (root). */
static uint64_t find_zero_pfn(size_t page)
{
	volatile char *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e = 0;
	int fd;

	if (p == MAP_FAILED)
		return 0;
	(void)p[0];
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &e, 8, (off_t)((uintptr_t)p / page * 8)) != 8)
			e = 0;
		close(fd);
	}
	munmap((void *)p, page);
	return (e & PM_PRESENT) ? e & PM_PFN_MASK : 0;
}

/* The processes of every --estimate, sorted, without repeats. */
static int resolve_all(const struct estimate_opts *o, struct pid_list *pids)
{
	size_t i, k, n = o->fp && o->fp->n ? o->fp->n : 1;
	char why[512];

	memset(pids, 0, sizeof *pids);
	for (i = 0; i < n; i++) {
		const char *target = o->fp && o->fp->n ? o->fp->req[i].target : o->target;
		struct pid_list l;
		if (targets_resolve(target, &l, NULL, why, sizeof why) < 0) {
			msg("--estimate=%s: %s", target, why);
			pid_list_free(pids);
			return -1;
		}
		pids->pids = xgrow(pids->pids, &pids->cap, pids->n + l.n, sizeof *pids->pids);
		memcpy(pids->pids + pids->n, l.pids, l.n * sizeof *l.pids);
		pids->n += l.n;
		pid_list_free(&l);
	}
	if (pids->n > 1)
		qsort(pids->pids, pids->n, sizeof *pids->pids, by_pid);
	for (i = k = 0; i < pids->n; i++)
		if (!k || pids->pids[i] != pids->pids[k - 1])
			pids->pids[k++] = pids->pids[i];
	pids->n = k;
	return 0;
}

static int setup(struct scan *s, const struct estimate_opts *o, struct pid_list *pids)
{
	struct est_result *r = s->res;
	char *zero;
	size_t i;
	int z;

	selection_of_config(&s->sel, o->lib);
	if (resolve_all(o, pids) < 0)
		return -1;
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	r->page_size = (long long)s->page;
	r->nprocs = pids->n;
	r->procs = xcalloc(pids->n, sizeof *r->procs);
	s->buf = xmalloc((size_t)BATCH_PAGES * s->page);
	for (i = 0; i < pids->n; i++) {
		r->procs[i].pid = pids->pids[i];
		read_comm(&r->procs[i]);
	}
	zero = xcalloc(1, s->page);
	s->zero_hash = page_hash(zero, s->page, &z);
	free(zero);
	s->zero_pfn = find_zero_pfn(s->page);
	r->pfn_visible = s->zero_pfn != 0;
	s->pagemap_scan = present_scan_probe();
	r->pagemap_scan = s->pagemap_scan;
	r->max_page_sharing = (int)knob("max_page_sharing", 256);
	if (r->max_page_sharing < 2)
		r->max_page_sharing = 2;
	r->use_zero_pages = knob("use_zero_pages", 0) != 0;
	r->settle = o->settle;
	s->progress = isatty(STDERR_FILENO);
	return 0;
}

/*
 * No process was read: why, and the exit status.  Only absent processes:
 * the TARGET matched nothing (125).  Processes that vanished while they
 * were estimated: the TARGET was right and nothing is left (1).  Unreadable
 * ones (said above, one line each): reading them needs rights (1).
 */
static int nothing_estimated(const char *target, const struct est_result *r)
{
	size_t i, absent = 0, vanished = 0;

	for (i = 0; i < r->nprocs; i++) {
		const char *why = r->procs[i].skipped;
		absent += why == SKIP_ABSENT;
		vanished += why == SKIP_VANISHED || why == SKIP_VANISHED_SETTLE;
	}
	if (absent == r->nprocs) {
		msg("--estimate=%s: matches no process", target);
		return 125;
	}
	if (absent + vanished == r->nprocs) {
		msg("--estimate=%s: nothing left to estimate: %s exited during the estimate", target,
		    r->nprocs == 1 ? "the process" : "every process found");
		return 1;
	}
	msg("--estimate=%s: no process could be read: reading another process's memory "
	    "needs root, or the processes' own user (and ptrace allowed)", target);
	return 1;
}

int estimate_main(const struct estimate_opts *o)
{
	struct est_result res = { 0 };
	struct scan s = { .res = &res };
	struct pid_list pids;
	size_t i, scanned = 0;
	int status = 0;

	if (setup(&s, o, &pids) < 0)
		return 125;
	s.start = now_s();
	scan_all(&s, 0);
	if (o->settle > 0) {
		struct record *first = s.recs;
		struct est_proc *first_procs = xmalloc(res.nprocs * sizeof *first_procs);
		struct timespec ts = { (time_t)o->settle, (long)((o->settle - (time_t)o->settle) * 1e9) };

		memcpy(first_procs, res.procs, res.nprocs * sizeof *first_procs);
		s.recs = NULL;
		s.rec_cap = 0;
		for (i = 0; i < res.nclasses; i++)
			free(res.classes[i].name);
		free(res.classes);
		res.classes = NULL;
		res.nclasses = 0;
		nanosleep(&ts, NULL);
		scan_all(&s, 1);
		mark_volatile(&s, first, first_procs);
		free(first);
		free(first_procs);
	}
	res.seconds = now_s() - s.start - o->settle;
	if (s.progress && now_s() - s.start >= 1.0)
		fprintf(stderr, "\r\033[K");
	if (o->settle <= 0)
		recheck_sample(&s);
	for (i = 0; i < res.nprocs; i++) {
		if (!res.procs[i].skipped) {
			scanned++;
			read_ksm_stat(&res.procs[i]);
			if (res.procs[i].merging_now > 0)
				res.merging_now += res.procs[i].merging_now;
			if (res.procs[i].profit_now > 0)
				res.profit_now += res.procs[i].profit_now;
			if (res.procs[i].rmap_now > 0)
				res.rmap_now += res.procs[i].rmap_now;
		} else if (strcmp(o->target, "all")) {
			msg("--estimate: pid %d skipped: %s", (int)res.procs[i].pid, res.procs[i].skipped);
		}
	}
	if (!scanned) {
		status = nothing_estimated(o->target, &res);
		goto out;
	}
	huge_zero_find(&s);
	if (predict(&s) < 0)
		die_oom();
	res.record_bytes = s.rec_cap * sizeof *s.recs;
	estimate_cost(&res, (struct scan_rate){ o->scan_pages, o->scan_sleep_ms });
	if (o->output) {
		if ((status = estimate_print_file(o->output, &res, o->json)))
			goto out;
	} else {
		estimate_print(stdout, &res, o->json);
	}
	if (o->fp && fp_wanted(o->fp))
		status = fingerprints_take(&s, o->fp);
out:
	for (i = 0; i < res.nclasses; i++)
		free(res.classes[i].name);
	free(res.classes);
	free(res.procs);
	free(s.recs);
	free(s.huge_zero);
	free(s.sample);
	free(s.sample_changed);
	free(s.regs);
	free(s.buf);
	pid_list_free(&pids);
	return status;
}
