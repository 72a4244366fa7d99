/*
 * Unit tests of the evaluation's pure parts: the content table and the
 * page hash, --estimate's targets, and a region class, its selector and
 * the library's parser agreeing.  No root.  Run from the top of the tree.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/contents.h"
#include "eval/regionclass.h"
#include "common/targets.h"
#include "maps.h"
#include "selector.h"
#include "unit.h"

/* ---- the content table and the page hash ---- */

static void test_contents(void)
{
	struct contents t;
	size_t page = 4096;
	unsigned char *a = calloc(1, page), *b = calloc(1, page);
	int zero;
	uint64_t h0, ha, hb;

	h0 = page_hash(a, page, &zero);
	CHECK(zero);
	a[page - 1] = 1;
	ha = page_hash(a, page, &zero);
	CHECK(!zero && ha != h0);
	memcpy(b, a, page);
	hb = page_hash(b, page, &zero);
	CHECK(ha == hb);
	b[17] ^= 0x80;
	CHECK(page_hash(b, page, &zero) != ha);
	/* A 16 KiB page hashes all of itself. */
	unsigned char *big = calloc(1, 16384);
	uint64_t hbig = page_hash(big, 16384, &zero);
	big[16383] = 1;
	CHECK(page_hash(big, 16384, &zero) != hbig);
	free(big);

	CHECK(contents_init(&t) == 0);
	/* Content 1 held 3 times by process 0 and twice by process 1; content
	 * 2 once by each; 100,000 unique contents force the table to grow. */
	for (int i = 0; i < 3; i++)
		contents_add(&t, 0x1111111111110000ULL, 0);
	contents_add(&t, 0x2222222222220000ULL, 0);
	int add_failed = 0;
	for (uint64_t i = 0; i < 100000; i++)
		add_failed += contents_add(&t, (i + 7) * 0x9e3779b97f4a7c15ULL << 16, 0) != 0;
	CHECK(add_failed == 0);
	for (int i = 0; i < 2; i++)
		contents_add(&t, 0x1111111111110000ULL, 1);
	contents_add(&t, 0x2222222222220000ULL, 1);
	CHECK(contents_count(&t, 0x1111111111110000ULL) == 5);
	CHECK(contents_count(&t, 0x2222222222220000ULL) == 2);
	CHECK(contents_count(&t, 0x3333333333330000ULL) == 0);
	CHECK(t.used == 100002);
	/* (content, process) pairs: 2 + 2 + 100,000 */
	CHECK(t.process_pairs == 100004);
	CHECK(contents_bytes(&t) >= t.used * 12 && contents_bytes(&t) <= t.used * 24);
	contents_free(&t);
	free(a);
	free(b);
}

/* ---- targets ---- */

