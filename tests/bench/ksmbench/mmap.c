/* mmap.c - ksmbench mmap: the interposed mmap+munmap pair. */
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

/* ---- mmap: the interposed mmap+munmap pair ---- */

/* In the child: BATCHES timed batches of PAIRS pairs; prints ns per pair each. */
/*
 * Where the pair's mapping goes.  FENCED: a hole between two PROT_NONE guard
 * pages, passed as the address hint, so the new mapping can never merge with
 * a neighbour in any variant: the cost of the interposition alone.  FREE: the
 * kernel's choice; there the mapping may merge with a neighbouring anonymous
 * VMA (and munmap must split it again), and the library's advice on that
 * neighbour changes whether it does, so layout effects show up too.
 */
static const char *const layouts[] = { "fenced", "free" };
enum { NLAYOUTS = sizeof layouts / sizeof layouts[0] };

/* In the child: BATCHES timed batches of PAIRS pairs; prints ns per pair each. */
int cmd_mmap_loop(int argc, char **argv)
{
	if (argc != 5)
		die("usage: ksmbench mmap-loop PAIRS BATCHES fenced|free");
	long pairs = count("PAIRS", argv[2], 1, 100000000);
	long batches = count("BATCHES", argv[3], 1, 10000);
	int fenced = strcmp(argv[4], "fenced") == 0;
	long page = sysconf(_SC_PAGESIZE);
	char *hole = NULL;

	if (!fenced && strcmp(argv[4], "free") != 0)
		die("bad layout '%s' (expected fenced or free)", argv[4]);
	if (fenced) {
		char *r = mmap(NULL, PAIR_LEN + 2 * (size_t)page, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED || munmap(r + page, PAIR_LEN) != 0)
			die("fence: %s", strerror(errno));
		hole = r + page;
	}
	for (long b = -1; b < batches; b++) { /* batch -1 warms up, untimed */
		double t0 = now_ns();
		for (long i = 0; i < pairs; i++) {
			char *p = mmap(hole, PAIR_LEN, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED || munmap(p, PAIR_LEN) != 0)
				die("mmap/munmap: %s", strerror(errno));
			if (fenced && p != hole)
				die("the kernel did not take the hint %p (got %p)", (void *)hole, (void *)p);
		}
		double t1 = now_ns();
		if (b >= 0)
			printf("%.2f\n", (t1 - t0) / (double)pairs);
	}
	return 0;
}

int cmd_mmap(int argc, char **argv)
{
	static const struct variant variants[] = {
		{ "no library", NO_PRELOAD, NULL }, { "off", PRELOAD_LIB, "off" },
		{ "prctl", PRELOAD_LIB, "prctl" }, { "madvise", PRELOAD_LIB, "madvise" },
	};
	enum { NV = sizeof variants / sizeof variants[0], BATCHES = 10 };

	if (argc != 5)
		die("usage: ksmbench mmap LIB PAIRS ROUNDS");
	const char *lib = argv[2];
	long rounds = count("ROUNDS", argv[4], 1, 1000);
	char batches[16], out[4096];
	snprintf(batches, sizeof batches, "%d", BATCHES);
	double *ns[NLAYOUTS][NV], med[NLAYOUTS][NV];
	size_t n[NLAYOUTS][NV], cap = (size_t)(rounds * BATCHES);

	count("PAIRS", argv[3], 1, 100000000);
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 0; v < NV; v++) {
			if (!(ns[l][v] = calloc(cap, sizeof(double))))
				die("out of memory");
			n[l][v] = 0;
		}
	for (long r = 0; r < rounds; r++)
		for (int l = 0; l < NLAYOUTS; l++)
			for (int v = 0; v < NV; v++) {
				char *child_argv[] = { (char *)self_exe, "mmap-loop", argv[3], batches,
						       (char *)layouts[l], NULL };
				char **env = variant_env(&variants[v], lib, NULL, NULL);
				int status = run_capture(child_argv, env, out, sizeof out);
				free(env);
				if (status != 0)
					die("mmap: the child (%s, %s) failed with status 0x%x",
					    layouts[l], variants[v].name, status);
				for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
					if (n[l][v] < cap)
						ns[l][v][n[l][v]++] = strtod(line, NULL);
			}
	printf("  64 KiB anonymous mmap+munmap, %s pairs x %d batches x %ld processes per variant\n"
	       "  fenced: the mapping lands between PROT_NONE guard pages and never merges\n"
	       "          with a neighbour (the interposition's own cost)\n"
	       "  free:   the kernel picks the address; the mapping may merge with a neighbour,\n"
	       "          and the library's advice on that neighbour changes whether it does\n",
	       argv[3], BATCHES, rounds);
	printf("  %-7s %-12s %12s %12s %12s %10s\n", "layout", "variant", "median ns", "p10 ns",
	       "p90 ns", "vs none");
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 0; v < NV; v++) {
			med[l][v] = quantile(ns[l][v], n[l][v], 0.5);
			printf("  %-7s %-12s %12.1f %12.1f %12.1f %+9.1f%%\n", layouts[l],
			       variants[v].name, med[l][v], quantile(ns[l][v], n[l][v], 0.1),
			       quantile(ns[l][v], n[l][v], 0.9), (med[l][v] / med[l][0] - 1) * 100);
			printf("RESULT mmap %s %s %.1f\n", layouts[l], v == 0 ? "none" : variants[v].mode,
			       med[l][v]);
		}
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 2; v < NV; v++) {
			double slower = (med[l][v] / med[l][0] - 1) * 100;
			printf("TARGET %s interposed mmap+munmap under 10%% slower, %s mode, %s layout: "
			       "%+.1f%% (%.0f ns vs %.0f ns)\n", slower < 10 ? "PASS" : "MISS",
			       variants[v].name, layouts[l], slower, med[l][v], med[l][0]);
		}
	for (int l = 0; l < NLAYOUTS; l++)
		for (int v = 0; v < NV; v++)
			free(ns[l][v]);
	return 0;
}

