/*
 * Unit tests of the parsers: maps/smaps text (recorded, with [anon:NAME]
 * regions this kernel cannot produce), selector lists and the settings.
 * Run from the top of the tree: make unit.  Needs no root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ksmstat.h"
#include "maps.h"
#include "nearest.h"
#include "selection.h"
#include "selector.h"
#include "unit.h"

#define MAX_REGIONS 64

struct seen {
	int count;
	struct region r[MAX_REGIONS];
	char names[MAX_REGIONS][256];
};

static int collect(const struct region *r, void *arg)
{
	struct seen *s = arg;

	if (s->count < MAX_REGIONS) {
		s->r[s->count] = *r;
		snprintf(s->names[s->count], sizeof s->names[0], "%.*s", (int)r->name_len, r->name);
		s->r[s->count].name = s->names[s->count];
		s->count++;
	}
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char text[1 << 16];
	size_t n;

	if (!f) {
		perror(path);
		exit(2);
	}
	n = fread(text, 1, sizeof text - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

#define SMAPS "tests/unit/data/process.smaps"

static struct seen recorded;

static void test_smaps_text(void)
{
	struct seen *s = &recorded;

	maps_parse_text(slurp(SMAPS), collect, s);
	CHECK(s->count == 33);
	CHECK(s->r[0].cls == REGION_FILE && !strcmp(s->names[0], "/work/main/build/cc/tests/dupmem"));
	CHECK(s->r[0].mergeable == 1);
	CHECK(s->r[5].cls == REGION_HEAP);
	CHECK(s->r[6].cls == REGION_ANON && s->r[6].ksm_kb == 768);
	CHECK(s->r[5].anon_kb == 12);                          /* [heap] Anonymous: */
	CHECK(s->r[6].start == 0x7f9b6c2cd000UL && s->r[6].end == 0x7f9b6c3cd000UL);
	CHECK(s->r[7].cls == REGION_ANON);                      /* ---p guard */
	CHECK(s->r[9].cls == REGION_SHARED && s->r[9].mergeable == 0);
	CHECK(s->r[15].cls == REGION_ANON_NAMED && !strcmp(s->names[15], "libc_malloc"));
	CHECK(s->r[21].cls == REGION_ANON_NAMED && !strcmp(s->names[21], "cache:shared-data"));
	CHECK(s->r[22].cls == REGION_SPECIAL);                  /* [vvar] */
	CHECK(s->r[24].cls == REGION_SPECIAL);                  /* [vdso] */
	CHECK(s->r[30].cls == REGION_FILE && s->r[30].deleted && !strcmp(s->names[30], "/tmp/model.bin"));
	CHECK(s->r[31].cls == REGION_STACK);
	CHECK(s->r[32].cls == REGION_SPECIAL && s->r[32].start == 0xffffffffff600000UL);
}

/*
 * The streaming reader must agree with the whole-text parser whatever its
 * buffer size, so that no region is lost at a boundary; from 400 bytes on
 * (a header line and a name fit in half), no smaps field either.
 */
static void test_streaming_agrees(void)
{
	static const size_t sizes[] = { 160, 200, 400, 512, 1000, 4096, 16384 };
	size_t i;
	int j;

	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char *buf = malloc(sizes[i]);
		struct seen s = { 0 };
		int same = 1;

		CHECK(maps_for_each(SMAPS, buf, sizes[i], collect, &s) == 0);
		same = s.count == recorded.count;
		for (j = 0; same && j < s.count; j++)
			same = s.r[j].start == recorded.r[j].start && s.r[j].end == recorded.r[j].end &&
			       s.r[j].cls == recorded.r[j].cls &&
			       (sizes[i] < 400 || (s.r[j].mergeable == recorded.r[j].mergeable &&
						    s.r[j].ksm_kb == recorded.r[j].ksm_kb &&
						    s.r[j].anon_kb == recorded.r[j].anon_kb)) &&
			       !strcmp(s.names[j], recorded.names[j]);
		if (!same)
			fprintf(stderr, "buffer size %zu: %d regions\n", sizes[i], s.count);
		CHECK(same);
		free(buf);
	}
}