static void test_targets(void)
{
	struct pid_list l, absent;
	char why[512], text[64];

	snprintf(text, sizeof text, "%d,1,%d", (int)getppid(), (int)getppid());
	CHECK(targets_resolve(text, &l, NULL, why, sizeof why) == 0 && l.n == 2 && l.pids[0] == 1 &&
	      l.pids[1] == getppid());
	pid_list_free(&l);
	CHECK(targets_resolve("12x", &l, NULL, why, sizeof why) < 0 && strstr(why, "'12x': not a PID"));
	CHECK(targets_resolve("99999999", &l, NULL, why, sizeof why) < 0 && strstr(why, "'99999999': no such process"));
	CHECK(targets_resolve("0", &l, NULL, why, sizeof why) < 0 && strstr(why, "'0': not a PID"));
	CHECK(targets_resolve("1,,2", &l, NULL, why, sizeof why) < 0 && strstr(why, "empty item"));
	CHECK(targets_resolve("0", &l, NULL, why, sizeof why) < 0);
	CHECK(targets_resolve("-3", &l, NULL, why, sizeof why) < 0);
	CHECK(targets_resolve("cgroup:", &l, NULL, why, sizeof why) < 0 && strstr(why, "needs a PATH"));
	CHECK(targets_resolve("cgroup:../x", &l, NULL, why, sizeof why) < 0 && strstr(why, "'..'"));
	CHECK(targets_resolve("cgroup:/no/such/cgroup", &l, NULL, why, sizeof why) < 0 &&
	      strstr(why, "no such cgroup"));
	CHECK(targets_resolve("cgroup:no-such-ksmenable-group", &l, NULL, why, sizeof why) < 0 &&
	      strstr(why, "not found in any mounted cgroup hierarchy"));
	/* The largest PID the kernel allows, surely not running: no process. */
	CHECK(targets_resolve("4194304", &l, NULL, why, sizeof why) == 0 && l.n == 1);
	pid_list_free(&l);
	CHECK(targets_resolve("4194305", &l, NULL, why, sizeof why) < 0);
	/* Asked apart (--attach): a PID no process has, beside one that runs, repeated. */
	snprintf(text, sizeof text, "4194304,%d,4194304", (int)getppid());
	CHECK(targets_resolve(text, &l, &absent, why, sizeof why) == 0 && l.n == 1 && l.pids[0] == getppid() &&
	      absent.n == 1 && absent.pids[0] == 4194304);
	pid_list_free(&l);
	pid_list_free(&absent);
	/* Alone: no error here (the caller names it), both lists as they are. */
	CHECK(targets_resolve("4194304", &l, &absent, why, sizeof why) == 0 && l.n == 0 && absent.n == 1);
	pid_list_free(&l);
	pid_list_free(&absent);
	CHECK(targets_resolve("12x", &l, &absent, why, sizeof why) < 0 && !absent.pids && !l.pids);
	CHECK(targets_resolve("all", &l, NULL, why, sizeof why) == 0 && l.n >= 1);
	for (size_t i = 0; i < l.n; i++)
		CHECK(l.pids[i] != getpid() && (i == 0 || l.pids[i - 1] < l.pids[i]));
	pid_list_free(&l);
}

/* ---- a class name, its selector, and the library's parser agree ---- */

static void test_class_selector(void)
{
	static const char *const paths[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/app/weird*name?[x].so",
		"/srv/with,comma/lib.so", "/back\\slash", "/a b/c",
	};
	struct selector_list list;
	char name[4200], sel[4400], why[256], other[64];
	struct region r = { .start = 0x1000, .end = 0x2000, .mergeable = -1, .ksm_kb = -1, .anon_kb = -1 };

	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		r.cls = REGION_FILE;
		r.name = paths[i];
		r.name_len = strlen(paths[i]);
		region_class_name(&r, name, sizeof name);
		CHECK(!strcmp(name, paths[i]));
		CHECK(class_selector(name, sel, sizeof sel) == 0);
		CHECK(selector_parse(&list, sel, why, sizeof why) == 0);
		CHECK(selector_matches(&list, &r));
		/* ...and not a neighbour with one character changed. */
		snprintf(other, sizeof other, "%sX", paths[i]);
		r.name = other;
		r.name_len = strlen(other);
		CHECK(!selector_matches(&list, &r));
	}
	r.cls = REGION_ANON_NAMED;
	r.name = "cache*1";
	r.name_len = 7;
	region_class_name(&r, name, sizeof name);
	CHECK(!strcmp(name, "anon:cache*1"));
	CHECK(class_selector(name, sel, sizeof sel) == 0 && !strcmp(sel, "anon:cache\\*1"));
	CHECK(selector_parse(&list, sel, why, sizeof why) == 0 && selector_matches(&list, &r));
	r.name = "cacheX1";
	CHECK(!selector_matches(&list, &r));
	r.cls = REGION_HEAP;
	region_class_name(&r, name, sizeof name);
	CHECK(class_selector(name, sel, sizeof sel) == 0 && !strcmp(sel, "heap"));
	CHECK(class_selector("/x", sel, 4) < 0);       /* does not fit */
}

UNIT_MAIN(UNIT_TEST(test_contents), UNIT_TEST(test_targets), UNIT_TEST(test_class_selector))
