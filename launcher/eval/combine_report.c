/*
 * combine_report.c - printing --combine: the workloads, their union and
 * the gain of co-location, and with --matrix the gain of every pair, as a
 * table for people or as JSON for a placement engine.  Sampled figures
 * are rounded to whole pages and carry their bound.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/human.h"
#include "common/jsonw.h"
#include "common/msg.h"
#include "common/text.h"
#include "eval/combine.h"

struct pair {
	size_t a, b;
	double gain;
};

static int by_gain(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->gain != b->gain)
		return a->gain < b->gain ? 1 : -1;
	return a->a != b->a ? (a->a > b->a) - (a->a < b->a) : (a->b > b->b) - (a->b < b->b);
}

/* Every pair, the largest gain first. */
static struct pair *pairs_sorted(const struct combine_result *r, size_t *np)
{
	struct pair *p = xmalloc((r->n * r->n / 2 + 1) * sizeof *p);
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		for (size_t j = i + 1; j < r->n; j++)
			p[k++] = (struct pair){ i, j, r->pair_gain[i * r->n + j] };
	qsort(p, k, sizeof *p, by_gain);
	*np = k;
	return p;
}

static long long pages(double v)
{
	return llround(v);
}

static const char *bytes_of(const struct combine_result *r, double pg, bool sign)
{
	return human_bytes(llround(pg * (double)r->rule.page_size), sign);
}

static void json_fingerprints(struct jsonw *w, const struct combine_result *r)
{
	jw_array(w, "fingerprints");
	for (size_t i = 0; i < r->n; i++) {
		const struct fingerprint *fp = &r->in[i].fp;
		struct ksm_tally own = { fp->own_sharing, fp->own_shared, 0, r->rule.use_zero_pages ? fp->zero_pages : 0 };

		jw_object(w, NULL);
		jw_string(w, "file", r->in[i].file);
		jw_string(w, "label", fp->label);
		jw_string(w, "host", fp->host);
		jw_ll(w, "time", (long long)fp->time);
		jw_ll(w, "pages", (long long)fp->pages);
		jw_ll(w, "zero_pages", (long long)fp->zero_pages);
		jw_ll(w, "volatile_pages", (long long)fp->volatile_pages);
		jw_ll(w, "distinct", (long long)fp->distinct);
		jw_ll(w, "records", (long long)fp->records);
		jw_ll(w, "pages_sharing", (long long)fp->own_sharing);
		jw_ll(w, "pages_shared", (long long)fp->own_shared);
		jw_ll(w, "general_profit", ksm_profit_bytes(&r->rule, &own, fp->pages));
		jw_end(w);
	}
	jw_end(w);
}

