/*
 * fuzz_fingerprint.c - fingerprints from anywhere (launcher/eval/
 * fingerprint_read.c): fp_parse on any bytes, and for every fingerprint it
 * accepts:
 *   - the records walk as fp_parse promised: as many as the header says,
 *     hashes increasing, each a multiple of the sampling, their pages
 *     within the pages read, then the end;
 *   - a round trip: fp_encode of the header and records gives the input
 *     again, byte for byte (the encoding is canonical);
 *   - every shorter prefix is refused (the length is exact);
 *   - combined with itself (combine_compute, with --matrix), the gain is
 *     never negative, the pair's gain is the union's, and the union is the
 *     sum alone plus the gain.
 *
 * Input: a byte of flags, then the file.  Flag 1: the last 4 bytes are
 * replaced by the right CRC-32 first, so that the fuzzer gets past the
 * checksum to the header and records (a random change fails it).
 */
#include <math.h>

#include "eval/combine.h"
#include "eval/fingerprint.h"
#include "fuzz.h"

static void walk(const struct fingerprint *fp, struct fp_content **out)
{
	struct fp_cursor c;
	struct fp_content x, *v = fuzz_alloc((fp->records + 1) * sizeof *v);
	uint64_t n = 0, held = fp->zero_pages + fp->volatile_pages, prev = 0;
	int r;

	fp_cursor_init(&c, fp);
	while ((r = fp_next(&c, &x)) > 0) {
		FUZZ_CHECK(n < fp->records, "more than %llu records", (unsigned long long)fp->records);
		FUZZ_CHECK(!n || x.hash > prev, "record %llu: hash not increasing", (unsigned long long)n);
		FUZZ_CHECK(x.hash / fp->sample * fp->sample == x.hash, "record %llu: hash not sampled", (unsigned long long)n);
		FUZZ_CHECK(x.pages >= 1 && x.pages <= fp->pages - held, "record %llu: %llu pages",
			   (unsigned long long)n, (unsigned long long)x.pages);
		held += x.pages;
		prev = x.hash;
		v[n++] = x;
	}
	FUZZ_CHECK(r == 0 && n == fp->records, "walk ended with %d after %llu of %llu records", r,
		   (unsigned long long)n, (unsigned long long)fp->records);
	*out = v;
}

static void with_itself(const struct fingerprint *fp)
{
	struct combine_input in[2] = { { "a", NULL, *fp }, { "b", NULL, *fp } };
	struct combine_result r = {
		.in = in, .n = 2, .sample = fp->sample,
		.rule = { fp->max_page_sharing, fp->use_zero_pages != 0, fp->page_size },
	};

	FUZZ_CHECK(combine_compute(&r, true) == 0, "combine_compute failed");
	FUZZ_CHECK(r.gain_sharing >= 0, "negative gain %g", r.gain_sharing);
	FUZZ_CHECK(fabs(r.pair_gain[1] - r.gain_sharing) <= 1e-6 * (1 + r.gain_sharing),
		   "pair gain %g, union gain %g", r.pair_gain[1], r.gain_sharing);
	FUZZ_CHECK(r.union_sharing == (double)r.sum_sharing + r.gain_sharing, "union is not alone + gain");
	FUZZ_CHECK(r.rmap_items == 2 * fp->pages, "rmap_items %llu", (unsigned long long)r.rmap_items);
	free(r.pair_gain);
	free(r.pair_bound);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fingerprint fp, again;
	struct fp_content *v;
	unsigned char *buf, *enc;
	char why[512];
	size_t len, n;

	if (!size)
		return 0;
	len = size - 1;
	buf = fuzz_alloc(len);
	memcpy(buf, data + 1, len);
	if ((data[0] & 1) && len >= 4) {
		uint32_t crc = fp_crc32(buf, len - 4);
		for (int i = 0; i < 4; i++)
			buf[len - 4 + i] = (unsigned char)(crc >> (8 * i));
	}
	if (fp_parse(buf, len, &fp, why, sizeof why) < 0) {
		FUZZ_CHECK(why[0], "refused without a reason");
		free(buf);
		return 0;
	}
	walk(&fp, &v);
	again = fp;
	FUZZ_CHECK(fp_encode(&again, v, fp.records, &enc, &n) == 0, "fp_encode failed");
	FUZZ_CHECK(n == len && !memcmp(enc, buf, len), "round trip: %zu bytes, then %zu", len, n);
	for (size_t k = len > 64 ? len - 64 : 0; k < len; k++)
		FUZZ_CHECK(fp_parse(buf, k, &again, why, sizeof why) < 0, "a prefix of %zu bytes accepted", k);
	with_itself(&fp);
	free(enc);
	free(v);
	free(buf);
	return 0;
}
