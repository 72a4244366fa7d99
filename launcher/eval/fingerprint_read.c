/*
 * fingerprint_read.c - checked decoding of fingerprints (fingerprint.h).
 *
 * A fingerprint may come from another machine, a broken copy or an
 * attacker: nothing in it is trusted.  The length must be exactly what the
 * header says, the checksum must match, and every record is decoded once
 * before any is used, so that --combine refuses a bad file before it
 * prints anything.  Counts are checked against each other (records against
 * distinct contents against pages) so that no figure can exceed what was
 * read; no allocation depends on a count in the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/files.h"
#include "eval/accounting.h"
#include "eval/fingerprint.h"

__attribute__((format(printf, 3, 4)))
static int fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * A minimal LEB128 varint of at most 65 bits: 1, or 0 when malformed.  The
 * first nine bytes (63 bits) in 64-bit arithmetic; only a tenth byte adds
 * the top two bits.
 */
static int varint(const unsigned char **pp, const unsigned char *end, unsigned __int128 *out)
{
	const unsigned char *p = *pp;
	uint64_t v = 0;
	unsigned char b;

	for (unsigned shift = 0; shift < 63; shift += 7) {
		if (p == end)
			return 0;
		b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (!b && shift)
				return 0;       /* not minimal */
			*pp = p;
			*out = v;
			return 1;
		}
	}
	if (p == end || (b = *p++) > 3 || !b)
		return 0;               /* over 65 bits, on, or not minimal */
	*pp = p;
	*out = (unsigned __int128)(b >> 1) << 64 | (unsigned __int128)((uint64_t)(b & 1) << 63 | v);
	return 1;
}

void fp_cursor_init(struct fp_cursor *c, const struct fingerprint *fp)
{
	c->p = fp->body;
	c->end = fp->body + fp->body_len;
	c->prev = 0;
	c->left = fp->records;
	c->sample = fp->sample;
	c->started = false;
}

int fp_next(struct fp_cursor *c, struct fp_content *out)
{
	unsigned __int128 v, w;
	uint64_t delta;

	if (!c->left)
		return c->p == c->end ? 0 : -1;
	if (!varint(&c->p, c->end, &v))
		return -1;
	/* Deltas are in units of the sampling N. */
	if ((v >> 1) > UINT64_MAX / c->sample)
		return -1;
	delta = (uint64_t)(v >> 1) * c->sample;
	if (c->started && (!delta || c->prev + delta < c->prev))
		return -1;                      /* not increasing, or past 2^64 */
	out->hash = c->prev + delta;
	out->pages = 1;
	out->one_frame = false;
	if (v & 1) {
		if (!varint(&c->p, c->end, &w) || (w >> 1) > UINT64_MAX - 2)
			return -1;
		out->pages = (uint64_t)(w >> 1) + 2;
		out->one_frame = w & 1;
	}
	c->prev = out->hash;
	c->started = true;
	c->left--;
	return 1;
}

static int parse_text(const unsigned char *p, size_t n, char *out)
{
	memcpy(out, p, n);
	out[n] = 0;
	return strlen(out) == n && fp_text_ok(out);
}

/*
 * The records, decoded once: order and the totals they imply.  (Sampled
 * hashes are multiples of N by their coding: deltas are stored over N.)
 */
static int check_records(const struct fingerprint *fp, char *why, size_t whylen)
{
	const struct ksm_rule rule = { fp->max_page_sharing, fp->use_zero_pages != 0, fp->page_size };
	struct ksm_tally t = { 0 };
	struct fp_cursor c;
	struct fp_content x;
	uint64_t held = fp->zero_pages + fp->volatile_pages, n = 0;
	int r;

	fp_cursor_init(&c, fp);
	while ((r = fp_next(&c, &x)) > 0) {
		n++;
		if (x.pages > fp->pages - held)
			return fail(why, whylen, "corrupt: the records hold more pages than the %llu read",
				    (unsigned long long)fp->pages);
		held += x.pages;
		ksm_tally_content(&rule, &t, x.pages, x.one_frame);
	}
	if (r < 0)
		return fail(why, whylen, "corrupt: record %llu of %llu is malformed (hashes must increase)",
			    (unsigned long long)n + 1, (unsigned long long)fp->records);
	/* At full resolution the workload's own figures follow from its records. */
	ksm_tally_zero(&rule, &t, fp->zero_pages);
	if (fp->sample == 1 && (t.pages_sharing != fp->own_sharing || t.pages_shared != fp->own_shared))
		return fail(why, whylen, "corrupt: the records give pages_sharing %llu and pages_shared %llu, "
			    "the header %llu and %llu", (unsigned long long)t.pages_sharing,
			    (unsigned long long)t.pages_shared, (unsigned long long)fp->own_sharing,
			    (unsigned long long)fp->own_shared);
	return 0;
}

