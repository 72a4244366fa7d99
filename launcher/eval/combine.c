/*
 * combine.c - the union of fingerprints, with the kernel's accounting.
 *
 * The fingerprints' records are merged in hash order (a heap of one
 * cursor per file), so memory stays at the files themselves however many
 * contents they hold.  For each content the union holds the sum of its
 * pages; the rule of accounting.c decides what that content saves alone
 * in each workload and in the union, and the difference is the gain of
 * co-location.  Zero pages are exact: each fingerprint counts them all.
 *
 * Sampled fingerprints hold the contents whose hash is 0 modulo N, the
 * same contents on every host: the gain over them, times N, estimates the
 * gain over all.  Each content is in the sample with probability 1/N, so
 * the estimate's variance is (N - 1) times the sum of the squared gains of
 * all contents, which N times the sum over the sample estimates.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/files.h"
#include "common/msg.h"
#include "common/reportfile.h"
#include "eval/combine.h"

struct holder {
	size_t file;
	uint64_t pages;
	bool one_frame;
	uint64_t alone;                 /* its pages_sharing in that workload alone */
};

/* The heap holds each file's current hash beside it: no indirection in
 * the comparisons, which are most of --combine's time. */
struct slot {
	uint64_t hash;
	size_t file;
};

struct merge {
	struct fp_cursor *cur;
	struct fp_content *head;        /* each file's current record */
	struct slot *heap;              /* files by head hash */
	size_t nheap;
};

static void sift_down(struct merge *m, size_t i)
{
	struct slot x = m->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= m->nheap)
			break;
		if (c + 1 < m->nheap && m->heap[c + 1].hash < m->heap[c].hash)
			c++;
		if (m->heap[c].hash >= x.hash)
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = x;
}

/* Moves the heap's top file to its next record (or out of the heap). */
static void advance_top(struct merge *m)
{
	size_t f = m->heap[0].file;

	/* Records were all decoded once by fp_parse: no error here. */
	if (fp_next(&m->cur[f], &m->head[f]) > 0)
		m->heap[0].hash = m->head[f].hash;
	else
		m->heap[0] = m->heap[--m->nheap];
	if (m->nheap)
		sift_down(m, 0);
}

static uint64_t sharing_of(const struct ksm_rule *rule, uint64_t n, bool one_frame, uint64_t *shared)
{
	struct ksm_tally t = { 0 };

	ksm_tally_content(rule, &t, n, one_frame);
	*shared = t.pages_shared;
	return t.pages_sharing;
}

/* One content held by H (NH files): its gain, and each pair's for --matrix. */
static void add_content(struct combine_result *r, struct holder *h, size_t nh, double *g2, double *gs2,
			double *pair_g2)
{
	uint64_t total = 0, own = 0, own_shared = 0, shared, s, sh;
	double g, gs;

	for (size_t i = 0; i < nh; i++) {
		total += h[i].pages;
		h[i].alone = sharing_of(&r->rule, h[i].pages, h[i].one_frame, &sh);
		own += h[i].alone;
		own_shared += sh;
	}
	/* Held by one workload alone, it stays what it was there. */
	s = sharing_of(&r->rule, total, nh == 1 && h[0].one_frame, &shared);
	g = (double)s - (double)own;
	gs = (double)shared - (double)own_shared;
	r->gain_sharing += g;
	r->gain_shared += gs;
	*g2 += g * g;
	*gs2 += gs * gs;
	if (!r->pair_gain)
		return;
	for (size_t i = 0; i < nh; i++)
		for (size_t j = i + 1; j < nh; j++) {
			/* Two workloads' pages never map one frame: all merge. */
			double pg = (double)ksm_sharing(&r->rule, h[i].pages + h[j].pages, false) -
				    (double)h[i].alone - (double)h[j].alone;
			size_t lo = h[i].file < h[j].file ? h[i].file : h[j].file;
			size_t x = lo * r->n + (h[i].file ^ h[j].file ^ lo);    /* the upper triangle */
			r->pair_gain[x] += pg;
			pair_g2[x] += pg * pg;
		}
}

