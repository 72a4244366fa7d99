/*
 * Unit test of the library's table of the program's marks (preload/marks.c),
 * against a naive model: one mark set per page of a small address space.
 * Random changes and moves (as mremap makes them), then every page compared,
 * plus the full-table behaviour.  Needs no root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marks.h"
#include "unit.h"

#define PAGES 512
#define PAGE 4096UL
#define BASE 0x100000UL

static unsigned model[PAGES];

static void model_change(size_t from, size_t to, unsigned set, unsigned clear)
{
	for (size_t i = from; i < to; i++)
		model[i] = (model[i] | set) & ~clear;
}

static void model_move(size_t old, size_t old_len, size_t new, size_t new_len)
{
	unsigned copy[PAGES], tail = old_len ? model[old + old_len - 1] : 0;
	size_t keep = new_len < old_len ? new_len : old_len;

	memcpy(copy, model, sizeof copy);
	model_change(old, old + old_len, 0, MARK_ALL);
	for (size_t i = 0; i < keep; i++)
		model[new + i] = copy[old + i];
	for (size_t i = keep; i < new_len; i++)
		model[new + i] = tail;
}

struct seen { unsigned page[PAGES]; unsigned long at; int gaps_ok; };

static void record(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	struct seen *s = arg;

	if (start != s->at)
		s->gaps_ok = 0;
	for (unsigned long a = start; a < end; a += PAGE)
		s->page[(a - BASE) / PAGE] = marks;
	s->at = end;
}

static int agrees(void)
{
	struct seen s = { .at = BASE, .gaps_ok = 1 };

	memset(s.page, 0xff, sizeof s.page);
	marks_walk(BASE, BASE + PAGES * PAGE, record, &s);
	if (!s.gaps_ok || s.at != BASE + PAGES * PAGE)
		return 0;
	for (size_t i = 0; i < PAGES; i++)
		if (s.page[i] != model[i]) {
			fprintf(stderr, "  page %zu: table %#x, model %#x\n", i, s.page[i], model[i]);
			return 0;
		}
	return 1;
}

/* marks_near may say yes for unmarked memory, never no for marked memory. */
static int near_agrees(void)
{
	for (size_t i = 0; i < PAGES; i++)
		if (model[i] && !marks_near(BASE + i * PAGE, BASE + (i + 1) * PAGE))
			return 0;
	return 1;
}

static void test_random(void)
{
	unsigned seed = 7;
	int ok = 1;

	for (int step = 0; step < 200000 && ok; step++) {
		size_t a = (size_t)rand_r(&seed) % PAGES, n = 1 + (size_t)rand_r(&seed) % 32;
		unsigned set = (unsigned)rand_r(&seed) & MARK_ALL, clear = (unsigned)rand_r(&seed) & MARK_ALL;

		if (a + n > PAGES)
			n = PAGES - a;
		if (rand_r(&seed) % 5 == 0) {
			/* A move to a free place of the same or twice the size. */
			size_t to = (size_t)rand_r(&seed) % PAGES, len2 = n * (1 + (size_t)(rand_r(&seed) % 2));
			if (to + len2 > PAGES || (to < a + n && a < to + len2))
				continue;
			marks_move(BASE + a * PAGE, n * PAGE, BASE + to * PAGE, len2 * PAGE, 0);
			model_move(a, n, to, len2);
			if (getenv("MARKS_TRACE"))
				fprintf(stderr, "  move %zu+%zu -> %zu+%zu\n", a, n, to, len2);
		} else {
			set &= ~clear;
			marks_change(BASE + a * PAGE, BASE + (a + n) * PAGE, set, clear);
			model_change(a, a + n, set, clear);
			if (getenv("MARKS_TRACE"))
				fprintf(stderr, "  change %zu+%zu set %#x clear %#x\n", a, n, set, clear);
		}
		if (getenv("MARKS_TRACE")) {
			ok = agrees();
			if (!ok)
				fprintf(stderr, "  after step %d: a=%zu n=%zu set=%#x clear=%#x\n", step, a, n, set, clear);
		} else if (step % 97 == 0) {
			ok = agrees() && near_agrees();
		}
	}
	CHECK(ok && agrees());
	CHECK(!marks_full());
	marks_change(BASE, BASE + PAGES * PAGE, 0, MARK_ALL);
	CHECK(!marks_any());
	CHECK(!marks_near(0, ~0UL));
}

static void count_kept(unsigned long start, unsigned long end, unsigned marks, void *arg)
{
	unsigned long *n = arg;

	(void)start;
	(void)end;
	if (marks == MARK_KEPT_OUT)
		(*n)++;
}

static void test_full(void)
{
	unsigned long i, kept = 0;

	/* Every other page marked: a range each. */
	for (i = 0; i < MARKS_MAX; i++)
		CHECK(marks_change(0x10000000UL + 2 * i * PAGE, 0x10000000UL + (2 * i + 1) * PAGE, MARK_KEPT_OUT, 0) == 0);
	CHECK(!marks_full());
	/* One more does not fit: refused, and nothing recorded is lost. */
	CHECK(marks_change(0x20000000UL, 0x20000000UL + PAGE, MARK_KEPT_OUT, 0) == -1);
	CHECK(marks_full());
	marks_each(MARK_ALL, count_kept, &kept);
	CHECK(kept == MARKS_MAX);
	/* Joining neighbours with the same marks makes room again. */
	CHECK(marks_change(0x10000000UL, 0x10000000UL + 2 * MARKS_MAX * PAGE, MARK_KEPT_OUT, 0) == 0);
	kept = 0;
	marks_each(MARK_ALL, count_kept, &kept);
	CHECK(kept == 1);
}

static void test_secret(void)
{
	CHECK(marks_secret(MARK_WIPEONFORK));
	CHECK(marks_secret(MARK_DONTDUMP | MARK_LOCKED));
	CHECK(!marks_secret(MARK_DONTDUMP));
	CHECK(!marks_secret(MARK_LOCKED));
	marks_lock_all(1);
	CHECK(marks_secret(MARK_DONTDUMP));
	marks_lock_all(0);
	CHECK(!marks_secret(MARK_DONTDUMP));
}

UNIT_MAIN(UNIT_TEST(test_random), UNIT_TEST(test_full), UNIT_TEST(test_secret))
