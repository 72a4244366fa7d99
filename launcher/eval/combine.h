/*
 * combine.h - ksm-run --combine: what KSM would save if the workloads of
 * some fingerprints ran on one host together (combine.c), and the gain of
 * each pair (--matrix); printed by combine_report.c.
 */
#ifndef KSMRUN_COMBINE_H
#define KSMRUN_COMBINE_H

#include <stdbool.h>
#include <stddef.h>

#include "eval/accounting.h"
#include "eval/fingerprint.h"

#define COMBINE_FILES_MAX 4096
#define MATRIX_FILES_MAX 1024
/* The stated error bound of a sampled figure: this many standard errors. */
#define COMBINE_BOUND_SIGMAS 3

struct combine_input {
	const char *file;
	unsigned char *buf;             /* the file, which fp points into */
	struct fingerprint fp;
};

/*
 * Figures in pages.  Each workload's own come exact from its header; what
 * putting them together adds is counted over the contents kept, scaled by
 * the sampling N, with a bound of COMBINE_BOUND_SIGMAS standard errors (0
 * at full resolution).
 */
struct combine_result {
	struct combine_input *in;
	size_t n;
	struct ksm_rule rule;
	unsigned sample;
	uint64_t rmap_items, zero_pages, records;
	uint64_t sum_sharing, sum_shared;      /* each workload alone, summed */
	double gain_sharing, gain_shared;      /* the union less the sum */
	double bound_sharing, bound_shared;
	double union_sharing, union_shared;
	double union_profit, sum_profit;       /* general_profit, bytes */
	double *pair_gain, *pair_bound;        /* N x N pages_sharing gains, --matrix */
	double seconds;
};

/* Runs --combine on FILES (NULL-terminated); the exit status (0, or 125). */
int combine_main(char **files, bool matrix, bool json, const char *output);

/* The union of R->in (loaded and checked to match); 0, or -1 out of memory. */
int combine_compute(struct combine_result *r, bool matrix);

/* Prints R: a table for people, or JSON (ksm-run(1), COMBINING). */
void combine_print(FILE *f, const struct combine_result *r, bool json);

#endif
