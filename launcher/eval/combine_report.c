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
#include "common/json.h"
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

static void json_fingerprints(FILE *f, const struct combine_result *r)
{
	fputs("\"fingerprints\":[", f);
	for (size_t i = 0; i < r->n; i++) {
		const struct fingerprint *fp = &r->in[i].fp;
		struct ksm_tally own = { fp->own_sharing, fp->own_shared, 0, r->rule.use_zero_pages ? fp->zero_pages : 0 };
		fprintf(f, "%s{\"file\":", i ? "," : "");
		json_str(f, r->in[i].file);
		fputs(",\"label\":", f);
		json_str(f, fp->label);
		fputs(",\"host\":", f);
		json_str(f, fp->host);
		fprintf(f, ",\"time\":%lld,\"pages\":%llu,\"zero_pages\":%llu,\"volatile_pages\":%llu,"
			"\"distinct\":%llu,\"records\":%llu,\"pages_sharing\":%llu,\"pages_shared\":%llu,"
			"\"general_profit\":%lld}", (long long)fp->time, (unsigned long long)fp->pages,
			(unsigned long long)fp->zero_pages, (unsigned long long)fp->volatile_pages,
			(unsigned long long)fp->distinct, (unsigned long long)fp->records,
			(unsigned long long)fp->own_sharing, (unsigned long long)fp->own_shared,
			ksm_profit_bytes(&r->rule, &own, fp->pages));
	}
	fputc(']', f);
}

static void print_json(FILE *f, const struct combine_result *r)
{
	fprintf(f, "{\"page_size\":%llu,\"max_page_sharing\":%llu,\"use_zero_pages\":%d,\"sample\":%u,"
		"\"bound_sigmas\":%d,\"seconds\":%.3f,", (unsigned long long)r->rule.page_size,
		(unsigned long long)r->rule.max_page_sharing, r->rule.use_zero_pages, r->sample,
		COMBINE_BOUND_SIGMAS, r->seconds);
	json_fingerprints(f, r);
	fprintf(f, ",\"union\":{\"pages_sharing\":%lld,\"pages_shared\":%lld,\"zero_pages\":%llu,"
		"\"rmap_items\":%llu,\"general_profit\":%lld,\"pages_sharing_bound\":%lld,"
		"\"pages_shared_bound\":%lld}", pages(r->union_sharing), pages(r->union_shared),
		(unsigned long long)r->zero_pages, (unsigned long long)r->rmap_items, llround(r->union_profit),
		pages(r->bound_sharing), pages(r->bound_shared));
	fprintf(f, ",\"alone\":{\"pages_sharing\":%llu,\"pages_shared\":%llu,\"general_profit\":%lld}",
		(unsigned long long)r->sum_sharing, (unsigned long long)r->sum_shared, llround(r->sum_profit));
	fprintf(f, ",\"gain\":{\"pages_sharing\":%lld,\"bytes\":%lld,\"pages_sharing_bound\":%lld}",
		pages(r->gain_sharing), llround(r->gain_sharing * (double)r->rule.page_size),
		pages(r->bound_sharing));
	if (r->pair_gain) {
		size_t np;
		struct pair *p = pairs_sorted(r, &np);
		fputs(",\"matrix\":{\"labels\":[", f);
		for (size_t i = 0; i < r->n; i++) {
			fputs(i ? "," : "", f);
			json_str(f, r->in[i].fp.label);
		}
		fputs("],\"gain_pages\":[", f);
		for (size_t i = 0; i < r->n; i++) {
			fputs(i ? ",[" : "[", f);
			for (size_t j = 0; j < r->n; j++)
				fprintf(f, "%s%lld", j ? "," : "", i == j ? 0 :
					pages(r->pair_gain[i < j ? i * r->n + j : j * r->n + i]));
			fputc(']', f);
		}
		fputs("]},\"pairs\":[", f);
		for (size_t k = 0; k < np; k++)
			fprintf(f, "%s{\"a\":%zu,\"b\":%zu,\"gain_pages\":%lld,\"gain_bytes\":%lld,\"bound_pages\":%lld}",
				k ? "," : "", p[k].a, p[k].b, pages(p[k].gain),
				llround(p[k].gain * (double)r->rule.page_size),
				pages(r->pair_bound[p[k].a * r->n + p[k].b]));
		fputc(']', f);
		free(p);
	}
	fputs("}\n", f);
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