static int note_stack(const struct region *r, void *arg)
{
	int *seen = arg;

	seen[0]++;
	seen[1] |= r->cls == REGION_STACK;
	return 0;
}

static void test_live_maps(void)
{
	char buf[4096];
	int seen[2] = { 0, 0 };       /* regions, whether [stack] was among them */

	CHECK(maps_for_each("/proc/self/maps", buf, sizeof buf, note_stack, seen) == 0);
	CHECK(seen[0] > 5);
	CHECK(seen[1]);
	CHECK(maps_for_each("/nonexistent/maps", buf, sizeof buf, note_stack, seen) == -1);
}

/* The indexes of the recorded regions that ALLOW minus DENY chooses. */
static void chosen(const char *allow, const char *deny, unsigned long min_size, char *out)
{
	struct selector_list a, d;
	struct selection sel = { &a, &d, min_size };
	char err[256];
	int i;

	*out = '\0';
	if (selector_parse(&a, allow, err, sizeof err) || selector_parse(&d, deny ? deny : "", err, sizeof err)) {
		if (deny) {
			strcpy(out, "parse error");
			return;
		}
		d.count = 0;
	}
	for (i = 0; i < recorded.count; i++)
		if (region_selected(&sel, &recorded.r[i]))
			sprintf(out + strlen(out), "%s%d", *out ? "," : "", i);
}

static void test_selection(void)
{
	char got[256];

	chosen("heap", NULL, 0, got);
	CHECK(!strcmp(got, "5"));
	chosen("stack", NULL, 0, got);
	CHECK(!strcmp(got, "31"));
	chosen("anon", NULL, 0, got);
	CHECK(!strcmp(got, "6,7,8"));
	chosen("anon:libc_*", NULL, 0, got);
	CHECK(!strcmp(got, "15"));
	chosen("anon:*", NULL, 0, got);
	CHECK(!strcmp(got, "15,21"));
	chosen("file:*/libc.so.6", NULL, 0, got);
	CHECK(!strcmp(got, "10,11,12,13,14"));
	chosen("file:/tmp/model.bin", NULL, 0, got);
	CHECK(!strcmp(got, "30"));
	/* all: every private region but [vvar], [vdso], [vsyscall] and shared */
	chosen("all", NULL, 0, got);
	CHECK(!strcmp(got, "0,1,2,3,4,5,6,7,8,10,11,12,13,14,15,16,17,18,19,20,21,25,26,27,28,29,30,31"));
	chosen("all", "file:*", 0, got);
	CHECK(!strcmp(got, "5,6,7,8,15,21,31"));
	chosen("heap,anon", "anon", 0, got);
	CHECK(!strcmp(got, "5"));
	chosen("anon:*", "anon:cache:*", 0, got);
	CHECK(!strcmp(got, "15"));
	/* KSM_ENABLE_MIN_SIZE: only regions of at least 64 KiB */
	chosen("anon,heap", NULL, 64 * 1024, got);
	CHECK(!strcmp(got, "5,6,8"));
	chosen(" heap , stack ", NULL, 0, got);
	CHECK(!strcmp(got, "5,31"));
}

static int parse_fails(const char *text, const char *expect_in_message)
{
	struct selector_list l;
	char err[256] = "";
	int fails = selector_parse(&l, text, err, sizeof err) != 0;

	if (fails && !strstr(err, expect_in_message))
		fprintf(stderr, "'%s': message '%s' lacks '%s'\n", text, err, expect_in_message);
	return fails && strstr(err, expect_in_message);
}

