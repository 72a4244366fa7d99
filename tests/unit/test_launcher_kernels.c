/*
 * Unit tests over the /sys/kernel/mm/ksm of other kernels, recorded as
 * text: what the sampler reads from each, the general_profit it computes
 * where the kernel has no such file, and what a counter the kernel lacks is
 * called.  The recordings: 6.18 and 6.1 as read off those kernels (6.1 in
 * the guest of tests/guest-run), 5.15 and 5.14 from the kernel
 * documentation of those versions (Documentation/ABI/testing/
 * sysfs-kernel-mm-ksm and admin-guide/mm/ksm.rst), which list the same
 * files as 6.1 has.  No root: the files are written to a directory in /tmp.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/kfeature.h"
#include "common/ksmproc.h"
#include "host/counters.h"
#include "ksmstat.h"
#include "unit.h"

struct recording {
	const char *kernel;
	const char *files;      /* "name value" lines */
};

/* The files every kernel since 4.14 has, with what a small merge leaves in them. */
#define OLD_FILES \
	"full_scans 14\nmax_page_sharing 256\nmerge_across_nodes 1\npages_shared 32\n" \
	"pages_sharing 24806\npages_to_scan 100\npages_unshared 12\npages_volatile 3\nrun 1\n" \
	"sleep_millisecs 20\nstable_node_chains 0\nstable_node_chains_prune_millisecs 2000\n" \
	"stable_node_dups 0\nuse_zero_pages 0\n"

static const struct recording kernels[] = {
	{ "5.14", OLD_FILES },
	{ "5.15", OLD_FILES },
	{ "6.1", OLD_FILES },
	/* Read off this project's machine, with general_profit as the kernel computed it. */
	{ "6.18", "advisor_max_cpu 70\nadvisor_max_pages_to_scan 30000\nadvisor_min_pages_to_scan 500\n"
		  "advisor_mode [none] scan-time\nadvisor_target_scan_time 200\nfull_scans 262649\n"
		  "general_profit 32897344\nksm_zero_pages 0\nmax_page_sharing 256\nmerge_across_nodes 1\n"
		  "pages_scanned 847173245\npages_shared 32\npages_sharing 8160\npages_skipped 284696965\n"
		  "pages_to_scan 5000\npages_unshared 0\npages_volatile 27\nrun 1\nsleep_millisecs 10\n"
		  "smart_scan 1\nstable_node_chains 1\nstable_node_chains_prune_millisecs 2000\n"
		  "stable_node_dups 32\nuse_zero_pages 0\n" },
};

/* Writes R's files into a new directory DIR (PATH_MAX). */
static void record(const struct recording *r, char *dir)
{
	char *copy = strdup(r->files), *save = NULL, path[PATH_MAX + 64];

	snprintf(dir, PATH_MAX, "/tmp/ksm-sysfs-%s.XXXXXX", r->kernel);
	CHECK(mkdtemp(dir) != NULL);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *value = strchr(line, ' ');
		FILE *f;

		*value++ = '\0';
		snprintf(path, sizeof path, "%s/%s", dir, line);
		CHECK((f = fopen(path, "w")) && fprintf(f, "%s\n", value) > 0 && !fclose(f));
	}
	free(copy);
}

static void unrecord(const struct recording *r, const char *dir)
{
	char *copy = strdup(r->files), *save = NULL, path[PATH_MAX + 64];

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " ")] = '\0';
		snprintf(path, sizeof path, "%s/%s", dir, line);
		unlink(path);
	}
	free(copy);
	CHECK(rmdir(dir) == 0);
}

/* The kernel's own general_profit (6.18) is what the formula gives from the page counters. */
static void test_formula_matches_the_kernel(void)
{
	CHECK(counters_profit_of(32, 8160, 0, 27, 0, 4096) == 32897344);
	/* ksm_zero_pages count as merged; a kernel without them (LLONG_MIN) merged none apart. */
	CHECK(counters_profit_of(0, 0, 0, 0, 10, 4096) == 40960);
	CHECK(counters_profit_of(1, 1, 0, 0, LLONG_MIN, 4096) == 4096 - 128);
	/* A counter missing, or figures no kernel writes: no figure. */
	CHECK(counters_profit_of(LLONG_MIN, 1, 0, 0, 0, 4096) == LLONG_MIN);
	CHECK(counters_profit_of(0, LLONG_MAX, 0, 0, 0, 4096) == LLONG_MIN);
	CHECK(counters_profit_of(LLONG_MAX, LLONG_MAX, 0, 0, 0, 4096) == LLONG_MIN);
}

