/*
 * estimate_recheck.c - a second look at a sample of the candidate pages.
 *
 * One pass sees memory at one moment.  ksmd merges a page only after its
 * checksum held from one scan to the next, so a page that keeps changing
 * (a guest booting, a cache rewritten, a counter) is never merged, while a
 * single pass counts it as whatever it held when it was read.  --settle
 * reads everything twice and leaves such pages out; without it, one page
 * in RECHECK_SHARE (at least RECHECK_MIN, at most RECHECK_MAX) is read again
 * RECHECK_WAIT_S after the pass: a sixteenth of the pass's reading, which
 * tells the share that changed and so a range for the figures, from what
 * KSM would reach if those pages keep changing to the figure of the moment.
 *
 * The sample is every Nth record, by address within each process: pages
 * side by side tend to change together, and a stride meets every region in
 * proportion to its size.  The records are only read; nothing is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"
#include "common/procfs.h"
#include "eval/estimate_recheck.h"

#define RECHECK_SHARE 16
#define RECHECK_MIN 4096
#define RECHECK_MAX 65536

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Records the pass kept: the processes not skipped. */
static size_t records_kept(const struct est_result *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nprocs; i++)
		if (!r->procs[i].skipped)
			n += r->procs[i].nrec;
	return n;
}

/*
 * Reads again the records of P at the indices that are multiples of
 * STRIDE.  The process must be the one read in the pass: its start time,
 * checked once /proc/PID/mem is open (the file holds that process's memory
 * from then on, whatever becomes of the PID).
 */
static void recheck_process(struct scan *s, const struct est_proc *p, size_t stride)
{
	struct est_recheck *c = &s->res->recheck;
	size_t j, first = p->first_rec, end = p->first_rec + p->nrec;
	char path[64];
	long long anon;
	int fd;

	if (!p->start)
		return;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!proc_running_since(p->pid, p->start)) {
		close(fd);
		return;
	}
	for (j = (first + stride - 1) / stride * stride; j < end; j += stride) {
		const struct record *rec = &s->recs[j];
		ssize_t got = pread(fd, s->buf, s->page, (off_t)rec->addr);
		bool changed = got != (ssize_t)s->page || scan_page_hash(s, s->buf) != rec->hash;

		s->sample[s->nsample] = j;
		s->sample_changed[s->nsample++] = changed;
		c->sampled++;
		c->changed += changed;
	}
	close(fd);
	c->behind += p->nrec;
	anon = proc_rss_anon_kb(p->pid);
	if (p->anon_kb >= 0 && anon >= 0 && c->anon_kb_first >= 0) {
		c->anon_kb_first += p->anon_kb;
		c->anon_kb_now += anon;
	} else {
		c->anon_kb_first = c->anon_kb_now = -1;
	}
}

void recheck_sample(struct scan *s)
{
	struct est_result *r = s->res;
	size_t i, total = records_kept(r), want, stride;

	if (!total)
		return;
	want = total / RECHECK_SHARE;
	want = want < RECHECK_MIN ? RECHECK_MIN : want > RECHECK_MAX ? RECHECK_MAX : want;
	stride = want >= total ? 1 : total / want;
	s->sample = xmalloc((total / stride + r->nprocs) * sizeof *s->sample);
	s->sample_changed = xmalloc(total / stride + r->nprocs);
	s->nsample = 0;
	r->recheck.done = true;
	r->recheck.wait_s = RECHECK_WAIT_S;
	sleep_s(RECHECK_WAIT_S);
	for (i = 0; i < r->nprocs; i++)
		if (!r->procs[i].skipped)
			recheck_process(s, &r->procs[i], stride);
}