/* The zero pages, exact: one content across the union (use_zero_pages=0). */
static void add_zero(struct combine_result *r)
{
	struct ksm_tally all = { 0 }, one;
	double sum = 0, sum_shared = 0;

	for (size_t i = 0; i < r->n; i++) {
		memset(&one, 0, sizeof one);
		ksm_tally_zero(&r->rule, &one, r->in[i].fp.zero_pages);
		sum += (double)one.pages_sharing;
		sum_shared += (double)one.pages_shared;
		r->zero_pages += r->in[i].fp.zero_pages;
	}
	ksm_tally_zero(&r->rule, &all, r->zero_pages);
	r->gain_sharing += (double)all.pages_sharing - sum;
	r->gain_shared += (double)all.pages_shared - sum_shared;
	if (!r->pair_gain)
		return;
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = i + 1; j < r->n; j++) {
			struct ksm_tally a = { 0 }, b = { 0 }, ab = { 0 };
			ksm_tally_zero(&r->rule, &a, r->in[i].fp.zero_pages);
			ksm_tally_zero(&r->rule, &b, r->in[j].fp.zero_pages);
			ksm_tally_zero(&r->rule, &ab, r->in[i].fp.zero_pages + r->in[j].fp.zero_pages);
			r->pair_gain[i * r->n + j] +=
				(double)ab.pages_sharing - (double)a.pages_sharing - (double)b.pages_sharing;
		}
}

static double bound(double n, double sum_sq)
{
	return COMBINE_BOUND_SIGMAS * sqrt(n * (n - 1) * sum_sq);
}

int combine_compute(struct combine_result *r, bool matrix)
{
	struct merge m = { 0 };
	struct holder *h = calloc(r->n, sizeof *h);
	double g2 = 0, gs2 = 0, *pair_g2 = NULL, n = r->sample;
	int ret = -1;

	m.cur = calloc(r->n, sizeof *m.cur);
	m.head = calloc(r->n, sizeof *m.head);
	m.heap = calloc(r->n, sizeof *m.heap);
	if (matrix) {
		r->pair_gain = calloc(r->n * r->n, sizeof *r->pair_gain);
		r->pair_bound = calloc(r->n * r->n, sizeof *r->pair_bound);
		pair_g2 = calloc(r->n * r->n, sizeof *pair_g2);
	}
	if (!h || !m.cur || !m.head || !m.heap || (matrix && (!r->pair_gain || !r->pair_bound || !pair_g2)))
		goto out;
	for (size_t i = 0; i < r->n; i++) {
		const struct fingerprint *fp = &r->in[i].fp;
		fp_cursor_init(&m.cur[i], fp);
		if (fp_next(&m.cur[i], &m.head[i]) > 0)
			m.heap[m.nheap++] = (struct slot){ m.head[i].hash, i };
		r->rmap_items += fp->pages;
		r->sum_sharing += fp->own_sharing;
		r->sum_shared += fp->own_shared;
		r->records += fp->records;
	}
	for (size_t i = m.nheap / 2 + 1; i-- > 0;)
		sift_down(&m, i);
	while (m.nheap) {
		uint64_t hash = m.heap[0].hash;
		size_t nh = 0;
		while (m.nheap && m.heap[0].hash == hash) {
			size_t f = m.heap[0].file;
			h[nh++] = (struct holder){ f, m.head[f].pages, m.head[f].one_frame, 0 };
			advance_top(&m);
		}
		add_content(r, h, nh, &g2, &gs2, pair_g2);
	}
	/* Scaled to all contents; the zero pages are exact and added after. */
	r->gain_sharing *= n;
	r->gain_shared *= n;
	if (matrix)
		for (size_t i = 0; i < r->n * r->n; i++) {
			r->pair_gain[i] *= n;
			r->pair_bound[i] = bound(n, pair_g2[i]);
		}
	r->bound_sharing = bound(n, g2);
	r->bound_shared = bound(n, gs2);
	add_zero(r);
	r->union_sharing = (double)r->sum_sharing + r->gain_sharing;
	r->union_shared = (double)r->sum_shared + r->gain_shared;
	for (size_t i = 0; i < r->n; i++) {
		struct ksm_tally own = { r->in[i].fp.own_sharing, r->in[i].fp.own_shared, 0,
					 r->rule.use_zero_pages ? r->in[i].fp.zero_pages : 0 };
		r->sum_profit += (double)ksm_profit_bytes(&r->rule, &own, r->in[i].fp.pages);
	}
	r->union_profit = r->sum_profit + r->gain_sharing * (double)r->rule.page_size;
	ret = 0;
out:
	free(h);
	free(m.cur);
	free(m.head);
	free(m.heap);
	free(pair_g2);
	return ret;
}

