/*
 * fingerprint_key.h - the fleet's key of fingerprints (fingerprint_key.c):
 * the page hashes in a fingerprint are SipHash-2-4 under it, so that a
 * fingerprint confirms no guess of a page's content without the key, and
 * only fingerprints of one key combine.
 */
#ifndef KSMRUN_FINGERPRINT_KEY_H
#define KSMRUN_FINGERPRINT_KEY_H

#include <stdint.h>

#include "eval/siphash.h"

#define FP_KEY_NAME "ksm-run-fleet.key"     /* the key made beside the fingerprints */

struct fp_key {
	struct siphash_key k;
	uint64_t id;            /* what the header says of it: reveals nothing of it */
};

/*
 * The key in PATH (32 hexadecimal digits, a newline allowed): a regular
 * file of this user or root that no one else may read or write.  When
 * there is none, a new random key is written there (0600, O_EXCL) and
 * stderr says so.  0, or -1 with a message on stderr.
 */
int fp_key_load(const char *path, struct fp_key *key);

/* The key of 16 bytes RAW, with its id. */
void fp_key_of(const unsigned char raw[SIPHASH_KEY_BYTES], struct fp_key *key);

/* Where the key goes when none is named: FP_KEY_NAME in the directory of FILE. */
void fp_key_beside(const char *file, char *out, size_t len);

/* The keyed hash of a page whose ksm-run page_hash is HASH. */
static inline uint64_t fp_key_hash(const struct fp_key *key, uint64_t hash)
{
	return siphash24_u64(&key->k, hash);
}

#endif
