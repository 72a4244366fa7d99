/*
 * fingerprint.h - content fingerprints of workloads, for planning which
 * workloads share a host (ksm-run --estimate --fingerprint, --combine).
 *
 * A fingerprint lists, for each distinct page content of a workload (its
 * 64-bit page_hash, contents.c, under SipHash-2-4 with the fleet's key,
 * fingerprint_key.h), how many pages hold it; zero pages are counted
 * apart.  Without the key, a fingerprint confirms no guess of a content.  The binary format (FINGERPRINT FORMAT in ksm-run(1)),
 * little-endian:
 *
 *   offset size
 *        0    8  magic "KSMRUNFP"
 *        8    4  format version (2; 1 had no key)
 *       12    4  hash function (2: SipHash-2-4 of page_hash under the key)
 *       16    4  page size, bytes
 *       20    4  sampling N: only contents whose hash is 0 modulo N
 *       24    4  max_page_sharing   28  4  use_zero_pages (0 or 1)
 *       32    8  time, seconds since 1970 (signed)
 *       40    8  pages: present anonymous pages read
 *       48    8  zero pages          56  8  volatile pages (--settle)
 *       64    8  distinct contents, at full resolution, zero page apart
 *       72    8  pages_sharing of the workload alone (full resolution)
 *       80    8  pages_shared of the workload alone
 *       88    8  records R          96  8  body bytes B
 *      104    2  host name bytes H 106  2  label bytes L  (each <= 255)
 *      108    8  key id: SipHash-2-4 under the key of a fixed string
 *      116    H  host name, then L bytes of label (printable, no NUL)
 *                then B bytes of body: R records in increasing hash order
 *                then 4 bytes: CRC-32 (IEEE, as zlib's) of all before it
 *
 * A record is varint(delta << 1 | more), delta = (hash - the previous
 * record's hash) / N (0 before the first; after it delta >= 1), and if MORE,
 * varint((pages - 2) << 1 | one_frame); without MORE the content is held
 * by 1 page.  ONE_FRAME: all its pages map one page frame (not copied
 * since a fork), which KSM never merges with itself.  Varints are LEB128:
 * 7 bits a byte, low bits first, the high bit set on all but the last,
 * minimal (no trailing zero byte), at most 65 bits.
 */
#ifndef KSMRUN_FINGERPRINT_H
#define KSMRUN_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FP_MAGIC "KSMRUNFP"
#define FP_VERSION 2
#define FP_HASH_KEYED 2                 /* SipHash-2-4 of page_hash under the key */
#define FP_HEADER_BYTES 116             /* before the host name */
#define FP_TEXT_MAX 255                 /* host name, label */
#define FP_SAMPLE_MAX 65536
#define FP_FILE_MAX ((size_t)1 << 31)   /* what --combine reads of one file */
#define FP_BYTES_MAX ((uint64_t)1 << 50) /* the memory of one fingerprint: 1 PiB */

struct fingerprint {
	uint32_t version, hash_fn, page_size, sample, max_page_sharing, use_zero_pages;
	int64_t time;
	uint64_t pages, zero_pages, volatile_pages, distinct, own_sharing, own_shared;
	uint64_t records;
	uint64_t key_id;                /* fingerprint_key.h: equal for one key */
	char host[FP_TEXT_MAX + 1], label[FP_TEXT_MAX + 1];
	const unsigned char *body;      /* in the buffer that was parsed */
	size_t body_len;
};

struct fp_content {
	uint64_t hash, pages;
	bool one_frame;
};

/* The layout of fingerprint_format.c: numbers of BYTES bytes, little-endian. */
uint64_t fp_le_get(const unsigned char *p, int bytes);
void fp_le_put(unsigned char *p, uint64_t v, int bytes);
/* The header's fields (FP_HEADER_BYTES from BUF): the numbers, and the
 * lengths of the body, host name and label; put writes the magic too. */
void fp_header_get(const unsigned char *buf, struct fingerprint *fp, uint64_t *body, size_t *hl, size_t *ll);
void fp_header_put(unsigned char *buf, const struct fingerprint *fp);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of LEN bytes. */
uint32_t fp_crc32(const void *buf, size_t len);

/* Whether TEXT may be a host name or label: 1..255 bytes of UTF-8, no
 * tab, newline or other control character. */
bool fp_text_ok(const char *text);

/*
 * Checks BUF (LEN bytes, a whole file from anywhere) and fills FP: the
 * header, its consistency, the length, the checksum and every record.
 * 0, or -1 with why in WHY.  FP->body points into BUF.
 */
int fp_parse(const unsigned char *buf, size_t len, struct fingerprint *fp, char *why, size_t whylen);

/* Reads PATH whole (at most FP_FILE_MAX bytes) into *BUF.  0, or -1 with WHY. */
int fp_load(const char *path, unsigned char **buf, size_t *len, char *why, size_t whylen);

/* Walks the records of a parsed fingerprint, in increasing hash order. */
struct fp_cursor {
	const unsigned char *p, *end;
	uint64_t prev, left, sample;
	bool started;
};
void fp_cursor_init(struct fp_cursor *c, const struct fingerprint *fp);
/* 1 with the next record in *OUT, 0 at the end, -1 on a malformed record. */
int fp_next(struct fp_cursor *c, struct fp_content *out);

/*
 * Encodes FP's header and the N contents C (sorted by hash, each a
 * multiple of FP->sample) into a new buffer *OUT of *LEN bytes.
 * FP->records and FP->body_len are set.  0, or -1 out of memory.
 */
int fp_encode(struct fingerprint *fp, const struct fp_content *c, size_t n, unsigned char **out, size_t *len);

/*
 * The same content as text, for SQL engines: a header line, then one row
 * per content: hash (16 hex digits), pages, one_frame (0 or 1), label;
 * and two rows whose hash is "pages" (the pages read) and "zero" (zero
 * pages).  Only at full resolution (options_fleet.c refuses a sample).
 */
void fp_write_tsv(FILE *f, const struct fingerprint *fp, const struct fp_content *c, size_t n);

#endif