/* What keeps two fingerprints apart: NULL when they can be combined. */
static const char *mismatch(const struct fingerprint *a, const struct fingerprint *b, char *buf, size_t len)
{
	if (a->version != b->version)
		snprintf(buf, len, "format versions %u and %u differ", a->version, b->version);
	else if (a->hash_fn != b->hash_fn)
		snprintf(buf, len, "hash functions %u and %u differ", a->hash_fn, b->hash_fn);
	else if (a->page_size != b->page_size)
		snprintf(buf, len, "page sizes %u and %u differ", a->page_size, b->page_size);
	else if (a->sample != b->sample)
		snprintf(buf, len, "sampling 1/%u and 1/%u differ", a->sample, b->sample);
	else if (a->max_page_sharing != b->max_page_sharing)
		snprintf(buf, len, "max_page_sharing %u and %u differ", a->max_page_sharing, b->max_page_sharing);
	else if (a->use_zero_pages != b->use_zero_pages)
		snprintf(buf, len, "use_zero_pages %u and %u differ", a->use_zero_pages, b->use_zero_pages);
	else if (a->key_id != b->key_id)
		snprintf(buf, len, "they were made with different keys (key ids %016llx and %016llx); "
			 "take every fingerprint of a fleet with one --fingerprint-key",
			 (unsigned long long)a->key_id, (unsigned long long)b->key_id);
	else
		return NULL;
	return buf;
}

static int load_all(struct combine_result *r, char **files)
{
	char why[512], diff[320];

	for (size_t i = 0; i < r->n; i++) {
		struct combine_input *in = &r->in[i];
		size_t len;
		in->file = files[i];
		if (fp_load(in->file, &in->buf, &len, why, sizeof why) < 0 ||
		    fp_parse(in->buf, len, &in->fp, why, sizeof why) < 0) {
			msg("--combine: %s: %s", in->file, why);
			return -1;
		}
		if (i && mismatch(&r->in[0].fp, &in->fp, diff, sizeof diff)) {
			msg("--combine: %s and %s cannot be combined: %s", r->in[0].file, in->file, diff);
			return -1;
		}
	}
	r->rule = (struct ksm_rule){ r->in[0].fp.max_page_sharing, r->in[0].fp.use_zero_pages != 0,
				     r->in[0].fp.page_size };
	r->sample = r->in[0].fp.sample;
	return 0;
}

/* The figures to --report-file, whole or not at all: 0 or 125. */
static int print_to_file(const struct combine_result *r, bool json, const char *path)
{
	struct report_text t;

	report_text_open(&t);
	combine_print(t.f, r, json);
	return report_text_write(&t, path);
}

int combine_main(char **files, bool matrix, bool json, const char *output)
{
	struct combine_result r = { 0 };
	double start = now_s();
	int status = 125;

	while (files[r.n])
		r.n++;
	if (r.n > COMBINE_FILES_MAX || (matrix && r.n > MATRIX_FILES_MAX)) {
		msg("--combine: %zu fingerprints; at most %d (%d with --matrix)", r.n, COMBINE_FILES_MAX,
		    MATRIX_FILES_MAX);
		return 125;
	}
	r.in = xcalloc(r.n, sizeof *r.in);
	if (load_all(&r, files) < 0)
		goto out;
	if (combine_compute(&r, matrix) < 0)
		die_oom();
	r.seconds = now_s() - start;
	if (output) {
		status = print_to_file(&r, json, output);
		goto out;
	}
	combine_print(stdout, &r, json);
	status = 0;
out:
	for (size_t i = 0; i < r.n; i++)
		free(r.in[i].buf);
	free(r.in);
	free(r.pair_gain);
	free(r.pair_bound);
	return status;
}
