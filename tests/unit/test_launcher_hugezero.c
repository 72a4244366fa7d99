/*
 * Unit tests of the zero pages of transparent huge pages in --estimate:
 * the probe's verdict from made-up samples (common/thpsplit.c), and the
 * prediction's accounting (eval/estimate_predict.c) of made-up records,
 * on a kernel whose split frees them and on one whose split keeps them.
 * No root, no KSM.
 */
#include <stdlib.h>
#include <string.h>

#include "common/thpsplit.h"
#include "eval/estimate_predict.h"
#include "kernel_abi.h"
#include "unit.h"

/* ---- the probe's verdict ---- */

static void test_judge(void)
{
	const char *why;
	/* kB: a 2 MiB huge page faulted in, then split. */
	struct thp_split_sample freed = { 0, 2200, 2048, 160, 0 };
	struct thp_split_sample kept = { 0, 2200, 2048, 2196, 0 };
	struct thp_split_sample none = { 0, 2200, 0, 2200, 0 };         /* enabled "never" */
	struct thp_split_sample unsplit = { 2048, 2200, 4096, 2200, 4096 };
	struct thp_split_sample unclear = { 0, 2200, 2048, 1500, 0 };

	CHECK(thp_split_zero_judge(&freed, 2048, &why) == THP_SPLIT_ZERO_FREED && !why);
	CHECK(thp_split_zero_judge(&kept, 2048, &why) == THP_SPLIT_ZERO_KEPT && !why);
	CHECK(thp_split_zero_judge(&none, 2048, &why) == THP_SPLIT_ZERO_UNKNOWN && why && strstr(why, "never"));
	CHECK(thp_split_zero_judge(&unsplit, 2048, &why) == THP_SPLIT_ZERO_UNKNOWN && why && strstr(why, "split"));
	CHECK(thp_split_zero_judge(&unclear, 2048, &why) == THP_SPLIT_ZERO_UNKNOWN && why);
	CHECK(!strcmp(thp_split_zero_name(THP_SPLIT_ZERO_FREED), "yes"));
	CHECK(!strcmp(thp_split_zero_name(THP_SPLIT_ZERO_KEPT), "no"));
	CHECK(!strcmp(thp_split_zero_name(THP_SPLIT_ZERO_UNKNOWN), "unknown"));
}

/* ---- the accounting ---- */

/* The table keeps the top 48 bits of a hash (contents.c). */
#define ZERO_HASH (0x2222ULL << 40)
#define SAME_HASH (0x3333ULL << 40)
#define HUGE_ZERO 512           /* zero pages in huge pages */
#define PLAIN_ZERO 256          /* zero pages in small pages */
#define SAME 100                /* pages of one other content */
#define UNIQUE 10
#define N (HUGE_ZERO + PLAIN_ZERO + SAME + UNIQUE)

struct fixture {
	struct est_result res;
	struct est_proc proc;
	struct est_class cls;
	struct record recs[N];
	unsigned char huge[N];
	struct region_rec reg;
	struct scan s;
};

/* MARKED: records were marked (frames seen, root); else huge_zero is NULL. */
static void predict_made_up(struct fixture *f, enum thp_split_zero split, bool use_zero_pages, bool marked)
{
	size_t i;

	memset(f, 0, sizeof *f);
	for (i = 0; i < N; i++) {
		f->recs[i].addr = 0x100000 + i * 4096;
		f->recs[i].hash = i < HUGE_ZERO + PLAIN_ZERO ? ZERO_HASH
				: i < HUGE_ZERO + PLAIN_ZERO + SAME ? SAME_HASH : (0x10000ULL + i) << 24;
		f->huge[i] = i < HUGE_ZERO;
	}
	f->proc = (struct est_proc){ .pid = 1, .first_rec = 0, .nrec = N,
				     .merging_now = -1, .profit_now = -1, .rmap_now = -1 };
	f->cls = (struct est_class){ .name = "anon", .last_proc = (unsigned)-1 };
	f->reg = (struct region_rec){ 0, 0, 0, N };
	f->res = (struct est_result){ .procs = &f->proc, .nprocs = 1, .classes = &f->cls, .nclasses = 1,
				      .max_page_sharing = 256, .use_zero_pages = use_zero_pages,
				      .page_size = 4096, .split_frees_zero = split, .huge_zero_pages = HUGE_ZERO };
	f->s = (struct scan){ .page = 4096, .recs = f->recs, .nrec = N, .regs = &f->reg, .nregs = 1,
			      .res = &f->res, .zero_hash = ZERO_HASH, .huge_zero = marked ? f->huge : NULL };
	CHECK(predict(&f->s) == 0);
}

