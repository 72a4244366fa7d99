/*
 * cgmetrics - the metrics file's write as the daemon does it at every
 * tick, for tests/bench/many-cgroups: a ksm-run writes the machine's
 * series only while it is their one writer (metrics.h), which on a shared
 * machine it may never be, and the daemon ticks when it likes.
 *
 *   cgmetrics FILE [RUNS]
 *       RUNS times (default 5): groups_collect alone, then
 *       metrics_write_host with the machine's series to FILE; prints one
 *       line a run: the collect's milliseconds, the write's milliseconds
 *       and CPU milliseconds (its own collect included), the file's bytes
 *       and lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/groups.h"
#include "host/hosttune.h"
#include "host/metrics.h"

static double ms(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	/* A --keep-knobs instance's tuner, which tunes nothing: the phase is read, no state joined. */
	static struct host_tuner h = { .alone = true };
	int runs = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || argc > 3 || runs < 1) {
		fprintf(stderr, "usage: cgmetrics FILE [RUNS]\n");
		return 2;
	}
	for (int i = 0; i < runs; i++) {
		struct cgroup_groups gs;
		double t0, t1, t2, c2;
		long bytes = 0, lines = 0;
		int r, ch;
		FILE *f;

		t0 = ms(CLOCK_MONOTONIC);
		if (groups_collect(&gs))
			return 1;
		t1 = ms(CLOCK_MONOTONIC);
		groups_free(&gs);
		t2 = ms(CLOCK_MONOTONIC);
		c2 = ms(CLOCK_PROCESS_CPUTIME_ID);
		if ((r = metrics_write_host(argv[1], &h, NULL, NULL, NULL, true))) {
			fprintf(stderr, "cgmetrics: %s: %s\n", argv[1], strerror(-r));
			return 1;
		}
		printf("collect_ms %.1f write_ms %.1f write_cpu_ms %.1f", t1 - t0, ms(CLOCK_MONOTONIC) - t2,
		       ms(CLOCK_PROCESS_CPUTIME_ID) - c2);
		if (!(f = fopen(argv[1], "r")))
			return 1;
		while ((ch = getc(f)) != EOF) {
			bytes++;
			lines += ch == '\n';
		}
		fclose(f);
		printf(" bytes %ld lines %ld\n", bytes, lines);
	}
	return 0;
}
