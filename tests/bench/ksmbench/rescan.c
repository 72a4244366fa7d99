/* rescan.c - ksmbench rescan: CPU of the library's rescan thread. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* ---- rescan: CPU of the library's thread ---- */

/*
 * The thread of this process named NAME (its comm), or 0 if there is none.
 */
static pid_t find_thread(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	pid_t tid = 0;
	/* d_name is up to 255 bytes (a tid is far shorter, but the compiler
	 * cannot know that). */
	char path[sizeof "/proc/self/task//comm" + 256], buf[64];

	if (!d)
		return 0;
	while (!tid && (de = readdir(d))) {
		FILE *f;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof buf, f)) {
			buf[strcspn(buf, "\n")] = '\0';
			if (strcmp(buf, name) == 0)
				tid = (pid_t)atol(de->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return tid;
}

/*
 * CPU time (ns) of thread TID of this process.  The kernel's per-thread
 * CPU clock (the clockid that pthread_getcpuclockid builds: ~tid << 3 | 6)
 * is exact even while the thread runs; /proc's schedstat, updated only at
 * ticks and switches, is the fallback.
 */
static double thread_cpu_ns(pid_t tid)
{
	struct timespec ts;
	unsigned long long run_ns;
	char path[64];
	double ns = -1;
	FILE *f;

	if (clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6), &ts) == 0)
		return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%llu", &run_ns) == 1)
			ns = (double)run_ns;
		fclose(f);
	}
	return ns;
}

static double rusage_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* CPU of all threads but the calling one: a cross-check of the thread's figure. */
static double other_threads_ns(void)
{
	return rusage_ns(RUSAGE_SELF) - rusage_ns(RUSAGE_THREAD);
}

/*
 * Waits until thread TID has run (its CPU time grew) and gone back to
 * sleep (it stopped growing), polling every millisecond, at most
 * TIMEOUT_MS.  A window between two such points holds whole passes only,
 * so a long period is not over- or under-counted by one pass.
 */
static int wait_pass_end(pid_t tid, long timeout_ms)
{
	double deadline = now_ns() + (double)timeout_ms * 1e6;
	double before = thread_cpu_ns(tid), c;

	do {
		sleep_ms(1);
		if (now_ns() > deadline)
			return -1;
	} while ((c = thread_cpu_ns(tid)) == before);
	do {
		before = c;
		sleep_ms(2);
	} while ((c = thread_cpu_ns(tid)) != before);
	return 0;
}

/*
 * In the child (the library preloaded): prints
 *   THREAD_NS OTHERS_NS WALL_NS FOUND ALIGNED VMAS MERGEABLE
 */
int cmd_rescan_child(int argc, char **argv)
{
	if (argc != 4)
		die("usage: ksmbench rescan-child MAPPINGS SECONDS");
	long mappings = count("MAPPINGS", argv[2], 1, 1000000);
	long seconds = count("SECONDS", argv[3], 1, 3600);
	const char *env = getenv("KSM_ENABLE_RESCAN_MS");
	long period = env ? atol(env) : 2000; /* unset: at most the documented 2 s */
	long page = sysconf(_SC_PAGESIZE);
	int aligned = 1;

	char *p = make_mappings(mappings);
	/* Let at least one rescan find the new VMAs, so that what is measured is
	 * the steady state of a program that has stopped changing its maps. */
	sleep_ms(period + 500);
	long mg = count_mergeable((unsigned long)p, (unsigned long)(p + mappings * page));
	long vmas = count_maps();
	pid_t tid = find_thread("ksmenable");

	if (tid)
		aligned = wait_pass_end(tid, 2 * period + 1000) == 0;
	double th0 = tid ? thread_cpu_ns(tid) : -1, ot0 = other_threads_ns(), w0 = now_ns();
	sleep_ms(seconds * 1000);
	if (tid && aligned)
		aligned = wait_pass_end(tid, 2 * period + 1000) == 0;
	double th1 = tid ? thread_cpu_ns(tid) : -1, ot1 = other_threads_ns(), w1 = now_ns();
	printf("%.0f %.0f %.0f %d %d %ld %ld\n", tid ? th1 - th0 : -1, ot1 - ot0, w1 - w0,
	       tid != 0, aligned, vmas, mg);
	return 0;
}