static void test_sampler_on_each_kernel(void)
{
	char dir[PATH_MAX];
	struct sys_sample ss;

	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
		const struct recording *r = &kernels[i];
		bool new_kernel = !strcmp(r->kernel, "6.18");

		record(r, dir);
		counters_sample_from(&ss, dir, 0);
		if (new_kernel) {
			CHECK(sys_value(&ss, "general_profit") == 32897344 && !ss.profit_computed);
			CHECK(sys_value(&ss, "pages_skipped") == 284696965);
			CHECK(sys_rmap_items(&ss) == 32 + 8160 + 0 + 27);
		} else {
			/* The kernel's formula from the four page counters, said to be computed. */
			CHECK(ss.profit_computed);
			CHECK(sys_value(&ss, "general_profit") == 24806LL * 4096 - (32 + 24806 + 12 + 3) * 64LL);
			CHECK(sys_value(&ss, "pages_scanned") == LLONG_MIN);
			CHECK(sys_value(&ss, "pages_skipped") == LLONG_MIN);
			CHECK(sys_value(&ss, "ksm_zero_pages") == LLONG_MIN);
			/* The tuner's rmap count agrees with the computed profit. */
			CHECK(sys_rmap_items(&ss) == 32 + 24806 + 12 + 3);
		}
		CHECK(sys_value(&ss, "pages_sharing") == (new_kernel ? 8160 : 24806));
		unrecord(r, dir);
	}
}

/* A counter the kernel lacks is named with the kernel that brought it, never a number. */
static void test_absent_counters_say_since_when(void)
{
	CHECK(!strcmp(kfeature_absent_text("general_profit"), "not in this kernel (Linux 6.4+)"));
	CHECK(!strcmp(kfeature_absent_text("pages_scanned"), "not in this kernel (Linux 6.6+)"));
	CHECK(!strcmp(kfeature_absent_text("pages_skipped"), "not in this kernel (Linux 6.7+)"));
	CHECK(!strcmp(kfeature_absent_text("ksm_zero_pages"), "not in this kernel (Linux 6.10+)"));
	CHECK(!strcmp(kfeature_absent_text("pages_sharing"), "not in this kernel"));
	CHECK(kfeature_of_counter("advisor_mode") == KF_ADVISOR);
	/* Every feature is described: a key, the interface, a kernel (none for
	 * what a kernel bug takes away), what is done without it. */
	for (int f = 0; f < KF_COUNT; f++) {
		const struct kfeature_info *k = kfeature_info(f);
		CHECK(k && k->key && k->what && k->without && (k->since ? strchr(k->since, '.') != NULL : 1));
	}
	CHECK(kfeature_info(KF_KPAGEFLAGS_KSM)->since == NULL);
	CHECK(kfeature_info(KF_COUNT) == NULL);
}

/*
 * Before 6.4 there is no process-wide flag: a region the program advised
 * itself is not one, though the regions alone read as flagged (played on
 * this kernel; first, before anything asks kfeature of the prctl).
 */
static void test_no_merge_flag_before_prctl(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ksmenable_stat st;
	char *p;

	setenv("KSM_RUN_TEST_KERNEL_LACKS", "prctl,ksm_merge_any", 1);
	p = mmap(NULL, 4 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	memset(p, 1, 4 * (size_t)page);
	if (madvise(p, 4 * (size_t)page, MADV_MERGEABLE) == 0) {        /* a kernel without KSM: nothing to check */
		ksm_stat_unknown(&st);
		CHECK(ksm_proc_merge_any_by_regions(getpid()) == 1);
		CHECK(ksm_proc_merge_any(getpid(), &st) == 0);
		st.merge_any = 1;                                      /* where ksm_stat says it, that is the answer */
		CHECK(ksm_proc_merge_any(getpid(), &st) == 1);
	}
	munmap(p, 4 * (size_t)page);
	unsetenv("KSM_RUN_TEST_KERNEL_LACKS");
}

/*
 * A static program exec'd with the process-wide flag on (recorded on 6.18
 * from tests/progs/bare under the library's prctl): it has mapped nothing
 * of its own, and only its image's regions, which exec mapped after taking
 * the flag over, are mergeable.  Before 6.14 that is how the flag is told.
 */
#define EXECD_FLAG_KEPT "tests/unit/data/execd-flag-kept.smaps"

static void test_flag_told_by_a_files_regions(void)
{
	char path[] = "/tmp/ksmenable-unit-smaps.XXXXXX", line[512];
	FILE *in = fopen(EXECD_FLAG_KEPT, "r"), *out;
	int fd = mkstemp(path);

	CHECK(in != NULL && fd >= 0);
	if (!in || fd < 0)
		return;
	CHECK(ksm_smaps_merge_any(EXECD_FLAG_KEPT) == 1);
	/* The same with every "mg" taken out: off. */
	out = fdopen(fd, "w");
	while (fgets(line, sizeof line, in)) {
		char *mg = strstr(line, " mg");

		if (!strncmp(line, "VmFlags:", 8) && mg)
			memmove(mg, mg + 3, strlen(mg + 3) + 1);
		fputs(line, out);
	}
	fclose(in);
	fclose(out);
	CHECK(ksm_smaps_merge_any(path) == 0);
	unlink(path);
}

UNIT_MAIN(UNIT_TEST(test_flag_told_by_a_files_regions), UNIT_TEST(test_no_merge_flag_before_prctl), UNIT_TEST(test_formula_matches_the_kernel),
	  UNIT_TEST(test_sampler_on_each_kernel), UNIT_TEST(test_absent_counters_say_since_when))