static void test_split_frees(void)
{
	struct fixture *f = calloc(1, sizeof *f);
	const struct est_result *r = &f->res;

	/* Freed at the split: apart, and out of everything KSM counts. */
	predict_made_up(f, THP_SPLIT_ZERO_FREED, false, true);
	CHECK(r->freed_by_split == HUGE_ZERO);
	CHECK(r->candidate == N);
	CHECK(r->zero_pages == PLAIN_ZERO);
	CHECK(r->pages_sharing == (PLAIN_ZERO - 1) + (SAME - 1));
	CHECK(r->pages_shared == 2 && r->pages_unshared == UNIQUE);
	CHECK(r->rmap_items == N - HUGE_ZERO);
	CHECK(r->profit_bytes == (long long)r->pages_sharing * 4096 - (long long)(N - HUGE_ZERO) * KSM_RMAP_ITEM_BYTES);
	CHECK(r->within_pages == r->pages_sharing && r->across_pages == 0);
	CHECK(f->proc.saved > r->pages_sharing - 0.01 && f->proc.saved < r->pages_sharing + 0.01);
	CHECK(f->cls.candidate == N);

	/* With use_zero_pages=1 the small zero pages go to the zero page by KSM. */
	predict_made_up(f, THP_SPLIT_ZERO_FREED, true, true);
	CHECK(r->freed_by_split == HUGE_ZERO);
	CHECK(r->zero_pages == PLAIN_ZERO && r->pages_sharing == SAME - 1);
	CHECK(r->profit_bytes == (long long)(SAME - 1 + PLAIN_ZERO) * 4096 -
				 (long long)(N - HUGE_ZERO) * KSM_RMAP_ITEM_BYTES);
	free(f);
}

static void test_split_keeps(void)
{
	struct fixture *f = calloc(1, sizeof *f);
	const struct est_result *r = &f->res;

	/* Kept by the split (before 6.12), or not known: merged as today. */
	predict_made_up(f, THP_SPLIT_ZERO_KEPT, false, true);
	CHECK(r->freed_by_split == 0);
	CHECK(r->zero_pages == HUGE_ZERO + PLAIN_ZERO);
	/* 768 zero pages: three stable pages under max_page_sharing 256. */
	CHECK(r->pages_sharing == (HUGE_ZERO + PLAIN_ZERO - 3) + (SAME - 1));
	CHECK(r->rmap_items == N);
	predict_made_up(f, THP_SPLIT_ZERO_UNKNOWN, false, true);
	CHECK(r->freed_by_split == 0 && r->zero_pages == HUGE_ZERO + PLAIN_ZERO);
	/* Without frames (not root) no record is marked: as today. */
	predict_made_up(f, THP_SPLIT_ZERO_FREED, false, false);
	CHECK(r->freed_by_split == 0 && r->zero_pages == HUGE_ZERO + PLAIN_ZERO);
	CHECK(r->pages_sharing == (HUGE_ZERO + PLAIN_ZERO - 3) + (SAME - 1));
	free(f);
}

UNIT_MAIN(UNIT_TEST(test_judge), UNIT_TEST(test_split_frees), UNIT_TEST(test_split_keeps))