static int check_header(const struct fingerprint *fp, char *why, size_t whylen)
{
	if (fp->hash_fn != FP_HASH_KEYED)
		return fail(why, whylen, "hash function %u is not known to this ksm-run (it knows %d: SipHash-2-4 "
			    "of page_hash under the key)", fp->hash_fn, FP_HASH_KEYED);
	if (fp->page_size < 512 || fp->page_size > (1u << 30) || (fp->page_size & (fp->page_size - 1)))
		return fail(why, whylen, "corrupt: page size %u is not a power of two in 512..1G", fp->page_size);
	if (!fp->sample || fp->sample > FP_SAMPLE_MAX)
		return fail(why, whylen, "corrupt: sampling 1/%u is not in 1..%d", fp->sample, FP_SAMPLE_MAX);
	if (fp->max_page_sharing < 2 || fp->use_zero_pages > 1)
		return fail(why, whylen, "corrupt: max_page_sharing %u or use_zero_pages %u out of range",
			    fp->max_page_sharing, fp->use_zero_pages);
	/* Bounds that keep every figure in bytes within 64 bits. */
	if (fp->pages > FP_BYTES_MAX / fp->page_size)
		return fail(why, whylen, "corrupt: %llu pages of %u bytes is more memory than any machine has",
			    (unsigned long long)fp->pages, fp->page_size);
	if (fp->zero_pages > fp->pages || fp->volatile_pages > fp->pages - fp->zero_pages ||
	    fp->distinct > fp->pages || fp->records > fp->distinct ||
	    (fp->sample == 1 && fp->records != fp->distinct) ||
	    fp->own_sharing > fp->pages || fp->own_shared > fp->pages - fp->own_sharing ||
	    fp->records > fp->body_len)
		return fail(why, whylen, "corrupt: the header's counts contradict each other");
	return 0;
}

/*
 * The magic, the version and the lengths, from the first HAVE bytes of a
 * file of LEN bytes: enough to refuse a file that is not a fingerprint
 * before reading the rest of it.
 */
static int check_start(const unsigned char *buf, size_t have, size_t len, struct fingerprint *fp, size_t *hl,
		       size_t *ll, char *why, size_t whylen)
{
	uint64_t body, want;

	memset(fp, 0, sizeof *fp);
	if (have < 8 || memcmp(buf, FP_MAGIC, 8))
		return fail(why, whylen, "not a ksm-run fingerprint (no \"%s\" at its start)", FP_MAGIC);
	if (have < FP_HEADER_BYTES + 4 && have == len)
		return fail(why, whylen, "truncated: %zu bytes, shorter than a header", len);
	fp_header_get(buf, fp, &body, hl, ll);
	if (fp->version == 1)
		return fail(why, whylen, "format version 1, whose hashes are not keyed: made by an older ksm-run, "
			    "it reveals its pages to anyone who can guess them; take it again (this ksm-run reads "
			    "version %d)", FP_VERSION);
	if (fp->version != FP_VERSION)
		return fail(why, whylen, "format version %u; this ksm-run reads version %d", fp->version, FP_VERSION);
	if (*hl > FP_TEXT_MAX || *ll > FP_TEXT_MAX || body > FP_FILE_MAX)
		return fail(why, whylen, "corrupt: a length in the header is out of range");
	want = FP_HEADER_BYTES + *hl + *ll + body + 4;
	if (len != want)
		return fail(why, whylen, "%s: %zu bytes, the header says %llu",
			    len < want ? "truncated" : "corrupt (bytes after the end)", len, (unsigned long long)want);
	fp->body_len = (size_t)body;
	return 0;
}

int fp_parse(const unsigned char *buf, size_t len, struct fingerprint *fp, char *why, size_t whylen)
{
	size_t hl, ll;
	uint32_t crc;

	if (check_start(buf, len < FP_HEADER_BYTES ? len : FP_HEADER_BYTES, len, fp, &hl, &ll, why, whylen) < 0)
		return -1;
	crc = fp_crc32(buf, len - 4);
	if (crc != (uint32_t)fp_le_get(buf + len - 4, 4))
		return fail(why, whylen, "corrupt: checksum mismatch (CRC-32 %08x, the file says %08x)",
			    crc, (unsigned)fp_le_get(buf + len - 4, 4));
	if ((hl && !parse_text(buf + FP_HEADER_BYTES, hl, fp->host)) ||
	    !parse_text(buf + FP_HEADER_BYTES + hl, ll, fp->label))
		return fail(why, whylen, "corrupt: the host name or label is not printable text");
	fp->body = buf + FP_HEADER_BYTES + hl + ll;
	if (check_header(fp, why, whylen) < 0)
		return -1;
	return check_records(fp, why, whylen);
}

/* Up to LEN bytes from FD: how many were read (fewer at the end), or -errno. */
static ssize_t read_upto(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * The header first: a file that is not a fingerprint, or whose length is
 * not the header's, is refused after reading FP_HEADER_BYTES of it, and
 * the buffer is the length the header promised, which the file has.
 */
int fp_load(const char *path, unsigned char **buf, size_t *len, char *why, size_t whylen)
{
	unsigned char head[FP_HEADER_BYTES];
	struct fingerprint fp;
	struct stat st;
	size_t hl, ll, size;
	ssize_t got;
	int fd = file_open_input(path, &st);

	*buf = NULL;
	if (fd < 0)
		return fail(why, whylen, "%s", file_strerror(-fd));
	if ((uint64_t)st.st_size > FP_FILE_MAX) {
		close(fd);
		return fail(why, whylen, "%lld bytes: more than a fingerprint holds (%zu)", (long long)st.st_size,
			    FP_FILE_MAX);
	}
	size = (size_t)st.st_size;
	if ((got = read_upto(fd, head, sizeof head)) < 0 ||
	    check_start(head, (size_t)got, (size_t)got < sizeof head ? (size_t)got : size, &fp, &hl, &ll,
			why, whylen) < 0) {
		close(fd);
		return got < 0 ? fail(why, whylen, "%s", strerror((int)-got)) : -1;
	}
	if (!(*buf = malloc(size))) {
		close(fd);
		return fail(why, whylen, "out of memory");
	}
	memcpy(*buf, head, sizeof head);
	/* Never more than fstat said (the file may grow). */
	got = read_upto(fd, *buf + sizeof head, size - sizeof head);
	close(fd);
	if (got < 0)
		return fail(why, whylen, "%s", strerror((int)-got));
	*len = sizeof head + (size_t)got;
	return 0;
}
