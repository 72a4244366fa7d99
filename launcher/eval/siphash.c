/*
 * siphash.c - SipHash-2-4, written from the paper's specification
 * (section 2): four 64-bit words of state from the key and constants, two
 * SipRounds per 8-byte word of the message, the last word holding the
 * leftover bytes and the length modulo 256 in its top byte, then 0xff into
 * v2 and four SipRounds.  Checked against the paper's test vectors
 * (tests/unit/test_launcher_fleet.c).
 */
#include <string.h>

#include "eval/siphash.h"

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void sipround(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

/* "somepseudorandomlygeneratedbytes", the specification's constants. */
static inline struct sip start(const struct siphash_key *k)
{
	return (struct sip){
		k->k0 ^ 0x736f6d6570736575ULL, k->k1 ^ 0x646f72616e646f6dULL,
		k->k0 ^ 0x6c7967656e657261ULL, k->k1 ^ 0x7465646279746573ULL,
	};
}

static inline void compress(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sipround(s);
	sipround(s);
	s->v0 ^= m;
}

static inline uint64_t finish(struct sip *s)
{
	s->v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sipround(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

struct siphash_key siphash_key_of(const unsigned char key[SIPHASH_KEY_BYTES])
{
	return (struct siphash_key){ le64(key), le64(key + 8) };
}

uint64_t siphash24(const struct siphash_key *k, const void *msg, size_t len)
{
	const unsigned char *p = msg;
	unsigned char last[8] = { 0 };
	struct sip s = start(k);
	size_t whole = len & ~(size_t)7;

	for (size_t i = 0; i < whole; i += 8)
		compress(&s, le64(p + i));
	if (len > whole)
		memcpy(last, p + whole, len - whole);
	last[7] = (unsigned char)len;
	compress(&s, le64(last));
	return finish(&s);
}

uint64_t siphash24_u64(const struct siphash_key *k, uint64_t word)
{
	struct sip s = start(k);

	compress(&s, word);
	compress(&s, (uint64_t)8 << 56);        /* no leftover bytes; length 8 */
	return finish(&s);
}
