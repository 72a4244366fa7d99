/*
 * sighost - a program whose signal handler maps memory or forks while its
 * main loop marks and maps memory: a library that holds a lock across an
 * interposed call and takes it again in the handler hangs it.
 *
 *   sighost ITERATIONS map|fork
 *
 * An interval timer (SIGALRM every 200 us for map, every 2 ms for fork)
 * runs a handler that maps 64 KiB and 1 MiB (the size the library advises
 * at once) and unmaps them (map), or forks a child that exits at once and
 * reaps it (fork; it maps and unmaps as well).  Meanwhile the main loop,
 * ITERATIONS times: madvise DONTDUMP, then DODUMP, on a 1 MiB region (both
 * recorded by the library), and a 64 KiB mmap + munmap.  Every call is
 * checked.  Prints "sighost: N iterations, M signals, K forks" and exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t signals, forks, failed;
static int forking;

static void map_and_unmap(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		failed = 1;
		return;
	}
	p[0] = 1;
	if (munmap(p, len))
		failed = 2;
}

static void on_alarm(int sig)
{
	int saved_errno = errno;

	(void)sig;
	signals++;
	map_and_unmap(64 << 10);
	map_and_unmap(1 << 20);
	if (forking) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			failed = 3;
		else
			forks++;
	}
	errno = saved_errno;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	long n = argc == 3 ? atol(argv[1]) : 0;
	char *region;

	if (n <= 0 || (strcmp(argv[2], "map") && strcmp(argv[2], "fork"))) {
		fprintf(stderr, "usage: sighost ITERATIONS map|fork\n");
		return 2;
	}
	forking = !strcmp(argv[2], "fork");
	if (forking)
		it.it_interval.tv_usec = it.it_value.tv_usec = 2000;
	region = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return perror("mmap"), 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return perror("timer"), 1;
	for (long i = 0; i < n && !failed; i++) {
		if (madvise(region, 1 << 20, MADV_DONTDUMP) || madvise(region, 1 << 20, MADV_DODUMP)) {
			perror("madvise");
			return 1;
		}
		map_and_unmap(64 << 10);
	}
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	if (failed) {
		fprintf(stderr, "sighost: the handler failed (%d)\n", (int)failed);
		return 1;
	}
	printf("sighost: %ld iterations, %d signals, %d forks\n", n, (int)signals, (int)forks);
	return 0;
}
