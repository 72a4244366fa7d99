/*
 * status.c: `ksm-run --status`, read-only and usable without root: the KSM
 * state now, what this kernel supports (probed, not guessed from the
 * version), the processes with the most merged pages, and any knob state
 * left behind by a killed ksm-run.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/files.h"
#include "common/parse.h"
#include "common/text.h"
#include "host/knobs.h"
#include "host/knobstate.h"
#include "host/status.h"
#include "kernel_abi.h"
#include "ksmstat.h"

/* Run by the exec probe below: did the merge flag survive exec? */
int status_probe_exec_inherit(void)
{
	return prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1 ? 0 : 1;
}

static const char *probe_exec(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return "unknown (fork failed)";
	if (pid == 0) {
		if (prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0))
			_exit(2);
		execl("/proc/self/exe", STATUS_PROBE_NAME, (char *)NULL);
		_exit(3);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return "unknown";
	switch (WEXITSTATUS(st)) {
	case 0: return "yes (the prctl flag survives exec: static binaries are covered)";
	case 1: return "no (kernel before 6.7: static binaries are not covered)";
	default: return "unknown";
	}
}

static const char *probe_anon_names(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int r;

	if (p == MAP_FAILED)
		return "unknown";
	r = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, (unsigned long)page,
		  (unsigned long)"ksm-run-probe");
	munmap(p, (size_t)page);
	return r == 0 ? "yes" : "no (kernel without CONFIG_ANON_VMA_NAME: anon:GLOB never matches)";
}

static void ksm_stat_fields(char *out, size_t len)
{
	char buf[1024], *line, *save = NULL;
	size_t n = 0;

	out[0] = '\0';
	if (read_text("/proc/self/ksm_stat", buf, sizeof buf)) {
		snprintf(out, len, "none (no /proc/PID/ksm_stat)");
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line && n < len; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, ": ")] = '\0';
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", line);
	}
}

struct top {
	int pid;
	long long merging, profit;
	char comm[32];
};

static int cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	return (y->merging > x->merging) - (y->merging < x->merging);
}

static void top_processes(long long page)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct top *t = NULL;
	int n = 0, cap = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct ksmenable_stat st;
		char path[64];
		long long pid;

		if (parse_ll(e->d_name, 1, INT_MAX, &pid))
			continue;
		snprintf(path, sizeof path, "/proc/%lld/ksm_stat", pid);
		if (ksm_stat_parse(path, &st) || st.merging_pages <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			struct top *nt = realloc(t, (size_t)cap * sizeof *t);
			if (!nt)
				break;
			t = nt;
		}
		t[n].pid = (int)pid;
		t[n].merging = st.merging_pages;
		t[n].profit = st.process_profit != -1 ? st.process_profit : 0;
		snprintf(path, sizeof path, "/proc/%lld/comm", pid);
		if (read_text(path, t[n].comm, sizeof t[n].comm))
			snprintf(t[n].comm, sizeof t[n].comm, "?");
		n++;
	}
	closedir(d);
	/* With no process listed t is NULL, and qsort(NULL, 0, ...) is undefined
	 * (its pointer must be valid even for no elements; UBSan's nonnull check). */
	if (n)
		qsort(t, (size_t)n, sizeof *t, cmp_top);
	printf("\nprocesses with the most merged pages:\n");
	if (!n)
		printf("  none%s\n", geteuid() ? " readable (other users' ksm_stat needs root)" : "");
	else
		printf("  %7s %-16s %12s %14s\n", "PID", "COMM", "MERGED KiB", "PROFIT KiB");
	for (int i = 0; i < n && i < 10; i++)
		printf("  %7d %-16s %12lld %14lld\n", t[i].pid, printable(t[i].comm), t[i].merging * page / 1024,
		       t[i].profit / 1024);
	free(t);
}

int status_main(void)
{
	static const char *const counters[] = {
		"general_profit", "pages_shared", "pages_sharing", "pages_unshared", "pages_volatile",
		"ksm_zero_pages", "full_scans", "pages_scanned", "pages_skipped", "stable_node_chains",
		"stable_node_dups",
	};
	struct knob_set knobs;
	char buf[4096], fields[256];
	long long page = sysconf(_SC_PAGESIZE), v;
	bool prctl_ok = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) >= 0;

	if (access(KSM_SYSFS_DIR, F_OK)) {
		printf("KSM: not available (no %s: kernel without CONFIG_KSM)\n", KSM_SYSFS_DIR);
		return 0;
	}
	knobs_read_all(&knobs);
	printf("KSM knobs:");
	for (int i = 0; i < knobs.n; i++)
		printf(" %s=%s", knobs.k[i].name, knobs.k[i].value);
	printf("\nKSM counters:");
	for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
		snprintf(buf, sizeof buf, "%s/%s", KSM_SYSFS_DIR, counters[i]);
		char val[64];
		if (!read_text(buf, val, sizeof val))
			printf(" %s=%s", counters[i], val);
	}
	snprintf(buf, sizeof buf, "%s/general_profit", KSM_SYSFS_DIR);
	char val[64];
	if (!read_text(buf, val, sizeof val) && !parse_ll(val, LLONG_MIN + 1, LLONG_MAX, &v))
		printf("\ngeneral_profit: %lld KiB saved system-wide (after KSM's own metadata)", v / 1024);
	ksm_stat_fields(fields, sizeof fields);
	printf("\n\nkernel support:\n");
	printf("  prctl(PR_SET_MEMORY_MERGE): %s\n", prctl_ok ? "yes" : "no (kernel before 6.4: madvise only)");
	printf("  merge flag inherited across exec: %s\n", prctl_ok ? probe_exec() : "no");
	printf("  smart_scan: %s\n", access(KSM_SYSFS_DIR "/smart_scan", F_OK) ? "no" : "yes");
	printf("  scan-time advisor: %s\n", access(KSM_SYSFS_DIR "/advisor_mode", F_OK) ? "no" : "yes");
	printf("  ksm_stat fields: %s\n", fields);
	printf("  named anonymous mappings: %s\n", probe_anon_names());
	printf("  knobs writable: %s\n", access(KSM_SYSFS_DIR "/run", W_OK) ? "no (needs root)" : "yes");
	top_processes(page);
	knobstate_describe(buf, sizeof buf);
	printf("\nsaved knob state: %s\n", buf);
	return 0;
}
