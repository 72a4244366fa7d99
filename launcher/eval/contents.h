/*
 * contents.h - counting identical page contents, for --estimate.
 *
 * A page is reduced to a 64-bit hash; a table counts, for each distinct
 * content, how many present pages hold it, and in how many processes.
 */
#ifndef KSMRUN_CONTENTS_H
#define KSMRUN_CONTENTS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Hash one page of LEN bytes (the page size: a multiple of 32).  *IS_ZERO
 * tells whether every byte is zero.
 */
uint64_t page_hash(const void *page, size_t len, int *is_zero);

struct contents {
	uint64_t *keys;      /* 48 bits of hash | 16 bits: last process to add it */
	uint32_t *counts;    /* pages holding the content; 0: empty slot */
	size_t cap, used;
	/* Sum over contents of the number of processes holding it: scanning
	 * one process after another makes this exact without a set per key. */
	uint64_t process_pairs;
};

int contents_init(struct contents *t);
void contents_free(struct contents *t);
/* Count one page of content HASH in process number PROC (0, 1, ...). */
int contents_add(struct contents *t, uint64_t hash, unsigned proc);
/* How many pages hold HASH (0 when none). */
uint32_t contents_count(const struct contents *t, uint64_t hash);
/* Bytes the table occupies now. */
size_t contents_bytes(const struct contents *t);

#endif
