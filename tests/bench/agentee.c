/*
 * agentee - the host agent's benchmark load (tests/bench/agent-bench).
 *
 *   agentee spawn RATE SECONDS LIFE_MS OUT CHILD
 *       starts RATE processes a second for SECONDS, each CHILD (a copy of
 *       this program) in child mode, which lives LIFE_MS; waits for them
 *       all; prints how many it started and how far behind it fell.
 *   agentee child T0_NS LIFE_MS OUT
 *       polls PR_GET_MEMORY_MERGE every 20 ms from its start until it reads
 *       1 or LIFE_MS have passed, sleeps out the rest, and appends to OUT,
 *       in one write, the milliseconds from T0_NS (CLOCK_MONOTONIC, when
 *       its parent started it) to the first poll that read 1, or "never".
 *
 * The agent's rule names CHILD by its path, not the spawner (whose flag
 * its children would inherit, across exec on 6.7+); the latency is measured
 * by each process itself, so no clock of the agent's is trusted.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

extern char **environ;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int child(long long t0, long life_ms, const char *out)
{
	long long end = t0 + life_ms * 1000000LL, seen = -1;
	char line[64];
	int fd, n;

	long long t;

	while (seen < 0 && (t = now_ns()) < end) {
		if (prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1)
			seen = t;
		else
			nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	while ((t = now_ns()) < end)
		nanosleep(&(struct timespec){ (end - t) / 1000000000, (end - t) % 1000000000 }, NULL);
	n = seen < 0 ? snprintf(line, sizeof line, "never\n")
		     : snprintf(line, sizeof line, "%.1f\n", (double)(seen - t0) / 1e6);
	if ((fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0 || write(fd, line, (size_t)n) != n)
		return 1;
	close(fd);
	return 0;
}

static int spawn(const char *child_path, long rate, long seconds, long life_ms, const char *out)
{
	long long start = now_ns(), period = 1000000000LL / rate, late_max = 0;
	long total = rate * seconds, started = 0;
	char t0[32], life[32];

	signal(SIGCHLD, SIG_DFL);
	snprintf(life, sizeof life, "%ld", life_ms);
	for (long i = 0; i < total; i++) {
		long long due = start + i * period, t;
		pid_t pid;

		while ((t = now_ns()) < due)
			nanosleep(&(struct timespec){ 0, (long)(due - t) }, NULL);
		if (t - due > late_max)
			late_max = t - due;
		snprintf(t0, sizeof t0, "%lld", t);
		char *argv[] = { (char *)child_path, "child", t0, life, (char *)out, NULL };
		if (posix_spawn(&pid, child_path, NULL, NULL, argv, environ) == 0)
			started++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	printf("started %ld of %ld in %.1f s; the spawner fell %.1f ms behind at most\n", started, total,
	       (double)(now_ns() - start) / 1e9 - life_ms / 1e3, (double)late_max / 1e6);
	return started == total ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "spawn"))
		return spawn(argv[6], atol(argv[2]), atol(argv[3]), atol(argv[4]), argv[5]);
	if (argc == 5 && !strcmp(argv[1], "child"))
		return child(atoll(argv[2]), atol(argv[3]), argv[4]);
	fprintf(stderr, "usage: agentee spawn RATE SECONDS LIFE_MS OUT CHILD | child T0_NS LIFE_MS OUT\n");
	return 2;
}
