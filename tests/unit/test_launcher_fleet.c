/*
 * Unit tests of the fleet evaluation, without root: the kernel's
 * accounting rule (eval/accounting.c), the fingerprint format's round trip
 * and its refusals (eval/fingerprint_*.c), and the union of fingerprints
 * with the gain of each pair (eval/combine.c), on made-up contents whose
 * figures are worked out by hand; SipHash-2-4 against the reference
 * vectors of its authors, and the fingerprint key (eval/fingerprint_key.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/accounting.h"
#include "eval/combine.h"
#include "eval/fingerprint.h"
#include "eval/fingerprint_key.h"
#include "eval/siphash.h"
#include "unit.h"

static const struct ksm_rule rule256 = { 256, false, 4096 };

static void test_rule(void)
{
	struct ksm_tally t = { 0 };
	struct ksm_rule uzp = { 256, true, 4096 };

	CHECK(ksm_stable_pages(&rule256, 1) == 1 && ksm_stable_pages(&rule256, 256) == 1);
	CHECK(ksm_stable_pages(&rule256, 257) == 2 && ksm_stable_pages(&rule256, 2048) == 8);
	ksm_tally_content(&rule256, &t, 1, false);       /* unshared */
	ksm_tally_content(&rule256, &t, 2, false);       /* 1 sharing, 1 shared */
	ksm_tally_content(&rule256, &t, 513, false);     /* 3 stable pages */
	ksm_tally_content(&rule256, &t, 4, true);        /* one frame: never merged */
	CHECK(t.pages_unshared == 2 && t.pages_shared == 4 && t.pages_sharing == 1 + 510);
	ksm_tally_zero(&rule256, &t, 300);               /* as a content: 2 stable */
	CHECK(t.pages_sharing == 511 + 298 && t.pages_shared == 6 && t.zero_pages == 0);
	memset(&t, 0, sizeof t);
	ksm_tally_zero(&uzp, &t, 300);
	CHECK(t.pages_sharing == 0 && t.zero_pages == 300);
	/* general_profit: (sharing + zero) pages less 64 bytes per rmap_item */
	CHECK(ksm_profit_bytes(&uzp, &t, 1000) == 300 * 4096 - 1000 * 64);
}

/* A fingerprint of CONTENTS (sorted), encoded, then parsed back. */
static int make(const struct fp_content *c, size_t n, uint64_t zero, uint32_t sample, const char *label,
		unsigned char **buf, size_t *len, struct fingerprint *out)
{
	struct fingerprint fp = { .page_size = 4096, .sample = sample, .max_page_sharing = 256, .time = 1 };
	struct ksm_tally t = { 0 };
	char why[256];

	snprintf(fp.host, sizeof fp.host, "unit");
	snprintf(fp.label, sizeof fp.label, "%s", label);
	fp.zero_pages = zero;
	fp.pages = zero;
	for (size_t i = 0; i < n; i++) {
		fp.pages += c[i].pages;
		ksm_tally_content(&rule256, &t, c[i].pages, c[i].one_frame);
	}
	ksm_tally_zero(&rule256, &t, zero);
	fp.distinct = n;
	fp.own_sharing = t.pages_sharing;
	fp.own_shared = t.pages_shared;
	if (fp_encode(&fp, c, n, buf, len) < 0)
		return -1;
	if (fp_parse(*buf, *len, out, why, sizeof why) < 0) {
		fprintf(stderr, "parse: %s\n", why);
		return -1;
	}
	return 0;
}

static void test_format(void)
{
	const struct fp_content c[] = {
		{ 0, 1, false }, { 16, 2, false }, { 1ULL << 40, 300, false }, { UINT64_MAX - 15, 3, true },
	};
	struct fingerprint fp, bad;
	struct fp_cursor cur;
	struct fp_content x;
	unsigned char *buf;
	size_t len, i = 0;
	char why[256];

	CHECK(make(c, 4, 7, 16, "web", &buf, &len, &fp) == 0);
	CHECK(fp.records == 4 && fp.sample == 16 && !strcmp(fp.label, "web") && !strcmp(fp.host, "unit"));
	fp_cursor_init(&cur, &fp);
	while (fp_next(&cur, &x) > 0 && i < 4) {
		CHECK(x.hash == c[i].hash && x.pages == c[i].pages && x.one_frame == c[i].one_frame);
		i++;
	}
	CHECK(i == 4 && fp_next(&cur, &x) == 0);
	/* little-endian, magic first, CRC-32 of all before it last */
	CHECK(!memcmp(buf, "KSMRUNFP", 8) && buf[8] == 2 && buf[9] == 0 && buf[16] == 0 && buf[17] == 0x10);
	CHECK(fp_crc32("123456789", 9) == 0xcbf43926u);
	/* every prefix refused, and a flipped byte anywhere */
	for (size_t k = 0; k < len; k++)
		CHECK(fp_parse(buf, k, &bad, why, sizeof why) < 0);
	for (size_t k = 0; k < len; k++) {
		buf[k] ^= 0x40;
		CHECK(fp_parse(buf, len, &bad, why, sizeof why) < 0);
		buf[k] ^= 0x40;
	}
	CHECK(fp_parse(buf, len, &bad, why, sizeof why) == 0);
	free(buf);
	/* a record that does not increase is refused, with a right checksum */
	{
		const struct fp_content one[] = { { 32, 1, false }, { 48, 1, false } };
		CHECK(make(one, 2, 0, 16, "two", &buf, &len, &fp) == 0);
		buf[len - 5] = 0;               /* the second delta: 0 */
		uint32_t crc = fp_crc32(buf, len - 4);
		memcpy(buf + len - 4, &crc, 4);
		CHECK(fp_parse(buf, len, &bad, why, sizeof why) < 0 && strstr(why, "hashes must increase"));
		free(buf);
	}
	CHECK(fp_text_ok("system.slice/web.service") && fp_text_ok("caf\xc3\xa9"));
	CHECK(!fp_text_ok("") && !fp_text_ok("a\tb") && !fp_text_ok("a\nb") && !fp_text_ok("\xc3"));
}

