/*
 * Unit tests of the report (launcher/follow/report.c) on the figures of a
 * kernel that lacks counters, as Linux 6.1 does (no general_profit,
 * ksm_zero_pages, pages_scanned, pages_skipped: LLONG_MIN from the
 * sampler): the text says "not in this kernel", never prints the
 * sentinel, and the JSON has null.  No root: a sampler made by hand, the
 * report written to a file.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "follow/report.h"
#include "host/counters.h"
#include "unit.h"

/* Linux 6.1's counters: the six it has, the others LLONG_MIN. */
static void sample_6_1(struct sys_sample *ss, double t, long long sharing)
{
	ss->t = t;
	ss->ksmd_cpu = -1;
	for (int i = 0; i < SYS_COUNTERS; i++) {
		const char *n = sys_counter_names[i];

		ss->v[i] = !strcmp(n, "pages_sharing") ? sharing :
			   !strcmp(n, "pages_shared") || !strcmp(n, "pages_unshared") ||
			   !strcmp(n, "pages_volatile") || !strcmp(n, "full_scans") ? 10 : LLONG_MIN;
	}
}

/* The sampler's general_profit where the kernel has none: computed from the counters, and marked. */
static void compute_profit(struct sys_sample *ss)
{
	ss->v[0] = counters_profit_of(sys_value(ss, "pages_shared"), sys_value(ss, "pages_sharing"),
				      sys_value(ss, "pages_unshared"), sys_value(ss, "pages_volatile"),
				      sys_value(ss, "ksm_zero_pages"), 4096);
	ss->profit_computed = true;
}

/*
 * The report of a sampler of 6.1's figures, as text or JSON, into OUT
 * (freed by the caller); COMPUTED: with general_profit computed, as the
 * sampler does where every page counter is there.
 */
static struct proc_info *procs;     /* the tree the next report_of shows; NULL none */
static int nprocs;

static char *report_of(bool json, bool computed)
{
	static struct sampler s;
	struct knob_set knobs = { 0 };
	char path[] = "/tmp/report-unit.XXXXXX", *out;
	struct report_opts o = { .json = json, .file = path, .knobs = &knobs, .tuning = "user" };
	struct report_subject j = { .argv = (char *[]){ "demo", NULL }, .root = 4242, .start = 1, .end = 5 };
	int fd = mkstemp(path);
	long n;
	FILE *f;

	memset(&s, 0, sizeof s);
	s.profit_peak = s.profit_peak_live = s.saved_last = s.saved_peak = LLONG_MIN;
	s.procs = procs;
	s.nprocs = s.cap = nprocs;
	sample_6_1(&s.first, 1, 0);
	sample_6_1(&s.last, 5, 24000);
	if (computed) {
		compute_profit(&s.first);
		compute_profit(&s.last);
		s.profit_peak = sys_value(&s.last, "general_profit");
	}
	CHECK(fd >= 0 && report_write(&o, &s, &j) == 0);
	f = fdopen(fd, "r");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	out = calloc(1, (size_t)n + 1);
	CHECK(fread(out, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	unlink(path);
	return out;
}

static void test_text_says_what_the_kernel_lacks(void)
{
	char *text = report_of(false, false);

	CHECK(!strstr(text, "9223372036854775808"));
	CHECK(strstr(text, "general_profit  not in this kernel (Linux 6.4+)") != NULL);
	CHECK(strstr(text, "ksm_zero_pages  not in this kernel (Linux 6.10+)") != NULL);
	CHECK(strstr(text, "pages_scanned   not in this kernel (Linux 6.6+), "
			   "pages_skipped not in this kernel (Linux 6.7+)") != NULL);
	CHECK(strstr(text, "pages_sharing   0 -> 24000 pages") != NULL);
	CHECK(strstr(text, "the processes' own profit is unknown too (ksm_process_profit not in this kernel "
			   "(Linux 6.4+))") != NULL);
	CHECK(strstr(text, "the sum of the processes' ksm_process_profit") == NULL);
	if (strstr(text, "9223372036854775808") || !strstr(text, "not in this kernel"))
		fputs(text, stderr);
	free(text);
}

static void test_json_has_null(void)
{
	char *json = report_of(true, false);

	CHECK(!strstr(json, "9223372036854775808"));
	CHECK(strstr(json, "\"general_profit\":{\"start\":null,\"end\":null,\"delta\":null") != NULL);
	CHECK(strstr(json, "\"pages_sharing\":{\"start\":0,\"end\":24000,\"delta\":24000}") != NULL);
	free(json);
}

/* Where the sampler computed general_profit: the figure, said to be computed, in text and JSON. */
static void test_computed_profit_is_said(void)
{
	char *text = report_of(false, true), *json = report_of(true, true);
	long long end = 24000LL * 4096 - (10 + 24000 + 10 + 10) * 64LL;
	char want[128];

	CHECK(!strstr(text, "9223372036854775808") && !strstr(json, "9223372036854775808"));
	CHECK(strstr(text, "computed by the kernel's formula from the page counters") != NULL);
	CHECK(strstr(text, "no general_profit file (Linux 6.4+)") != NULL);
	snprintf(want, sizeof want, "\"general_profit\":{\"start\":%lld,\"end\":%lld,", -30LL * 64, end);
	CHECK(strstr(json, want) != NULL);
	CHECK(strstr(json, "\"computed\":true") != NULL);
	free(text);
	free(json);
	json = report_of(true, false);
	CHECK(strstr(json, "\"computed\":false") != NULL);
	free(json);
}

/*
 * sh -c '...' on 6.1: the shell (the main process, 4242) said nothing and
 * the kernel cannot tell its flag (merge_any -1), while both children said
 * the library enabled them with madvise: enabled by the library, not
 * "unknown".  One child with the library off: unknown, not "none".
 */
static void test_covered_by_the_children(void)
{
	struct proc_info tree[3] = {
		{ .pid = 4242, .merge_any = -1, .sampled = true, .lib_mapped = false },
		{ .pid = 4243, .ppid = 4242, .merge_any = -1, .sampled = true, .from_lib = true, .mode = "madvise" },
		{ .pid = 4244, .ppid = 4242, .merge_any = -1, .sampled = true, .from_lib = true, .mode = "madvise" },
	};
	char *json;

	for (int i = 0; i < 3; i++)
		tree[i].profit = tree[i].peak_profit = tree[i].kept_user = LLONG_MIN;
	procs = tree;
	nprocs = 3;
	json = report_of(true, false);
	CHECK(strstr(json, "\"covered_by\":\"library\"") != NULL);
	free(json);
	snprintf(tree[2].mode, sizeof tree[2].mode, "off");
	json = report_of(true, false);
	CHECK(strstr(json, "\"covered_by\":\"unknown\"") != NULL);
	free(json);
	procs = NULL;
	nprocs = 0;
}

UNIT_MAIN(UNIT_TEST(test_text_says_what_the_kernel_lacks), UNIT_TEST(test_json_has_null),
	  UNIT_TEST(test_computed_profit_is_said), UNIT_TEST(test_covered_by_the_children))
