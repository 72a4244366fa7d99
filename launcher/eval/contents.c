/*
 * contents.c - page hashing and the table of distinct contents.
 *
 * The hash: four independent lanes, each folding one 8-byte word in per
 * step as h = rotl(h ^ w, 31) * K.  Every step is a bijection of h for a
 * given word, so two pages that differ in a single word never collide in
 * that lane; the lanes run in parallel, so the loop is bound by memory,
 * not by multiply latency.  A 64-bit finaliser mixes the lanes.  This
 * needs no library, and builds the same with glibc and musl.
 *
 * The table: open addressing with linear probing in two parallel arrays,
 * 12 bytes a slot, grown by half when 85% full, so it holds between 14 and
 * 21 bytes per distinct content.  48 bits of the hash are kept: among ten
 * million distinct pages, a chance collision of two would misjudge one page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eval/contents.h"

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t fmix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t page_hash(const void *page, size_t len, int *is_zero)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t a = 1, b = 2, c = 3, d = 4, any = 0, w0, w1, w2, w3;
	const unsigned char *p = page, *end = p + len;

	for (; p < end; p += 32) {
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		any |= w0 | w1 | w2 | w3;
		a = rotl(a ^ w0, 31) * k;
		b = rotl(b ^ w1, 31) * k;
		c = rotl(c ^ w2, 31) * k;
		d = rotl(d ^ w3, 31) * k;
	}
	*is_zero = any == 0;
	return fmix(a ^ fmix(b ^ fmix(c ^ fmix(d))));
}

#define KEY_HASH_MASK 0xffffffffffff0000ULL
#define INITIAL_CAP 4096

static int alloc_slots(struct contents *t, size_t cap)
{
	t->keys = calloc(cap, sizeof *t->keys);
	t->counts = calloc(cap, sizeof *t->counts);
	if (!t->keys || !t->counts) {
		free(t->keys);
		free(t->counts);
		return -1;
	}
	t->cap = cap;
	return 0;
}

int contents_init(struct contents *t)
{
	memset(t, 0, sizeof *t);
	return alloc_slots(t, INITIAL_CAP);
}

void contents_free(struct contents *t)
{
	free(t->keys);
	free(t->counts);
	memset(t, 0, sizeof *t);
}

/* The slot for a hash: its top bits scaled to the capacity. */
static inline size_t home(const struct contents *t, uint64_t key)
{
	return (size_t)(((unsigned __int128)key * t->cap) >> 64);
}

static size_t find(const struct contents *t, uint64_t key)
{
	size_t i = home(t, key);

	while (t->counts[i] && (t->keys[i] & KEY_HASH_MASK) != key)
		if (++i == t->cap)
			i = 0;
	return i;
}

static int grow(struct contents *t)
{
	struct contents old = *t;
	size_t i;

	if (alloc_slots(t, old.cap + old.cap / 2) < 0) {
		*t = old;
		return -1;
	}
	for (i = 0; i < old.cap; i++) {
		if (!old.counts[i])
			continue;
		size_t j = find(t, old.keys[i] & KEY_HASH_MASK);
		t->keys[j] = old.keys[i];
		t->counts[j] = old.counts[i];
	}
	free(old.keys);
	free(old.counts);
	return 0;
}

int contents_add(struct contents *t, uint64_t hash, unsigned proc)
{
	uint64_t key = hash & KEY_HASH_MASK, tag = proc & 0xffff;
	size_t i;

	if (t->used + 1 > t->cap / 20 * 17 && grow(t) < 0) {
		errno = ENOMEM;
		return -1;
	}
	i = find(t, key);
	if (!t->counts[i]) {
		t->keys[i] = key | tag;
		t->used++;
		t->process_pairs++;
	} else if ((t->keys[i] & ~KEY_HASH_MASK) != tag) {
		t->keys[i] = key | tag;
		t->process_pairs++;
	}
	if (t->counts[i] < UINT32_MAX)
		t->counts[i]++;
	return 0;
}

uint32_t contents_count(const struct contents *t, uint64_t hash)
{
	return t->counts[find(t, hash & KEY_HASH_MASK)];
}

size_t contents_bytes(const struct contents *t)
{
	return t->cap * (sizeof *t->keys + sizeof *t->counts);
}
