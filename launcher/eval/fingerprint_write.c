/*
 * fingerprint_write.c - encoding a fingerprint (fingerprint.h): binary,
 * or the same content as TSV for SQL engines (ksm-run(1), FINGERPRINT
 * FORMAT).
 *
 * Sorted 64-bit hashes of N distinct contents are about 2^64 / N apart, so
 * a delta takes 64 - log2(N) bits: 7 bytes of varint from N = 2^15 on.
 * The "more" bit shares the delta's varint because most contents are held
 * by one page: such a record is the delta alone.  Sampled hashes are all
 * multiples of N: deltas are stored divided by N, so that a sample costs
 * what a full fingerprint of as many contents does.
 */
#include <stdlib.h>
#include <string.h>

#include "eval/fingerprint.h"

static unsigned char *put_varint(unsigned char *p, unsigned __int128 v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

int fp_encode(struct fingerprint *fp, const struct fp_content *c, size_t n, unsigned char **out, size_t *len)
{
	size_t hl = strlen(fp->host), ll = strlen(fp->label);
	/* At most two varints of 10 bytes a record. */
	size_t cap = FP_HEADER_BYTES + hl + ll + n * 20 + 4;
	unsigned char *buf = malloc(cap), *p, *body;
	uint64_t prev = 0;

	if (!buf)
		return -1;
	body = buf + FP_HEADER_BYTES + hl + ll;
	p = body;
	for (size_t i = 0; i < n; i++) {
		unsigned __int128 delta = (c[i].hash - prev) / fp->sample;
		bool more = c[i].pages > 1;
		p = put_varint(p, delta << 1 | more);
		if (more)
			p = put_varint(p, (unsigned __int128)(c[i].pages - 2) << 1 | c[i].one_frame);
		prev = c[i].hash;
	}
	fp->version = FP_VERSION;
	fp->hash_fn = FP_HASH_KEYED;
	fp->records = n;
	fp->body_len = (size_t)(p - body);
	fp_header_put(buf, fp);
	memcpy(buf + FP_HEADER_BYTES, fp->host, hl);
	memcpy(buf + FP_HEADER_BYTES + hl, fp->label, ll);
	fp_le_put(p, fp_crc32(buf, (size_t)(p - buf)), 4);
	p += 4;
	*out = buf;
	*len = (size_t)(p - buf);
	return 0;
}

void fp_write_tsv(FILE *f, const struct fingerprint *fp, const struct fp_content *c, size_t n)
{
	fprintf(f, "hash\tpages\tone_frame\tlabel\n");
	/* The key's id, as a row of no pages: only files of one key go together. */
	fprintf(f, "key:%016llx\t0\t0\t%s\n", (unsigned long long)fp->key_id, fp->label);
	fprintf(f, "pages\t%llu\t0\t%s\n", (unsigned long long)fp->pages, fp->label);
	fprintf(f, "zero\t%llu\t0\t%s\n", (unsigned long long)fp->zero_pages, fp->label);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%016llx\t%llu\t%d\t%s\n", (unsigned long long)c[i].hash,
			(unsigned long long)c[i].pages, c[i].one_frame, fp->label);
}
