/*
 * marks.c - the table of the program's own marks on its memory.
 *
 * A sorted array of disjoint ranges, each with a set of marks; neighbours
 * with the same marks are joined and unmarked ranges dropped, so the table
 * holds as few ranges as the marks allow.  A change is built in a scratch
 * array and only then copied in: a change that would not fit leaves the
 * table as it was and reports it full.  Changes are O(ranges), and rare:
 * only madvise calls with the advice recorded here, the mlock family, and
 * munmap/mremap/mmap(MAP_FIXED) over marked memory come here.
 *
 * mlockall has no range: until munlockall, all memory counts as locked.
 * That over-approximates (a mapping made later is not locked unless
 * MCL_FUTURE was given), always towards keeping memory unmerged.
 */
#include <string.h>

#include "marks.h"

struct piece {
	unsigned long start, end;
	unsigned marks;
};

static struct piece table[MARKS_MAX];
static size_t used;
/* Set under the marks lock, read without it (a check before taking it):
 * atomic, relaxed; what they stand for is read again under the lock. */
static int full;
static int all_locked;
/* From the first piece's start to the last one's end (0, 0: none): read without the lock. */
static unsigned long span_start, span_end;

/* A change touches at most every piece, every gap between them and two splits. */
static struct piece scratch[2 * MARKS_MAX + 4];

int marks_any(void)
{
	return used != 0;
}

int marks_near(unsigned long start, unsigned long end)
{
	return __atomic_load_n(&span_start, __ATOMIC_ACQUIRE) < end &&
	       start < __atomic_load_n(&span_end, __ATOMIC_ACQUIRE);
}

int marks_full(void)
{
	return __atomic_load_n(&full, __ATOMIC_RELAXED);
}

void marks_distrust(void)
{
	__atomic_store_n(&full, 1, __ATOMIC_RELAXED);
}

void marks_lock_all(int on)
{
	__atomic_store_n(&all_locked, on, __ATOMIC_RELAXED);
}

int marks_secret(unsigned marks)
{
	if (__atomic_load_n(&all_locked, __ATOMIC_RELAXED))
		marks |= MARK_LOCKED;
	return (marks & MARK_WIPEONFORK) || ((marks & MARK_DONTDUMP) && (marks & MARK_LOCKED));
}

/* Appends a piece to the scratch list, joining it to an equal neighbour. */
static void emit(size_t *n, unsigned long start, unsigned long end, unsigned marks)
{
	struct piece *last = *n ? &scratch[*n - 1] : NULL;

	if (start >= end || !marks)
		return;
	if (last && last->end == start && last->marks == marks) {
		last->end = end;
		return;
	}
	scratch[(*n)++] = (struct piece){ start, end, marks };
}

/* Does any piece overlap [START, END)?  Binary search: mmap asks often. */
static int overlaps(unsigned long start, unsigned long end)
{
	size_t lo = 0, hi = used;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (table[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < used && table[lo].start < end;
}

int marks_change(unsigned long start, unsigned long end, unsigned set, unsigned clear)
{
	size_t i = 0, n = 0;
	unsigned long at = start;

	if (start >= end || (!set && !overlaps(start, end)))
		return 0;
	/* Before the range: unchanged. */
	for (; i < used && table[i].end <= start; i++)
		emit(&n, table[i].start, table[i].end, table[i].marks);
	/* Overlapping: split at the edges, change the inside, fill the gaps. */
	for (; i < used && table[i].start < end; i++) {
		const struct piece *p = &table[i];
		if (p->start < start)
			emit(&n, p->start, start, p->marks);
		if (p->start > at)
			emit(&n, at, p->start, set & ~clear);
		emit(&n, p->start > start ? p->start : start, p->end < end ? p->end : end,
		     (p->marks | set) & ~clear);
		if (p->end > end)
			emit(&n, end, p->end, p->marks);
		at = p->end;
	}
	if (at < end)
		emit(&n, at, end, set & ~clear);
	for (; i < used; i++)
		emit(&n, table[i].start, table[i].end, table[i].marks);
	if (n > MARKS_MAX) {
		__atomic_store_n(&full, 1, __ATOMIC_RELAXED);
		return -1;
	}
	memcpy(table, scratch, n * sizeof table[0]);
	used = n;
	__atomic_store_n(&span_start, n ? table[0].start : 0, __ATOMIC_RELEASE);
	__atomic_store_n(&span_end, n ? table[n - 1].end : 0, __ATOMIC_RELEASE);
	return 0;
}

void marks_walk(unsigned long start, unsigned long end, marks_fn fn, void *arg)
{
	unsigned long at = start;

	for (size_t i = 0; i < used && at < end; i++) {
		const struct piece *p = &table[i];
		if (p->end <= at)
			continue;
		if (p->start >= end)
			break;
		if (p->start > at)
			fn(at, p->start, 0, arg);
		at = p->start > at ? p->start : at;
		fn(at, p->end < end ? p->end : end, p->marks, arg);
		at = p->end;
	}
	if (at < end)
		fn(at, end, 0, arg);
}

void marks_each(unsigned mask, marks_fn fn, void *arg)
{
	for (size_t i = 0; i < used; i++)
		if (table[i].marks & mask)
			fn(table[i].start, table[i].end, table[i].marks, arg);
}

/* The pieces of a moved range, kept aside while the table changes. */
static struct piece moving[MARKS_MAX];

int marks_move(unsigned long old, size_t old_len, unsigned long new, size_t new_len, int keep_old)
{
	unsigned long old_end = old + old_len, keep_end = old + (new_len < old_len ? new_len : old_len);
	size_t k = 0;
	unsigned tail = 0;
	int r = 0;

	for (size_t i = 0; i < used; i++) {
		const struct piece *p = &table[i];
		if (p->end <= old || p->start >= keep_end)
			continue;
		moving[k++] = (struct piece){ p->start > old ? p->start : old,
					      p->end < keep_end ? p->end : keep_end, p->marks };
		/* A mapping that grows keeps its flags: the last byte's marks extend. */
		if (p->start < old_end && p->end >= old_end)
			tail = p->marks;
	}
	if (!keep_old)
		r |= marks_change(old, old_end, 0, MARK_ALL);
	/* The new place was unmapped before: whatever marks it had are stale. */
	r |= marks_change(new, new + new_len, 0, MARK_ALL);
	for (size_t i = 0; i < k; i++)
		r |= marks_change(moving[i].start - old + new, moving[i].end - old + new, moving[i].marks, 0);
	if (new_len > old_len && tail)
		r |= marks_change(new + old_len, new + new_len, tail, 0);
	return r ? -1 : 0;
}