int cmd_rescan(int argc, char **argv)
{
	if (argc < 5)
		die("usage: ksmbench rescan LIB MAPPINGS SECONDS [RESCAN_MS|default]...");
	const char *lib = argv[2];
	long mappings = count("MAPPINGS", argv[3], 1, 1000000);
	count("SECONDS", argv[4], 1, 3600);
	static const struct variant madvise_mode = { "madvise", PRELOAD_LIB, "madvise" };
	char *child_argv[] = { (char *)self_exe, "rescan-child", argv[3], argv[4], NULL };
	const char *const defaults[] = { "default", "2000", "100" };
	const char *const *periods = argc > 5 ? (const char *const *)argv + 5 : defaults;
	int nperiods = argc > 5 ? argc - 5 : 3;
	char out[256], more[64];

	printf("  madvise mode, %ld bench mappings; after one rescan period, a window of at\n"
	       "  least %s s from the end of one pass to the end of a later one\n", mappings, argv[4]);
	printf("  %-18s %6s %8s %12s %12s %12s %9s %11s\n", "KSM_ENABLE_RESCAN", "VMAs", "window",
	       "thread ms/s", "others ms/s", "% of a core", "ms/pass", "mergeable");
	for (int i = 0; i < nperiods; i++) {
		int dflt = strcmp(periods[i], "default") == 0;
		if (!dflt)
			count("RESCAN_MS", periods[i], 0, 3600000);
		snprintf(more, sizeof more, "KSM_ENABLE_RESCAN_MS=%s", periods[i]);
		char **env = variant_env(&madvise_mode, lib, NULL, dflt ? NULL : more);
		int status = run_capture(child_argv, env, out, sizeof out);
		free(env);
		double th, pr, wall;
		int found, aligned;
		long vmas, mg;
		if (status != 0 || sscanf(out, "%lf %lf %lf %d %d %ld %ld", &th, &pr, &wall, &found,
					  &aligned, &vmas, &mg) != 7)
			die("rescan: the child failed (status 0x%x, output '%s')", status, out);
		/* Without a named thread: every thread but main (which only sleeps). */
		double cpu = found ? th : pr;
		double pct = cpu / wall * 100;
		char label[32];
		snprintf(label, sizeof label, "%s%s", dflt ? "unset" : periods[i], dflt ? "" : " ms");
		/* Per pass only where the period is known (the default is the library's). */
		char per_pass[32] = "-";
		if (!dflt && found && atol(periods[i]) > 0)
			snprintf(per_pass, sizeof per_pass, "%.2f", th / wall * (double)atol(periods[i]));
		printf("  %-18s %6ld %7.2fs %12.3f %12.3f %11.3f%% %9s %5ld/%ld\n", label, vmas,
		       wall / 1e9, found ? th / wall * 1e3 : -1.0, pr / wall * 1e3, pct, per_pass,
		       mg, mappings);
		printf("RESULT rescan %s %.4f\n", dflt ? "default" : periods[i], pct);
		if (!found)
			printf("  note: no thread named \"ksmenable\": all threads but main are counted\n");
		else if (!aligned)
			printf("  note: no rescan pass seen at a window edge; the window is not aligned "
			       "to passes\n");
		if (mg != mappings)
			printf("  WARNING: only %ld of %ld bench mappings are mergeable after a rescan "
			       "period\n", mg, mappings);
		printf("TARGET %s rescan with %ld mappings, period %s, under 1%% of one core: %.3f%%\n",
		       pct < 1 ? "PASS" : "MISS", mappings, label, pct);
	}
	return 0;
}