static void test_selector_errors(void)
{
	char many[512] = "heap";
	int i;

	CHECK(parse_fails("", "empty selector"));
	CHECK(parse_fails("heap,", "empty selector"));
	CHECK(parse_fails(",heap", "empty selector"));
	CHECK(parse_fails("heap,,stack", "empty selector"));
	CHECK(parse_fails("hep", "unknown selector 'hep' (accepted: all, heap, stack, anon, secret, anon:GLOB, file:GLOB)"));
	CHECK(parse_fails("HEAP", "unknown selector 'HEAP'"));
	CHECK(parse_fails("anon:", "an empty pattern"));
	CHECK(parse_fails("file:", "an empty pattern"));
	CHECK(parse_fails("file:/lib/[abc", "an unclosed '['"));
	CHECK(parse_fails("anon:x\\", "a trailing backslash"));
	CHECK(parse_fails("files:/x", "unknown selector"));
	for (i = 0; i < SELECTOR_MAX; i++)
		strcat(many, ",heap");
	CHECK(parse_fails(many, "more than 32 selectors"));
	CHECK(!parse_fails("file:/lib/[]]x", ""));
	CHECK(!parse_fails("file:/lib/[!a-z]*", ""));
	CHECK(!parse_fails("anon:\\[x", ""));
}

/* Settings from a table instead of the environment. */
static const char *const *table;

static const char *from_table(void *ctx, const char *name)
{
	int i;

	(void)ctx;
	for (i = 0; table[i]; i += 2)
		if (!strcmp(table[i], name))
			return table[i + 1];
	return NULL;
}

static const char *same_name(void *ctx, const char *var)
{
	(void)ctx;
	return var;
}

static int load(struct config *c, char *err, const char *const *vars)
{
	static int loaded;

	if (loaded++)
		config_free(c);
	table = vars;
	*err = '\0';
	static const struct config_source src = { from_table, same_name, NULL };

	return config_load(c, &src, err, 512);
}