static void json_matrix(struct jsonw *w, const struct combine_result *r)
{
	size_t np;
	struct pair *p = pairs_sorted(r, &np);

	jw_object(w, "matrix");
	jw_array(w, "labels");
	for (size_t i = 0; i < r->n; i++)
		jw_string(w, NULL, r->in[i].fp.label);
	jw_end(w);
	jw_array(w, "gain_pages");
	for (size_t i = 0; i < r->n; i++) {
		jw_array(w, NULL);
		for (size_t j = 0; j < r->n; j++)
			jw_ll(w, NULL, i == j ? 0 : pages(r->pair_gain[i < j ? i * r->n + j : j * r->n + i]));
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
	jw_array(w, "pairs");
	for (size_t k = 0; k < np; k++) {
		jw_object(w, NULL);
		jw_ll(w, "a", (long long)p[k].a);
		jw_ll(w, "b", (long long)p[k].b);
		jw_ll(w, "gain_pages", pages(p[k].gain));
		jw_ll(w, "gain_bytes", llround(p[k].gain * (double)r->rule.page_size));
		jw_ll(w, "bound_pages", pages(r->pair_bound[p[k].a * r->n + p[k].b]));
		jw_end(w);
	}
	jw_end(w);
	free(p);
}

static void print_json(FILE *f, const struct combine_result *r)
{
	struct jsonw w;

	jw_start(&w, f);
	jw_object(&w, NULL);
	jw_ll(&w, "page_size", (long long)r->rule.page_size);
	jw_ll(&w, "max_page_sharing", (long long)r->rule.max_page_sharing);
	jw_ll(&w, "use_zero_pages", r->rule.use_zero_pages);
	jw_ll(&w, "sample", r->sample);
	jw_ll(&w, "bound_sigmas", COMBINE_BOUND_SIGMAS);
	jw_fixed(&w, "seconds", r->seconds, 3, false);
	json_fingerprints(&w, r);
	jw_object(&w, "union");
	jw_ll(&w, "pages_sharing", pages(r->union_sharing));
	jw_ll(&w, "pages_shared", pages(r->union_shared));
	jw_ll(&w, "zero_pages", (long long)r->zero_pages);
	jw_ll(&w, "rmap_items", (long long)r->rmap_items);
	jw_ll(&w, "general_profit", llround(r->union_profit));
	jw_ll(&w, "pages_sharing_bound", pages(r->bound_sharing));
	jw_ll(&w, "pages_shared_bound", pages(r->bound_shared));
	jw_end(&w);
	jw_object(&w, "alone");
	jw_ll(&w, "pages_sharing", (long long)r->sum_sharing);
	jw_ll(&w, "pages_shared", (long long)r->sum_shared);
	jw_ll(&w, "general_profit", llround(r->sum_profit));
	jw_end(&w);
	jw_object(&w, "gain");
	jw_ll(&w, "pages_sharing", pages(r->gain_sharing));
	jw_ll(&w, "bytes", llround(r->gain_sharing * (double)r->rule.page_size));
	jw_ll(&w, "pages_sharing_bound", pages(r->bound_sharing));
	jw_end(&w);
	if (r->pair_gain)
		json_matrix(&w, r);
	jw_finish(&w);
}

static void print_matrix(FILE *f, const struct combine_result *r)
{
	size_t np, shown;
	struct pair *p = pairs_sorted(r, &np);

	fprintf(f, "\nGain of co-location of each pair (pages_sharing%s):\n     ", r->sample > 1 ? ", sampled" : "");
	for (size_t j = 0; j < r->n; j++)
		fprintf(f, " %9zu", j + 1);
	fputc('\n', f);
	for (size_t i = 0; i < r->n; i++) {
		fprintf(f, "%4zu ", i + 1);
		for (size_t j = 0; j < r->n; j++)
			if (i == j)
				fprintf(f, " %9s", "-");
			else
				fprintf(f, " %9lld", pages(r->pair_gain[i < j ? i * r->n + j : j * r->n + i]));
		fputc('\n', f);
	}
	shown = np < 10 ? np : 10;
	fprintf(f, "\nBest pairs to put together (%zu of %zu):\n", shown, np);
	for (size_t k = 0; k < shown; k++) {
		fprintf(f, "  %s + %s: %s", printable(r->in[p[k].a].fp.label), printable(r->in[p[k].b].fp.label),
			bytes_of(r, p[k].gain, false));
		if (r->sample > 1)
			fprintf(f, " (+/- %s)", bytes_of(r, r->pair_bound[p[k].a * r->n + p[k].b], false));
		fputc('\n', f);
	}
	free(p);
}

void combine_print(FILE *f, const struct combine_result *r, bool json)
{
	if (json) {
		print_json(f, r);
		return;
	}
	fprintf(f, "Combined %zu fingerprints in %.2f s (page size %llu, max_page_sharing %llu, "
		"use_zero_pages %d, sampling 1/%u):\n", r->n, r->seconds, (unsigned long long)r->rule.page_size,
		(unsigned long long)r->rule.max_page_sharing, r->rule.use_zero_pages, r->sample);
	fprintf(f, "  %4s  %-24s %-16s %12s %12s %12s\n", "#", "LABEL", "HOST", "PAGES", "SHARING", "PROFIT");
	for (size_t i = 0; i < r->n; i++) {
		const struct fingerprint *fp = &r->in[i].fp;
		struct ksm_tally own = { fp->own_sharing, fp->own_shared, 0, r->rule.use_zero_pages ? fp->zero_pages : 0 };
		fprintf(f, "  %4zu  %-24s %-16s %12llu %12llu %12s\n", i + 1, printable(fp->label),
			printable(fp->host[0] ? fp->host : "?"), (unsigned long long)fp->pages,
			(unsigned long long)fp->own_sharing,
			human_bytes(ksm_profit_bytes(&r->rule, &own, fp->pages), false));
	}
	fprintf(f, "\nTogether on one host:\n");
	fprintf(f, "  pages_sharing   %12lld", pages(r->union_sharing));
	if (r->sample > 1)
		fprintf(f, "  +/- %lld", pages(r->bound_sharing));
	fprintf(f, "\n  pages_shared    %12lld", pages(r->union_shared));
	if (r->sample > 1)
		fprintf(f, "  +/- %lld", pages(r->bound_shared));
	fprintf(f, "\n  zero pages      %12llu  (%s)\n", (unsigned long long)r->zero_pages,
		r->rule.use_zero_pages ? "use_zero_pages=1: merged with the zero page" : "merged like any other content");
	fprintf(f, "  general_profit  %12s  (rmap_items overhead %s included)\n", human_bytes(llround(r->union_profit), false),
		human_bytes((long long)r->rmap_items * (long long)(8 * sizeof(void *)), false));
	fprintf(f, "  each alone      %12llu pages_sharing, general_profit %s in all\n",
		(unsigned long long)r->sum_sharing, human_bytes(llround(r->sum_profit), false));
	fprintf(f, "  gain of co-location %lld pages (%s)", pages(r->gain_sharing), bytes_of(r, r->gain_sharing, true));
	if (r->sample > 1)
		fprintf(f, " +/- %lld pages", pages(r->bound_sharing));
	fputc('\n', f);
	if (r->sample > 1)
		fprintf(f, "  (sampled: each workload's own figures are exact; the gain is counted over the 1/%u of\n"
			"  contents kept and scaled by %u; +/- is %d standard errors of that estimate)\n",
			r->sample, r->sample, COMBINE_BOUND_SIGMAS);
	if (r->pair_gain)
		print_matrix(f, r);
}
