/*
 * forkload.c - ksmbench fork-under-load: how often a busy multi-threaded
 * program can fork, with and without the library.
 *
 * Each round runs PROG (tests/progs/forkload: THREADS threads map, advise
 * and unmap without pause while the main thread forks) for SECONDS in
 * each variant, interleaved; the forks of all rounds are added up, and
 * the slowest single fork of any round is kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int cmd_fork_load(int argc, char **argv)
{
	static const struct variant variants[] = {
		{ "no library", NO_PRELOAD, NULL },
		{ "prctl", PRELOAD_LIB, "prctl" },
		{ "madvise", PRELOAD_LIB, "madvise" },
	};
	enum { NV = sizeof variants / sizeof variants[0] };
	long forks[NV] = { 0 };
	double slowest[NV] = { 0 };
	char out[256];

	if (argc != 7)
		die("usage: ksmbench fork-under-load LIB PROG THREADS SECONDS ROUNDS");
	const char *lib = argv[2];
	count("THREADS", argv[4], 0, 64);
	count("SECONDS", argv[5], 1, 600);
	long rounds = count("ROUNDS", argv[6], 1, 100);
	char *child_argv[] = { argv[3], argv[4], argv[5], NULL };

	for (long r = 0; r < rounds; r++)
		for (int v = 0; v < NV; v++) {
			char **env = variant_env(&variants[v], lib, NULL, NULL);
			int status = run_capture(child_argv, env, out, sizeof out);
			long n;
			double ms;
			free(env);
			if (status != 0 || sscanf(out, "forks %ld slowest_ms %lf", &n, &ms) != 2)
				die("fork-under-load: %s (%s) failed with status 0x%x: %s", argv[3],
				    variants[v].name, status, out);
			forks[v] += n;
			slowest[v] = ms > slowest[v] ? ms : slowest[v];
		}
	printf("  fork + exit + wait in the main thread while %s threads mmap, touch, madvise\n"
	       "  (DONTDUMP, DODUMP, DONTNEED) and munmap 256 KiB without pause;\n"
	       "  %s s x %ld rounds per variant, interleaved; in madvise mode the parent\n"
	       "  has its rescan thread, and a child starts its own only once it has\n"
	       "  lived a rescan period (libksmenable(7))\n", argv[4], argv[5], rounds);
	printf("  %-12s %10s %12s %14s %10s\n", "variant", "forks", "forks/s", "slowest ms", "vs none");
	for (int v = 0; v < NV; v++) {
		printf("  %-12s %10ld %12.1f %14.2f %+9.1f%%\n", variants[v].name, forks[v],
		       (double)forks[v] / (double)(rounds * atol(argv[5])), slowest[v],
		       forks[0] ? ((double)forks[v] / (double)forks[0] - 1) * 100 : 0.0);
		printf("RESULT fork-%s %s %ld %.2f\n", atoi(argv[4]) ? "under-load" : "alone",
		       v == 0 ? "none" : variants[v].mode, forks[v], slowest[v]);
	}
	/* The target is for a busy program; alone, the ratios above say it. */
	for (int v = 1; v < NV && atoi(argv[4]) > 0; v++) {
		double fewer = forks[0] ? (1 - (double)forks[v] / (double)forks[0]) * 100 : 0;
		printf("TARGET %s forks under load within 10%% of those without the library, %s mode: "
		       "%ld vs %ld (%+.1f%%), slowest %.2f ms vs %.2f ms\n", fewer <= 10 ? "PASS" : "MISS",
		       variants[v].name, forks[v], forks[0], -fewer, slowest[v], slowest[0]);
	}
	return 0;
}
