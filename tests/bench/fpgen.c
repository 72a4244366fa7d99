/*
 * fpgen - synthetic fingerprints for the --combine benchmark
 * (tests/bench/fleet-bench): no machine here holds a hundred 1 GiB
 * workloads, so their fingerprints are made up, written by ksm-run's own
 * encoder.
 *
 *   fpgen DIR COUNT [PAGES]     COUNT files DIR/wNNN.kfp of PAGES pages (262144: 1 GiB)
 *
 * Each workload's pages: 20% contents that every workload holds (the same
 * runtime and libraries), 20% contents shared within its group of ten
 * (the same service), 10% duplicates within itself (2 to 8 pages a
 * content), 5% zero pages, the rest its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/accounting.h"
#include "eval/fingerprint.h"

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int by_hash(const void *a, const void *b)
{
	const struct fp_content *x = a, *y = b;

	return (x->hash > y->hash) - (x->hash < y->hash);
}

static int one(const char *dir, unsigned w, uint64_t pages)
{
	const struct ksm_rule rule = { 256, false, 4096 };
	struct fingerprint fp = { .page_size = 4096, .sample = 1, .max_page_sharing = 256, .time = 1796000000 };
	struct fp_content *c = malloc(pages * sizeof *c);
	struct ksm_tally t = { 0 };
	uint64_t n = 0, used = 0, k, common = pages / 5, group = pages / 5, dups = pages / 10;
	unsigned char *buf;
	char path[4096];
	size_t len;
	FILE *f;

	if (!c)
		return -1;
	for (k = 0; k < common; k++)
		c[n++] = (struct fp_content){ mix(1ULL << 62 | k), 1, false };
	for (k = 0; k < group; k++)
		c[n++] = (struct fp_content){ mix(2ULL << 62 | (uint64_t)(w / 10) << 32 | k), 1, false };
	used = common + group;
	for (k = 0; used < common + group + dups; k++) {
		uint64_t m = 2 + mix((uint64_t)w << 32 | k) % 7;
		c[n++] = (struct fp_content){ mix(3ULL << 62 | (uint64_t)w << 32 | k), m, false };
		used += m;
	}
	fp.zero_pages = pages / 20;
	for (k = 0; used + fp.zero_pages < pages; k++, used++)
		c[n++] = (struct fp_content){ mix(3ULL << 62 | (uint64_t)w << 32 | 1ULL << 31 | k), 1, false };
	qsort(c, n, sizeof *c, by_hash);
	for (k = 0; k < n; k++)
		ksm_tally_content(&rule, &t, c[k].pages, false);
	ksm_tally_zero(&rule, &t, fp.zero_pages);
	fp.pages = used + fp.zero_pages;
	fp.distinct = n;
	fp.own_sharing = t.pages_sharing;
	fp.own_shared = t.pages_shared;
	snprintf(fp.host, sizeof fp.host, "host%u", w);
	snprintf(fp.label, sizeof fp.label, "w%03u", w);
	if (fp_encode(&fp, c, n, &buf, &len) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/w%03u.kfp", dir, w);
	if (!(f = fopen(path, "w")) || fwrite(buf, 1, len, f) != len || fclose(f))
		return -1;
	free(buf);
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned count;
	uint64_t pages;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: fpgen DIR COUNT [PAGES]\n");
		return 2;
	}
	count = (unsigned)strtoul(argv[2], NULL, 10);
	pages = argc > 3 ? strtoull(argv[3], NULL, 10) : 262144;
	for (unsigned w = 0; w < count; w++)
		if (one(argv[1], w, pages) < 0) {
			perror("fpgen");
			return 1;
		}
	return 0;
}