static void test_config(void)
{
	struct config c;
	char err[512];

	{ const char *const v[] = { NULL };
	  CHECK(load(&c, err, v) == 0 && c.mode == MODE_AUTO && !c.mode_set && c.rescan_ms == 1000 &&
		c.log == LOG_WARN && c.inherit == 1 && !c.report_path && !c.allow && !c.deny); }
	{ const char *const v[] = { "KSM_ENABLE_MODE", "madvise", "KSM_ENABLE_ALLOW", "heap,anon:x*",
		"KSM_ENABLE_DENY", "stack", "KSM_ENABLE_MIN_SIZE", "64K", "KSM_ENABLE_RESCAN_MS", "0",
		"KSM_ENABLE_LOG", "debug", "KSM_ENABLE_INHERIT", "0", "KSM_ENABLE_REPORT", "/tmp/r.json", NULL };
	  CHECK(load(&c, err, v) == 0 && c.mode == MODE_MADVISE && c.allow->count == 2 && c.deny->count == 1 &&
		c.min_size == 65536 && c.rescan_ms == 0 && c.log == LOG_DEBUG && c.inherit == 0 &&
		!strcmp(c.report_path, "/tmp/r.json")); }
	{ const char *const v[] = { "KSM_ENABLE_REPORT", "rel.json", NULL };
	  CHECK(load(&c, err, v) == 0 && c.report_path[0] == '/' && strstr(c.report_path, "/rel.json")); }
	config_free(&c);
	{ const char *const v[] = { "KSM_ENABLE_MODE", "", "KSM_ENABLE_ALLOW", "", NULL };
	  CHECK(load(&c, err, v) == 0 && !c.mode_set && !c.allow_set); }

	{ const char *const v[] = { "KSM_ENABLE_MODE", "Prctl", NULL };
	  CHECK(load(&c, err, v) && !strcmp(err, "KSM_ENABLE_MODE='Prctl': unknown mode (accepted: auto, prctl, madvise, off)")); }
	{ const char *const v[] = { "KSM_ENABLE_LOG", "loud", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_LOG='loud'") && strstr(err, "quiet, error, warn, info, debug")); }
	{ const char *const v[] = { "KSM_ENABLE_DENY", "heap,bogus", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_DENY='heap,bogus': unknown selector 'bogus'")); }
	{ const char *const v[] = { "KSM_ENABLE_MIN_SIZE", "64KB", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_MIN_SIZE='64KB': not a size")); }
	{ const char *const v[] = { "KSM_ENABLE_MIN_SIZE", "-1", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_MIN_SIZE='-1'")); }
	{ const char *const v[] = { "KSM_ENABLE_RESCAN_MS", "5", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_RESCAN_MS='5'") && strstr(err, "10 to 3600000")); }
	{ const char *const v[] = { "KSM_ENABLE_RESCAN_MS", "1000ms", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_RESCAN_MS='1000ms'")); }
	{ const char *const v[] = { "KSM_ENABLE_RESCAN_MS", " 100", NULL };
	  CHECK(load(&c, err, v) != 0); }
	{ const char *const v[] = { "KSM_ENABLE_INHERIT", "no", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_INHERIT='no': not a switch (accepted: 0, 1)")); }
	{ const char *const v[] = { "KSM_ENABLE_MODE", "prctl", "KSM_ENABLE_ALLOW", "heap", NULL };
	  CHECK(load(&c, err, v) && strstr(err, "KSM_ENABLE_MODE=prctl merges all memory, but KSM_ENABLE_ALLOW is set")); }
	/* The report path is read early: a process with a bad setting still reports. */
	{ const char *const v[] = { "KSM_ENABLE_MODE", "x", "KSM_ENABLE_REPORT", "/tmp/r", NULL };
	  CHECK(load(&c, err, v) && !strcmp(c.report_path, "/tmp/r")); }
	config_free(&c);
}

static void test_numbers(void)
{
	unsigned long v;
	long n;

	CHECK(parse_size("0", &v) == 0 && v == 0);
	CHECK(parse_size("4096", &v) == 0 && v == 4096);
	CHECK(parse_size("2m", &v) == 0 && v == 2UL << 20);
	CHECK(parse_size("1G", &v) == 0 && v == 1UL << 30);
	CHECK(parse_size("", &v) != 0);
	CHECK(parse_size("K", &v) != 0);
	CHECK(parse_size("1T", &v) != 0);
	CHECK(parse_size("99999999999999999999", &v) != 0);
	CHECK(parse_size("17179869184G", &v) != 0);
	CHECK(parse_long_range("10", 10, 20, &n) == 0 && n == 10);
	CHECK(parse_long_range("21", 10, 20, &n) != 0);
	CHECK(parse_long_range("+15", 10, 20, &n) != 0);
	CHECK(parse_long_range("15x", 10, 20, &n) != 0);
}

/* Distances worked out by hand: insertions, deletions, substitutions, one swap. */
static void test_nearest(void)
{
#define D(a, b) name_distance(a, strlen(a), b, strlen(b))
	CHECK(D("", "") == 0 && D("abc", "abc") == 0);
	CHECK(D("", "abc") == 3 && D("abc", "") == 3);
	CHECK(D("ALOW", "ALLOW") == 1 && D("ALLOW", "ALOW") == 1);
	CHECK(D("scna", "scan") == 1);                  /* a swapped pair counts one */
	CHECK(D("kitten", "sitting") == 3);
	CHECK(D("FOO", "LOG") == 2);
	CHECK(D("ab", "ba") == 1 && D("abc", "ca") == 3);   /* no edits inside a swapped pair */
	CHECK(D("0123456789012345678901234567890123456789012345678901234567890123", "x") == (size_t)-1);
#undef D
	CHECK(name_is_near(1, 4) && name_is_near(3, 14) && !name_is_near(4, 14) && !name_is_near(2, 2));
}

/* ksm_stat as 6.18 writes it, and values no kernel writes: unknown (-1), not a prefix read. */
static void test_ksm_stat(void)
{
	static const char good[] = "ksm_rmap_items 4096\nksm_zero_pages 0\nksm_merging_pages 3072\n"
				   "ksm_process_profit -128\nksm_merge_any: yes\nksm_mergeable: no\n";
	static const char odd[] = "ksm_rmap_items 12abc\nksm_merging_pages +5\nksm_zero_pages  7\n"
				  "ksm_process_profit 99999999999999999999\nksm_merge_any: maybe\nksm_mergeable: YES\n";
	char path[] = "/tmp/ksmstat-unit.XXXXXX";
	struct ksmenable_stat st;
	int fd = mkstemp(path);

	CHECK(fd >= 0 && write(fd, good, sizeof good - 1) == (ssize_t)(sizeof good - 1));
	CHECK(ksm_stat_parse(path, &st) == 0);
	CHECK(st.rmap_items == 4096 && st.zero_pages == 0 && st.merging_pages == 3072);
	CHECK(st.process_profit == -128 && st.merge_any == 1 && st.mergeable == 0);
	CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, odd, sizeof odd - 1, 0) == (ssize_t)(sizeof odd - 1));
	CHECK(ksm_stat_parse(path, &st) == 0);
	CHECK(st.rmap_items == -1 && st.merging_pages == -1 && st.zero_pages == 7);
	CHECK(st.process_profit == -1 && st.merge_any == -1 && st.mergeable == -1);
	close(fd);
	unlink(path);
}

/*
 * Linux 6.1's /proc/PID: ksm_stat with ksm_rmap_items only, the merged
 * pages in ksm_merging_pages beside it (recorded as 6.1 writes them).
 * Before ksm_stat (5.19, 6.0): the file alone.
 */
static void test_ksm_stat_6_1(void)
{
	char dir[] = "/tmp/ksmstat-6.1.XXXXXX", stat_path[64], pages_path[64];
	struct ksmenable_stat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(stat_path, sizeof stat_path, "%s/ksm_stat", dir);
	snprintf(pages_path, sizeof pages_path, "%s/ksm_merging_pages", dir);
	CHECK((f = fopen(stat_path, "w")) && fputs("ksm_rmap_items 24838\n", f) >= 0 && !fclose(f));
	CHECK((f = fopen(pages_path, "w")) && fputs("24844\n", f) >= 0 && !fclose(f));
	CHECK(ksm_stat_parse(stat_path, &st) == 0);
	CHECK(st.rmap_items == 24838 && st.merging_pages == 24844);
	CHECK(st.process_profit == -1 && st.zero_pages == -1 && st.merge_any == -1);
	/* A ksm_stat that has the line wins over the file. */
	CHECK((f = fopen(stat_path, "w")) && fputs("ksm_rmap_items 10\nksm_merging_pages 7\n", f) >= 0 && !fclose(f));
	CHECK(ksm_stat_parse(stat_path, &st) == 0 && st.merging_pages == 7);
	/* No ksm_stat at all (5.19, 6.0): the merged pages are read, and the process is readable. */
	CHECK(unlink(stat_path) == 0);
	CHECK(ksm_stat_parse(stat_path, &st) == 0 && st.merging_pages == 24844 && st.rmap_items == -1);
	/* Neither. */
	CHECK(unlink(pages_path) == 0);
	CHECK(ksm_stat_parse(stat_path, &st) == -1 && st.merging_pages == -1);
	CHECK(rmdir(dir) == 0);
}

UNIT_MAIN(UNIT_TEST(test_smaps_text), UNIT_TEST(test_ksm_stat), UNIT_TEST(test_ksm_stat_6_1), UNIT_TEST(test_streaming_agrees), UNIT_TEST(test_live_maps),
	  UNIT_TEST(test_selection), UNIT_TEST(test_selector_errors), UNIT_TEST(test_config),
	  UNIT_TEST(test_numbers), UNIT_TEST(test_nearest))