static void test_union(void)
{
	/* A: x held twice, y once, 10 zero pages; B: y 3 times, z once, x on
	 * one frame 4 times; C: z once. */
	const struct fp_content a[] = { { 100, 2, false }, { 200, 1, false } };
	const struct fp_content b[] = { { 100, 4, true }, { 200, 3, false }, { 300, 1, false } };
	const struct fp_content c[] = { { 300, 1, false } };
	struct combine_input in[3] = { { "a", NULL, { 0 } }, { "b", NULL, { 0 } }, { "c", NULL, { 0 } } };
	struct combine_result r = { .in = in, .n = 3, .rule = rule256, .sample = 1 };
	size_t len;

	CHECK(make(a, 2, 10, 1, "a", &in[0].buf, &len, &in[0].fp) == 0);
	CHECK(make(b, 3, 0, 1, "b", &in[1].buf, &len, &in[1].fp) == 0);
	CHECK(make(c, 1, 0, 1, "c", &in[2].buf, &len, &in[2].fp) == 0);
	CHECK(combine_compute(&r, true) == 0);
	/* alone: A 1 (x) + 9 (zero), B 2 (y; x never merges on its frame), C 0 */
	CHECK(r.sum_sharing == 12);
	/* together: x 6 pages -> 5, y 4 -> 3, z 2 -> 1, zero 10 -> 9 */
	CHECK(r.union_sharing == 18 && r.gain_sharing == 6 && r.bound_sharing == 0);
	CHECK(r.zero_pages == 10 && r.rmap_items == 3 + 8 + 1 + 10);
	/* pairs: A+B x 6 -> 5 less 1 + 0, y 4 -> 3 less 0 + 2: 5; A+C nothing; B+C z: 1 */
	CHECK(r.pair_gain[0 * 3 + 1] == 5 && r.pair_gain[0 * 3 + 2] == 0 && r.pair_gain[1 * 3 + 2] == 1);
	for (size_t i = 0; i < 3; i++)
		free(in[i].buf);
	free(r.pair_gain);
	free(r.pair_bound);
}

/*
 * The reference vectors of SipHash-2-4 (the paper's appendix and the
 * authors' vectors.h): key 00 01 .. 0f, message 00 01 .. (n-1), the output
 * as a little-endian number.
 */
static void test_siphash(void)
{
	static const uint64_t want[] = {
		0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
		0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
		0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
		0x751e8fbc860ee5fbULL,
	};
	unsigned char key[SIPHASH_KEY_BYTES], msg[16], other[SIPHASH_KEY_BYTES];
	struct siphash_key k;
	struct fp_key a, b;
	uint64_t word = 0;

	for (int i = 0; i < 16; i++)
		key[i] = msg[i] = (unsigned char)i;
	k = siphash_key_of(key);
	for (size_t n = 0; n < sizeof want / sizeof want[0]; n++)
		CHECK(siphash24(&k, msg, n) == want[n]);
	CHECK(siphash24(&k, msg, 15) == 0xa129ca6149be45e5ULL);    /* the paper's example */
	/* the one-word form is the 8-byte message */
	for (int i = 7; i >= 0; i--)
		word = word << 8 | msg[i];
	CHECK(siphash24_u64(&k, word) == want[8]);
	/* one page hash under two keys: unrelated; the key id is not the key */
	memcpy(other, key, sizeof other);
	other[0] ^= 1;
	fp_key_of(key, &a);
	fp_key_of(other, &b);
	CHECK(fp_key_hash(&a, 0x123456789abcdefULL) != fp_key_hash(&b, 0x123456789abcdefULL));
	CHECK(fp_key_hash(&a, 1) != fp_key_hash(&a, 2));
	CHECK(a.id != b.id && a.id != a.k.k0 && a.id != a.k.k1);
}

UNIT_MAIN(UNIT_TEST(test_siphash), UNIT_TEST(test_rule), UNIT_TEST(test_format),
	  UNIT_TEST(test_union))
