/*
 * siphash.h - SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012): a keyed pseudorandom function of 64 bits, for
 * fingerprints that reveal nothing of a page without their key.
 */
#ifndef KSMRUN_SIPHASH_H
#define KSMRUN_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_BYTES 16

struct siphash_key {
	uint64_t k0, k1;        /* the key's bytes 0-7 and 8-15, little-endian */
};

/* The key of 16 bytes KEY, as the specification reads it. */
struct siphash_key siphash_key_of(const unsigned char key[SIPHASH_KEY_BYTES]);

/* SipHash-2-4 of the LEN bytes at MSG under K. */
uint64_t siphash24(const struct siphash_key *k, const void *msg, size_t len);

/* The same of one 64-bit word, as its 8 little-endian bytes, without a buffer. */
uint64_t siphash24_u64(const struct siphash_key *k, uint64_t word);

#endif
